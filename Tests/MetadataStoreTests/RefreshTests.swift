import Foundation
import StudIPModel
import Testing

@testable import MetadataStore

@Suite struct RefreshTests {
    let course = "WS 2026-27/INF-101 Foo"
    let slides = folder("f-slides", in: root(info101), "Folien")
    let sheets = folder("f-sheets", in: root(info101), "Übungen")
    let lecture1 = document("d-1", in: "f-slides", "Vorlesung 1.pdf")
    let lecture2 = document("d-2", in: "f-slides", "Vorlesung 2.pdf")
    let sheet1 = document("d-s1", in: "f-sheets", "Blatt 1.pdf")

    var full: CourseContent { content(info101, folders: [slides, sheets], documents: [lecture1, lecture2, sheet1]) }

    @Test func inodesSurviveRefreshesAndReopening() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("campusfs-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("campusfs.sqlite").path
        var before: [String: Int64] = [:]
        do {
            let store = try MetadataStore(path: path)
            _ = try store.applyOverview(overview([info101]), now: now)
            _ = try store.applyCourse(full, now: now)
            for entry in try store.walk() { before[entry.path] = entry.node.inode }
            _ = try store.applyOverview(overview([info101]), now: now + day)
            _ = try store.applyCourse(full, now: now + day)
            for entry in try store.walk() { #expect(before[entry.path] == entry.node.inode) }
        }
        let reopened = try MetadataStore(path: path)
        _ = try reopened.applyOverview(overview([info101]), now: now + 2 * day)
        _ = try reopened.applyCourse(full, now: now + 2 * day)
        let after = Dictionary(uniqueKeysWithValues: try reopened.walk().map { ($0.path, $0.node.inode) })
        #expect(after == before)
        #expect(before.count == 8)
        #expect(before[""] == Node.rootInode)
    }

    @Test func inodesAreNeverReused() throws {
        let store = try MetadataStore.withCourse(full)
        let highest = try #require(try store.walk().map(\.node.inode).max())
        let removed = try store.inode(course + "/Folien/Vorlesung 2.pdf")
        _ = try store.applyCourse(
            content(info101, folders: [slides, sheets], documents: [lecture1, sheet1]), now: now)
        #expect(try store.node(inode: removed) == nil)
        let replacement = document("d-3", in: "f-slides", "Vorlesung 2.pdf")
        _ = try store.applyCourse(
            content(info101, folders: [slides, sheets], documents: [lecture1, sheet1, replacement]), now: now)
        let new = try store.inode(course + "/Folien/Vorlesung 2.pdf")
        #expect(new > highest)
        // Also after the newest row was deleted (AUTOINCREMENT, not max(rowid) + 1).
        _ = try store.applyCourse(
            content(info101, folders: [slides, sheets], documents: [lecture1, sheet1]), now: now)
        _ = try store.applyCourse(
            content(info101, folders: [slides, sheets], documents: [lecture1, sheet1, replacement]), now: now)
        #expect(try store.inode(course + "/Folien/Vorlesung 2.pdf") > new)
    }

    @Test func renamesKeepTheInodeAndTheUserState() throws {
        let store = try MetadataStore.withCourse(full)
        let document = try store.inode(course + "/Folien/Vorlesung 1.pdf")
        let directory = try store.inode(course + "/Folien")
        try store.setTags(["exam"], inode: document)
        try store.setRating(8, inode: directory)
        var renamedDocument = lecture1
        renamedDocument.name = "Einführung.pdf"
        var renamedFolder = slides
        renamedFolder.name = "Skript"
        let summary = try store.applyCourse(
            content(info101, folders: [renamedFolder, sheets], documents: [renamedDocument, lecture2, sheet1]),
            now: now + day)
        #expect(try store.inode(course + "/Skript/Einführung.pdf") == document)
        #expect(try store.inode(course + "/Skript") == directory)
        #expect(try store.userState(inode: document).tags == ["exam"])
        #expect(try store.userState(inode: directory).rating == 8)
        #expect(
            Set(summary.moved.map { "\($0.from) -> \($0.to)" }) == [
                "\(course)/Folien -> \(course)/Skript",
                "\(course)/Folien/Vorlesung 1.pdf -> \(course)/Skript/Einführung.pdf",
            ])
        #expect(summary.added.isEmpty && summary.removed.isEmpty && summary.changed.isEmpty)
        #expect(summary.changedNames.contains(.init(parent: try store.inode(course), name: "Folien")))
        #expect(summary.changedNames.contains(.init(parent: try store.inode(course), name: "Skript")))
    }

