import Foundation
import GRDB
import StudIPModel
import Testing

@testable import MetadataStore

/// Issue 31: migration v14 spells `node`'s CHECK constraints as `=`/`OR` chains, because SQLite builds a temporary
/// b-tree for an `IN` list of more than two constants at every execution of a statement: each node INSERT built two
/// (docs/performance.md, "Daemon CPU a document"). A store from before upgrades with its tree, inodes, user data and
/// search rows as they were.
@Suite struct NodeCheckTests {
    let course = "WS 2026-27/INF-101 Foo"
    static let v13 = "v13: no id indexes on details"

    /// The opcodes SQLite runs for `sql`.
    func opcodes(_ sql: String, _ db: Database) throws -> [String] {
        let statement = try db.makeStatement(sql: "EXPLAIN " + sql)
        statement.setUncheckedArguments([])
        return try Row.fetchAll(statement).map { try $0.decode(String.self, forColumn: "opcode") }
    }

    func nodeSQL(_ db: Database) throws -> String? {
        try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'node'")
    }

    /// The writes a first fill runs per item and a readdir's two statements build no temporary b-tree (compiled on
    /// the writer: a read-only connection compiles an INSERT without its constraint checks).
    @Test func noStatementRunPerItemBuildsATemporaryBTree() throws {
        let store = try MetadataStore.temporary()
        try store.pool.write { db in
            for (name, sql) in [
                ("node insert", TreeEditor.insertSQL), ("folder insert", FolderRecord.sql.insert),
                ("document insert", DocumentRecord.sql.insert), ("listing", QuerySQL.listing),
                ("children", QuerySQL.children),
            ] {
                let opcodes = try opcodes(sql, db)
                #expect(!opcodes.contains("OpenEphemeral"), "\(name)")
            }
        }
    }

    @Test func aStoreFromBeforeUpgradesAndKeepsEverything() throws {
        var listing = content(
            info101, folders: [folder("f", in: root(info101), "Folien")],
            documents: [
                document("a", in: "f", "Blatt 1.pdf"), document("b", in: "f", "Link.url", size: 0),
                document("gone", in: "f", "Alt.pdf"),
            ])
        let store = try MetadataStore.withCourse(listing)
        listing.documents.removeAll { $0.id == "gone" }
        listing.documents.append(document("c", in: "f", "Blatt 2.pdf"))
        _ = try store.applyCourse(listing, now: now + day)
        listing.documents.removeAll { $0.id == "c" }
        _ = try store.applyCourse(listing, now: now + day)
        listing.documents.append(document("c", in: "f", "Blatt 2.pdf"))
        _ = try store.applyCourse(listing, now: now + 2 * day)
        let a = try store.inode(course + "/Folien/Blatt 1.pdf")
        let b = try store.inode(course + "/Folien/Link.url")
        let f = try store.inode(course + "/Folien")
        _ = try store.setTags(["klausur", "wichtig"], inode: a)
        try store.setRating(7, inode: a)
        try store.setPinned(true, inode: f)
        try store.setFlagged(true, inode: b)
        #expect(try store.recordHostSize(4711, inode: b))
        listing.documents.append(document("e", in: "f", "Entwurf.pdf"))
        _ = try store.applyCourse(listing, now: now + 2 * day)
        listing.documents.removeAll { $0.id == "e" }
        _ = try store.applyCourse(listing, now: now + 2 * day)
        let walk = try store.walk().map { "\($0.path) \($0.node.inode)" }
        let inodes = try store.walk().map(\.node.inode)
        let infos = try inodes.map { try store.info(inode: $0) }
        let states = try [a, b, f].map { try store.userState(inode: $0) }
        let highlighted = try store.highlightedDocuments().map(\.node.inode)
        #expect(!highlighted.isEmpty)
        // The newest inode was deleted: the counter, not the largest inode left, says what comes next.
        let counter = try store.pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT seq FROM sqlite_sequence WHERE name = 'node'")
        }
        #expect(counter.map { $0 > inodes.max() ?? 0 } == true)

