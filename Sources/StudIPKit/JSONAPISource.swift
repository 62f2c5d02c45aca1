import Foundation
import StudIPModel
import StudIPWire
import Synchronization

/// Stud.IP's JSON:API (`<base>/jsonapi.php/v1`, Stud.IP 4.5–6.x) with the cheapest complete walk (API.md §5.5):
/// `users/me`, `semesters`, the user's courses per semester, then per course the flat folder list and the
/// flat list of downloadable documents — 2 requests per course, plus the folders listed on their own below.
///
/// `courses/{id}/file-refs` omits documents the user may not download; `folders/{id}/file-refs` lists them
/// (`is-downloadable: false`), and they must be shown like legacy REST shows them. Stud.IP 5.1+ announces each
/// folder's document count (`relationships.file-refs.meta.count`), so exactly the folders whose count exceeds
/// what the course-wide list delivered are listed on their own. Stud.IP 5.0 sends no counts, and listing every
/// folder would cost one request per folder and refresh; there each listing of a course lists one folder on its
/// own, in rotation (the root first, then the folder looked in least recently, by the order the caller keeps:
/// ``DocumentSource/content(of:lastChecked:)``), which keeps a refresh within 2 + S + 3C requests.
/// Folders not looked in are reported in ``CourseContent/foldersWithUncheckedRestrictedDocuments``, so the store
/// keeps the restricted documents an earlier listing found there. ``ClientConfiguration/listsRestrictedDocuments``
/// turns the extra listings off where requests matter more.
///
/// A course whose files tool is switched off answers 403 on both course-wide lists, the same 403 as for a
/// course the user may not see; the course listing then has no `folders` relationship. Both together mean an
/// ordinary course without documents: it is listed empty and complete.
///
/// JSON:API does not say which documents are hosted elsewhere (the content route answers 302 for them), so
/// `isLink` is false here; the download learns it from the redirect.
final class JSONAPISource: DocumentSource {
    let apiName = "JSON:API"
    let transport: HTTPTransport
    private let format: JSONAPIFormat
    /// The user the connection probe fetched; the first overview uses it instead of asking again.
    private let probedUser: Mutex<RemoteUser?>
    let userFullName: String?
    /// Courses the last overview listed without a `folders` relationship: no file area for this user.
    private let coursesWithoutFiles = Mutex<Set<String>>([])
    /// Courses whose missing file area was logged already: once per source, not on every refresh.
    private let loggedWithoutFiles = Mutex<Set<String>>([])
    private let userID: String
    /// The semesters of the last overview: the timetable route picks its semester by a time within it.
    private let semesters = Mutex<[String: RemoteSemester]>([:])

    static let mediaType = "application/vnd.api+json"

    private init(transport: HTTPTransport, user: RemoteUser) {
        self.transport = transport
        format = JSONAPIFormat(installation: transport.installation)
        probedUser = Mutex(user)
        userFullName = user.displayName
        userID = user.id
    }

    /// Asks `users/me`: a JSON:API answer proves the API exists and the credentials work.
    static func connect(_ transport: HTTPTransport) async throws(StudIPError) -> JSONAPISource {
        let user = try await fetchUser(transport)
        return JSONAPISource(transport: transport, user: user)
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
        let semesterElements = try await collection(["semesters"], what: "the semesters")
        let semesters = semesterElements.compactMap { element -> RemoteSemester? in
            guard let semester = JSONAPIFormat.semester(element) else {
                problems.append(ItemProblem(itemID: element["id"]?.string ?? "?", message: "unreadable semester"))
                return nil
            }
            return semester
        }.sorted { ($0.begin, $0.id) < ($1.begin, $1.id) }
        self.semesters.withLock { known in known = Dictionary(semesters.map { ($0.id, $0) }) { $1 } }

        let listings = await concurrentMap(semesters) { semester in
            await captured { () async throws(StudIPError) -> [JSONValue] in
                try await self.collection(
                    ["users", user.id, "courses"], query: [("filter[semester]", semester.id)],
                    what: "your courses in \(semester.title)")
            }
        }
        var collector = CourseCollector(semesters: semesters)
        var withoutFiles = Set<String>()
        for (semester, listing) in zip(semesters, listings) {
            let elements = try listing.get()
            for element in elements where element["relationships"]?["folders"] == nil {
                if let id = element["id"]?.id { withoutFiles.insert(id) }
            }
            let courses = elements.compactMap { element -> ListedCourse? in
                guard let course = format.course(element) else {
                    problems.append(ItemProblem(itemID: element["id"]?.string ?? "?", message: "unreadable course"))
                    return nil
                }
                return course
            }
            collector.add(courses, semesterID: semester.id)
        }
        coursesWithoutFiles.withLock { $0 = withoutFiles }
        return RemoteOverview(user: user, semesters: semesters, courses: collector.result(), problems: problems)
    }

