import ControlProtocol
import CourseFiles
import Foundation
import MetadataStore
import StudIPKit
import StudIPModel

/// One refresh of a profile's tree: the overview, then every placed course's folders and documents, then every
/// course's announcements and dates, then the timetables — each course's listing and extras applied to the store in
/// transactions of their own as soon as they arrive, so a refresh killed half-way leaves a consistent tree with
/// some courses newer than others, and the next refresh completes it. Listings come first so that the tree is
/// complete as soon as the network allows (docs/performance.md, "Memory and order of a refresh").
///
/// The store's writes run on its blocking pool (``MetadataStore/run(_:)``), one at a time; the requests run
/// concurrently, but only ``courseWindow`` courses are fetched ahead of the writer: a network faster than the
/// writer would otherwise pile up every course's content in memory waiting for it.
public struct Refresher: Sendable {
    public let source: any DocumentSource
    public let store: MetadataStore
    public let options: TreeOptions
    /// Semesters to show, by title or id (the config file's `semesters`); nil shows all.
    public let semesters: Set<String>?
    /// Told how many courses are done of how many, once the overview is in and after each course; it must not block
    /// (``FirstFill`` calls it under its lock, to keep the counts in order).
    public let progress: (@Sendable (_ done: Int, _ total: Int) -> Void)?
    /// Which generated files (announcements, dates, timetables) the refresh renders, and in which language.
    public let courseFiles: CourseFilesOptions

    public init(
        source: any DocumentSource, store: MetadataStore, options: TreeOptions, semesters: Set<String>? = nil,
        courseFiles: CourseFilesOptions = CourseFilesOptions(),
        progress: (@Sendable (_ done: Int, _ total: Int) -> Void)? = nil
    ) {
        self.source = source
        self.store = store
        self.options = options
        self.semesters = semesters
        self.courseFiles = courseFiles
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
        let step = try await refreshOverview(now: now)
        var courses = step.courses
        if let courseIDs { courses = courses.filter { courseIDs.contains($0.id) } }

        var outcome = CoursesOutcome(summary: step.summary)
        var done = 0
        var listed: [RemoteCourse] = []
        progress?(done, courses.count)
        await inWindow(courses, width: courseWindow) { course in
            (course, await refreshCourse(course, now: now))
        } each: { course, result in
            outcome.add(result)
            if case .stored = result { listed.append(course) }
            done += 1
            progress?(done, courses.count)
        }
        if let serverError = outcome.serverError { throw .studIP(serverError) }
        outcome.add(await refreshExtras(of: listed, now: now))
        // `refresh PATH` renews the timetables of its courses' semesters (a course's regular times or rooms may
        // have changed).
        outcome.add(
            await refreshTimetables(
                step, semesters: courseIDs.map { _ in Set(courses.flatMap(\.semesterIDs)) }, now: now))
        return Report(
            summary: outcome.summary, requests: source.requestCount - step.requestsBefore, api: source.apiName,
            failedCourses: outcome.failures)
    }

    /// What the first step of a refresh stored: the overview, with the courses it placed in the tree.
    public struct OverviewStep: Sendable {
        public var overview: RemoteOverview
        /// The courses the tree shows (the semester filter and hidden courses applied), as the store has them.
        public var placedCourses: [PlacedCourse]
        public var summary: RefreshSummary
        /// The source's request count before the step, so a report can count the whole refresh.
        public var requestsBefore: Int

        /// Ids of the placed courses.
        public var placed: Set<String> { Set(placedCourses.map(\.courseID)) }
        /// The placed courses, in the overview's order.
        public var courses: [RemoteCourse] {
            let placed = placed
            return overview.courses.filter { placed.contains($0.id) }
        }
    }

    /// The first step: semesters and courses, stored at once, so the tree's top levels exist before any course's
    /// content is read (a first mount returns after it).
    public func refreshOverview(now: Date = Date()) async throws(RefreshError) -> OverviewStep {
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
        do throws(StoreError) {
            let (summary, placed) = try await store.run { [options] store throws(StoreError) in
                (try store.applyOverview(overview, options: options, now: now), try store.placedCourses())
            }
            return OverviewStep(
                overview: overview, placedCourses: placed, summary: summary, requestsBefore: requestsBefore)
        } catch {
            throw .store(error)
        }
    }

    /// How one course's refresh went.
    public enum CourseOutcome: Sendable {
        case stored(RefreshSummary)
        /// `serverError` is set when the reason concerns the whole server (login, network), not the course.
        case failed(ItemProblem, serverError: StudIPError?)
    }

    /// Courses fetched ahead of the store's writer: twice the requests the source sends at once, so the network
    /// never waits for the writer while at most this many courses' contents are in memory.
    public var courseWindow: Int { 2 * max(1, source.maxConcurrentRequests) }

