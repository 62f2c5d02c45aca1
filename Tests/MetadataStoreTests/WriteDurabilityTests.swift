import Foundation
import GRDB
import StudIPModel
import Synchronization
import Testing

@testable import MetadataStore

/// Issue 31: what a refresh stores is committed with `synchronous = NORMAL` (no `fsync` a course), the user's own
/// data with `FULL`; the WAL is checkpointed every `walCheckpointPages`, not SQLite's 1,000 (docs/performance.md,
/// "The store's I/O in a first fill").
@Suite struct WriteDurabilityTests {
    /// The `synchronous` level each COMMIT on the writer connection ran under while `body` ran, in order.
    func commitLevels(_ store: MetadataStore, _ body: () throws -> Void) throws -> [String] {
        let log = Mutex<[String]>([])
        store.pool.writeWithoutTransaction { db in
            db.trace { event in
                let sql = event.description
                guard !sql.hasPrefix("--") else { return }
                log.withLock { $0.append(sql) }
            }
        }
        try body()
        store.pool.writeWithoutTransaction { db in db.trace(options: .statement, nil) }
        var level = "unset"
        var levels: [String] = []
        for sql in log.withLock({ $0 }) {
            if sql.hasPrefix("PRAGMA synchronous = ") {
                level = String(sql.dropFirst("PRAGMA synchronous = ".count))
            } else if sql.hasPrefix("COMMIT") {
                levels.append(level)
            }
        }
        return levels
    }

    @Test func refreshesCommitWithoutSyncAndTheUsersWritesWithIt() throws {
        let store = try MetadataStore.temporary()
        let listing = content(
            info101, folders: [folder("f", in: root(info101), "Folien")],
            documents: [document("d1", in: "f", "Blatt 1.pdf")])
        let refreshes = try commitLevels(store) {
            _ = try store.applyOverview(overview([info101]), now: now)
            _ = try store.applyCourse(listing, now: now)
        }
        #expect(refreshes == ["NORMAL", "NORMAL"])
        let inode = try store.inode("WS 2026-27/INF-101 Foo/Folien/Blatt 1.pdf")
        let users = try commitLevels(store) {
            _ = try store.setTags(["exam"], inode: inode)
            _ = try store.applyCourse(listing, now: now + day)
            try store.setRating(3, inode: inode)
        }
        #expect(users == ["FULL", "NORMAL", "FULL"])
        // A deferred commit is a commit: another connection reads it at once.
        let reader = try #require(try MetadataStore.readOnly(path: store.path))
        #expect(try reader.names("WS 2026-27/INF-101 Foo/Folien") == ["Blatt 1.pdf"])
    }

    /// Frames in the WAL and frames checkpointed, from a PASSIVE checkpoint (which waits for no one).
    func walFrames(_ store: MetadataStore) throws -> (log: Int, checkpointed: Int) {
        try store.pool.writeWithoutTransaction { db in
            let row = try #require(try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)"))
            return (try row.decode(atIndex: 1), try row.decode(atIndex: 2))
        }
    }

    /// Commits `pages` pages of 4 KiB in one transaction, then one small commit: after SQLite's default interval
    /// (1,000 pages) the first commit would have been checkpointed and the second would start the WAL anew.
    func writePages(_ pages: Int, _ store: MetadataStore) throws {
        try store.pool.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS filler (bytes BLOB)")
            for _ in 0..<pages {
                try db.execute(sql: "INSERT INTO filler VALUES (zeroblob(4000))")
            }
        }
        try store.pool.write { db in try db.execute(sql: "INSERT INTO filler VALUES (x'00')") }
    }

    func walBytes(_ store: MetadataStore) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: store.path + "-wal")[.size] as? Int)
    }

    @Test func theWALIsCheckpointedEveryWalCheckpointPagesAndThenCutBack() throws {
        let store = try MetadataStore.temporary()
        try writePages(1_200, store)
        #expect(try walFrames(store).log > 1_200, "no checkpoint at SQLite's default 1,000 pages")
        // Past walCheckpointPages, the commit checkpoints; the next one starts the WAL anew and cuts the file back.
        try writePages(MetadataStore.walCheckpointPages + 500, store)
        #expect(try walFrames(store).log < 10)
        #expect(try walBytes(store) <= MetadataStore.walSizeLimit)
    }

    @Test func onlyTheWriterHasTheLargerPageCache() throws {
        let store = try MetadataStore.temporary()
        let writer = store.pool.writeWithoutTransaction { db in try? Int.fetchOne(db, sql: "PRAGMA cache_size") }
        let reader = try store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") }
        #expect(writer == -MetadataStore.writerCacheKiB)
        #expect(reader == -2000, "SQLite's default: 16 readers of 8 MiB would be 128 MB of RSS")
    }

    /// The writer keeps its statement journals in memory (2 = MEMORY): a first fill of `large` opened, wrote and
    /// unlinked 37 of them in /var/tmp, one a course (docs/performance.md, "Daemon CPU a document").
    @Test func theWritersTemporaryFilesStayInMemory() throws {
        let store = try MetadataStore.temporary()
        let writer = store.pool.writeWithoutTransaction { db in try? Int.fetchOne(db, sql: "PRAGMA temp_store") }
        #expect(writer == 2)
    }
}
