import Foundation
import StudIPModel
import Testing

@testable import MetadataStore

@Suite struct HighlightTests {
    let course = "WS 2026-27/INF-101 Foo"
    let slides = folder("f-slides", in: root(info101), "Folien")
    let old = document("d-old", in: "f-slides", "Alt.pdf", created: now - 60 * day)
    let recent = document("d-recent", in: "f-slides", "Neu.pdf", created: now - 60 * day, changed: now - 2 * day)
    let edge = document("d-edge", in: root(info101), "Grenze.pdf", created: now - 7 * day + 60)

    /// The same document directly in the course directory.
    func atRoot(_ document: RemoteDocument) -> RemoteDocument {
        var moved = document
        moved.folderID = root(info101)
        return moved
    }

    func highlight(_ store: MetadataStore, _ path: String) throws -> Highlight? {
        try store.info(inode: store.inode(course + "/" + path))?.highlight
    }

    @Test func aFirstSyncHighlightsOnlyTheLastSevenDays() throws {
        let store = try MetadataStore.withCourse(content(info101, folders: [slides], documents: [old, recent, edge]))
        #expect(try highlight(store, "Folien/Alt.pdf") == nil)
        #expect(try highlight(store, "Folien/Neu.pdf") == .new)
        #expect(try highlight(store, "Grenze.pdf") == .new)
        #expect(try store.syncState().firstOverviewAt == now)
    }

    @Test func laterSyncsHighlightNewAndChangedDocuments() throws {
        let store = try MetadataStore.withCourse(content(info101, folders: [slides], documents: [old]))
        let added = document("d-added", in: "f-slides", "Blatt.pdf", created: now - 90 * day)
        var newFile = old
        newFile.fileID = "file-v2"
        _ = try store.applyCourse(content(info101, folders: [slides], documents: [newFile, added]), now: now + day)
        #expect(try highlight(store, "Folien/Blatt.pdf") == .new)
        #expect(try highlight(store, "Folien/Alt.pdf") == .changed)

        // The size counts too; the chdate alone does not: Stud.IP bumps it on renames and moves (captured).
        let store2 = try MetadataStore.withCourse(content(info101, folders: [slides], documents: [old, recent]))
        try store2.markRead(inode: store2.inode(course + "/Folien/Neu.pdf"))
        var touched = old
        touched.changed = now
        touched.name = "Alt (umbenannt).pdf"
        var resized = recent
        resized.size = 1
        let summary = try store2.applyCourse(
            content(info101, folders: [slides], documents: [touched, resized]), now: now + day)
        #expect(try highlight(store2, "Folien/Alt (umbenannt).pdf") == nil)
        #expect(try highlight(store2, "Folien/Neu.pdf") == .changed)
        #expect(summary.changed.map(\.studipID) == [recent.id])
        #expect(summary.moved.map(\.to) == [course + "/Folien/Alt (umbenannt).pdf"])
        // A metadata refresh without a new version changes nothing.
        try store2.markRead(inode: store2.inode(course + "/Folien/Neu.pdf"))
        _ = try store2.applyCourse(content(info101, folders: [slides], documents: [touched, resized]), now: now + day)
        #expect(try highlight(store2, "Folien/Neu.pdf") == nil)
    }

    @Test func anUnreadNewDocumentStaysNewWhenItChanges() throws {
        let store = try MetadataStore.withCourse(content(info101, documents: [atRoot(recent)]))
        var changed = atRoot(recent)
        changed.fileID = "v2"
        _ = try store.applyCourse(content(info101, documents: [changed]), now: now + day)
        #expect(try highlight(store, "Neu.pdf") == .new)
    }

    @Test func readingClearsNewAndChanged() throws {
        let store = try MetadataStore.withCourse(content(info101, documents: [atRoot(recent), atRoot(old)]))
        let inode = try store.inode(course + "/Neu.pdf")
        #expect(try store.markRead(inode: inode))
        #expect(try highlight(store, "Neu.pdf") == nil)
        #expect(try store.markRead(inode: inode) == false)
        #expect(try store.markRead(inode: store.inode(course + "/Alt.pdf")) == false)
    }

    /// The filesystem clears a moment after the open; a refresh in between brought a version nobody has seen.
    @Test func readingAnOlderVersionLeavesTheNewerOneHighlighted() throws {
        let store = try MetadataStore.withCourse(content(info101, documents: [atRoot(old)]))
        let inode = try store.inode(course + "/Alt.pdf")
        var newer = atRoot(old)
        newer.fileID = "file-v2"
        _ = try store.applyCourse(content(info101, documents: [newer]), now: now + day)
        #expect(try store.markRead(inode: inode, version: old.version) == false)
        #expect(try highlight(store, "Alt.pdf") == .changed)
        #expect(try store.markRead(inode: inode, version: newer.version))
        #expect(try highlight(store, "Alt.pdf") == nil)
    }