    @Test func movesKeepTheInodeAndTheUserState() throws {
        let store = try MetadataStore.withCourse(full)
        let document = try store.inode(course + "/Folien/Vorlesung 1.pdf")
        let sheetsFolder = try store.inode(course + "/Übungen")
        try store.setTags(["wichtig", "klausur"], inode: document)
        try store.setPinned(true, inode: document)
        var moved = lecture1
        moved.folderID = "f-sheets"
        var nested = sheets
        nested.parentID = "f-slides"
        let summary = try store.applyCourse(
            content(info101, folders: [slides, nested], documents: [moved, lecture2, sheet1]), now: now + day)
        #expect(try store.inode(course + "/Folien/Übungen/Vorlesung 1.pdf") == document)
        #expect(try store.inode(course + "/Folien/Übungen") == sheetsFolder)
        #expect(try store.resolve(path: course + "/Folien/Übungen/Blatt 1.pdf").studipID == "d-s1")
        #expect(try store.userState(inode: document) == UserState(tags: ["wichtig", "klausur"], pinned: true))
        #expect(summary.moved.count == 2)
    }

    @Test func aMoveIntoANewFolderWorks() throws {
        let store = try MetadataStore.withCourse(full)
        let document = try store.inode(course + "/Folien/Vorlesung 1.pdf")
        let archive = folder("f-archive", in: "f-slides", "Archiv")
        let deeper = folder("f-deeper", in: "f-archive", "2025")
        var moved = lecture1
        moved.folderID = "f-deeper"
        _ = try store.applyCourse(
            content(info101, folders: [deeper, slides, archive, sheets], documents: [moved, lecture2, sheet1]),
            now: now)
        #expect(try store.inode(course + "/Folien/Archiv/2025/Vorlesung 1.pdf") == document)
    }