    private static func fetchUser(_ transport: HTTPTransport) async throws(StudIPError) -> RemoteUser {
        let what = "your user (users/me)"
        let document = try await transport.fetchJSON(
            transport.installation.jsonAPI(["users", "me"]), accept: mediaType, what: what)
        let data = document["data"]
        guard let id = data?["id"]?.id else { throw .malformedResponse(what: what, detail: "no user id") }
        let attributes = data?["attributes"]
        let username = attributes?["username"]?.string ?? ""
        let given = attributes?["given-name"]?.string ?? ""
        let family = attributes?["family-name"]?.string ?? ""
        let formatted = attributes?["formatted-name"]?.string ?? ""
        let displayName =
            !formatted.isEmpty ? formatted : [given, family].filter { !$0.isEmpty }.joined(separator: " ")
        return RemoteUser(id: id, username: username, displayName: displayName.isEmpty ? username : displayName)
    }

    // MARK: - Course content

    func content(of course: RemoteCourse, lastChecked: [String: Int64]) async throws(StudIPError) -> CourseContent {
        let label = Self.label(course)
        let format = format
        async let folderListing = captured { () async throws(StudIPError) -> [ListedFolder] in
            try await self.collection(
                ["courses", course.id, "folders"], what: "the folders of \(label)", shape: JSONAPIFormat.folderPage
            ) { $0.map { format.folder($0, courseID: course.id) } }
        }
        async let documentListing = captured { () async throws(StudIPError) -> [ListedDocument] in
            try await self.collection(
                ["courses", course.id, "file-refs"], what: "the documents of \(label)",
                shape: JSONAPIFormat.documentPage
            ) { $0.map { format.document($0, courseID: course.id) } }
        }
        let folderResult = await folderListing
        let documentResult = await documentListing
        if case .failure(.forbidden) = folderResult, coursesWithoutFiles.withLock({ $0.contains(course.id) }) {
            if loggedWithoutFiles.withLock({ $0.insert(course.id).inserted }) {
                transport.logger.debug("\(label) has no file area (files tool switched off); listed empty")
            }
            return CourseContent(course: course, rootFolderID: "", folders: [], documents: [])
        }
        var tree = try format.readableTree(try folderResult.get(), course: course, label: label)
        for document in try documentResult.get() {
            tree.add(document: document, listedInFolder: nil)
        }
        var ownListings: [RemoteFolder] = []
        var uncounted: [String] = []
        var rotated: RemoteFolder?
        if transport.listsRestrictedDocuments {
            let withoutCount = tree.foldersWithoutCount()
            uncounted = withoutCount.map(\.id)
            rotated = Self.leastRecentlyChecked(withoutCount, lastChecked: lastChecked)
            ownListings = tree.foldersMissingDocuments() + (rotated.map { [$0] } ?? [])
        }
        let listings = await concurrentMap(ownListings) { folder in
            await captured { () async throws(StudIPError) -> [ListedDocument] in
                try await self.collection(
                    ["folders", folder.id, "file-refs"], what: "the documents of folder \"\(folder.name)\" in \(label)",
                    shape: JSONAPIFormat.documentPage
                ) { $0.map { format.document($0, courseID: course.id) } }
            }
        }
        var unchecked = Set(uncounted)
        var firstChecks = Set<String>()
        for (folder, listing) in zip(ownListings, listings) {
            switch listing {
            case .success(let documents):
                for document in documents { tree.add(document: document, listedInFolder: folder.id) }
                if folder.id == rotated?.id {
                    unchecked.remove(folder.id)
                    if lastChecked[folder.id] == nil { firstChecks.insert(folder.id) }
                }
            case .failure(let error):
                tree.fail(folder.id, because: error.description)
            }
        }
        var content = tree.content
        content.foldersWithUncheckedRestrictedDocuments = unchecked
        content.foldersCheckedForTheFirstTime = firstChecks
        return content
    }

    static func label(_ course: RemoteCourse) -> String {
        let name = [course.number, course.title].filter { !$0.isEmpty }.joined(separator: " ")
        return "course \"\(name)\""
    }

    // MARK: - Announcements, dates, timetable

    /// `courses/{id}/news` with `include=author`: the authors' names come along, no request per author.
    /// (`users/{id}/news` would be the news a user *wrote*, expired and unpublished ones included.)
    func announcements(courseID: String) async throws(StudIPError) -> [Announcement] {
        let what = "the announcements of course \(courseID)"
        return try await emptyIfForbidden(transport) { () async throws(StudIPError) -> [Announcement] in
            // Read as a whole: a course's few announcements, named from what all pages included.
            let listing = try await collectionWithIncluded(
                ["courses", courseID, "news"], query: [("include", "author")], what: what
            ) { $0 }
            return try JSONAPIFormat.announcements(listing.data, included: listing.included, what: what)
        }
    }