    @Test func flaggedSurvivesReadsAndRefreshes() throws {
        let store = try MetadataStore.withCourse(content(info101, documents: [atRoot(recent), atRoot(old)]))
        let inode = try store.inode(course + "/Alt.pdf")
        try store.setFlagged(true, inode: inode)
        #expect(try highlight(store, "Alt.pdf") == .flagged)
        try store.markRead(inode: inode)
        _ = try store.applyCourse(content(info101, documents: [atRoot(recent), atRoot(old)]), now: now + day)
        #expect(try highlight(store, "Alt.pdf") == .flagged)
        // A new version shows as changed, and once read the flag shows again.
        var changed = atRoot(old)
        changed.fileID = "v2"
        _ = try store.applyCourse(content(info101, documents: [atRoot(recent), changed]), now: now + 2 * day)
        #expect(try highlight(store, "Alt.pdf") == .changed)
        try store.markRead(inode: inode)
        #expect(try highlight(store, "Alt.pdf") == .flagged)
        try store.setFlagged(false, inode: inode)
        #expect(try highlight(store, "Alt.pdf") == nil)
    }

    @Test func flaggingAcknowledgesAndUnflaggingClearsNew() throws {
        let store = try MetadataStore.withCourse(content(info101, documents: [atRoot(recent)]))
        let inode = try store.inode(course + "/Neu.pdf")
        try store.setFlagged(true, inode: inode)
        #expect(try highlight(store, "Neu.pdf") == .flagged)
        try store.setFlagged(false, inode: inode)
        #expect(try highlight(store, "Neu.pdf") == nil)
        #expect(throws: StoreError.self) { try store.setFlagged(true, inode: store.inode(course)) }
    }

    @Test func aCourseAddedLaterIsNotAFirstSync() throws {
        let store = try MetadataStore.withCourse(content(info101, documents: [atRoot(old)]))
        let later = makeCourse("c-later", "INF-300", "Später", [ws2627])
        _ = try store.applyOverview(overview([info101, later]), now: now + day)
        _ = try store.applyCourse(
            content(later, documents: [document("d-l", in: root(later), "Alt.pdf", created: now - 300 * day)]),
            now: now + day)
        #expect(try store.info(inode: store.inode("WS 2026-27/INF-300 Später/Alt.pdf"))?.highlight == .new)
    }

    @Test func aFirstSyncInterruptedAfterTheOverviewIsStillAFirstSync() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("campusfs-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("campusfs.sqlite").path
        let other = makeCourse("c-other", "INF-102", "Bar", [ws2627])
        do {
            let store = try MetadataStore(path: path)
            _ = try store.applyOverview(overview([info101, other]), now: now)
            _ = try store.applyCourse(content(info101, documents: [atRoot(old)]), now: now)
        }
        // The process died here; the next run refreshes everything again.
        let store = try MetadataStore(path: path)
        _ = try store.applyOverview(overview([info101, other]), now: now + day)
        _ = try store.applyCourse(
            content(other, documents: [document("d-o", in: root(other), "Alt.pdf", created: now - 300 * day)]),
            now: now + day)
        #expect(try store.info(inode: store.inode("WS 2026-27/INF-102 Bar/Alt.pdf"))?.highlight == nil)
        #expect(try store.syncState().firstOverviewAt == now)
    }

    @Test func foldersCountHighlightedDocumentsBelowThem() throws {
        let sub = folder("f-sub", in: "f-slides", "Alt")
        let deep = document("d-deep", in: "f-sub", "Tief.pdf", created: now - day)
        let store = try MetadataStore.withCourse(
            content(info101, folders: [slides, sub], documents: [old, recent, edge, deep]))
        func count(_ path: String) throws -> Int { try store.resolve(path: path).highlightedBelow }
        #expect(try count(course + "/Folien/Alt") == 1)
        #expect(try count(course + "/Folien") == 2)
        #expect(try count(course) == 3)
        #expect(try count("WS 2026-27") == 3)
        #expect(try count("") == 3)
        try store.setFlagged(true, inode: store.inode(course + "/Folien/Alt.pdf"))
        #expect(try count(course + "/Folien") == 3)
        try store.markRead(inode: store.inode(course + "/Folien/Alt/Tief.pdf"))
        #expect(try count(course + "/Folien/Alt") == 0)
        #expect(try count("") == 3)
        // Moving a highlighted document moves its count.
        var moved = recent
        moved.folderID = root(info101)
        _ = try store.applyCourse(
            content(info101, folders: [slides, sub], documents: [old, moved, edge, deep]), now: now)
        #expect(try count(course + "/Folien") == 1)
        #expect(try count(course) == 3)
    }

    @Test func highlightedDocumentsAreListedNewestFirst() throws {
        let store = try MetadataStore.withCourse(content(info101, folders: [slides], documents: [old, recent, edge]))
        try store.setFlagged(true, inode: store.inode(course + "/Folien/Alt.pdf"))
        let listed = try store.highlightedDocuments()
        #expect(listed.map(\.path) == [course + "/Folien/Neu.pdf", course + "/Grenze.pdf", course + "/Folien/Alt.pdf"])
        #expect(listed.map(\.highlight) == [.new, .new, .flagged])
        #expect(listed.allSatisfy { $0.courseTitle == "Foo" })
        #expect(try store.highlightedDocuments(limit: 1).count == 1)
    }
}
