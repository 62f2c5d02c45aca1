import StudIPModel

/// A Stud.IP installation as CampusFS reads it. Two implementations: JSON:API and legacy REST.
///
/// A refresh is `overview()` once, then `content(of:)` per course (in parallel, bounded by the client).
/// Implementations are safe to call from many tasks at once.
public protocol DocumentSource: Sendable {
    /// Which API this source speaks, for status lines ("JSON:API" / "legacy REST").
    var apiName: String { get }

    /// The logged-in user's name ("Given Family"), from the probe `StudIP.connect` sent: for "Logged in as …"
    /// without another request. nil when unknown.
    var userFullName: String? { get }

    /// Requests this source sends at once at most (``ClientConfiguration/maxConcurrentRequests``): a refresh
    /// fetches twice as many courses ahead of the store's writer.
    var maxConcurrentRequests: Int { get }

    /// HTTP requests this source has sent so far (retries and token refreshes included), for
    /// `campusfs refresh` to report.
    var requestCount: Int { get }

    /// The user, all semesters, and the user's courses with their semesters. Starts a new refresh: the
    /// per-refresh request budget counts from here.
    func overview() async throws(StudIPError) -> RemoteOverview

    /// All readable folders and documents of one course. One broken folder does not fail the course: it is
    /// reported in ``CourseContent/failedFolderIDs``. `lastChecked` says in which order the course's folders were
    /// last looked in for documents the user may not download (folder id → a number, larger is later; absent:
    /// never): where a listing looks in one folder of a course per call (JSON:API on Stud.IP 5.0), it picks the
    /// one looked in least recently. The caller keeps it (the store), so that every process — a daemon, `campusfs
    /// refresh` without a mount — continues the same rotation.
    func content(of course: RemoteCourse, lastChecked: [String: Int64]) async throws(StudIPError) -> CourseContent

    /// The course's currently published announcements, newest first (both APIs list only those). A course whose
    /// announcements the user may not read gives `[]`.
    func announcements(courseID: String) async throws(StudIPError) -> [Announcement]

    /// All dates of the course, cancelled ones included (``CourseDate/isCancelled``), by start. A course whose
    /// dates the user may not read gives `[]`.
    func dates(courseID: String) async throws(StudIPError) -> [CourseDate]

    /// The user's weekly timetable in the semester (an overview must have listed it). nil when the installation
    /// has none for it: the caller builds the timetable from the courses' dates instead.
    func schedule(semesterID: String) async throws(StudIPError) -> [ScheduleSlot]?

    /// Who the credentials log in as, asked now: one request that proves the login still works (`campusfs login
    /// --check` while mounted), renewing an OAuth2 token as any request would.
    func currentUser() async throws(StudIPError) -> RemoteUser

    /// Closes the source's connections. Call once when done; the source must not be used afterwards.
    func shutdown() async
}

extension DocumentSource {
    /// A listing that knows of no earlier one: on Stud.IP 5.0 it looks in the course's root folder.
    public func content(of course: RemoteCourse) async throws(StudIPError) -> CourseContent {
        try await content(of: course, lastChecked: [:])
    }

    /// Sources without resources of their own (test fakes) have nothing to close.
    public func shutdown() async {}

    /// Sources that never asked (test fakes) do not know it.
    public var userFullName: String? { nil }
}

/// `[]` for a course item list the user may not read (403, or legacy REST's 401 from a course route): one
/// course's closed news or dates must not fail the others.
func emptyIfForbidden<T>(
    _ transport: HTTPTransport, _ body: () async throws(StudIPError) -> [T]
) async throws(StudIPError) -> [T] {
    do {
        return try await body()
    } catch .forbidden(let what) {
        transport.logger.debug("\(what): access denied, listed empty")
        return []
    }
}

/// nil for a timetable the installation does not have (404: no such route or semester).
func nilIfNotFound<T>(_ body: () async throws(StudIPError) -> T) async throws(StudIPError) -> T? {
    do {
        return try await body()
    } catch .notFound {
        return nil
    }
}
