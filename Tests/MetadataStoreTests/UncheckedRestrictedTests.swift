import Foundation
import StudIPModel
import Testing

@testable import MetadataStore

/// `CourseContent.foldersWithUncheckedRestrictedDocuments`: a listing that did not look in a folder for documents
/// the user may not download says nothing about those documents there.
@Suite("Restricted documents in folders a listing did not look in")
struct UncheckedRestrictedTests {
    let course = "WS 2026-27/INF-101 Foo"
    let slides = folder("f-slides", in: root(info101), "Folien")
    let lecture = document("d-1", in: "f-slides", "Vorlesung 1.pdf")
    var solution: RemoteDocument { restricted(document("d-sol", in: "f-slides", "Musterloesung.pdf")) }
    var rootSolution: RemoteDocument { restricted(document("d-root", in: root(info101), "Loesung Blatt 1.pdf")) }

    func restricted(_ document: RemoteDocument) -> RemoteDocument {
        var document = document
        document.isDownloadable = false
        return document
    }

    func listing(_ documents: [RemoteDocument], unchecked: Set<String>) -> CourseContent {
        var listing = content(info101, folders: [slides], documents: documents)
        listing.foldersWithUncheckedRestrictedDocuments = unchecked
        return listing
    }

    @Test func keptUntilAListingThatLooksInTheFolderOmitsIt() throws {
        let store = try MetadataStore.withCourse(listing([lecture, solution, rootSolution], unchecked: []))
        let kept = try store.inode(course + "/Folien/Musterloesung.pdf")

        var summary = try store.applyCourse(listing([lecture], unchecked: ["f-slides"]), now: now + day)
        #expect(try store.inode(course + "/Folien/Musterloesung.pdf") == kept, "Folien was not looked in")
        #expect(summary.removed.map(\.path) == [course + "/Loesung Blatt 1.pdf"], "the root was")

        summary = try store.applyCourse(listing([lecture], unchecked: [root(info101)]), now: now + 2 * day)
        #expect(try store.names(course + "/Folien") == ["Vorlesung 1.pdf"])
        #expect(summary.removed.map(\.path) == [course + "/Folien/Musterloesung.pdf"])
    }

    /// Found by a folder's first check, a restricted document was missed before, not added: like a first sync, it
    /// is `new` only when it changed within the last seven days; a downloadable one appearing there is `new`.
    @Test func foundByAFirstCheckIsNewOnlyWhenRecent() throws {
        let store = try MetadataStore.withCourse(listing([lecture], unchecked: ["f-slides"]))
        let recent = restricted(document("d-recent", in: "f-slides", "Neu (gesperrt).pdf", created: now - day))
        let added = document("d-added", in: "f-slides", "Blatt 2.pdf")
        var listed = listing([lecture, solution, recent, added], unchecked: [])
        listed.foldersCheckedForTheFirstTime = ["f-slides"]
        _ = try store.applyCourse(listed, now: now + day)
        func highlight(_ name: String) throws -> Highlight? {
            try store.info(inode: store.inode(course + "/Folien/" + name))?.highlight
        }
        #expect(try highlight("Musterloesung.pdf") == nil)
        #expect(try highlight("Neu (gesperrt).pdf") == .new)
        #expect(try highlight("Blatt 2.pdf") == .new)
    }

    /// A course whose one folder to rotate through is its root (the common shape on Stud.IP 5.0): its first check
    /// leaves no folder unchecked and must still be recorded, or every later listing counts as the first and a new
    /// restricted document there is never `new`.
    @Test func aFirstCheckThatLeavesNothingUncheckedIsRecorded() throws {
        let store = try MetadataStore.withCourse(listing([lecture], unchecked: [root(info101)]))
        #expect(try store.restrictedChecks(courseID: info101.id)[root(info101)] == nil, "not looked in yet")
        var listed = listing([lecture, rootSolution], unchecked: [])
        listed.foldersCheckedForTheFirstTime = [root(info101)]
        _ = try store.applyCourse(listed, now: now + day)
        #expect(try store.restrictedChecks(courseID: info101.id)[root(info101)] != nil)
    }

    @Test func keptInTheRootWhenTheRootWasNotLookedIn() throws {
        let store = try MetadataStore.withCourse(listing([lecture, rootSolution], unchecked: []))
        let summary = try store.applyCourse(listing([lecture], unchecked: [root(info101)]), now: now + day)
        #expect(try store.names(course) == ["Folien", "Loesung Blatt 1.pdf"])
        #expect(summary.removed.isEmpty)
    }

    @Test func downloadableDocumentsOfUncheckedFoldersGoAsUsual() throws {
        let store = try MetadataStore.withCourse(listing([lecture, solution], unchecked: []))
        let summary = try store.applyCourse(listing([], unchecked: ["f-slides", root(info101)]), now: now + day)
        #expect(try store.names(course + "/Folien") == ["Musterloesung.pdf"])
        #expect(summary.removed.map(\.path) == [course + "/Folien/Vorlesung 1.pdf"])
    }

    @Test func aVanishedFolderTakesItsRestrictedDocumentsAlong() throws {
        let store = try MetadataStore.withCourse(listing([lecture, solution], unchecked: []))
        var gone = content(info101, documents: [])
        gone.foldersWithUncheckedRestrictedDocuments = [root(info101)]
        _ = try store.applyCourse(gone, now: now + day)
        #expect(try store.names(course).isEmpty)
    }
}
