import Foundation
import StudIPModel
import Testing

@testable import MetadataStore

@Suite struct TreeTests {
    let algebra = makeCourse("c-alg", "MAT-1", "Algebra", [ws2526])
    let seminar = makeCourse("c-sem", "", "Seminar", [ws2526, ss26, ws2627])
    let group = makeCourse("c-grp", "", "Lerngruppe", [])
    let club = makeCourse("c-club", "", "Chor", [])

    @Test func semestersWithCoursesAtTheTopOldestFirst() throws {
        let store = try MetadataStore.temporary()
        _ = try store.applyOverview(overview([info101, algebra]), now: now)
        #expect(try store.names("") == ["WS 2025-26", "WS 2026-27"])
        let top = try store.resolve(path: "WS 2025-26")
        #expect(top.item == .semester && top.studipID == ws2526.id && top.kind == .directory)
        #expect(top.mtime == ws2526.begin)
        #expect(try store.names("WS 2025-26") == ["MAT-1 Algebra"])
    }

    @Test func openEndedCoursesShareOneOngoingFolder() throws {
        let store = try MetadataStore.temporary()
        _ = try store.applyOverview(overview([info101, group, club]), now: now)
        #expect(try store.names("") == ["WS 2026-27", "Ongoing"])
        #expect(Set(try store.names("Ongoing")) == ["Lerngruppe", "Chor"])
        #expect(try store.resolve(path: "Ongoing").item == .ongoing)
        _ = try store.applyOverview(overview([info101]), now: now + day)
        #expect(try store.names("") == ["WS 2026-27"])
    }

    @Test func aCourseInSeveralSemestersIsADirectoryInTheLatestAndLinksElsewhere() throws {
        let store = try MetadataStore.temporary()
        _ = try store.applyOverview(overview([seminar]), now: now)
        #expect(try store.names("") == ["WS 2025-26", "SS 2026", "WS 2026-27"])
        let directory = try store.resolve(path: "WS 2026-27/Seminar")
        #expect(directory.kind == .directory && directory.item == .course)
        for semester in ["WS 2025-26", "SS 2026"] {
            let link = try store.resolve(path: semester + "/Seminar", followSymlinks: false)
            #expect(link.kind == .symlink && link.item == .courseLink)
            #expect(link.symlinkTarget == "../WS 2026-27/Seminar")
            #expect(link.size == Int64("../WS 2026-27/Seminar".utf8.count))
            #expect(try store.resolve(path: semester + "/Seminar").inode == directory.inode)
        }
        _ = try store.applyCourse(content(seminar, folders: [folder("f", in: root(seminar), "Texte")]), now: now)
        #expect(try store.resolve(path: "SS 2026/Seminar/Texte").item == .folder)
    }

