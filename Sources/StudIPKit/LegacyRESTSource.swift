import Foundation
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
    private let probedUser: Mutex<RemoteUser?>
    /// User id → display name, learned from course listings (lecturers) for documents' `ownerName`.
    private let knownNames: Mutex<[String: String]>

    /// Internal, not private, like `course(_:)` and ``FolderWalk``: the fuzz target (`campusfs-fuzz`) calls them.
    init(transport: HTTPTransport, user: RemoteUser) {
        self.transport = transport
        probedUser = Mutex(user)
        knownNames = Mutex([user.id: user.displayName])
    }

    /// Asks `user`: an answer proves the API exists, the route is activated and the credentials work.
    static func connect(_ transport: HTTPTransport) async throws(StudIPError) -> LegacyRESTSource {
        let user = try await fetchUser(transport)
        return LegacyRESTSource(transport: transport, user: user)
    }

    var requestCount: Int { transport.requestCount }

    func shutdown() async { await transport.shutdown() }

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
            guard let id = element["id"]?.id, let begin = StudIPDate.unix(element["begin"]),
                let end = StudIPDate.unix(element["end"])
            else {
                problems.append(ItemProblem(itemID: element["id"]?.string ?? "?", message: "unreadable semester"))
                return nil
            }
            return RemoteSemester(id: id, title: element["title"]?.string ?? id, begin: begin, end: end)
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
                guard let course = course(element) else {
                    problems.append(
                        ItemProblem(itemID: element["course_id"]?.string ?? "?", message: "unreadable course"))
                    return nil
                }
                return course
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

    func course(_ element: JSONValue) -> ListedCourse? {
        guard let id = element["course_id"]?.id ?? element["id"]?.id else { return nil }
        var lecturers: [String] = []
        for lecturer in element["lecturers"]?.elements ?? [] {
            guard let name = lecturer["name"]?["formatted"]?.string, !name.isEmpty else { continue }
            lecturers.append(name)
            if let lecturerID = lecturer["id"]?.id {
                knownNames.withLock { $0[lecturerID] = name }
            }
        }
        let course = RemoteCourse(
            id: id, number: (element["number"]?.string ?? "").trimmingTrailingWhitespace,
            title: element["title"]?.string ?? "", subtitle: element["subtitle"]?.string ?? "",
            description: element["description"]?.string ?? "", semesterIDs: [], lecturers: lecturers.sorted(),
            webURL: transport.installation.courseWebURL(id))
        let endSemester = element["end_semester"]
        return ListedCourse(course: course, hasNoEndSemester: endSemester == nil || endSemester?.isNull == true)
    }

    // MARK: - Course content

    func content(of course: RemoteCourse) async throws(StudIPError) -> CourseContent {
        let label = JSONAPISource.label(course)
        let top = try await transport.fetchJSON(
            transport.installation.legacy(["course", course.id, "top_folder"]), what: "the files of \(label)")
        guard let rootID = top["id"]?.id else {
            throw .malformedResponse(what: "the files of \(label)", detail: "top folder without id")
        }
        var walk = FolderWalk(course: course, rootID: rootID, installation: transport.installation)
        walk.names = knownNames.withLock { $0 }
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

/// The content of one course while the legacy walk assembles it, folder listing by folder listing.
struct FolderWalk {
    private(set) var content: CourseContent
    var names: [String: String] = [:]
    private let installation: Installation
    private var folderIndex: Set<String> = []
    private var documentIndex: Set<String> = []

    init(course: RemoteCourse, rootID: String, installation: Installation) {
        content = CourseContent(course: course, rootFolderID: rootID, folders: [], documents: [])
        self.installation = installation
    }

    /// Takes in one extended folder object (`top_folder` or `folder/{id}`): the folder itself, its documents
    /// and its readable subfolders, which are returned for listing next. Permission-only entries (a visible
    /// but unreadable subfolder has no id, API.md §2.5.4) are skipped.
    mutating func add(listing json: JSONValue, of folderID: String, parentID: String?, label: String)
        -> [RemoteFolder]
    {
        guard json["id"]?.id == folderID else {
            fail(folderID, because: "the listing of folder \(folderID) in \(label) describes another folder")
            return []
        }
        guard let folder = self.folder(json, parentID: parentID) else {
            fail(folderID, because: "the folder has no dates")
            return []
        }
        if folderIndex.insert(folder.id).inserted {
            content.folders.append(folder)
        } else if let index = content.folders.firstIndex(where: { $0.id == folder.id }) {
            content.folders[index] = folder
        }
        for element in json["file_refs"]?.elements ?? [] {
            add(document: element, folderID: folderID)
        }
        var subfolders: [RemoteFolder] = []
        for entry in json["subfolders"]?.elements ?? [] {
            guard entry["is_readable"]?.bool != false, let child = self.folder(entry, parentID: folderID),
                folderIndex.insert(child.id).inserted
            else { continue }
            content.folders.append(child)
            subfolders.append(child)
        }
        return subfolders
    }

    private func folder(_ json: JSONValue, parentID: String?) -> RemoteFolder? {
        guard let id = json["id"]?.id else { return nil }
        let dates = StudIPDate.pair(
            created: StudIPDate.unix(json["mkdate"]), changed: StudIPDate.unix(json["chdate"]))
        guard let dates else { return nil }
        return RemoteFolder(
            id: id, parentID: parentID, name: json["name"]?.string ?? "",
            description: json["description"]?.string ?? "", folderType: json["folder_type"]?.string ?? "",
            created: dates.created, changed: dates.changed,
            webURL: installation.folderWebURL(id, courseID: content.course.id))
    }

    private mutating func add(document json: JSONValue, folderID: String) {
        guard let id = json["id"]?.id else {
            fail(folderID, because: "a document without id")
            return
        }
        guard !documentIndex.contains(id) else { return }
        let dates = StudIPDate.pair(
            created: StudIPDate.unix(json["mkdate"]), changed: StudIPDate.unix(json["chdate"]))
        guard let name = json["name"]?.string, let dates else {
            content.problems.append(ItemProblem(itemID: id, message: "document without name or dates, left out"))
            content.failedFolderIDs.insert(folderID)
            return
        }
        documentIndex.insert(id)
        let isLink = json["storage"]?.string == "url"
        let detailsURL = installation.documentWebURL(id, courseID: content.course.id)
        // 4.x sends the external address; 5.x a `sendfile.php` URL of the installation, which is no better.
        let externalURL = json["url"]?.string.flatMap { $0.contains("sendfile.php") ? nil : $0 }
        content.documents.append(
            RemoteDocument(
                id: id, folderID: folderID, name: name, description: json["description"]?.string ?? "",
                mimeType: json["mime_type"]?.string ?? "", size: max(0, json["size"]?.int ?? 0),
                created: dates.created, changed: dates.changed, fileID: json["file_id"]?.id ?? "",
                ownerName: json["user_id"]?.id.flatMap { names[$0] } ?? "",
                license: json["content_terms_of_use_id"]?.string ?? "",
                isDownloadable: json["is_downloadable"]?.bool ?? true, isLink: isLink,
                webURL: isLink ? externalURL ?? detailsURL : detailsURL))
    }

    mutating func fail(_ folderID: String, because reason: String) {
        content.failedFolderIDs.insert(folderID)
        content.problems.append(ItemProblem(itemID: folderID, message: reason))
    }
}
