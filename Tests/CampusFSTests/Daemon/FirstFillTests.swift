import Foundation
import MetadataStore
import StudIPKit
import StudIPModel
import Synchronization
import TestSupport
import Testing

@testable import Refreshing
@testable import StudIPSimulator

/// The rest of a first refresh behind the mount (``FirstFill``, issue 20) in-process: over the simulator and a
/// temporary store that has only the overview, as `campusfs mount` leaves it.
@Suite struct FirstFillTests {
    static let course = DaemonTests.course

    /// A first fill over a fresh store whose overview step just ran, and what it needs to be checked.
    struct Fill: Sendable {
        let sim: Simulator
        let source: any DocumentSource
        let store: MetadataStore
        let step: Refresher.OverviewStep
        let fill: FirstFill
        /// What the fill's refresher was told, `(done, total)`, in order.
        let progress: Progress

        /// The placed course whose directory is `path`.
        func course(_ path: String) throws -> RemoteCourse {
            let id = try #require(try store.courseIDs(below: path)?.first)
            return try #require(step.courses.first { $0.id == id })
        }

        /// The names in the course directory of `id`.
        func listing(_ id: String) throws -> [String] {
            let inode = try #require(try store.placedCourses().first { $0.courseID == id }?.inode)
            return try store.children(of: inode).map(\.node.name)
        }

        /// Ids of the placed courses the store has a complete listing of.
        func listed() throws -> Set<String> {
            Set(try store.placedCourses().filter { $0.listedAt != nil }.map(\.courseID))
        }

        /// How many requests one fetch of `course` sends, counted by the simulator: the course fetched into a
        /// second fresh store.
        func requestsForOneFetch(of course: RemoteCourse) async throws -> Int {
            let other = try MetadataStore.temporary()
            let refresher = Refresher(source: source, store: other, options: TreeOptions())
            _ = try await refresher.refreshOverview()
            let before = sim.requestCount
            guard case .stored = await refresher.refreshCourse(course) else {
                Issue.record("the course could not be fetched for counting")
                return 0
            }
            return sim.requestCount - before
        }
    }

    final class Progress: Sendable {
        private let calls = Mutex<[[Int]]>([])
        var all: [[Int]] { calls.withLock { $0 } }
        func record(_ done: Int, _ total: Int) { calls.withLock { $0.append([done, total]) } }
    }

    static func with(_ body: (Fill) async throws -> Void) async throws {
        try await withSimulator { sim in
            let configuration = ClientConfiguration(
                baseURL: sim.baseURL, credentials: .basic(username: "test_autor", password: "testing"))
            try await withSource(configuration) { source in
                let store = try MetadataStore.temporary()
                let progress = Progress()
                let refresher = Refresher(source: source, store: store, options: TreeOptions()) {
                    progress.record($0, $1)
                }
                let step = try await refresher.refreshOverview()
                try await body(
                    Fill(
                        sim: sim, source: source, store: store, step: step,
                        fill: FirstFill(refresher: refresher, step: step), progress: progress))
            }
        }
    }

    /// Right after the overview, every placed course waits for its content, and the store has listed none.
    @Test func beforeTheFillEveryCourseIsPending() async throws {
        try await Self.with { fill in
            let placed = try fill.store.placedCourses()
            #expect(placed.count > 2)
            #expect(fill.fill.courseCount == placed.count)
            #expect(
                fill.fill.pending == Dictionary(uniqueKeysWithValues: placed.map { (UInt64($0.inode), $0.courseID) }))
            #expect(try fill.listed().isEmpty)
        }
    }

    /// Many looks into one course at once, while its first request is held up, send the requests of one fetch;
    /// then its listing is stored, it is no longer pending, and a later look sends nothing.
    @Test func lookingIntoACourseFetchesItOnceForAllWhoWait() async throws {
        try await Self.with { fill in
            let course = try fill.course(Self.course)
            let oneFetch = try await fill.requestsForOneFetch(of: course)
            #expect(oneFetch > 0)

            fill.sim.faults.add(
                Fault(action: .stall(milliseconds: 800), pathContains: "courses/\(course.id)", remaining: 1))
            let before = fill.sim.requestCount
            let answers = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<5 { group.addTask { await fill.fill.course(course.id) } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers == Array(repeating: true, count: 5))
            #expect(fill.sim.requestCount - before == oneFetch, "five looks, one fetch")
            #expect(try fill.listing(course.id).contains("README.txt"))
            #expect(try fill.listed() == [course.id])
            #expect(!fill.fill.pending.values.contains(course.id))
            #expect(fill.fill.pending.count == fill.step.placedCourses.count - 1)

            let after = fill.sim.requestCount
            #expect(await fill.fill.course(course.id))
            #expect(fill.sim.requestCount == after, "a stored course is not fetched again")
        }
    }

    /// The fill reads every course, reports its progress after each, and names in its report the course the server
    /// refused to list; the others fill all the same. The refused one stays pending until a later look reads it.
    @Test func theFillReadsEveryCourseAndReportsTheOneThatFailed() async throws {
        try await Self.with { fill in
            let broken = try fill.course(Self.course)
            fill.sim.faults.add(Fault(action: .status(404), pathContains: "courses/\(broken.id)/folders"))
            let total = fill.step.courses.count

            guard case .success(let result) = await fill.fill.run() else {
                Issue.record("the fill failed as a whole")
                return
            }
            #expect(result.report.failedCourses.map(\.itemID) == [broken.id])
            #expect(
                result.report.failedCourses.first?.message.hasPrefix("Einführung in die Informatik: ") == true,
                "\(result.report.failedCourses)")
            #expect(result.report.requests > total)
            let others = Set(fill.step.courses.map(\.id)).subtracting([broken.id])
            #expect(try fill.listed() == others)
            #expect(Array(fill.fill.pending.values) == [broken.id])
            // What each other course's directory lists is what the report says the fill added there.
            let added = result.report.summary.added.map(\.path)
            for placed in try fill.store.placedCourses() where others.contains(placed.courseID) {
                let path = try #require(try fill.store.path(of: placed.inode))
                let reported = added.filter { $0.hasPrefix(path + "/") }.map { String($0.dropFirst(path.count + 1)) }
                #expect(
                    try fill.listing(placed.courseID).sorted() == reported.filter { !$0.contains("/") }.sorted(),
                    "\(path)")
            }
            #expect(try fill.listing(try fill.course(RefreshCoordinatorTests.other).id).contains("README.txt"))
            // One report before the first course and one after each, counted up to all of them.
            #expect(fill.progress.all.map { $0[1] } == Array(repeating: total, count: total + 1))
            #expect(fill.progress.all.map { $0[0] } == Array(0...total), "in order, though lanes finish at once")

            fill.sim.faults.clear()
            #expect(await fill.fill.course(broken.id), "a failed fetch is forgotten: the next look reads the course")
            #expect(fill.fill.pending.isEmpty)
            #expect(try fill.listed() == Set(fill.step.courses.map(\.id)))
        }
    }

    /// Without failures, nothing is pending after the fill, and it reports no failed course.
    @Test func afterTheFillNothingIsPending() async throws {
        try await Self.with { fill in
            guard case .success(let result) = await fill.fill.run() else {
                Issue.record("the fill failed")
                return
            }
            let listed = try fill.listed()
            #expect(result.report.failedCourses.isEmpty)
            #expect(fill.fill.pending.isEmpty)
            #expect(listed == Set(fill.step.courses.map(\.id)))
        }
    }
}
