import Foundation
import StudIPModel
import StudIPWire
import Synchronization

/// Stud.IP's legacy REST API (`<base>/api.php`, Stud.IP 3.0–5.5; removed in 6.0) with the walk of API.md §5.5:
/// `user`, `semesters`, the user's courses per semester, then per course `course/{id}/top_folder` and
/// `folder/{id}` for every readable subfolder — documents arrive inline with their folder.
///
/// Unlike JSON:API it shows documents the user may not download (`is_downloadable: false`) and says which are
/// hosted elsewhere (`storage: "url"`). File-refs carry only the uploader's id; names are known for the
/// course's lecturers and the user, as "Given Family".
final class LegacyRESTSource: DocumentSource {
    let apiName = "legacy REST"
    let transport: HTTPTransport
    private let format: LegacyRESTFormat
    private let probedUser: Mutex<RemoteUser?>
    let userFullName: String?
    /// User id → display name, learned from course listings (lecturers) for documents' `ownerName`.
    private let knownNames: Mutex<[String: String]>
    private let userID: String

    private init(transport: HTTPTransport, user: RemoteUser) {
        self.transport = transport
        format = LegacyRESTFormat(installation: transport.installation)
        probedUser = Mutex(user)
        userFullName = user.displayName
        knownNames = Mutex([user.id: user.displayName])
        userID = user.id
    }

    /// Asks `user`: an answer proves the API exists, the route is activated and the credentials work.
    static func connect(_ transport: HTTPTransport) async throws(StudIPError) -> LegacyRESTSource {
        let user = try await fetchUser(transport)
        return LegacyRESTSource(transport: transport, user: user)
    }

    var requestCount: Int { transport.requestCount }

    var maxConcurrentRequests: Int { transport.maxConcurrentRequests }

    func shutdown() async { await transport.shutdown() }

    func currentUser() async throws(StudIPError) -> RemoteUser { try await Self.fetchUser(transport) }

    // MARK: - Overview

    func overview() async throws(StudIPError) -> RemoteOverview {
        transport.startRefresh()
        let user: RemoteUser
        if let probed = probedUser.withLock({ $0.take() }) {
            user = probed
        } else {
            user = try await Self.fetchUser(transport)
        }
        var problems: [ItemProblem] = []
        let semesters = try await collection(["semesters"], what: "the semesters", id: "id").compactMap {
            element -> RemoteSemester? in
            guard let semester = LegacyRESTFormat.semester(element) else {
                problems.append(ItemProblem(itemID: element["id"]?.string ?? "?", message: "unreadable semester"))
                return nil
            }
            return semester
        }.sorted { ($0.begin, $0.id) < ($1.begin, $1.id) }

        let listings = await concurrentMap(semesters) { semester in
            await captured { () async throws(StudIPError) -> [JSONValue] in
                try await self.collection(
                    ["user", user.id, "courses"], query: [("semester", semester.id)],
                    what: "your courses in \(semester.title)", id: "course_id")
            }
        }
        var collector = CourseCollector(semesters: semesters)
        for (semester, listing) in zip(semesters, listings) {
            let courses = try listing.get().compactMap { element -> ListedCourse? in
                guard let course = format.course(element) else {
                    problems.append(
                        ItemProblem(itemID: element["course_id"]?.string ?? "?", message: "unreadable course"))
                    return nil
                }
                knownNames.withLock { $0.merge(course.lecturerNames) { $1 } }
                return course.listed
            }
            collector.add(courses, semesterID: semester.id)
        }
        return RemoteOverview(user: user, semesters: semesters, courses: collector.result(), problems: problems)
    }

    private static func fetchUser(_ transport: HTTPTransport) async throws(StudIPError) -> RemoteUser {
        let what = "your user (api.php/user)"
        let json = try await transport.fetchJSON(transport.installation.legacy(["user"]), what: what)
        guard let id = json["user_id"]?.id ?? json["id"]?.id else {
            throw .malformedResponse(what: what, detail: "no user_id")
        }
        let username = json["username"]?.string ?? ""
        let formatted = json["name"]?["formatted"]?.string ?? ""
        return RemoteUser(id: id, username: username, displayName: formatted.isEmpty ? username : formatted)
    }

