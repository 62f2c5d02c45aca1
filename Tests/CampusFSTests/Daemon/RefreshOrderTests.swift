import Foundation
import MetadataStore
import StudIPKit
import StudIPModel
import Synchronization
import TestSupport
import Testing

@testable import Refreshing
@testable import StudIPSimulator

/// The order and the memory of a refresh (docs/performance.md, "Memory and order of a refresh"): every course's
/// folders and documents before any announcements or dates, and never more than ``Refresher/courseWindow``
/// courses' contents fetched and not yet applied to the store.
@Suite struct RefreshOrderTests {
    /// A source over the simulator's that logs what it is asked, in order, and counts the course contents it
    /// handed out that the refresher has not told as done (``Refresher/progress``) yet.
    final class RecordingSource: DocumentSource {
        let inner: any DocumentSource
        private let state = Mutex(State())

        struct State {
            var calls: [String] = []
            var contentsHandedOut = 0
            var coursesDone = 0
            /// The most contents handed out and not applied at any moment.
            var mostAhead = 0
        }

        init(_ inner: any DocumentSource) {
            self.inner = inner
        }

        var calls: [String] { state.withLock { $0.calls } }
        var mostAhead: Int { state.withLock { $0.mostAhead } }

        /// For the refresher's progress: `done` courses are applied.
        func applied(_ done: Int) { state.withLock { $0.coursesDone = done } }

        var apiName: String { inner.apiName }
        var requestCount: Int { inner.requestCount }
        /// One at a time, so that the window (2) is smaller than the fixtures' courses.
        var maxConcurrentRequests: Int { 1 }

        func overview() async throws(StudIPError) -> RemoteOverview { try await inner.overview() }

        func content(of course: RemoteCourse, lastChecked: [String: Int64]) async throws(StudIPError)
            -> CourseContent
        {
            state.withLock { $0.calls.append("listing \(course.id)") }
            let content = try await inner.content(of: course, lastChecked: lastChecked)
            state.withLock { state in
                state.calls.append("listed \(course.id)")
                state.contentsHandedOut += 1
                state.mostAhead = max(state.mostAhead, state.contentsHandedOut - state.coursesDone)
            }
            return content
        }

        func announcements(courseID: String) async throws(StudIPError) -> [Announcement] {
            state.withLock { $0.calls.append("announcements \(courseID)") }
            return try await inner.announcements(courseID: courseID)
        }

        func dates(courseID: String) async throws(StudIPError) -> [CourseDate] {
            state.withLock { $0.calls.append("dates \(courseID)") }
            return try await inner.dates(courseID: courseID)
        }

        func schedule(semesterID: String) async throws(StudIPError) -> [ScheduleSlot]? {
            state.withLock { $0.calls.append("schedule \(semesterID)") }
            return try await inner.schedule(semesterID: semesterID)
        }

        func currentUser() async throws(StudIPError) -> RemoteUser { try await inner.currentUser() }
    }

    /// A refresher of a fresh store over the simulator of the captures with announcements and dates, through a
    /// ``RecordingSource``.
    static func with(
        _ body: (Refresher, RecordingSource, MetadataStore, Simulator) async throws -> Void
    ) async throws {
        try await withSimulator(.fixtures507More) { sim in
            let configuration = ClientConfiguration(
                baseURL: sim.baseURL, credentials: .basic(username: "test_autor", password: "testing"))
            try await withSource(configuration) { inner in
                let source = RecordingSource(inner)
                let store = try MetadataStore.temporary()
                let refresher = Refresher(source: source, store: store, options: TreeOptions()) { done, _ in
                    source.applied(done)
                }
                try await body(refresher, source, store, sim)
            }
        }
    }

    /// Every listing ends before the first announcements or dates are asked for; each course is listed once and
    /// asked for its announcements and dates once.
    static func expectListingsFirst(_ calls: [String], courses: [RemoteCourse]) {
        let listings = calls.filter { $0.hasPrefix("listing ") }
        let lastListing = calls.lastIndex { $0.hasPrefix("listed ") } ?? -1
        let firstExtra = calls.firstIndex { $0.hasPrefix("announcements ") || $0.hasPrefix("dates ") } ?? -1
        #expect(Set(listings) == Set(courses.map { "listing \($0.id)" }))
        #expect(listings.count == courses.count)
        #expect(calls.filter { $0.hasPrefix("announcements ") }.count == courses.count)
        #expect(firstExtra > lastListing, "\(calls)")
    }

