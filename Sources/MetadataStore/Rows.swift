import Foundation
import GRDB
import GRDBSQLite

/// A row that does not satisfy what the schema promises (a file edited by hand, or damaged).
struct CorruptRow: Error, CustomStringConvertible {
    var detail: String
    var description: String { "unexpected data in the database: \(detail)" }
}

extension Database {
    /// Runs a statement from the connection's statement cache: refreshes run the same few statements thousands of
    /// times.
    func run(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }

    /// ``run(_:_:)`` of a statement that changes rows, with `values` bound in order by GRDB's own binding of each
    /// value (`DatabaseValue.bind(to:at:)`: the same SQLite calls and types as `StatementArguments`) and stepped with
    /// SQLite's calls. For the writes a first fill runs per item (node, `folder`/`document` rows): building
    /// `StatementArguments` and GRDB's nested temporary bindings of each value cost about as much as SQLite's own
    /// insert of a `document` row (docs/performance.md, "Daemon CPU a document").
    func run(_ sql: String, values: [DatabaseValue]) throws {
        let statement = try cachedStatement(sql: sql)
        let handle = statement.sqliteStatement
        guard Int(sqlite3_bind_parameter_count(handle)) == values.count else {
            throw DatabaseError(
                resultCode: .SQLITE_MISUSE, message: "wrong number of statement arguments: \(values.count)", sql: sql)
        }
        for (index, value) in values.enumerated() {
            let code = value.bind(to: handle, at: Int32(index + 1))
            guard code == SQLITE_OK else {
                throw DatabaseError(
                    resultCode: .init(rawValue: code), message: String(cString: sqlite3_errmsg(sqliteConnection)),
                    sql: sql)
            }
        }
        try SteppedRow.step(handle, sql: { sql }, { _ in true })
    }

    func rows(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws -> [Row] {
        try Row.fetchAll(cachedStatement(sql: sql), arguments: arguments)
    }

    func row(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws -> Row? {
        try Row.fetchOne(cachedStatement(sql: sql), arguments: arguments)
    }
}

/// The current row of a statement that ``Database/step(_:_:_:)`` steps, read in place with SQLite's own calls:
/// valid only during the call it is handed to.
struct SteppedRow {
    private let handle: OpaquePointer

    /// Steps `statement` (arguments bound), handing `body` each row until the rows end or `body` returns false,
    /// then resets it: the loop of ``GRDB/Database/step(_:_:_:)`` and of ``ListingConnection/step(_:_:_:)``.
    static func step(_ statement: OpaquePointer, sql: () -> String, _ body: (SteppedRow) throws -> Bool) throws {
        defer { sqlite3_reset(statement) }
        while true {
            let code = sqlite3_step(statement)
            guard code == SQLITE_ROW else {
                guard code == SQLITE_DONE else {
                    throw DatabaseError(
                        resultCode: .init(rawValue: code),
                        message: String(cString: sqlite3_errmsg(sqlite3_db_handle(statement))), sql: sql())
                }
                return
            }
            guard try body(SteppedRow(handle: statement)) else { return }
        }
    }

    func isNull(_ column: Int) -> Bool { sqlite3_column_type(handle, Int32(column)) == SQLITE_NULL }
    func int64(_ column: Int) -> Int64 { sqlite3_column_int64(handle, Int32(column)) }
    func double(_ column: Int) -> Double { sqlite3_column_double(handle, Int32(column)) }

    /// The column's text; nil for NULL.
    func string(_ column: Int) -> String? {
        guard let text = sqlite3_column_text(handle, Int32(column)) else { return nil }
        return String(
            decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(handle, Int32(column)))),
            as: UTF8.self)
    }

    /// The column's bytes as stored, without a copy (`sqlite3_column_blob` converts nothing).
    func bytes(_ column: Int) -> UnsafeBufferPointer<UInt8> {
        let bytes = sqlite3_column_blob(handle, Int32(column))
        return UnsafeBufferPointer(
            start: bytes?.assumingMemoryBound(to: UInt8.self), count: Int(sqlite3_column_bytes(handle, Int32(column))))
    }
}

extension Database {
    /// Steps the cached statement of `sql`, handing `body` each row read in place, until the rows end or `body`
    /// returns false. For the hottest reads: a GRDB cursor builds a `Row` with a dictionary of the column names for
    /// every query and copies every value it hands on, a fifth of the daemon's CPU for a cold `find`
    /// (docs/performance.md, "Daemon CPU a document").
    func step(_ sql: String, _ arguments: StatementArguments, _ body: (SteppedRow) throws -> Bool) throws {
        try step(cachedStatement(sql: sql), arguments, body)
    }

    /// ``step(_:_:_:)`` of a statement the caller holds: a loop over many argument lists looks it up once.
    func step(_ statement: Statement, _ arguments: StatementArguments, _ body: (SteppedRow) throws -> Bool) throws {
        try statement.setArguments(arguments)
        try SteppedRow.step(statement.sqliteStatement, sql: { statement.sql }, body)
    }
}

extension Row {
    func date(_ column: String) throws -> Date {
        Date(timeIntervalSince1970: try decode(Double.self, forColumn: column))
    }

    func date(atIndex index: Int) throws -> Date {
        Date(timeIntervalSince1970: try decode(Double.self, atIndex: index))
    }

    func optionalDate(_ column: String) throws -> Date? {
        try decode(Double?.self, forColumn: column).map(Date.init(timeIntervalSince1970:))
    }