    /// One course's folders and documents, applied to the store in one transaction. Its announcements and dates
    /// follow with ``refreshExtras(of:now:)``.
    public func refreshCourse(_ course: RemoteCourse, now: Date = Date()) async -> CourseOutcome {
        let content: CourseContent
        do throws(StudIPError) {
            content = try await source.content(of: course, lastChecked: await restrictedChecks(of: course))
        } catch {
            let problem = ItemProblem(itemID: course.id, message: "\(course.title): \(error)")
            switch error {
            case .authenticationFailed, .consentRequired, .unsafeLogin, .unreachable, .budgetExhausted, .cancelled:
                return .failed(problem, serverError: error)
            default:
                return .failed(problem, serverError: nil)
            }
        }
        do throws(StoreError) {
            return .stored(try await store.run { store throws(StoreError) in try store.applyCourse(content, now: now) })
        } catch {
            return .failed(ItemProblem(itemID: course.id, message: "\(course.title): \(error)"), serverError: nil)
        }
    }

    /// The announcements and dates of courses whose listing is stored, ``courseWindow`` courses at a time, each
    /// course's applied in a transaction of its own. What cannot be read stays as the store had it.
    public func refreshExtras(of courses: [RemoteCourse], now: Date = Date()) async -> CoursesOutcome {
        var outcome = CoursesOutcome(summary: RefreshSummary())
        await inWindow(courses, width: courseWindow) { course in
            let extras = await extras(of: course)
            do throws(StoreError) {
                return CourseOutcome.stored(
                    try await store.run { store throws(StoreError) in try store.applyCourseExtras(extras, now: now) })
            } catch {
                return .failed(ItemProblem(itemID: course.id, message: "\(course.title): \(error)"), serverError: nil)
            }
        } each: {
            outcome.add($0)
        }
        return outcome
    }

    /// Where the last listing of the course, by whichever process, left the rotation through its folders (Stud.IP 5.0
    /// through JSON:API); unreadable, it starts over at the root.
    private func restrictedChecks(of course: RemoteCourse) async -> [String: Int64] {
        (try? await store.run { store throws(StoreError) in try store.restrictedChecks(courseID: course.id) }) ?? [:]
    }

    /// The last step: each placed semester's timetable (of `semesters` only, when given). A failure is one more
    /// failed item, not a failed refresh.
    public func refreshTimetables(
        _ step: OverviewStep, semesters: Set<String>? = nil, now: Date = Date()
    ) async -> (summary: RefreshSummary, problem: ItemProblem?) {
        guard courseFiles.timetable else { return (RefreshSummary(), nil) }
        do {
            return (try await timetables(step.overview, placed: step.placed, semesters: semesters, now: now), nil)
        } catch {
            return (RefreshSummary(), ItemProblem(itemID: "timetable", message: "timetable: \(error)"))
        }
    }

    /// What the courses of one refresh added up to.
    public struct CoursesOutcome: Sendable {
        public var summary: RefreshSummary
        public var failures: [ItemProblem] = []
        /// The first failure that concerns the whole server: the refresh as a whole failed.
        public var serverError: StudIPError?

        public init(summary: RefreshSummary) {
            self.summary = summary
        }

        public mutating func add(_ outcome: CourseOutcome) {
            switch outcome {
            case .stored(let summary):
                self.summary.merge(summary)
            case .failed(let problem, let error):
                failures.append(problem)
                if let error, serverError == nil { serverError = error }
            }
        }

        public mutating func add(_ timetables: (summary: RefreshSummary, problem: ItemProblem?)) {
            summary.merge(timetables.summary)
            if let problem = timetables.problem { failures.append(problem) }
        }

        /// Adds another pass's outcome (the extras after the listings).
        public mutating func add(_ other: CoursesOutcome) {
            summary.merge(other.summary)
            failures += other.failures
            if serverError == nil { serverError = other.serverError }
        }
    }
}

/// Runs `body` for each of `elements` in their order, at most `width` at once, and hands each result to `each` as
/// it ends (in the order they end). A new element starts only when one has been handed on: what `body` returns is
/// alive for at most `width` elements.
func inWindow<Element: Sendable, T: Sendable>(
    _ elements: [Element], width: Int, _ body: @escaping @Sendable (Element) async -> T, each: (T) -> Void
) async {
    await withTaskGroup(of: T.self) { group in
        var next = elements.makeIterator()
        for _ in 0..<max(1, width) {
            guard let element = next.next() else { break }
            group.addTask { await body(element) }
        }
        for await result in group {
            each(result)
            if let element = next.next() { group.addTask { await body(element) } }
        }
    }
}

