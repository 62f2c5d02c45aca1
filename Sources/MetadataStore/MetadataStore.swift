import CSQLiteConfig
import Foundation
import GRDB
import SystemSupport

/// The metadata cache of one profile: the tree of docs/metadata-store.md with stable inodes and sticky names, the
/// remote metadata, highlights and the user's tags, ratings and pins, in one SQLite file.
///
/// Concurrency (GRDB's rules for a `DatabasePool` in WAL mode):
/// - Every method is synchronous and thread-safe. Threads that may block (FUSE workers, the CLI's main thread) call
///   them directly; code in a task goes through ``run(_:)``, which calls them on ``BlockingPool/shared``, because
///   a write waits for the writer lock and an `fsync` and must not hold one of the cooperative pool's two threads.
///   Each call is one read or one write transaction; none holds a lock after returning.
/// - Reads (`node`, `lookup`, `info`, `resolve`, `walk`, …) run concurrently on up to `maximumReaderCount` GRDB
///   connections, a readdir's (`listing`, `children`) on ``ListingReaders``' own, and none waits for a write: they
///   see the last committed state, so a `readdir` during a refresh sees the tree before or after the refresh, never
///   half of it (docs/metadata-store.md, "Connections").
/// - Writes (`applyOverview`, `applyCourse`, `markRead`, the user-state setters) are serialized: a writer waits
///   until the current one commits. A course refresh takes milliseconds, so FUSE handlers may write (e.g.
///   `setxattr`), but they then wait for a running refresh.
/// - Other processes (a `campusfs ls` next to the daemon) share the file; SQLite locks it between them and a
///   writer waits up to `busyTimeout` for another process's write.
/// - Each refresh step is one transaction, so a crash (`kill -9`) leaves the state before or after that step, and
///   every state between steps (overview applied, some courses not yet) is a consistent tree.
public final class MetadataStore: Sendable {
    /// As many readers as the mount's FUSE worker threads (16); the refresher and the control socket share them,
    /// so a read waits only while all 16 are busy. The CLI runs in a process (and pool) of its own.
    public static let maximumReaderCount = 16
    static let busyTimeout: TimeInterval = 10
    /// Reads at once on a ``readOnly(path:)`` store: `campusfs grep` reads on up to this many threads (one per
    /// core, docs/search.md, "grep"); each reader is a connection of its own, opened on first use.
    public static let readOnlyReaders = 4
    /// The page cache of each ``readOnly(path:)`` connection (SQLite's default: 2,000 KiB). A command reads the text
    /// of a document once (`campusfs grep` reads every page of `large`'s 7.8 MB): a larger cache only fills memory
    /// that every page first faults in; 256 KiB still holds the indexes' upper pages that `campusfs search` revisits
    /// (docs/search.md, "grep").
    static let readOnlyCacheKiB = 256
    /// WAL pages after which a commit checkpoints (SQLite's default is 1,000): 32 MiB of 4 KiB pages.
    static let walCheckpointPages = 8192
    /// Bytes the WAL file is cut back to after a checkpoint: one interval's worth, so that the WAL keeps its size
    /// between checkpoints (cut to 4 MiB, `huge`'s fill truncated and grew it 75 times: `ftruncate` was 1.9 % of the daemon's samples) and only a
    /// transaction larger than that (a migration, an index rebuild) leaves no larger file behind.
    static let walSizeLimit = walCheckpointPages * 4096
    /// The writer connection's page cache (SQLite's default: 2,000 KiB). A course's first fill inserts ids at
    /// random places of the indexes keyed by Stud.IP ids (`node_item`, `node_single_placement`, `document.id`,
    /// `folder.id`: 19 MB on `huge`), and every page missing from the cache is a `pread`; 8 MiB on the writer
    /// alone read 3 GB less in `huge`'s fill, for about 8 MB of RSS (docs/performance.md, "The store's I/O in a
    /// first fill").
    static let writerCacheKiB = 8192

    /// Whether SQLite keeps memory statistics in this process, decided once, before the first connection opens.
    /// Off: with them on (Debian's libsqlite3 default), every SQLite allocation and free takes one process-wide
    /// mutex, and `campusfs grep`'s reading threads spent about 7 % of the scan waiting on it (docs/search.md,
    /// "grep"). Nobody reads the statistics. On when something in the process opened SQLite before a store (SQLite
    /// then refuses the setting); that costs only speed.
    static let memoryStatisticsOff: Bool = campusfs_sqlite3_disable_memory_statistics() == SQLITE_OK

