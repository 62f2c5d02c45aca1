import Foundation
import GRDB
import StudIPModel
import Testing

@testable import MetadataStore

/// Issue 31: migration v13 rebuilds `document` and `folder` without the UNIQUE index on their Stud.IP id, which
/// repeated `node_item`'s keys (docs/performance.md, "Daemon CPU a document"). A store from before it upgrades with
/// its folders, documents, tags, highlights and search rows as they were, and a document that goes still takes its
/// search row along (the trigger is rebuilt with the table).
@Suite struct DetailIDIndexTests {
    let course = "WS 2026-27/INF-101 Foo"

    func indexes(_ table: String, _ store: MetadataStore) throws -> [String] {
        try store.pool.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM pragma_index_list(?) ORDER BY name", arguments: [table])
        }
    }

    /// What looks a document up by its Stud.IP id goes through `node_item`: with no index on `document.id`, a
    /// lookup there reads the whole table (naming in a directory did so for every child, a tenfold slower
    /// `applyCourseExtras` in a first fill).
    @Test func nothingLooksUpADocumentByItsIDColumn() throws {
        let store = try MetadataStore.withCourse(
            content(
                info101, folders: [folder("f", in: root(info101), "Folien")],
                documents: [document("a", in: "f", "A.pdf")]))
        let statements = [
            ("naming", TreeEditor.childrenSQL),
            ("subject", IndexingSQL.subjects + " WHERE n.item_kind = 'document' AND n.studip_id = ?"),
            ("counts", IndexingSQL.counts), ("failures", IndexingSQL.failures),
        ]
        try store.pool.read { db in
            for (name, sql) in statements {
                let statement = try db.makeStatement(sql: "EXPLAIN QUERY PLAN " + sql)
                statement.setUncheckedArguments([])
                let details = try Row.fetchAll(statement).map { try $0.decode(String.self, forColumn: "detail") }
                #expect(!details.isEmpty)
                for detail in details {
                    // The extraction rows are read whole by design (counts and failures of all of them).
                    let scan = detail.hasPrefix("SCAN ") && detail != "SCAN e"
                    #expect(!scan && !detail.contains("AUTOMATIC"), "\(name): \(detail)")
                }
            }
        }
    }

    @Test func aStoreWithTheIndexesUpgradesAndKeepsItsRows() throws {
        var listing = content(
            info101, folders: [folder("f", in: root(info101), "Folien")],
            documents: [document("a", in: "f", "Blatt 1.pdf"), document("b", in: "f", "Link.url", size: 0)])
        let store = try MetadataStore.withCourse(listing)
        listing.documents.append(document("c", in: "f", "Blatt 2.pdf"))
        _ = try store.applyCourse(listing, now: now + day)
        let f = try store.inode(course + "/Folien")
        let a = try store.inode(course + "/Folien/Blatt 1.pdf")
        let b = try store.inode(course + "/Folien/Link.url")
        let c = try store.inode(course + "/Folien/Blatt 2.pdf")
        _ = try store.setTags(["klausur"], inode: a)
        #expect(try store.recordHostSize(4711, inode: b))
        let before = try [f, a, b, c].map { try store.info(inode: $0) }
        #expect(before.last??.highlight == .new)
        let access = try store.folderAccess(inode: f)
        // Back to the schema before v13, as a store of then holds it: what an upgrade finds.
        try store.pool.write { db in
            try db.execute(
                sql: """
                    CREATE UNIQUE INDEX document_id ON document(id);
                    CREATE UNIQUE INDEX folder_id ON folder(id);
                    DELETE FROM grdb_migrations WHERE identifier = 'v13: no id indexes on details';
                    """)
        }
        #expect(try indexes("document", store) == ["document_highlighted", "document_id"])

        let reopened = try MetadataStore(path: store.path)
        #expect(try indexes("document", reopened) == ["document_highlighted"])
        #expect(try indexes("folder", reopened) == [])
        #expect(try [f, a, b, c].map { try reopened.info(inode: $0) } == before)
        #expect(try reopened.folderAccess(inode: f) == access)
        #expect(try reopened.node(inode: b)?.size == 4711)
        #expect(try reopened.userState(inode: a).tags == ["klausur"])
        #expect(try reopened.search("blatt").map(\.documentID).sorted() == ["a", "c"])
        #expect(try reopened.search("link").map(\.documentID) == ["b"])
        #expect(try reopened.resolve(path: "Tags/klausur/Blatt 1.pdf").inode == a)

        listing.documents.removeAll { $0.id == "b" }
        _ = try reopened.applyCourse(listing, now: now + day)
        #expect(try reopened.search("link").isEmpty)
        #expect(try reopened.pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM search_document") } == 2)
        #expect(try reopened.highlightedDocuments().map(\.node.inode) == [c])
    }
}
