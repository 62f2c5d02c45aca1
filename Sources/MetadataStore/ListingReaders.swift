import GRDB
import GRDBSQLite
import Synchronization

/// Read-only SQLite connections of the store's file for a readdir's two statements (``QuerySQL/listing``,
/// ``QuerySQL/children``), beside GRDB's pool. A cold `find` runs thousands of these; through GRDB each paid for
/// taking a reader from its pool, a hop onto that reader's serial queue and a `PRAGMA schema_version` check, about
/// a quarter of the daemon's CPU for the `find` (docs/performance.md, "Daemon CPU a document").
///
/// Concurrency: a connection is used by one thread at a time, the one that took it from `idle`, and goes back when
/// its statement is reset; a thread that finds none idle opens another, so there are at most as many as readdirs
/// ran at once (in the daemon, ≤ the 16 FUSE workers). Each statement is a transaction of its own on a read-only
/// connection in WAL mode: it sees the last commit before it started, never waits for the writer and takes no
/// lock that the writer or a checkpoint waits for once it is reset. GRDB does not know these connections, and need
/// not: they never write, and SQLite re-prepares a statement whose schema changed (docs/metadata-store.md,
/// "Connections").
final class ListingReaders: Sendable {
    private let path: String
    private let idle = Mutex<[ListingConnection]>([])

    init(path: String) {
        self.path = path
    }

    /// Runs `body` with a connection no other thread uses meanwhile.
    func withConnection<T>(_ body: (ListingConnection) throws -> T) throws -> T {
        let connection = try idle.withLock { $0.popLast() } ?? ListingConnection(path: path)
        defer {
            idle.withLock { connections in
                if connections.count < MetadataStore.maximumReaderCount { connections.append(connection) }
            }
        }
        return try body(connection)
    }

    /// Closes the idle connections (the store is going away; one in use closes when its caller lets it go).
    func close() {
        idle.withLock { $0.removeAll() }
    }
}

/// One read-only connection and its two prepared statements. `@unchecked Sendable` because it wraps C handles:
/// ``ListingReaders`` hands it to one thread at a time.
final class ListingConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    let listing: OpaquePointer
    let children: OpaquePointer

    init(path: String) throws {
        var opened: OpaquePointer?
        // NOMUTEX: one thread at a time uses it (``ListingReaders``), so SQLite need not lock it for each call.
        let code = sqlite3_open_v2(path, &opened, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let opened else {
            let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close_v2(opened)
            throw DatabaseError(resultCode: .init(rawValue: code), message: message)
        }
        func prepare(_ sql: String) throws -> OpaquePointer {
            var statement: OpaquePointer?
            let code = sqlite3_prepare_v3(opened, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
            guard code == SQLITE_OK, let statement else {
                throw DatabaseError(
                    resultCode: .init(rawValue: code), message: String(cString: sqlite3_errmsg(opened)), sql: sql)
            }
            return statement
        }
        do {
            // As GRDB's readers: a writer of another process (a CLI's `refresh`) may hold the WAL's recovery lock
            // for a moment.
            sqlite3_busy_timeout(opened, Int32(MetadataStore.busyTimeout * 1000))
            listing = try prepare(QuerySQL.listing)
            do {
                children = try prepare(QuerySQL.children)
            } catch {
                sqlite3_finalize(listing)
                throw error
            }
        } catch {
            sqlite3_close_v2(opened)
            throw error
        }
        handle = opened
    }

    deinit {
        sqlite3_finalize(listing)
        sqlite3_finalize(children)
        sqlite3_close_v2(handle)
    }

    /// Binds `arguments` to `statement` (one of this connection's) and hands `body` each row, as
    /// ``GRDB/Database/step(_:_:_:)`` does.
    func step(_ statement: OpaquePointer, _ arguments: [Int64], _ body: (SteppedRow) throws -> Bool) throws {
        for (index, value) in arguments.enumerated() {
            sqlite3_bind_int64(statement, Int32(index + 1), value)
        }
        try SteppedRow.step(statement, sql: { String(cString: sqlite3_sql(statement)) }, body)
    }
}