    let pool: DatabasePool
    /// The readdir's connections beside `pool` (``ListingReaders``).
    let listingReaders: ListingReaders
    /// The database file, for error messages.
    public let path: String
    /// Set for `temporary()` stores: removed when the store goes away.
    private let temporaryDirectory: URL?

    /// Opens (and creates, with mode 0600) the store at `path`; the directory must exist (docs/architecture.md,
    /// "Paths": `$XDG_DATA_HOME/campusfs/<profile>/campusfs.sqlite`). Migrates an older schema.
    public convenience init(path: String) throws(StoreError) {
        try self.init(path: path, temporaryDirectory: nil)
    }

    /// A store in a fresh temporary directory that is deleted with the store: for tests and `--offline` demos.
    public static func temporary() throws(StoreError) -> MetadataStore {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "campusfs-store-\(UUID().uuidString)", isDirectory: true)
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .cannotOpen(path: directory.path, detail: "\(error)")
        }
        return try MetadataStore(
            path: directory.appendingPathComponent("campusfs.sqlite").path, temporaryDirectory: directory)
    }

    private init(path: String, temporaryDirectory: URL?) throws(StoreError) {
        BlockingPool.checkBlockingAllowed("opening the store at \(path)")
        _ = MetadataStore.memoryStatisticsOff
        self.path = path
        self.temporaryDirectory = temporaryDirectory
        listingReaders = ListingReaders(path: path)
        try Self.createPrivateFile(at: path)
        var configuration = Configuration()
        configuration.maximumReaderCount = Self.maximumReaderCount
        configuration.busyMode = .timeout(Self.busyTimeout)
        configuration.foreignKeysEnabled = true
        configuration.label = "campusfs.metadata"
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
            // Every write sets its own `synchronous` level (``Durability``). SQLite checkpoints the WAL into the
            // database once it holds `walCheckpointPages`: each checkpoint copies every page the commits since the
            // last one changed, once, so a longer interval copies a page that many courses of a first fill change
            // (an index keyed by Stud.IP ids) fewer times (docs/performance.md, "The store's I/O in a first fill").
            // After a checkpoint the WAL file shrinks back to `walSizeLimit`.
            // The writer's page cache is `writerCacheKiB`; readers keep SQLite's 2 MB each (16 of them). The
            // writer's temporary files stay in memory: a course's multi-row statements (the search rows' `INSERT …
            // SELECT`) each opened, wrote and unlinked a statement journal in /var/tmp (docs/performance.md,
            // "Daemon CPU a document").
            try pool.writeWithoutTransaction { db in
                try db.execute(
                    sql: """
                        PRAGMA synchronous = FULL;
                        PRAGMA wal_autocheckpoint = \(Self.walCheckpointPages);
                        PRAGMA journal_size_limit = \(Self.walSizeLimit);
                        PRAGMA cache_size = -\(Self.writerCacheKiB);
                        PRAGMA temp_store = MEMORY
                        """)
            }
            try Schema.migrator.migrate(pool)
        } catch {
            throw .cannotOpen(path: path, detail: "\(error)")
        }
    }

    /// Opens the store at `path` for reading only: a read-only connection, no migration and no write. A command
    /// that only reads (`campusfs search`) so neither waits for the daemon's writer nor syncs the disk, nor creates
    /// a WAL just to delete it on close (docs/search.md, "Latency"). Nil when the schema is not the current one:
    /// only ``init(path:)`` migrates.
    public static func readOnly(path: String) throws(StoreError) -> MetadataStore? {
        BlockingPool.checkBlockingAllowed("opening the store at \(path)")
        _ = MetadataStore.memoryStatisticsOff
        var configuration = Configuration()
        configuration.readonly = true
        configuration.maximumReaderCount = Self.readOnlyReaders
        configuration.busyMode = .timeout(Self.busyTimeout)
        configuration.label = "campusfs.metadata.readonly"
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA cache_size = -\(Self.readOnlyCacheKiB)")
        }
        do {
            let pool = try DatabasePool(path: path, configuration: configuration)
            guard try pool.read(Schema.migrator.hasCompletedMigrations) else { return nil }
            return MetadataStore(path: path, readOnlyPool: pool)
        } catch {
            throw .cannotOpen(path: path, detail: "\(error)")
        }
    }

    private init(path: String, readOnlyPool: DatabasePool) {
        self.path = path
        temporaryDirectory = nil
        pool = readOnlyPool
        listingReaders = ListingReaders(path: path)
    }

    deinit {
        listingReaders.close()
        if let temporaryDirectory {
            try? pool.close()
            try? FileManager.default.removeItem(at: temporaryDirectory)
        }
    }

    /// Creates the file with mode 0600 before SQLite does (SQLite would use the umask); SQLite gives its `-wal`
    /// and `-shm` files the database file's mode. An existing file is narrowed to 0600 (docs/architecture.md, "Paths").
    private static func createPrivateFile(at path: String) throws(StoreError) {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .cannotOpen(path: path, detail: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        guard fchmod(descriptor, 0o600) == 0 else {
            throw .cannotOpen(path: path, detail: String(cString: strerror(errno)))
        }
    }

    /// What an error from GRDB or a body means for the user: "disk full" rather than "SQLite error 13".
    private func failure(_ error: any Error, while operation: String) -> StoreError {
        switch error {
        case let error as StoreError: error
        case let error as DatabaseError where error.resultCode == .SQLITE_FULL:
            .diskFull(path: path, operation: operation)
        default: .database(path: path, operation: operation, detail: "\(error)")
        }
    }

    /// One read transaction; errors become `StoreError` naming the operation.
    func read<T>(_ operation: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try pool.read(body)
        } catch {
            throw failure(error, while: operation)
        }
    }

    /// One statement without a transaction around it (a single SELECT is atomic by itself): the hot FUSE paths
    /// `lookup` and `getattr` save the BEGIN/COMMIT.
    func readStatement<T>(_ operation: String, _ body: (Database) throws -> T) throws(StoreError) -> T {
        do {
            return try pool.unsafeRead(body)
        } catch {
            throw failure(error, while: operation)
        }
    }

    /// One statement of a readdir on one of ``listingReaders``' connections, outside GRDB; errors become
    /// `StoreError` naming the operation.
    func readListing<T>(_ operation: String, _ body: (ListingConnection) throws -> T) throws(StoreError) -> T {
        do {
            return try listingReaders.withConnection(body)
        } catch {
            throw failure(error, while: operation)
        }
    }

    /// Runs `body` with this store on ``BlockingPool/shared``: how code in a task reads and writes,
    /// `try await store.run { try $0.applyCourse(content, now: now) }`.
    public func run<T: Sendable>(
        _ body: @escaping @Sendable (MetadataStore) throws(StoreError) -> T
    ) async throws(StoreError) -> T {
        try await BlockingPool.shared.run { () throws(StoreError) in try body(self) }
    }

    /// When a write transaction must be on disk.
    enum Durability {
        /// When the call returns (`synchronous = FULL`, an `fsync` of the WAL at commit): the user's tags,
        /// ratings, flags, pins and what they read, which nothing else could restore.
        case synced
        /// At the next synced commit or checkpoint (`synchronous = NORMAL`): what a refresh stores, which the next
        /// refresh fetches again. A power loss may take the last such commits, never leaves half of one; a crash
        /// of the daemon alone loses nothing (the WAL is in the page cache). A first fill of `huge` commits 1,000
        /// of these (docs/performance.md, "The store's I/O in a first fill").
        case deferred

        var pragma: String {
            switch self {
            case .synced: "PRAGMA synchronous = FULL"
            case .deferred: "PRAGMA synchronous = NORMAL"
            }
        }
    }

    /// One write transaction, committed before returning, on disk as `durability` says. Each write sets its level
    /// on the (single) writer connection before it begins (SQLite takes it only outside a transaction), so no
    /// write inherits another's. A synced commit syncs the whole WAL, deferred commits before it too.
    func write<T>(_ operation: String, durability: Durability = .synced, _ body: (Database) throws -> T)
        throws(StoreError) -> T
    {
        BlockingPool.checkBlockingAllowed("SQLite write: \(operation)")
        do {
            return try pool.writeWithoutTransaction { db in
                try db.run(durability.pragma)
                var result: T?
                try db.inTransaction {
                    result = try body(db)
                    return .commit
                }
                guard let result else { preconditionFailure("a committed transaction has its body's result") }
                return result
            }
        } catch {
            throw failure(error, while: operation)
        }
    }
}