    func bool(_ column: String) throws -> Bool {
        try decode(Int64.self, forColumn: column) != 0
    }

    func bool(atIndex index: Int) throws -> Bool {
        try decode(Int64.self, atIndex: index) != 0
    }
}

extension Node {
    /// The columns `init(row:)` reads, qualified by the table alias `n`. Every query that builds nodes selects
    /// them first and in this order: `init(row:)` reads by index, because looking columns up by name was a tenth
    /// of the daemon's time in a cold `find`.
    static let columns = columns("n")

    /// ``columns`` of the node aliased `n`, a row of ``columnCount`` values. Only documents have a `document` row to
    /// look in (a readdir looked for one for its directory, the parent and every child folder too).
    static func columns(_ n: String) -> String {
        "\(n).inode, \(n).parent, \(n).name, \(n).kind, \(n).item_kind, \(n).studip_id, \(n).course_id, "
            + "CASE WHEN \(n).size = 0 AND \(n).item_kind = 'document' THEN "
            + "COALESCE((SELECT hosted.host_size FROM document hosted WHERE hosted.inode = \(n).inode), 0) "
            + "ELSE \(n).size END, \(n).mtime, \(n).symlink_target, \(n).highlighted_below, "
            + "CASE WHEN \(n).item_kind = 'document' THEN "
            + "COALESCE((SELECT locked.downloadable = 0 FROM document locked WHERE locked.inode = \(n).inode), 0) "
            + "ELSE 0 END"
    }

    static let columnCount = 12

    init(row: Row) throws {
        try self.init(row: row, at: 0)
    }

    /// Reads ``columns`` from `start` on.
    init(row: Row, at start: Int) throws {
        let inode = try row.decode(Int64.self, atIndex: start)
        let kind = try row.decode(String.self, atIndex: start + 3)
        let item = try row.decode(String.self, atIndex: start + 4)
        guard let nodeKind = NodeKind(rawValue: kind), let itemKind = ItemKind(rawValue: item) else {
            throw CorruptRow(detail: "node \(inode) has kind \(kind)/\(item)")
        }
        self.init(
            inode: inode,
            parentInode: try row.decode(atIndex: start + 1),
            name: try row.decode(atIndex: start + 2),
            kind: nodeKind,
            item: itemKind,
            studipID: try row.decode(atIndex: start + 5),
            courseID: try row.decode(atIndex: start + 6),
            size: try row.decode(atIndex: start + 7),
            mtime: try row.date(atIndex: start + 8),
            symlinkTarget: try row.decode(atIndex: start + 9),
            highlightedBelow: try row.decode(atIndex: start + 10),
            isLocked: try row.decode(Int64.self, atIndex: start + 11) != 0)
    }

    /// Reads ``columns`` from `start` on, as ``init(row:at:)`` does.
    init(_ row: SteppedRow, at start: Int) throws {
        let inode = row.int64(start)
        guard let kind = row.string(start + 3).flatMap(NodeKind.init(rawValue:)),
            let item = row.string(start + 4).flatMap(ItemKind.init(rawValue:)), let name = row.string(start + 2)
        else {
            throw CorruptRow(
                detail: "node \(inode) has kind \(row.string(start + 3) ?? "NULL")/\(row.string(start + 4) ?? "NULL")"
                    + " and name \(row.string(start + 2) ?? "NULL")")
        }
        self.init(
            inode: inode, parentInode: row.isNull(start + 1) ? nil : row.int64(start + 1), name: name, kind: kind,
            item: item, studipID: row.string(start + 5), courseID: row.string(start + 6), size: row.int64(start + 7),
            mtime: Date(timeIntervalSince1970: row.double(start + 8)), symlinkTarget: row.string(start + 9),
            highlightedBelow: Int(row.int64(start + 10)), isLocked: row.int64(start + 11) != 0)
    }

    static func fetch(_ inode: Int64, _ db: Database) throws -> Node? {
        try db.row(QuerySQL.nodeByInode, [inode]).map(Node.init(row:))
    }
}

/// Paths from the mount point, as the CLI prints them and `resolve(path:)` reads them.
enum Paths {
    /// The node's path, e.g. `WS 2026-27/INF-101 Foo/Folien`; empty for the root; nil when the inode is gone.
    static func path(of inode: Int64, _ db: Database) throws -> String? {
        let names = try String.fetchAll(db.cachedStatement(sql: QuerySQL.path), arguments: [inode])
        // Only the root has no parent: no names means the root or a missing inode.
        if names.isEmpty { return inode == Node.rootInode ? "" : nil }
        return names.joined(separator: "/")
    }
}

/// Parent and name of nodes, to build many paths without a query each.
struct PathMap {
    private var entries: [Int64: (parent: Int64, name: String)] = [:]
    private var known: [Int64: String] = [:]

    /// `known` paths end the walk up (e.g. the course directory's path).
    init(known: [Int64: String]) {
        self.known = known
    }

    mutating func add(_ inode: Int64, parent: Int64, name: String) {
        entries[inode] = (parent, name)
    }

    mutating func addKnown(_ inode: Int64, path: String) {
        known[inode] = path
    }

    func path(of inode: Int64) -> String {
        var names: [String] = []
        var current = inode
        while known[current] == nil, let entry = entries[current], names.count <= entries.count {
            names.append(entry.name)
            current = entry.parent
        }
        let prefix = known[current].map { [$0] } ?? []
        return (prefix + names.reversed()).filter { !$0.isEmpty }.joined(separator: "/")
    }
}
