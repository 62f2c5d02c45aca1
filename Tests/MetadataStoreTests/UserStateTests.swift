import Foundation
import StudIPModel
import Testing

@testable import MetadataStore

@Suite struct UserStateTests {
    let course = "WS 2026-27/INF-101 Foo"
    var courseContent: CourseContent {
        content(
            info101, folders: [folder("f", in: root(info101), "Folien")],
            documents: [document("d", in: "f", "a.pdf")])
    }

    @Test func tagsAreCleanedAndKeptInOrder() throws {
        let store = try MetadataStore.withCourse(courseContent)
        let inode = try store.inode(course + "/Folien/a.pdf")
        try store.setTags([" exam ", "", "week-3", "exam", "Woche\u{308}"], inode: inode)
        let tags = try store.userState(inode: inode).tags
        #expect(tags == ["exam", "week-3", "Wochë"])
        #expect(bytes(tags[2]) == bytes("Woch\u{eb}"))
        #expect(throws: StoreError.invalidTag("a,b")) { try store.setTags(["a,b"], inode: inode) }
        try store.setTags([], inode: inode)
        #expect(try store.userState(inode: inode).tags.isEmpty)
    }

    /// Issue 14.9: what the store keeps must come back through `getxattr`, which returns at most 64 KiB.
    @Test func tagsThatWouldNotFitInAnAttributeAreRefused() throws {
        let store = try MetadataStore.withCourse(courseContent)
        let inode = try store.inode(course + "/Folien/a.pdf")
        let fitting = (0..<6_553).map { String(format: "tag-%05d", $0) }
        #expect(fitting.joined(separator: ",").utf8.count == 65_529)
        try store.setTags(fitting, inode: inode)
        #expect(try store.userState(inode: inode).tags.count == 6_553)
        let tooMany = fitting + ["one-more-tag"]
        #expect(throws: StoreError.tagsTooLong(bytes: 65_529 + 13, limit: 65_536)) {
            try store.setTags(tooMany, inode: inode)
        }
        #expect(try store.userState(inode: inode).tags == fitting, "a refused list leaves the tags as they were")
    }

    @Test func ratingsArePerItemAndChecked() throws {
        let store = try MetadataStore.withCourse(courseContent)
        try store.setRating(10, inode: store.inode(course))
        #expect(try store.userState(inode: store.inode(course)).rating == 10)
        #expect(try store.userState(inode: store.inode(course + "/Folien")).rating == 0)
        #expect(throws: StoreError.invalidRating(11)) { try store.setRating(11, inode: store.inode(course)) }
        #expect(throws: StoreError.invalidRating(-1)) { try store.setRating(-1, inode: store.inode(course)) }
    }

    @Test func pinsAndTagsOnTheRootAreRefused() throws {
        let store = try MetadataStore.withCourse(courseContent)
        #expect(throws: StoreError.notAnItem(path: "")) { try store.setPinned(true, inode: Node.rootInode) }
        #expect(throws: StoreError.noSuchNode(inode: 999)) { try store.setTags(["x"], inode: 999) }
        try store.setPinned(true, inode: store.inode("WS 2026-27"))
        #expect(try store.userState(inode: store.inode("WS 2026-27")).pinned)
        try store.setPinned(false, inode: store.inode("WS 2026-27"))
        #expect(try store.userState(inode: store.inode("WS 2026-27")).pinned == false)
    }

    @Test func userStateIsDurableAndSurvivesHidingTheCourse() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("campusfs-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("campusfs.sqlite").path
        do {
            let store = try MetadataStore(path: path)
            _ = try store.applyOverview(overview([info101]), now: now)
            _ = try store.applyCourse(courseContent, now: now)
            let inode = try store.inode(course + "/Folien/a.pdf")
            try store.setTags(["keep"], inode: inode)
            try store.setRating(4, inode: inode)
            try store.setPinned(true, inode: inode)
            try store.setFlagged(true, inode: inode)
            _ = try store.applyOverview(
                overview([info101]), options: TreeOptions(hiddenCourseIDs: [info101.id]), now: now)
            #expect(try store.placedCourses().isEmpty)
        }
        let store = try MetadataStore(path: path)
        _ = try store.applyOverview(overview([info101]), now: now + day)
        _ = try store.applyCourse(courseContent, now: now + day)
        let inode = try store.inode(course + "/Folien/a.pdf")
        #expect(try store.userState(inode: inode) == UserState(tags: ["keep"], rating: 4, flagged: true, pinned: true))
        #expect(try store.info(inode: inode)?.highlight == .flagged)
    }

    @Test func courseLinksShareTheCoursesState() throws {
        let seminar = makeCourse("c-sem", "", "Seminar", [ss26, ws2627])
        let store = try MetadataStore.temporary()
        _ = try store.applyOverview(overview([seminar]), now: now)
        try store.setTags(["seminar"], inode: store.inode("SS 2026/Seminar"))
        #expect(try store.userState(inode: store.inode("WS 2026-27/Seminar")).tags == ["seminar"])
    }
}
