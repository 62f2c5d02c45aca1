import Foundation
import GRDB
import StudIPModel
import Testing

@testable import MetadataStore

/// Issue 29: migration v9 drops the never-used `document.etag`; a store from before it upgrades with its
/// documents, their tags, highlights, host sizes and search rows as they were.
@Suite struct DroppedETagTests {
    let course = "WS 2026-27/INF-101 Foo"

    @Test func aStoreWithTheColumnUpgradesAndKeepsItsDocuments() throws {
        let store = try MetadataStore.withCourse(
            content(
                info101, folders: [folder("f", in: root(info101), "Folien")],
                documents: [document("a", in: "f", "Blatt 1.pdf"), document("b", in: "f", "Link.url", size: 0)]))
        let a = try store.inode(course + "/Folien/Blatt 1.pdf")
        let b = try store.inode(course + "/Folien/Link.url")
        _ = try store.setTags(["klausur"], inode: a)
        #expect(try store.recordHostSize(4711, inode: b))
        let before = try [a, b].map { try store.info(inode: $0) }
        // Back to schema v8, the column filled as an older version could have: what an upgrade finds.
        try store.pool.write { db in
            try db.execute(
                sql: """
                    ALTER TABLE document ADD COLUMN etag TEXT;
                    UPDATE document SET etag = '"e-' || id || '"';
                    DELETE FROM grdb_migrations WHERE identifier = 'v9: no document etag';
                    """)
        }

        let reopened = try MetadataStore(path: store.path)
        let columns = try reopened.pool.read { db in try db.columns(in: "document").map(\.name) }
        #expect(!columns.contains("etag") && columns.contains("file_id") && columns.contains("host_size"))
        #expect(try [a, b].map { try reopened.info(inode: $0) } == before)
        #expect(try reopened.userState(inode: a).tags == ["klausur"])
        #expect(try reopened.search("blatt").map(\.documentID) == ["a"])
        #expect(try reopened.resolve(path: "Tags/klausur/Blatt 1.pdf").inode == a)
    }
}