/// The generated files of issue 18: the profile's `language`, `announcements`, `dates` and `timetable`.
public struct CourseFilesOptions: Sendable, Hashable {
    public var language: CourseFilesLanguage
    public var announcements: Bool
    public var dates: Bool
    public var timetable: Bool
    /// The installation's host, for the calendars' stable UIDs (`<date id>@<host>`).
    public var host: String

    public init(
        language: CourseFilesLanguage = .default, announcements: Bool = true, dates: Bool = true,
        timetable: Bool = true, host: String = "studip"
    ) {
        self.language = language
        self.announcements = announcements
        self.dates = dates
        self.timetable = timetable
        self.host = host
    }
}

extension Refresher {
    /// Stud.IP installations keep their dates in Europe/Berlin (the contract of issue 18).
    static let installationTimeZone = TimeZone(identifier: "Europe/Berlin") ?? .gmt

    /// A course's announcements and dates, rendered. What is switched off or fails stays nil, so the store keeps
    /// what it had (offline, everything stays readable); a course that forbids them gives none (the client's `[]`).
    func extras(of course: RemoteCourse) async -> CourseExtras {
        var extras = CourseExtras(courseID: course.id, announcements: nil, dates: nil)
        let language = courseFiles.language
        if courseFiles.announcements, let items = try? await source.announcements(courseID: course.id) {
            extras.announcements = (
                language.announcementsFolder,
                items.map { announcement in
                    let text = AnnouncementMarkdown.render(announcement, language: language)
                    return (
                        announcement,
                        GeneratedFile(
                            name: AnnouncementMarkdown.fileName(announcement), content: Data(text.utf8),
                            changed: announcement.changed)
                    )
                }
            )
        }
        // The timetable is made of the stored dates (``Timetable``): they are read for it even without `Termine.ics`.
        if courseFiles.dates || courseFiles.timetable, let dates = try? await source.dates(courseID: course.id) {
            let events = dates.map { ICalendar.Event($0, course: course.title, host: courseFiles.host) }
            extras.dates = (
                dates,
                courseFiles.dates ? calendarFile(name: language.datesFile, title: course.title, events: events) : nil
            )
        }
        return extras
    }

    /// Each placed semester's timetable (of `semesters` only, when given): the schedule route's weekly slots, each
    /// repeating on exactly the dates its course meets as the store holds them (``Timetable``), or where the
    /// installation has no schedule route, the union of the semester's course dates.
    func timetables(
        _ overview: RemoteOverview, placed: Set<String>, semesters: Set<String>?, now: Date
    ) async throws -> RefreshSummary {
        var summary = RefreshSummary()
        var inTree = Set(overview.courses.filter { placed.contains($0.id) }.flatMap(\.semesterIDs))
        if let semesters { inTree.formIntersection(semesters) }
        for semester in overview.semesters where inTree.contains(semester.id) {
            let slots = try await source.schedule(semesterID: semester.id)
            let events: [ICalendar.Event]
            if let slots {
                let dates = try await store.run { store throws(StoreError) in
                    var dates: [String: [CourseDate]] = [:]
                    for id in Set(slots.compactMap(\.courseID)) { dates[id] = try store.courseDates(courseID: id) }
                    return dates
                }
                events = Timetable.events(
                    slots, courseDates: dates, semester: semester, host: courseFiles.host,
                    timeZone: Self.installationTimeZone)
            } else {
                let courses = overview.courses.filter { placed.contains($0.id) && $0.semesterIDs.contains(semester.id) }
                let dates = try await store.run { store throws(StoreError) in
                    var dates: [(String, [CourseDate])] = []
                    for course in courses { dates.append((course.title, try store.courseDates(courseID: course.id))) }
                    return dates
                }
                events = dates.flatMap { title, dates in
                    dates.filter { $0.start >= semester.begin && $0.start <= semester.end }.map {
                        ICalendar.Event($0, course: title, host: courseFiles.host)
                    }
                }
            }
            let file =
                events.isEmpty
                ? nil : calendarFile(name: courseFiles.language.timetableFile, title: semester.title, events: events)
            summary.merge(
                try await store.run { store throws(StoreError) in
                    try store.applyTimetable(semesterID: semester.id, slots: slots, file: file, now: now)
                })
        }
        return summary
    }

    /// A calendar stamped by its data, not the clock (the latest end among its events), so that both APIs and
    /// every refresh give the same bytes for the same dates. Its mtime is the store's: when the bytes changed.
    private func calendarFile(name: String, title: String, events: [ICalendar.Event]) -> GeneratedFile {
        let stamp = events.map(\.end).max() ?? Date(timeIntervalSince1970: 0)
        let text = ICalendar.calendar(name: title, events: events, timeZone: Self.installationTimeZone, stamp: stamp)
        return GeneratedFile(name: name, content: Data(text.utf8), changed: nil)
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

    /// docs/architecture.md, "Exit codes": 2 login, 3 network, 4 other.
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
