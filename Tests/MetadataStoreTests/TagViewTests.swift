import Foundation
import GRDB
import StudIPModel
import Testing

@testable import MetadataStore

/// The read-only tag view (issue 16): `Tags/<tag>/<name>` symlinks derived from the user's tags and the tree.
@Suite struct TagViewTests {
    let course = "WS 2026-27/INF-101 Foo"

    func courseContent(_ documents: [RemoteDocument]) -> CourseContent {
        content(
            info101, folders: [folder("f", in: root(info101), "Folien"), folder("u", in: root(info101), "Übungen")],
            documents: documents)
    }

    var twoDocuments: [RemoteDocument] {
        [document("d1", in: "f", "a.pdf"), document("d2", in: "u", "Blatt 1.pdf")]
    }

    func target(_ store: MetadataStore, _ path: String) throws -> String? {
        try store.resolve(path: path, followSymlinks: false).symlinkTarget
    }

    @Test func tagsBecomeFoldersOfRelativeLinks() throws {
        let store = try MetadataStore.withCourse(courseContent(twoDocuments))
        #expect(try store.names("") == ["WS 2026-27"], "no view while nothing is tagged")

        let summary = try store.setTags(["exam", "week/3"], inode: store.inode(course + "/Folien/a.pdf"))
        try store.setTags(["exam"], inode: store.inode(course + "/Übungen"))
        try store.setTags(["wichtig"], inode: store.inode(course))

        #expect(try store.names("") == ["WS 2026-27", "Tags"])
        #expect(try store.names("Tags") == ["exam", "week-3", "wichtig"])
        #expect(try store.names("Tags/exam") == ["a.pdf", "Übungen"])
        #expect(try target(store, "Tags/exam/a.pdf") == "../../" + course + "/Folien/a.pdf")
        #expect(try target(store, "Tags/week-3/a.pdf") == "../../" + course + "/Folien/a.pdf")
        #expect(try target(store, "Tags/exam/Übungen") == "../../" + course + "/Übungen")
        #expect(try target(store, "Tags/wichtig/INF-101 Foo") == "../../" + course)
        #expect(try store.resolve(path: "Tags/exam/a.pdf").inode == store.inode(course + "/Folien/a.pdf"))
        let link = try store.resolve(path: "Tags/exam/a.pdf", followSymlinks: false)
        #expect(link.kind == .symlink && link.item == .tagLink)
        #expect(link.size == Int64(("../../" + course + "/Folien/a.pdf").utf8.count))

        // What the filesystem invalidates: the root's listing and the name `Tags`, for a view that appeared.
        #expect(summary.changedNodes.contains(Node.rootInode))
        #expect(summary.changedNames.contains(.init(parent: Node.rootInode, name: "Tags")))

        // Not items: no user state on the view.
        #expect(throws: StoreError.notAnItem(path: "Tags/exam")) {
            try store.setTags(["x"], inode: store.inode("Tags/exam"))
        }
        #expect(throws: StoreError.notAnItem(path: "Tags")) { try store.setPinned(true, inode: store.inode("Tags")) }
    }

    @Test func linksFollowRenamesMovesAndDeletions() throws {
        let store = try MetadataStore.withCourse(courseContent(twoDocuments))
        try store.setTags(["exam"], inode: store.inode(course + "/Folien/a.pdf"))
        try store.setTags(["exam"], inode: store.inode(course + "/Übungen/Blatt 1.pdf"))
        let link = try store.inode("Tags/exam/a.pdf")
        let tagFolder = try store.inode("Tags/exam")

        // a.pdf renamed and moved into Übungen on Stud.IP: the link keeps its inode, takes the new name and target.
        var moved = try store.applyCourse(
            courseContent([document("d1", in: "u", "b.pdf"), document("d2", in: "u", "Blatt 1.pdf")]), now: now)
        #expect(try store.names("Tags/exam") == ["b.pdf", "Blatt 1.pdf"])
        #expect(try store.inode("Tags/exam/b.pdf") == link)
        #expect(try target(store, "Tags/exam/b.pdf") == "../../" + course + "/Übungen/b.pdf")
        #expect(moved.changedNodes.isSuperset(of: [link, tagFolder]), "the target and the listing are re-read")
        #expect(moved.changedNames.contains(.init(parent: tagFolder, name: "a.pdf")))

        // The course moves to a newer semester: every target follows.
        let later = RemoteSemester(
            id: "sem-ss27", title: "SS 2027", begin: ws2627.end + 1, end: ws2627.end + 180 * day)
        let movedCourse = makeCourse(info101.id, "INF-101", "Foo", [ws2627, later])
        moved = try store.applyOverview(overview([movedCourse], semesters: allSemesters + [later]), now: now)
        #expect(try target(store, "Tags/exam/b.pdf") == "../../SS 2027/INF-101 Foo/Übungen/b.pdf")
        #expect(moved.changedNodes.contains(link))
        #expect(try store.resolve(path: "Tags/exam/b.pdf").inode == store.inode("SS 2027/INF-101 Foo/Übungen/b.pdf"))

        // Deleted on Stud.IP: its link goes; the last one takes the tag folder and the view with it.
        var gone = try store.applyCourse(
            content(
                movedCourse, folders: [folder("u", in: root(info101), "Übungen")],
                documents: [document("d2", in: "u", "Blatt 1.pdf")]), now: now)
        #expect(try store.names("Tags/exam") == ["Blatt 1.pdf"])
        #expect(gone.changedNames.contains(.init(parent: tagFolder, name: "b.pdf")))
        gone = try store.applyCourse(content(movedCourse), now: now)
        #expect(try store.names("") == ["WS 2026-27", "SS 2027"])
        #expect(gone.changedNames.contains(.init(parent: Node.rootInode, name: "Tags")))

        // The tags outlive the deletion (by Stud.IP id): the document comes back, and so does its link, under a
        // new inode (never one handed out before).
        _ = try store.applyCourse(
            content(
                movedCourse, folders: [folder("u", in: root(info101), "Übungen")],
                documents: [document("d2", in: "u", "Blatt 1.pdf")]), now: now)
        #expect(try store.names("Tags/exam") == ["Blatt 1.pdf"])
        #expect(try store.inode("Tags/exam/Blatt 1.pdf") > link)
    }

    @Test func removingATagFromItsLastItemRemovesItsFolder() throws {
        let store = try MetadataStore.withCourse(courseContent(twoDocuments))
        let a = try store.inode(course + "/Folien/a.pdf")
        try store.setTags(["exam", "draft"], inode: a)
        let view = try store.inode("Tags")
        let exam = try store.inode("Tags/exam")
        let summary = try store.setTags(["exam"], inode: a)
        #expect(try store.names("Tags") == ["exam"])
        #expect(try store.inode("Tags/exam") == exam, "the other tag's folder stays as it was")
        #expect(summary.changedNames.contains(.init(parent: view, name: "draft")))
        #expect(summary.changedNodes.contains(view))
        let b = try store.inode(course + "/Übungen/Blatt 1.pdf")
        try store.setTags(["other"], inode: b)
        try store.setTags([], inode: a)
        #expect(try store.names("Tags") == ["other"], "another item's tag keeps the view")
        #expect(try store.inode("Tags") == view)
        try store.setTags([], inode: b)
        #expect(try store.names("") == ["WS 2026-27"])
    }

    @Test func sameNamesInOneTagFolderAreNumberedOldestFirst() throws {
        let store = try MetadataStore.withCourse(
            courseContent([
                document("d1", in: "f", "a.pdf", created: now - 10 * day),
                document("d2", in: "u", "a.pdf", created: now - 20 * day),
                document("d3", in: "u", "v1.2", mime: "0"),
            ]))
        try store.setTags(["exam"], inode: store.inode(course + "/Folien/a.pdf"))
        try store.setTags(["exam"], inode: store.inode(course + "/Übungen/a.pdf"))
        // The first one keeps its name (names are sticky); a document link is numbered before its extension.
        #expect(try store.names("Tags/exam") == ["a.pdf", "a (2).pdf"])
        #expect(try target(store, "Tags/exam/a (2).pdf") == "../../" + course + "/Übungen/a.pdf")

        // Tags that sanitize alike get numbered folders.
        try store.setTags(["a/b", "a-b"], inode: store.inode(course + "/Übungen/v1.2"))
        #expect(try store.names("Tags") == ["exam", "a-b", "a-b (2)"])
        try store.setTags(["a/b", "a-b", "exam"], inode: store.inode(course + "/Übungen/v1.2"))
        try store.setTags(["exam"], inode: store.inode(course + "/Folien"))
        #expect(try store.names("Tags/exam") == ["a.pdf", "a (2).pdf", "v1.2", "Folien"])
    }

    /// The view and a semester titled `Tags`: whoever holds the name keeps it; arriving together, the semester wins.
    @Test func aSemesterNamedTagsAndTheViewNeverCollide() throws {
        let tagsSemester = RemoteSemester(
            id: "sem-tags", title: "Tags", begin: ws2627.end + 1, end: ws2627.end + 180 * day)
        let semesters = allSemesters + [tagsSemester]
        let other = makeCourse("c-202", "INF-202", "Bar", [tagsSemester])

        // The semester was there first: the view yields.
        let store = try MetadataStore.withCourse(courseContent(twoDocuments))
        _ = try store.applyOverview(overview([info101, other], semesters: semesters), now: now)
        try store.setTags(["exam"], inode: store.inode(course + "/Folien/a.pdf"))
        #expect(try store.names("") == ["WS 2026-27", "Tags", "Tags (2)"])
        #expect(try store.resolve(path: "Tags").item == .semester)
        #expect(try store.names("Tags (2)/exam") == ["a.pdf"])
        #expect(try store.resolve(path: "Tags (2)/exam/a.pdf").inode == store.inode(course + "/Folien/a.pdf"))

        // The view was there first: the semester yields, and keeps `Tags (2)` (names are sticky).
        let second = try MetadataStore.withCourse(courseContent(twoDocuments))
        try second.setTags(["exam"], inode: second.inode(course))
        _ = try second.applyOverview(overview([info101, other], semesters: semesters), now: now)
        #expect(try second.names("") == ["WS 2026-27", "Tags", "Tags (2)"])
        #expect(try second.resolve(path: "Tags").item == .tagView)
        #expect(try second.resolve(path: "Tags (2)").item == .semester)

        // Both appear in one refresh (the tagged course comes back in the semester `Tags`): the semester wins.
        _ = try second.applyOverview(overview([], semesters: semesters), now: now)
        #expect(try second.names("") == [])
        let moved = makeCourse(info101.id, "INF-101", "Foo", [tagsSemester])
        _ = try second.applyOverview(overview([moved], semesters: semesters), now: now)
        #expect(try second.names("").sorted() == ["Tags", "Tags (2)"])
        #expect(try second.resolve(path: "Tags").item == .semester)
        #expect(try target(second, "Tags (2)/exam/INF-101 Foo") == "../../Tags/INF-101 Foo")
    }

    /// Migration v4 rebuilds `node`: rows, inodes and the AUTOINCREMENT counter survive it.
    @Test func upgradingKeepsInodesAndNeverReusesOne() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tagview-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("campusfs.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try Schema.migrator.migrate(queue, upTo: "v3: search index")
        try queue.write { db in
            for name in ["kept", "deleted"] {
                try db.execute(
                    sql: """
                        INSERT INTO node (parent, name, base_name, kind, item_kind, mtime, created)
                        VALUES (1, ?, ?, 'directory', 'ongoing', 0, 0)
                        """, arguments: [name, name])
            }
            try db.execute(sql: "DELETE FROM node WHERE name = 'deleted'")
        }
        try queue.close()

        let store = try MetadataStore(path: path)
        #expect(try store.names("") == ["kept"])
        #expect(try store.inode("kept") == 2)
        _ = try store.applyOverview(overview([info101]), now: now)
        #expect(try store.inode("WS 2026-27") == 4, "inode 3 belonged to the deleted node")
    }
}