        // The node table of a v13 store, as the migrations up to v13 create it.
        let previous = try DatabaseQueue()
        try Schema.migrator.migrate(previous, upTo: Self.v13)
        let v13SQL = try #require(try previous.read { try nodeSQL($0) })
        #expect(v13SQL.contains("item_kind IN ("))
        // Back to that table, rebuilt the documented way with the rows as they are (foreign keys off, as GRDB's
        // migrations turn them off: dropping `node` would cascade): what an upgrade finds.
        try store.pool.writeWithoutTransaction { db in
            try db.execute(sql: "PRAGMA foreign_keys = OFF")
            defer { try? db.execute(sql: "PRAGMA foreign_keys = ON") }
            let columns =
                "inode, parent, name, base_name, kind, item_kind, studip_id, course_id, size, mtime, symlink_target, "
                + "created, highlighted_below"
            try db.execute(
                sql: v13SQL.replacingOccurrences(of: "CREATE TABLE \"node\"", with: "CREATE TABLE node_old") + ";"
                    + """
                    INSERT INTO node_old (\(columns)) SELECT \(columns) FROM node;
                    UPDATE sqlite_sequence SET seq = (SELECT seq FROM sqlite_sequence WHERE name = 'node')
                    WHERE name = 'node_old';
                    DROP TABLE node;
                    ALTER TABLE node_old RENAME TO node;
                    CREATE UNIQUE INDEX node_name ON node(parent, name);
                    CREATE INDEX node_parent ON node(parent);
                    CREATE INDEX node_course ON node(course_id);
                    CREATE UNIQUE INDEX node_item ON node(item_kind, studip_id,
                        (CASE WHEN item_kind IN ('courseLink', 'tagLink') THEN parent ELSE 0 END));
                    DELETE FROM grdb_migrations WHERE identifier = 'v14: node checks without IN lists';
                    """)
            #expect(try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").isEmpty)
            let sql = try nodeSQL(db)
            let opcodes = try opcodes(TreeEditor.insertSQL, db)
            #expect(sql == v13SQL)
            #expect(opcodes.contains("OpenEphemeral"))
        }

        let reopened = try MetadataStore(path: store.path)
        // On the writer: a read-only connection compiles an INSERT without its constraint checks.
        try reopened.pool.write { db in
            let opcodes = try opcodes(TreeEditor.insertSQL, db)
            let sql = try nodeSQL(db)
            #expect(!opcodes.contains("OpenEphemeral"))
            #expect(sql?.contains(" IN (") == false)
        }
        #expect(try reopened.walk().map { "\($0.path) \($0.node.inode)" } == walk)
        #expect(try inodes.map { try reopened.info(inode: $0) } == infos)
        #expect(try [a, b, f].map { try reopened.userState(inode: $0) } == states)
        #expect(try reopened.highlightedDocuments().map(\.node.inode) == highlighted)
        #expect(try reopened.node(inode: b)?.size == 4711)
        #expect(try reopened.pinnedDocumentInodes() == [a, b, try reopened.inode(course + "/Folien/Blatt 2.pdf")])
        #expect(try reopened.resolve(path: "Tags/klausur/Blatt 1.pdf").inode == a)
        #expect(try reopened.search("blatt").map(\.documentID).sorted() == ["a", "c"])

        // Inodes go on from the counter; a deleted document still takes its search row; the CHECKs still hold.
        listing.documents.append(document("d", in: "f", "Blatt 3.pdf"))
        listing.documents.removeAll { $0.id == "b" }
        _ = try reopened.applyCourse(listing, now: now + 3 * day)
        #expect(try reopened.inode(course + "/Folien/Blatt 3.pdf") == (counter ?? 0) + 1)
        #expect(try reopened.search("link").isEmpty)
        #expect(try reopened.userState(inode: a).tags == ["klausur", "wichtig"])
        try reopened.pool.write { db in
            for (kind, item) in [("file", "bogus"), ("pipe", "document")] {
                #expect(throws: DatabaseError.self) {
                    try db.execute(
                        sql: """
                            INSERT INTO node (parent, name, base_name, kind, item_kind, mtime, created)
                            VALUES (1, 'x', 'x', ?, ?, 0, 0)
                            """, arguments: [kind, item])
                }
            }
        }
    }
}