    @Test func deletionsRemoveNodesAndReportTheirPaths() throws {
        let store = try MetadataStore.withCourse(full)
        let folderInode = try store.inode(course + "/Übungen")
        let summary = try store.applyCourse(content(info101, folders: [slides], documents: [lecture1]), now: now)
        #expect(try store.names(course) == ["Folien"])
        #expect(try store.names(course + "/Folien") == ["Vorlesung 1.pdf"])
        #expect(try store.node(inode: folderInode) == nil)
        #expect(
            Set(summary.removed.map(\.path)) == [
                "\(course)/Übungen", "\(course)/Übungen/Blatt 1.pdf", "\(course)/Folien/Vorlesung 2.pdf",
            ])
    }

    @Test func failedFoldersKeepWhatWasBelowThem() throws {
        let store = try MetadataStore.withCourse(full)
        let sub = folder("f-sub", in: "f-sheets", "Lösungen")
        let solution = document("d-sol", in: "f-sub", "Lösung 1.pdf")
        _ = try store.applyCourse(
            content(info101, folders: [slides, sheets, sub], documents: [lecture1, lecture2, sheet1, solution]),
            now: now)
        // The sheets folder is listed by its parent, but its own listing failed: nothing below it is known.
        let summary = try store.applyCourse(
            content(info101, folders: [slides, sheets], documents: [lecture1], failed: ["f-sheets"]), now: now + day)
        #expect(try store.names(course + "/Übungen") == ["Blatt 1.pdf", "Lösungen"])
        #expect(try store.names(course + "/Übungen/Lösungen") == ["Lösung 1.pdf"])
        #expect(summary.removed.map(\.path) == ["\(course)/Folien/Vorlesung 2.pdf"])
        // A failed folder the content does not even name keeps its node too.
        _ = try store.applyCourse(
            content(info101, folders: [slides], documents: [lecture1], failed: ["f-sheets"]), now: now + 2 * day)
        #expect(try store.names(course + "/Übungen/Lösungen") == ["Lösung 1.pdf"])
        #expect(try store.listing(of: store.inode(course + "/Übungen"))?.listedAt == now)
    }

    @Test func aFailedListingDeletesNothing() throws {
        let store = try MetadataStore.withCourse(full)
        let before = try store.walk().map(\.path)
        let summary = try store.applyCourse(content(info101, failed: [root(info101)]), now: now + day)
        #expect(try store.walk().map(\.path) == before)
        #expect(summary.removed.isEmpty)
        // The listing ran (the client throws when a course cannot be listed at all): the course counts as listed.
        #expect(try store.listing(of: store.inode(course))?.listedAt == now + day)
    }

    @Test func itemsTheClientSkippedAreKept() throws {
        let store = try MetadataStore.withCourse(full)
        let problem = ItemProblem(itemID: "d-2", message: "malformed size")
        let summary = try store.applyCourse(
            content(info101, folders: [slides, sheets], documents: [lecture1, sheet1], problems: [problem]),
            now: now + day)
        #expect(try store.names(course + "/Folien") == ["Vorlesung 1.pdf", "Vorlesung 2.pdf"])
        #expect(summary.problems == [problem])
    }

    @Test func aDocumentWhoseFolderIsMissingIsReportedAndSkipped() throws {
        let store = try MetadataStore.withCourse(full)
        let orphan = document("d-orphan", in: "f-nowhere", "Waise.pdf")
        var stray = lecture2
        stray.folderID = "f-gone"
        let cycleA = folder("f-ca", in: "f-cb", "A")
        let cycleB = folder("f-cb", in: "f-ca", "B")
        let summary = try store.applyCourse(
            content(
                info101, folders: [slides, sheets, cycleA, cycleB], documents: [lecture1, stray, sheet1, orphan]),
            now: now + day)
        #expect(Set(summary.problems.map(\.itemID)) == ["d-orphan", "d-2", "f-ca", "f-cb"])
        #expect(try store.names(course) == ["Folien", "Übungen"])
        // The known document with the broken folder stays where it was.
        #expect(try store.names(course + "/Folien") == ["Vorlesung 1.pdf", "Vorlesung 2.pdf"])
    }

    @Test func documentsMovingBetweenCoursesKeepTheirInode() throws {
        let other = makeCourse("c-other", "INF-102", "Bar", [ws2627])
        let store = try MetadataStore.temporary()
        _ = try store.applyOverview(overview([info101, other]), now: now)
        _ = try store.applyCourse(full, now: now)
        let document = try store.inode(course + "/Folien/Vorlesung 1.pdf")
        var moved = lecture1
        moved.folderID = root(other)
        _ = try store.applyCourse(content(other, documents: [moved]), now: now + day)
        #expect(try store.inode("WS 2026-27/INF-102 Bar/Vorlesung 1.pdf") == document)
        _ = try store.applyCourse(
            content(info101, folders: [slides, sheets], documents: [lecture2, sheet1]), now: now)
        #expect(try store.inode("WS 2026-27/INF-102 Bar/Vorlesung 1.pdf") == document)
        #expect(try store.document(inode: document)?.courseID == other.id)
    }

    @Test func attributesComeFromMetadata() throws {
        let store = try MetadataStore.withCourse(full)
        let node = try store.resolve(path: course + "/Folien/Vorlesung 1.pdf")
        #expect(node.kind == .file && node.item == .document)
        #expect(node.size == 1000)
        #expect(node.mtime == lecture1.changed)
        #expect(try store.resolve(path: course + "/Folien").mtime == slides.changed)
        var bigger = lecture1
        bigger.size = 2048
        bigger.changed = now
        let summary = try store.applyCourse(
            content(info101, folders: [slides, sheets], documents: [bigger, lecture2, sheet1]), now: now)
        #expect(try store.node(inode: node.inode)?.size == 2048)
        #expect(summary.changed.map(\.path) == [course + "/Folien/Vorlesung 1.pdf"])
        #expect(summary.changedNodes.contains(node.inode))
    }

    /// A document hosted elsewhere that Stud.IP lists as 0 bytes keeps the length its host sent: the node shows it,
    /// while the document's size stays Stud.IP's 0 (a download takes any length), and the next refreshes, which say
    /// 0 again, neither reset it nor call it a new version.
    @Test func theHostsSizeOfADocumentListedAsEmptySurvivesRefreshes() throws {
        var unmeasured = lecture1
        unmeasured.size = 0
        let listing = content(info101, folders: [slides, sheets], documents: [unmeasured, lecture2, sheet1])
        let store = try MetadataStore.temporary()
        _ = try store.applyOverview(overview([info101]), now: now)
        _ = try store.applyCourse(listing, now: now)
        let path = course + "/Folien/Vorlesung 1.pdf"
        let inode = try store.resolve(path: path).inode
        try store.markRead(inode: inode)
        #expect(try store.resolve(path: path).size == 0)
        #expect(try store.recordHostSize(123_316, inode: inode))
        #expect(try !store.recordHostSize(123_316, inode: inode))
        for later in [now + day, now + 2 * day] {
            let summary = try store.applyCourse(listing, now: later)
            #expect(summary.changed.isEmpty && !summary.changedNodes.contains(inode))
            #expect(try store.resolve(path: path).size == 123_316)
            #expect(try store.document(inode: inode)?.size == 0)
            #expect(try store.highlightedDocuments().isEmpty)
        }
    }

    @Test func theSummaryListsWhatIsNew() throws {
        let store = try MetadataStore.temporary()
        let overviewSummary = try store.applyOverview(overview([info101]), now: now)
        #expect(overviewSummary.added.map(\.path) == ["WS 2026-27", course])
        let first = try store.applyCourse(full, now: now)
        #expect(first.added.count == 5)
        let added = try store.applyCourse(
            content(
                info101, folders: [slides, sheets],
                documents: [lecture1, lecture2, sheet1, document("d-9", in: "f-sheets", "Blatt 2.pdf")]),
            now: now + day)
        #expect(added.added.map(\.path) == [course + "/Übungen/Blatt 2.pdf"])
        #expect(added.added.first?.highlight == .new)
        var merged = overviewSummary
        merged.merge(added)
        #expect(merged.added.count == 3)
    }
}
