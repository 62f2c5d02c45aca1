import Foundation
import StudIPModel
import Testing

@testable import MetadataStore

/// Issue 14.5/14.6: what Stud.IP removes leaves the tree at once, but the user's tags and the cached bytes wait for a
/// grace period (a listing that came back empty by mistake must lose nothing), and then go for good.
@Suite struct DeparturesTests {
    let course = "WS 2026-27/INF-101 Foo"
    let documents = (0..<12).map { document("d\($0)", in: "f", "Folie \($0).pdf") }

    func content(_ documents: [RemoteDocument]) -> CourseContent {
        MetadataStoreTests.content(info101, folders: [folder("f", in: root(info101), "Folien")], documents: documents)
    }

    @Test func aRemovedDocumentDepartsKeepsItsTagsAndComesBack() throws {
        let store = try MetadataStore.withCourse(content(documents))
        try store.setTags(["exam"], inode: store.inode(course + "/Folien/Folie 3.pdf"))

        let later = now + day
        let removal = try store.applyCourse(content(documents.filter { $0.id != "d3" }), now: later)
        #expect(removal.removed.map(\.studipID) == ["d3"])
        #expect(try store.departed(before: later) == [])
        #expect(try store.departed(before: later + 1) == [DepartedItem(item: .document, studipID: "d3", since: later)])
        #expect(try store.knownDocumentIDs().contains("d3"), "its cached bytes are not orphans yet")

        _ = try store.applyCourse(content(documents), now: later + day)
        #expect(try store.departed(before: .distantFuture) == [])
        #expect(try store.userState(inode: store.inode(course + "/Folien/Folie 3.pdf")).tags == ["exam"])
    }

    @Test func forgettingADepartedDocumentDropsItsTags() throws {
        let store = try MetadataStore.withCourse(content(documents))
        try store.setTags(["exam"], inode: store.inode(course + "/Folien/Folie 3.pdf"))
        try store.setRating(7, inode: store.inode(course + "/Folien/Folie 3.pdf"))
        _ = try store.applyCourse(content(documents.filter { $0.id != "d3" }), now: now + day)

        try store.forget(try store.departed(before: .distantFuture))
        #expect(try store.departed(before: .distantFuture) == [])
        #expect(!(try store.knownDocumentIDs().contains("d3")))
        let tagRows = try store.read("counting tags") { db in try db.row("SELECT COUNT(*) FROM user_tag")?[0] as Int? }
        #expect(tagRows == 0, "no tag rows of the deleted document are left")
        _ = try store.applyCourse(content(documents), now: now + 2 * day)
        let back = try store.userState(inode: store.inode(course + "/Folien/Folie 3.pdf"))
        #expect(back.tags.isEmpty && back.rating == 0)
    }

    @Test func mostOfACourseVanishingIsReportedAsSweeping() throws {
        let store = try MetadataStore.withCourse(content(documents))
        let emptied = try store.applyCourse(content([]), now: now + day)
        #expect(emptied.sweepingRemovals == [.init(course: course, removed: 12, before: 12)])
        #expect(try store.departed(before: .distantFuture).count == 12)

        let store2 = try MetadataStore.withCourse(content(documents))
        let few = try store2.applyCourse(content(Array(documents.dropFirst(3))), now: now + day)
        #expect(few.sweepingRemovals.isEmpty)
    }

    /// A course that leaves the overview (the user left it, or the server listed it by mistake) departs with its
    /// folders and documents: their cached bytes are not orphans before the grace period ends, and their tags
    /// come back with the course.
    @Test func aCourseLeavingTheOverviewDepartsWithItsContent() throws {
        let store = try MetadataStore.withCourse(content(documents))
        try store.setTags(["exam"], inode: store.inode(course + "/Folien/Folie 3.pdf"))
        let later = now + day
        _ = try store.applyOverview(overview([]), options: TreeOptions(), now: later)
        let departed = try store.departed(before: .distantFuture)
        #expect(Set(departed.map(\.studipID)) == Set(["f", info101.id] + documents.map(\.id)))
        #expect(departed.allSatisfy { $0.since == later })
        #expect(try store.knownDocumentIDs().isSuperset(of: documents.map(\.id)), "cached bytes are not orphans")

        _ = try store.applyOverview(overview([info101]), options: TreeOptions(), now: later + 1)
        _ = try store.applyCourse(content(documents), now: later + 2)
        #expect(try store.departed(before: .distantFuture).map(\.item) == [], "back: nothing departed")
        #expect(try store.userState(inode: store.inode(course + "/Folien/Folie 3.pdf")).tags == ["exam"])
    }

    @Test func hidingACourseIsNotADeparture() throws {
        let store = try MetadataStore.withCourse(content(documents))
        _ = try store.applyOverview(
            overview([info101]), options: TreeOptions(hiddenCourseIDs: [info101.id]), now: now + day)
        #expect(try store.departed(before: .distantFuture) == [])
    }
}