    func dates(courseID: String) async throws(StudIPError) -> [CourseDate] {
        let what = "the dates of course \(courseID)"
        return try await emptyIfForbidden(transport) { () async throws(StudIPError) -> [CourseDate] in
            try JSONAPIFormat.courseDates(
                try await collection(["courses", courseID, "events"], what: what), what: what)
        }
    }

    /// `users/{id}/schedule?filter[timestamp]=…` with the middle of the semester (the route is not paginated and
    /// answers 400 to `page[…]`). A semester the last overview did not list costs one request for its dates.
    func schedule(semesterID: String) async throws(StudIPError) -> [ScheduleSlot]? {
        var semester = semesters.withLock { $0[semesterID] }
        if semester == nil {
            let what = "semester \(semesterID)"
            let document = try await transport.fetchJSON(
                transport.installation.jsonAPI(["semesters", semesterID]), accept: Self.mediaType, what: what)
            semester = document["data"].flatMap(JSONAPIFormat.semester)
        }
        guard let semester else {
            throw .malformedResponse(what: "semester \(semesterID)", detail: "no start and end")
        }
        let middle = semester.begin.addingTimeInterval(semester.end.timeIntervalSince(semester.begin) / 2)
        let what = "your timetable in \(semester.title)"
        return try await nilIfNotFound { () async throws(StudIPError) -> [ScheduleSlot] in
            let url = transport.installation.jsonAPI(
                ["users", userID, "schedule"],
                query: [("filter[timestamp]", String(Int64(middle.timeIntervalSince1970.rounded(.down))))])
            let document = try await transport.fetchJSON(url, accept: Self.mediaType, what: what)
            guard let data = document["data"]?.array else {
                throw .malformedResponse(what: what, detail: "no data list")
            }
            return try JSONAPIFormat.schedule(data, what: what)
        }
    }

    /// Every element of a paginated collection, `pageSize` per request, as JSON.
    private func collection(
        _ segments: [String], query: [(String, String)] = [], what: String
    ) async throws(StudIPError) -> [JSONValue] {
        try await collection(segments, query: query, what: what) { $0 }
    }

    /// Every element of a paginated collection, `pageSize` per request, each page built as `shape` says and
    /// decoded as it arrives.
    private func collection<Element>(
        _ segments: [String], query: [(String, String)] = [], what: String, shape: JSONShape = .everything,
        decode: ([JSONValue]) throws(StudIPError) -> [Element]
    ) async throws(StudIPError) -> [Element] {
        try await collectionWithIncluded(segments, query: query, what: what, shape: shape, decode: decode).data
    }

    /// A paginated collection's elements and the resources its pages `included`.
    private func collectionWithIncluded<Element>(
        _ segments: [String], query: [(String, String)], what: String, shape: JSONShape = .everything,
        decode: ([JSONValue]) throws(StudIPError) -> [Element]
    ) async throws(StudIPError) -> (data: [Element], included: [JSONValue]) {
        var included: [JSONValue] = []
        let data = try await Paging.collect(
            limit: transport.pageSize, what: what, idKey: "id",
            fetch: { (offset) async throws(StudIPError) -> Page in
                let url = transport.installation.jsonAPI(
                    segments,
                    query: query + [("page[offset]", String(offset)), ("page[limit]", String(transport.pageSize))])
                let document = try await transport.fetchJSON(url, accept: Self.mediaType, what: what, shape: shape)
                guard let data = document["data"]?.array else {
                    throw .malformedResponse(what: what, detail: "no data list")
                }
                included += document["included"]?.array ?? []
                return Page(elements: data, total: document["meta"]?["page"]?["total"]?.int.map { Int($0) })
            }, decode: decode)
        return (data, included)
    }
}

extension JSONAPISource {
    /// The folder the listing looks in for documents the user may not download, where folders announce no document
    /// count (Stud.IP 5.0): the one looked in least recently, folders never looked in first in tree order, so the
    /// root comes first and each of F folders is looked in at least once every F listings.
    static func leastRecentlyChecked(_ folders: [RemoteFolder], lastChecked: [String: Int64]) -> RemoteFolder? {
        folders.enumerated().min { lhs, rhs in
            (lastChecked[lhs.element.id] ?? 0, lhs.offset) < (lastChecked[rhs.element.id] ?? 0, rhs.offset)
        }?.element
    }
}
