import AsyncHelpers
import Foundation
import MetadataStore
import StudIPKit
import StudIPModel
import Synchronization

/// The rest of a profile's first refresh, after `campusfs mount` returned (issue 20): the overview is stored, so
/// semesters and courses show at once, and each course's folders and documents fill in behind it — a few courses
/// at a time in the overview's order, and a course a listing or lookup needs at once. Announcements and dates
/// follow once every course is listed, then the timetables: the tree is complete as soon as the network allows.
///
/// One fetch per course: a look into a course whose fetch is under way waits for that fetch instead of starting
/// another, so the first refresh sends the requests a refresh before the mount sent, and no more. A fetch that
/// failed is forgotten, and the next look into the course tries again.
public final class FirstFill: Sendable {
    private let refresher: Refresher
    private let step: Refresher.OverviewStep
    private let now: Date
    private let courses: [String: RemoteCourse]
    private let state: Mutex<State>
    /// Courses stored before this fill began.
    private let storedBefore: Set<String>
    /// One fetch per course at a time.
    private let fetches = KeyedSingleFlight<String, Bool, Never>()

    private struct State {
        var stored: Set<String> = []
        /// Courses the background pass is through with, stored or not, for the progress shown.
        var finished = 0
        var summary: RefreshSummary
        /// The last failure of each course not stored (yet).
        var failures: [String: (ItemProblem, serverError: StudIPError?)] = [:]
        /// The pass over the stored courses' announcements and dates has begun: a course stored from now on
        /// fetches its own.
        var extrasBegun = false
    }

    init(refresher: Refresher, step: Refresher.OverviewStep, now: Date = Date()) {
        self.refresher = refresher
        self.step = step
        self.now = now
        courses = Dictionary(step.courses.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        // Courses a first refresh cut short had stored are not fetched again (the next full refresh renews them,
        // and their announcements and dates if it was cut short before those).
        storedBefore = Set(step.placedCourses.filter { $0.listedAt != nil }.map(\.courseID))
        state = Mutex(State(stored: storedBefore, summary: step.summary))
    }

    /// Course folders whose content is not stored yet, by inode: what the filesystem waits for.
    public var pending: [UInt64: String] {
        let stored = state.withLock { $0.stored }
        return Dictionary(
            step.placedCourses.filter { !stored.contains($0.courseID) }.map { (UInt64($0.inode), $0.courseID) },
            uniquingKeysWith: { first, _ in first })
    }

    /// The courses the fill reads.
    public var courseCount: Int { step.courses.count }

    /// Fetches and stores the course now, or waits for its fetch under way; true once its content is stored.
    public func course(_ id: String) async -> Bool {
        guard let course = courses[id] else { return false }
        if state.withLock({ $0.stored.contains(id) }) { return true }
        return await fetches.run(id) { [self] in
            // A fetch that ended since the look above stored it.
            if state.withLock({ $0.stored.contains(id) }) { return true }
            // Booked by the one fetch, before any waiter hears of it.
            let outcome = await refresher.refreshCourse(course, now: now)
            let ownExtras = state.withLock { state in
                switch outcome {
                case .stored(let summary):
                    state.stored.insert(id)
                    state.summary.merge(summary)
                    state.failures[id] = nil
                    return state.extrasBegun
                case .failed(let problem, let serverError):
                    state.failures[id] = (problem, serverError)
                    return false
                }
            }
            if ownExtras {
                let extras = await refresher.refreshExtras(of: [course], now: now)
                state.withLock { $0.summary.merge(extras.summary) }
            }
            return state.withLock { $0.stored.contains(id) }
        }
    }

    /// Fetches every course not stored yet, `width` at a time (few, so that a course a person opens queues behind
    /// few requests), then the announcements and dates of the courses it stored, then the timetables; reports like
    /// a refresh, with what the last two changed apart (`late`): the parts of the tree the kernel may have cached
    /// before they were filled (a course's or a semester's listing).
    func run(width: Int = 4) async -> Result<(report: Refresher.Report, late: RefreshSummary), RefreshError> {
        let order = step.courses
        let lanes = min(width, order.count)
        refresher.progress?(0, order.count)
        await withTaskGroup(of: Void.self) { group in
            // Lane k takes courses k, k + lanes, …: the overview's order, `lanes` at a time.
            for lane in 0..<lanes {
                group.addTask {
                    for course in stride(from: lane, to: order.count, by: lanes).map({ order[$0] }) {
                        _ = await self.course(course.id)
                        // Told under the lock: lanes that finish at once would report their counts out of order,
                        // and `status` would go back from 3 of N to 2 of N.
                        self.state.withLock { state in
                            state.finished += 1
                            self.refresher.progress?(state.finished, order.count)
                        }
                    }
                }
            }
        }
        var outcome = state.withLock { state in
            var outcome = Refresher.CoursesOutcome(summary: state.summary)
            for (problem, serverError) in state.failures.values {
                outcome.add(.failed(problem, serverError: serverError))
            }
            return outcome
        }
        if let serverError = outcome.serverError { return .failure(.studIP(serverError)) }
        // In the overview's order, every course this fill stored; those stored later fetch their own.
        let listed = state.withLock { state in
            state.extrasBegun = true
            return order.filter { state.stored.contains($0.id) && !storedBefore.contains($0.id) }
        }
        let extras = await refresher.refreshExtras(of: listed, now: now)
        outcome.add(extras)
        let timetables = await refresher.refreshTimetables(step, now: now)
        outcome.add(timetables)
        var late = extras.summary
        late.merge(timetables.summary)
        let report = Refresher.Report(
            summary: outcome.summary, requests: refresher.source.requestCount - step.requestsBefore,
            api: refresher.source.apiName, failedCourses: outcome.failures)
        return .success((report, late))
    }
}