    // MARK: - Course content

    /// Legacy REST lists every document, restricted ones too: nothing rotates.
    func content(of course: RemoteCourse, lastChecked: [String: Int64]) async throws(StudIPError) -> CourseContent {
        let label = JSONAPISource.label(course)
        let top = try await transport.fetchJSON(
            transport.installation.legacy(["course", course.id, "top_folder"]), what: "the files of \(label)")
        guard let rootID = top["id"]?.id else {
            throw .malformedResponse(what: "the files of \(label)", detail: "top folder without id")
        }
        var walk = FolderWalk(course: course, rootID: rootID, installation: transport.installation)
        walk.names = knownNames.withLock { $0 }
        walk.userID = userID
        var pending = walk.add(listing: top, of: rootID, parentID: nil, label: label)
        while !pending.isEmpty {
            let batch = pending
            pending = []
            let listings = await concurrentMap(batch) { folder in
                await captured { () async throws(StudIPError) -> JSONValue in
                    try await self.transport.fetchJSON(
                        self.transport.installation.legacy(["folder", folder.id]),
                        what: "folder \"\(folder.name)\" in \(label)")
                }
            }
            for (folder, listing) in zip(batch, listings) {
                switch listing {
                case .success(let json):
                    pending += walk.add(listing: json, of: folder.id, parentID: folder.parentID, label: label)
                case .failure(let error):
                    walk.fail(folder.id, because: error.description)
                }
            }
        }
        return walk.content
    }

    // MARK: - Announcements, dates, timetable

    /// `course/{id}/news`. Authors are named from the lecturers the overview listed (they write the course's
    /// announcements); anyone else stays nil instead of costing a `user/{id}` request per author.
    func announcements(courseID: String) async throws(StudIPError) -> [Announcement] {
        let what = "the announcements of course \(courseID)"
        return try await emptyIfForbidden(transport) { () async throws(StudIPError) -> [Announcement] in
            let elements = try await collection(["course", courseID, "news"], what: what, id: "news_id")
            return try LegacyRESTFormat.announcements(elements, names: knownNames.withLock { $0 }, what: what)
        }
    }

    func dates(courseID: String) async throws(StudIPError) -> [CourseDate] {
        let what = "the dates of course \(courseID)"
        return try await emptyIfForbidden(transport) { () async throws(StudIPError) -> [CourseDate] in
            try LegacyRESTFormat.courseDates(
                try await collection(["course", courseID, "events"], what: what, id: "event_id"), what: what)
        }
    }

    /// `user/{id}/schedule/{semester_id}`, one request; an unknown semester is 404 "No such semester.".
    func schedule(semesterID: String) async throws(StudIPError) -> [ScheduleSlot]? {
        let what = "your timetable in semester \(semesterID)"
        return try await nilIfNotFound { () async throws(StudIPError) -> [ScheduleSlot] in
            let json = try await transport.fetchJSON(
                transport.installation.legacy(["user", userID, "schedule", semesterID]), what: what)
            return try LegacyRESTFormat.schedule(json, what: what)
        }
    }

    /// Every element of a paginated collection (keyed object or list), `pageSize` per request.
    private func collection(
        _ segments: [String], query: [(String, String)] = [], what: String, id idKey: String
    ) async throws(StudIPError) -> [JSONValue] {
        try await Paging.collect(limit: transport.pageSize, what: what, idKey: idKey) {
            (offset) async throws(StudIPError) -> Page in
            let url = transport.installation.legacy(
                segments, query: query + [("offset", String(offset)), ("limit", String(transport.pageSize))])
            let json = try await transport.fetchJSON(url, what: what)
            guard let elements = json["collection"]?.elements else {
                throw .malformedResponse(what: what, detail: "no collection")
            }
            return Page(elements: elements, total: json["pagination"]?["total"]?.int.map { Int($0) })
        }
    }
}