    @Test func aCourseExtendedIntoANewSemesterMovesItsDirectoryAndKeepsItsInode() throws {
        let store = try MetadataStore.temporary()
        var course = makeCourse("c-ext", "X", "Extended", [ss26])
        _ = try store.applyOverview(overview([course]), now: now)
        _ = try store.applyCourse(content(course, folders: [folder("f", in: root(course), "Texte")]), now: now)
        let inode = try store.inode("SS 2026/X Extended")
        course.semesterIDs = [ss26.id, ws2627.id]
        let summary = try store.applyOverview(overview([course]), now: now + day)
        #expect(try store.inode("WS 2026-27/X Extended") == inode)
        #expect(
            try store.resolve(path: "SS 2026/X Extended", followSymlinks: false).symlinkTarget
                == "../WS 2026-27/X Extended")
        #expect(try store.resolve(path: "SS 2026/X Extended/Texte").item == .folder)
        #expect(summary.moved.map(\.from) == ["SS 2026/X Extended"])
        #expect(summary.moved.map(\.to) == ["WS 2026-27/X Extended"])
    }

    @Test func semesterTitlesWithSlashesAndRenamedSemestersUpdateLinks() throws {
        let store = try MetadataStore.temporary()
        _ = try store.applyOverview(overview([seminar]), now: now)
        var renamed = ws2627
        renamed.title = "Winter 2026/2027"
        _ = try store.applyOverview(overview([seminar], semesters: [ws2526, ss26, renamed]), now: now + day)
        #expect(try store.names("") == ["WS 2025-26", "SS 2026", "Winter 2026-2027"])
        #expect(
            try store.resolve(path: "SS 2026/Seminar", followSymlinks: false).symlinkTarget
                == "../Winter 2026-2027/Seminar")
    }

    @Test func theCourseNameTemplateIsAnOption() throws {
        let store = try MetadataStore.temporary()
        let options = TreeOptions(courseNameTemplate: "{title} ({number})")
        _ = try store.applyOverview(overview([info101]), options: options, now: now)
        #expect(try store.names("WS 2026-27") == ["Foo (INF-101)"])
        let inode = try store.inode("WS 2026-27/Foo (INF-101)")
        _ = try store.applyOverview(overview([info101]), now: now)
        #expect(try store.names("WS 2026-27") == ["INF-101 Foo"])
        #expect(try store.inode("WS 2026-27/INF-101 Foo") == inode)
    }

    @Test func theSemesterFilterKeepsOnlyTheChosenSemesters() throws {
        let store = try MetadataStore.temporary()
        let options = TreeOptions(semesterIDs: [ws2526.id, ss26.id])
        _ = try store.applyOverview(overview([info101, algebra, seminar, group]), options: options, now: now)
        #expect(try store.names("") == ["WS 2025-26", "SS 2026", "Ongoing"])
        #expect(try store.names("WS 2025-26") == ["MAT-1 Algebra", "Seminar"])
        // Within the filter the seminar's latest semester is SS 2026.
        #expect(try store.resolve(path: "SS 2026/Seminar", followSymlinks: false).kind == .directory)
        #expect(try store.placedCourses().map(\.courseID).sorted() == ["c-alg", "c-grp", "c-sem"])
        #expect(throws: StoreError.self) { try store.applyCourse(content(info101), now: now) }
    }

    @Test func hiddenCoursesDisappearAndComeBack() throws {
        let store = try MetadataStore.temporary()
        _ = try store.applyOverview(overview([info101, algebra]), now: now)
        _ = try store.applyCourse(content(algebra, documents: [document("d", in: root(algebra), "a.pdf")]), now: now)
        let summary = try store.applyOverview(
            overview([info101, algebra]), options: TreeOptions(hiddenCourseIDs: [algebra.id]), now: now)
        #expect(try store.names("") == ["WS 2026-27"])
        #expect(summary.removed.map(\.path) == ["WS 2025-26/MAT-1 Algebra", "WS 2025-26"])
        do {
            _ = try store.applyCourse(content(algebra), now: now)
            Issue.record("a hidden course must not take content")
        } catch {
            #expect(error == .courseNotInTree(courseID: algebra.id, title: algebra.title))
        }
        _ = try store.applyOverview(overview([info101, algebra]), now: now)
        #expect(try store.names("WS 2025-26") == ["MAT-1 Algebra"])
        #expect(try store.placedCourses().first { $0.courseID == algebra.id }?.listedAt == nil)
    }

    @Test func coursesLeavingTheOverviewAreRemovedWithTheirContent() throws {
        let store = try MetadataStore.temporary()
        _ = try store.applyOverview(overview([info101, algebra]), now: now)
        _ = try store.applyCourse(
            content(
                algebra, folders: [folder("f", in: root(algebra), "Blätter")],
                documents: [document("d", in: "f", "1.pdf")]), now: now)
        let document = try store.inode("WS 2025-26/MAT-1 Algebra/Blätter/1.pdf")
        let summary = try store.applyOverview(overview([info101]), now: now + day)
        #expect(try store.names("") == ["WS 2026-27"])
        #expect(try store.node(inode: document) == nil)
        #expect(summary.removed.map(\.path) == ["WS 2025-26/MAT-1 Algebra", "WS 2025-26"])
        #expect(summary.changedNames.contains(.init(parent: Node.rootInode, name: "WS 2025-26")))
    }

    @Test func coursesAndSemestersTheClientCouldNotReadAreKept() throws {
        let store = try MetadataStore.temporary()
        _ = try store.applyOverview(overview([info101, seminar]), now: now)
        _ = try store.applyCourse(content(info101, documents: [document("d", in: root(info101), "a.pdf")]), now: now)
        let problems = [
            ItemProblem(itemID: info101.id, message: "unreadable course"),
            ItemProblem(itemID: ws2627.id, message: "unreadable semester"),
        ]
        let summary = try store.applyOverview(
            RemoteOverview(user: user, semesters: [ws2526, ss26], courses: [seminar], problems: problems),
            now: now + day)
        #expect(summary.removed.isEmpty && summary.moved.isEmpty)
        #expect(summary.problems == problems)
        #expect(try store.names("WS 2026-27") == ["INF-101 Foo", "Seminar"])
        #expect(try store.names("WS 2026-27/INF-101 Foo") == ["a.pdf"])
        #expect(try store.resolve(path: "SS 2026/Seminar", followSymlinks: false).kind == .symlink)
    }

    @Test func unknownSemestersAreReportedAndTheCourseStaysVisible() throws {
        let store = try MetadataStore.temporary()
        let stray = makeCourse("c-stray", "", "Stray", [])
        var odd = stray
        odd.semesterIDs = ["sem-missing"]
        let summary = try store.applyOverview(overview([odd]), now: now)
        #expect(try store.names("Ongoing") == ["Stray"])
        #expect(summary.problems.map(\.itemID) == ["c-stray"])
    }
}