    @Test func aRefreshListsEveryCourseBeforeAnyAnnouncementsOrDates() async throws {
        try await Self.with { refresher, source, store, sim in
            let courses = try await refresher.refreshOverview().courses
            #expect(courses.count > 2)
            // The first course's folders come late: the others' listings end first, and must not be followed by
            // their announcements before it.
            let first = try #require(courses.first)
            sim.faults.add(Fault(action: .stall(milliseconds: 500), pathContains: "courses/\(first.id)/folders"))
            let report = try await refresher.refresh()
            #expect(report.failedCourses.isEmpty)
            Self.expectListingsFirst(source.calls, courses: courses)
            #expect(source.calls.last?.hasPrefix("schedule ") == true, "timetables last")
            let calendars = try store.placedCourses().filter { placed in
                try store.children(of: placed.inode).contains { $0.node.name == "Termine.ics" }
            }
            #expect(!calendars.isEmpty, "the courses' dates are stored")
        }
    }

    @Test func aFirstFillListsEveryCourseBeforeAnyAnnouncementsOrDates() async throws {
        try await Self.with { refresher, source, _, _ in
            let step = try await refresher.refreshOverview()
            guard case .success(let result) = await FirstFill(refresher: refresher, step: step).run() else {
                Issue.record("the fill failed")
                return
            }
            #expect(result.report.failedCourses.isEmpty)
            Self.expectListingsFirst(source.calls, courses: step.courses)
            // The kernel may have cached a course's listing before its dates were stored: it hears of them.
            #expect(result.late.changedNames.contains { $0.name == "Termine.ics" }, "\(result.late.changedNames)")
            #expect(result.late.added.contains { $0.item == .announcement })
        }
    }

    /// A course the fill could not list, listed later by a look into it, fetches its own announcements and dates:
    /// the fill's pass over them is over.
    @Test func aCourseListedAfterTheFillFetchesItsOwnAnnouncementsAndDates() async throws {
        try await Self.with { refresher, source, store, sim in
            let step = try await refresher.refreshOverview()
            let broken = try #require(step.courses.first { $0.number == "INF-101" })
            sim.faults.add(Fault(action: .status(404), pathContains: "courses/\(broken.id)/folders"))
            let fill = FirstFill(refresher: refresher, step: step)
            guard case .success(let result) = await fill.run() else {
                Issue.record("the fill failed")
                return
            }
            #expect(result.report.failedCourses.map(\.itemID) == [broken.id])
            #expect(!source.calls.contains("announcements \(broken.id)"))

            sim.faults.clear()
            #expect(await fill.course(broken.id))
            #expect(
                source.calls.suffix(4) == [
                    "listing \(broken.id)", "listed \(broken.id)", "announcements \(broken.id)", "dates \(broken.id)",
                ])
            let inode = try #require(try store.placedCourses().first { $0.courseID == broken.id }?.inode)
            #expect(try store.children(of: inode).contains { $0.node.name == "Ankündigungen" })
        }
    }

    /// The window: the network may be faster than the store's writer, but contents wait for it only
    /// ``Refresher/courseWindow`` courses deep.
    @Test func aRefreshFetchesAtMostItsWindowOfCoursesAheadOfTheStore() async throws {
        try await Self.with { refresher, source, _, _ in
            #expect(refresher.courseWindow == 2)
            let report = try await refresher.refresh()
            #expect(report.failedCourses.isEmpty)
            let courses = source.calls.filter { $0.hasPrefix("listing ") }.count
            #expect(courses > refresher.courseWindow + 1, "more courses than the window")
            #expect(source.mostAhead >= 1)
            #expect(source.mostAhead <= refresher.courseWindow)
        }
    }
}
