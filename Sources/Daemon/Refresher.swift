import ControlProtocol
import Foundation
import MetadataStore
import StudIPKit
import StudIPModel

/// One refresh of a profile's tree: the overview, then every placed course, each applied to the store in its own
/// transaction as soon as it arrives — so a refresh killed half-way leaves a consistent tree with some courses
/// newer than others, and the next refresh completes it. The store's writes run on its blocking pool
/// (``MetadataStore/run(_:)``), while the requests for the courses run concurrently in the task group.
public struct Refresher: Sendable {
    public let source: any DocumentSource
    public let store: MetadataStore
    public let options: TreeOptions
    /// Semesters to show, by title or id (the config file's `semesters`); nil shows all.
    public let semesters: Set<String>?
    /// Told how many courses are done of how many, once the overview is in and after each course.
    public let progress: (@Sendable (_ done: Int, _ total: Int) -> Void)?

    public init(
        source: any DocumentSource, store: MetadataStore, options: TreeOptions, semesters: Set<String>? = nil,
        progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil
    ) {
        self.source = source
        self.store = store
        self.options = options
        self.semesters = semesters
        self.progress = progress
    }

    /// What a refresh did, for `campusfs refresh` and the daemon's status.
    public struct Report: Sendable {
        public var summary: RefreshSummary
        /// HTTP requests this refresh sent (retries and token refreshes included).
        public var requests: Int
        public var api: String
        /// Courses whose content could not be read; what the store knew about them stays.
        public var failedCourses: [ItemProblem]
    }

    /// Refreshes the overview and every placed course, or only the placed courses in `courseIDs` (`campusfs
    /// refresh PATH`). Throws only when nothing could be refreshed (login, network, the overview itself); a course
    /// that fails is reported in ``Report/failedCourses`` unless it failed for a reason that concerns the whole
    /// server (login, network), which is rethrown after the other courses were applied.
    public func refresh(courseIDs: Set<String>? = nil, now: Date = Date()) async throws(RefreshError) -> Report {
        let requestsBefore = source.requestCount
        let overview: RemoteOverview
        do {
            overview = try await source.overview()
        } catch {
            throw .studIP(error)
        }
        var options = options
        if let semesters {
            options.semesterIDs = Set(
                overview.semesters.filter { semesters.contains($0.id) || semesters.contains($0.title) }.map(\.id))
        }
        var summary: RefreshSummary
        let placed: Set<String>
        do throws(StoreError) {
            (summary, placed) = try await store.run { [options] store throws(StoreError) in
                (
                    try store.applyOverview(overview, options: options, now: now),
                    Set(try store.placedCourses().map(\.courseID))
                )
            }
        } catch {
            throw .store(error)
        }
        let courses = overview.courses.filter { placed.contains($0.id) && courseIDs?.contains($0.id) ?? true }

        var failures: [ItemProblem] = []
        var serverError: StudIPError?
        var done = 0
        progress?(done, courses.count)
        await withTaskGroup(of: (RemoteCourse, Result<CourseContent, StudIPError>).self) { group in
            for course in courses {
                group.addTask {
                    do throws(StudIPError) {
                        return (course, .success(try await source.content(of: course)))
                    } catch {
                        return (course, .failure(error))
                    }
                }
            }
            for await (course, result) in group {
                defer {
                    done += 1
                    progress?(done, courses.count)
                }
                switch result {
                case .success(let content):
                    do {
                        summary.merge(
                            try await store.run { store throws(StoreError) in try store.applyCourse(content, now: now) }
                        )
                    } catch {
                        failures.append(ItemProblem(itemID: course.id, message: "\(course.title): \(error)"))
                    }
                case .failure(let error):
                    switch error {
                    case .authenticationFailed, .consentRequired, .unsafeLogin, .unreachable, .budgetExhausted,
                        .cancelled:
                        serverError = serverError ?? error
                    default:
                        break
                    }
                    failures.append(ItemProblem(itemID: course.id, message: "\(course.title): \(error)"))
                }
            }
        }
        if let serverError { throw .studIP(serverError) }
        return Report(
            summary: summary, requests: source.requestCount - requestsBefore, api: source.apiName,
            failedCourses: failures)
    }
}

/// Why a refresh did not happen.
public enum RefreshError: Error, Sendable, CustomStringConvertible {
    case studIP(StudIPError)
    case store(StoreError)
    /// The refresh ran longer than its deadline and was stopped; the courses it had applied stay.
    case tookTooLong(limit: Duration)

    public var description: String {
        switch self {
        case .studIP(let error): error.description
        case .store(let error): error.description
        case .tookTooLong(let limit):
            "the refresh was stopped after \(limit.components.seconds) s (refresh_timeout): Stud.IP answers too "
                + "slowly; the courses read so far are updated, the rest follows at the next refresh"
        }
    }

    /// DESIGN.md §1.1: 2 login, 3 network, 4 other.
    public var exitCode: Int32 {
        switch self {
        case .studIP(let error): error.exitCode
        case .store: 4
        case .tookTooLong: 3
        }
    }
}

extension RefreshOutcome {
    /// What `campusfs refresh` prints of `report`.
    public init(_ report: Refresher.Report) {
        self.init(
            api: report.api, requests: report.requests, summary: report.summary, failedCourses: report.failedCourses)
    }
}
