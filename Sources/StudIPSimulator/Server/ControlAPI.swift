import Foundation

/// `/__sim/…`: what tests and benchmarks use to observe and steer the simulator. JSON in, JSON out.
///
/// | route | does |
/// |---|---|
/// | `GET /__sim/stats`, `POST /__sim/stats/reset` | request counters (`total`, per `routes`), body bytes streamed per route (`bytes_sent`: documents only, so `sendfile.php`'s range answers show the part they sent), the most API requests in flight at once (`max_in_flight`), downloads in progress and completed, external-host requests |
/// | `GET`/`PUT /__sim/settings` | `latency_ms`, `bandwidth_bytes_per_second` (null = unlimited), `access_token_lifetime_s`, `basic_auth_reaches_php` (false: Basic authenticates nobody, as PHP behind FastCGI without `CGIPassAuth`), `sendfile_ranges` (false: `sendfile.php` ignores `Range`, answers 200 with the whole document), `content_ranges` (true: the JSON:API content route answers one range with 206, as a Stud.IP newer than 5.0.7 may), `external_ranges` (false: the host of documents hosted elsewhere ignores `Range`) |
/// | `GET`/`POST`/`DELETE /__sim/faults` | `{"status": 503}`, `{"reset_after_bytes": K}`, `{"stall_ms": N}`, `{"body": "…"}` (200 with that body) or `{"headers": {"Content-Range": "bytes 0-99/5"}}` (the real answer with these headers replaced), with optional `path` (substring), `method`, `count`, `share` |
/// | `POST /__sim/documents`, `PATCH`/`DELETE /__sim/documents/{id}` | add; rename (`name`), move (`folder_id`), new version (`new_version`, `size`, `text`, `via`); delete |
/// | `GET /__sim/documents/{id}/content` | the bytes a download of that document must produce |
/// | `POST /__sim/folders`, `PATCH`/`DELETE /__sim/folders/{id}` | add (`parent_id`, `name`, `folder_type`); rename, move (`parent_id`); delete with contents |
/// | `POST /__sim/courses` | add a course (`title`, `number`, `semester_ids`, `members` {username: permission}, `files_tool` false = files tool off) with its root folder |
/// | `POST /__sim/news`, `PATCH`/`DELETE /__sim/news/{id}` | post an announcement (`course_id`, or `range` = `studip`/a user id; `title`, `content` HTML, `author` username, `start`, `end` Unix seconds, `comments_allowed`); edit those fields; `expire: true` ends its publication a second ago; delete |
/// | `POST /__sim/dates`, `PATCH /__sim/dates/{id}` | add a course date (`course_id`, `start`, `end`, `room`, `category`, `cycle_id`, `cycle_description`); move it (`start`, `end`, `room`), cancel it (`cancelled`, `note`: Stud.IP moves it to `ex_termine`, so it gets a new id, answered as `id`) |
/// | `POST /__sim/oauth2/expire` | expire every access token now (refresh tokens still work) |
/// | `POST /__sim/oauth2/revoke` | revoke every access token, refresh token and unredeemed code |
/// | `POST /__sim/sessions/expire` | end every Stud.IP web session (and pre-login session) and every SP session; the IdP's login stays, as a real IdP's does |
///
/// Changes bump dates like Stud.IP 5.0.7 (captured in `fixtures-5.0.7-more`, Parts 2 and 3), each at least one
/// second after the document's previous change. `via` says how a new version was uploaded (default `web`):
///
/// | change | file-ref `chdate` | file id, inode | file `mkdate` | file `chdate` (REST `Last-Modified`) | ETag mtime | size |
/// |---|---|---|---|---|---|---|
/// | `name`, `folder_id` | now | – | – | – | – | – |
/// | new version `via: web` or `rest` | now | new | now | now | now | new |
/// | new version `via: jsonapi`, same size | – | – | – | – | now | – |
/// | new version `via: jsonapi`, other size | – | – | – | now | now | new |
struct ControlAPI: Sendable {
    let store: UniversityStore
    let statistics: Statistics
    let faults: FaultInjector
    let authenticator: Authenticator
    let settings: SettingsBox
    /// The SP whose sessions `sessions/expire` ends; nil without single sign-on.
    var serviceProvider: ServiceProvider? = nil

    private struct Failure: Error {
        let status: Int
        let message: String
    }

    func handle(method: String, segments: [String], body: Data) -> SimResponse {
        let input = body.isEmpty ? JSON.object([]) : JSON.parse(String(decoding: body, as: UTF8.self))
        do {
            guard let input else { throw Failure(status: 400, message: "request body is not JSON") }
            return try route(method: method, segments: segments, input: input)
        } catch let failure as Failure {
            return reply(["error": .string(failure.message)], status: failure.status)
        } catch {
            return reply(["error": .string(String(describing: error))], status: 409)
        }
    }

    private func route(method: String, segments: [String], input: JSON) throws -> SimResponse {
        let resource = segments.first ?? ""
        let id = segments.count > 1 ? segments[1] : ""
        let tail = Array(segments.dropFirst(2))
        switch (method, resource, segments.count) {
        case ("GET", "stats", 1): return reply(statsJSON())
        case ("POST", "stats", 2) where id == "reset":
            statistics.reset()
            return reply(statsJSON())
        case ("GET", "settings", 1): return reply(settingsJSON(settings.get()))
        case ("PUT", "settings", 1): return reply(settingsJSON(try updateSettings(input)))
        case ("GET", "faults", 1): return reply(["active": .int(faults.active().count)])
        case ("POST", "faults", 1):
            faults.add(try fault(from: input))
            return reply(["active": .int(faults.active().count)], status: 201)
        case ("DELETE", "faults", 1):
            faults.clear()
            return reply(["active": 0])
        case ("POST", "documents", 1): return reply(try addDocument(input), status: 201)
        case ("PATCH", "documents", 2): return reply(try changeDocument(id, input))
        case ("DELETE", "documents", 2):
            try store.mutate { try $0.removeFileRef(id) }
            return reply(["deleted": .string(id)])
        case ("GET", "documents", 3) where tail == ["content"]:
            guard let document = store.snapshot().fileRefs[id] else {
                throw Failure(status: 404, message: "no document \(id)")
            }
            return SimResponse(
                status: 200, headers: [("Content-Type", "application/octet-stream")],
                body: .bytes(expectedBytes(of: document)), route: "control")
        case ("POST", "folders", 1): return reply(try addFolder(input), status: 201)
        case ("PATCH", "folders", 2): return reply(try changeFolder(id, input))
        case ("DELETE", "folders", 2):
            try store.mutate { try $0.removeFolder(id) }
            return reply(["deleted": .string(id)])
        case ("POST", "courses", 1): return reply(try addCourse(input), status: 201)
        case ("POST", "news", 1): return reply(try addNews(input), status: 201)
        case ("PATCH", "news", 2): return reply(try changeNews(id, input))
        case ("DELETE", "news", 2):
            try store.mutate { try $0.removeNews(id) }
            return reply(["deleted": .string(id)])
        case ("POST", "dates", 1): return reply(try addDate(input), status: 201)
        case ("PATCH", "dates", 2): return reply(try changeDate(id, input))
        case ("POST", "oauth2", 2) where id == "expire":
            authenticator.expireAccessTokens()
            return reply(["expired": true])
        case ("POST", "oauth2", 2) where id == "revoke":
            authenticator.revokeTokens()
            return reply(["revoked": true])
        case ("POST", "sessions", 2) where id == "expire":
            authenticator.expireSessions()
            serviceProvider?.expireSessions()
            return reply(["expired": true])
        default:
            throw Failure(status: 404, message: "no control route \(method) /__sim/\(segments.joined(separator: "/"))")
        }
    }

    private func reply(_ json: JSON, status: Int = 200) -> SimResponse {
        SimResponse(
            status: status, headers: [("Content-Type", "application/json")],
            body: .bytes(Data(json.encoded(escapingSlashes: false).utf8)), route: "control")
    }

    // MARK: Observation and settings

    private func statsJSON() -> JSON {
        let stats = statistics.snapshot()
        func object(_ dictionary: [String: Int]) -> JSON {
            .object(dictionary.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })
        }
        return [
            "total": .int(stats.total),
            "max_in_flight": .int(stats.maxInFlight),
            "routes": object(stats.routes),
            "bytes_sent": object(stats.bytesSent),
            "downloads": [
                "in_progress": object(stats.downloadsInProgress), "completed": object(stats.downloadsCompleted),
            ],
            "external": [
                "requests": .int(stats.externalRequests),
                "with_credentials": .int(stats.externalRequestsWithCredentials),
            ],
        ]
    }

    private func settingsJSON(_ settings: SimulatorSettings) -> JSON {
        [
            "latency_ms": .int(settings.latencyMilliseconds),
            "bandwidth_bytes_per_second": settings.bandwidthBytesPerSecond.map(JSON.int) ?? .null,
            "access_token_lifetime_s": .int(settings.accessTokenLifetimeSeconds),
            "basic_auth_reaches_php": .bool(settings.basicAuthReachesPHP),
            "sendfile_ranges": .bool(settings.sendfileRanges),
            "content_ranges": .bool(settings.contentRanges),
            "external_ranges": .bool(settings.externalRanges),
        ]
    }

    private func updateSettings(_ input: JSON) throws -> SimulatorSettings {
        let latency = try int(input, "latency_ms")
        let lifetime = try int(input, "access_token_lifetime_s")
        let bandwidth = try int(input, "bandwidth_bytes_per_second")
        let clearBandwidth = input["bandwidth_bytes_per_second"] == .null
        let basicAuth = try bool(input, "basic_auth_reaches_php")
        let ranges = try bool(input, "sendfile_ranges")
        let contentRanges = try bool(input, "content_ranges")
        let externalRanges = try bool(input, "external_ranges")
        return settings.update { settings in
            if let latency { settings.latencyMilliseconds = max(0, latency) }
            if let lifetime { settings.accessTokenLifetimeSeconds = lifetime }
            if let bandwidth { settings.bandwidthBytesPerSecond = bandwidth > 0 ? bandwidth : nil }
            if clearBandwidth { settings.bandwidthBytesPerSecond = nil }
            if let basicAuth { settings.basicAuthReachesPHP = basicAuth }
            if let ranges { settings.sendfileRanges = ranges }
            if let contentRanges { settings.contentRanges = contentRanges }
            if let externalRanges { settings.externalRanges = externalRanges }
        }
    }

    private func fault(from input: JSON) throws -> Fault {
        let action: Fault.Action
        if let status = try int(input, "status") {
            guard (100...599).contains(status) else { throw Failure(status: 400, message: "status must be 100–599") }
            if status == 429, let seconds = try int(input, "retry_after") {
                action = .rateLimited(retryAfterSeconds: max(0, seconds))
            } else {
                action = .status(status)
            }
        } else if let bytes = try int(input, "reset_after_bytes") {
            action = .resetAfterBytes(max(0, bytes))
        } else if let bytes = try int(input, "stall_after_bytes"), let milliseconds = try int(input, "stall_ms") {
            action = .stallAfterBytes(max(0, bytes), milliseconds: max(0, milliseconds))
        } else if let milliseconds = try int(input, "stall_ms") {
            action = .stall(milliseconds: max(0, milliseconds))
        } else if let body = try string(input, "body") {
            action = .body(body)
        } else if case .object(let fields)? = input["headers"] {
            action = .headers(
                try Dictionary(
                    fields.map { name, value in
                        guard case .string(let text) = value else {
                            throw Failure(status: 400, message: "headers must map names to strings")
                        }
                        return (name, text)
                    }, uniquingKeysWith: { _, last in last }))
        } else {
            throw Failure(
                status: 400,
                message:
                    "a fault needs one of status, reset_after_bytes, stall_ms (with stall_after_bytes: mid-body), body, "
                    + "headers")
        }
        var share = 1.0
        if case .string(let text)? = input["share"], let value = Double(text) { share = value }
        if case .int(let value)? = input["share"] { share = Double(value) }
        guard share > 0, share <= 1 else { throw Failure(status: 400, message: "share must be in (0, 1]") }
        return Fault(
            action: action, pathContains: try string(input, "path"), method: try string(input, "method"),
            remaining: try int(input, "count"), share: share)
    }

    // MARK: Mutations

    private func addDocument(_ input: JSON) throws -> JSON {
        let folderID = try required(input, "folder_id")
        let name = try required(input, "name")
        let text = try string(input, "text")
        let size = try int(input, "size") ?? text.map { $0.utf8.count } ?? 1024
        let id = try string(input, "id") ?? PHP.newID()
        var created: FileRef?
        try store.mutate { university in
            guard let folder = university.folders[folderID] else {
                throw Failure(status: 404, message: "no folder \(folderID)")
            }
            let owner = university.course(ofFolder: folder.id)?.lecturers.first?.userID ?? folder.userID
            let now = Self.now(after: 0)
            let document = FileRef(
                id: id, fileID: PHP.newID(), folderID: folderID, name: name, userID: owner,
                mimeType: try string(input, "mime_type") ?? "application/octet-stream", size: size, mkdate: now,
                chdate: now,
                content: text.map { .bytes(Data($0.utf8)) } ?? Self.generated(size: size, id: id, version: 0))
            university.add(document)
            created = document
        }
        guard let created else { throw Failure(status: 500, message: "document was not created") }
        return documentJSON(created)
    }

    /// Rename and move touch only the file-ref's `chdate`; a new version changes what its upload path changes.
    private func changeDocument(_ id: String, _ input: JSON) throws -> JSON {
        let name = try string(input, "name")
        let folderID = try string(input, "folder_id")
        let text = try string(input, "text")
        let size = try int(input, "size")
        let newVersion = input["new_version"] == .bool(true) || text != nil || size != nil
        let via = try string(input, "via")
        guard let path = UploadPath(rawValue: via ?? UploadPath.web.rawValue) else {
            let paths = UploadPath.allCases.map(\.rawValue).joined(separator: ", ")
            throw Failure(status: 400, message: "via must be one of \(paths)")
        }
        guard newVersion || via == nil else { throw Failure(status: 400, message: "via needs a new version") }
        guard newVersion || name != nil || folderID != nil else {
            throw Failure(status: 400, message: "nothing to change: name, folder_id, new_version, size or text")
        }
        var changed: FileRef?
        try store.mutate { university in
            guard var document = university.fileRefs[id] else {
                throw Failure(status: 404, message: "no document \(id)")
            }
            let time = Self.now(after: max(document.chdate, document.fileChdate, document.fileMtime))
            if name != nil || folderID != nil { document.chdate = time }
            if let name { document.name = name }
            if let folderID { document.folderID = folderID }
            if newVersion {
                // Without a size, a PDF's new version is one: at least the smallest PDF there is.
                let isPDF = document.mimeType == "application/pdf"
                let newSize =
                    size ?? text.map { $0.utf8.count }
                    ?? (isPDF ? max(document.size, ContentGenerator.minimumPDFSize) : document.size)
                let content =
                    text.map { .bytes(Data($0.utf8)) }
                    ?? Self.generated(size: newSize, id: id, version: time, like: document.content)
                document.storeVersion(content, size: newSize, via: path, at: time)
            }
            try university.update(document)
            changed = document
        }
        guard let changed else { throw Failure(status: 500, message: "document was not changed") }
        return documentJSON(changed)
    }

    private func addFolder(_ input: JSON) throws -> JSON {
        let parentID = try required(input, "parent_id")
        let name = try required(input, "name")
        let id = try string(input, "id") ?? PHP.newID()
        try store.mutate { university in
            guard let parent = university.folders[parentID] else {
                throw Failure(status: 404, message: "no folder \(parentID)")
            }
            let now = Self.now(after: 0)
            university.add(
                Folder(
                    id: id, userID: parent.userID, parentID: parentID, rangeID: parent.rangeID,
                    folderType: try string(input, "folder_type") ?? "StandardFolder", name: name, mkdate: now,
                    chdate: now, rangeType: parent.rangeType, dataContent: try string(input, "data_content") ?? "[]"))
        }
        return ["id": .string(id), "name": .string(name), "parent_id": .string(parentID)]
    }

    private func changeFolder(_ id: String, _ input: JSON) throws -> JSON {
        let name = try string(input, "name")
        let parentID = try string(input, "parent_id")
        var changed: Folder?
        try store.mutate { university in
            guard var folder = university.folders[id] else { throw Failure(status: 404, message: "no folder \(id)") }
            guard !folder.isRoot else { throw Failure(status: 409, message: "folder \(id) is a course's root folder") }
            folder.chdate = Self.now(after: folder.chdate)
            if let name { folder.name = name }
            if let parentID { folder.parentID = parentID }
            try university.update(folder)
            changed = folder
        }
        guard let changed else { throw Failure(status: 500, message: "folder was not changed") }
        return ["id": .string(changed.id), "name": .string(changed.name), "parent_id": .string(changed.parentID)]
    }

    private func addCourse(_ input: JSON) throws -> JSON {
        let title = try required(input, "title")
        let number = try string(input, "number") ?? ""
        var semesterIDs: [String] = []
        if case .array(let items)? = input["semester_ids"] {
            semesterIDs = items.compactMap { if case .string(let id) = $0 { id } else { nil } }
        }
        var members: [(String, String)] = []
        if case .object(let pairs)? = input["members"] {
            members = pairs.compactMap { if case .string(let permission) = $1 { ($0, permission) } else { nil } }
        }
        let id = try string(input, "id") ?? PHP.newID()
        let rootID = PHP.newID()
        let hasFiles = try bool(input, "files_tool") ?? true
        try store.mutate { university in
            let now = Self.now(after: 0)
            let memberships = try members.map { username, permission in
                guard let user = university.user(named: username) else {
                    throw Failure(status: 404, message: "no user \(username)")
                }
                return Membership(userID: user.id, permission: permission, mkdate: now)
            }
            for semester in semesterIDs where university.semesters[semester] == nil {
                throw Failure(status: 404, message: "no semester \(semester)")
            }
            let owner = memberships.first { $0.permission == "dozent" }?.userID ?? memberships.first?.userID ?? ""
            var course = Course(
                id: id, number: number, title: title, instituteID: PHP.newID(), semesterIDs: semesterIDs,
                members: memberships, topFolderID: rootID, mkdate: now, chdate: now)
            if !hasFiles { course.modules.removeAll { $0 == "documents" } }
            university.add(course)
            university.add(
                Folder(
                    id: rootID, userID: owner, parentID: "", rangeID: id, folderType: "RootFolder", name: "",
                    mkdate: now, chdate: now))
        }
        return ["id": .string(id), "top_folder_id": .string(rootID)]
    }

    private func documentJSON(_ document: FileRef) -> JSON {
        [
            "id": .string(document.id), "file_id": .string(document.fileID), "folder_id": .string(document.folderID),
            "name": .string(document.name), "size": .int(document.size), "chdate": .int(document.chdate),
        ]
    }

    private func expectedBytes(of document: FileRef) -> Data {
        if case .external(let url) = document.content {
            return Data(ContentGenerator.externalBytes(path: url, size: document.size))
        }
        return ContentBytes.all(document.content, size: document.size)
    }

    // MARK: Announcements and dates

    /// Times follow the installation's clock (pinned in captured datasets), one second past the last change.
    private func addNews(_ input: JSON) throws -> JSON {
        let title = try required(input, "title")
        let content = try string(input, "content") ?? ""
        let range = try string(input, "course_id") ?? string(input, "range") ?? "studip"
        let id = try string(input, "id") ?? PHP.newID()
        var created: News?
        try store.mutate { university in
            let now = university.now
            let author: String
            if let username = try string(input, "author") {
                guard let user = university.user(named: username) else {
                    throw Failure(status: 404, message: "no user \(username)")
                }
                author = user.id
            } else if let course = university.courses[range] {
                author = course.lecturers.first?.userID ?? ""
            } else {
                guard range == "studip" || university.users[range] != nil else {
                    throw Failure(status: 404, message: "no course or user \(range)")
                }
                author = university.user(named: "root@studip")?.id ?? ""
            }
            let start = try int(input, "start") ?? now - 60
            let end = try int(input, "end") ?? start + 28 * 86400
            guard end > start else { throw Failure(status: 400, message: "end must be after start") }
            let item = News(
                id: id, title: title, content: content.hasPrefix("<!--HTML-->") ? content : "<!--HTML-->" + content,
                authorID: author, rangeIDs: [range], date: start, expire: end - start,
                allowComments: try bool(input, "comments_allowed") ?? false, mkdate: now, chdate: now)
            university.add(item)
            created = item
        }
        guard let created else { throw Failure(status: 500, message: "announcement not created") }
        return newsJSON(created)
    }

    private func changeNews(_ id: String, _ input: JSON) throws -> JSON {
        var changed: News?
        try store.mutate { university in
            guard var item = university.news[id] else { throw Failure(status: 404, message: "no announcement \(id)") }
            let now = max(university.now, item.chdate + 1)
            if let title = try string(input, "title") { item.title = title }
            if let content = try string(input, "content") {
                item.content = content.hasPrefix("<!--HTML-->") ? content : "<!--HTML-->" + content
            }
            if let comments = try bool(input, "comments_allowed") { item.allowComments = comments }
            let end = item.date + item.expire
            if let start = try int(input, "start") { item.date = start }
            item.expire = (try int(input, "end") ?? end) - item.date
            if try bool(input, "expire") == true { item.expire = min(item.expire, university.now - 1 - item.date) }
            guard item.expire > 0 else { throw Failure(status: 400, message: "the end must be after the start") }
            item.chdate = now
            university.add(item)
            changed = item
        }
        guard let changed else { throw Failure(status: 500, message: "announcement not changed") }
        return newsJSON(changed)
    }

    private func newsJSON(_ item: News) -> JSON {
        [
            "id": .string(item.id), "title": .string(item.title), "ranges": .array(item.rangeIDs.map(JSON.string)),
            "start": .int(item.date), "end": .int(item.date + item.expire), "chdate": .int(item.chdate),
        ]
    }

    private func addDate(_ input: JSON) throws -> JSON {
        let courseID = try required(input, "course_id")
        guard let start = try int(input, "start"), let end = try int(input, "end"), end > start else {
            throw Failure(status: 400, message: "start and end (Unix seconds, end after start) are required")
        }
        let id = try string(input, "id") ?? PHP.newID()
        var created: CourseEvent?
        try store.mutate { university in
            guard university.courses[courseID] != nil else {
                throw Failure(status: 404, message: "no course \(courseID)")
            }
            let now = university.now
            let event = CourseEvent(
                id: id, courseID: courseID, cycleID: try string(input, "cycle_id"), start: start, end: end,
                category: try string(input, "category") ?? "Sitzung",
                cycleDescription: try string(input, "cycle_description") ?? "", room: try string(input, "room") ?? "",
                mkdate: now, chdate: now)
            university.add(event)
            created = event
        }
        guard let created else { throw Failure(status: 500, message: "date not created") }
        return dateJSON(created)
    }

    private func changeDate(_ id: String, _ input: JSON) throws -> JSON {
        var changed: CourseEvent?
        try store.mutate { university in
            guard var event = university.events[id] else { throw Failure(status: 404, message: "no date \(id)") }
            if let start = try int(input, "start") { event.start = start }
            if let end = try int(input, "end") { event.end = end }
            guard event.end > event.start else { throw Failure(status: 400, message: "end must be after start") }
            if let room = try string(input, "room") { event.room = room }
            if let note = try string(input, "note") { event.cancelComment = note }
            if let cancelled = try bool(input, "cancelled"), cancelled != event.isCancelled {
                event.isCancelled = cancelled
                try university.removeEvent(id)
                event.id = PHP.newID()
            }
            event.chdate = max(university.now, event.chdate + 1)
            university.add(event)
            changed = event
        }
        guard let changed else { throw Failure(status: 500, message: "date not changed") }
        return dateJSON(changed)
    }

    private func dateJSON(_ event: CourseEvent) -> JSON {
        [
            "id": .string(event.id), "course_id": .string(event.courseID), "start": .int(event.start),
            "end": .int(event.end), "room": .string(event.room), "cancelled": .bool(event.isCancelled),
            "chdate": .int(event.chdate),
        ]
    }

    // MARK: Helpers

    /// A Stud.IP timestamp that is later than `previous`, so every change is visible even within one second.
    private static func now(after previous: Int) -> Int {
        max(Int(Date().timeIntervalSince1970), previous + 1)
    }

    /// New bytes of `size` for the document `id`. A new version stays what the document was: a PDF stays a PDF about
    /// the same lecture (``ContentProfile/revised(_:kind:version:)``), which viewers open and `pdftotext` reads; a
    /// captured PDF becomes a generated one. A PDF cannot be smaller than ``ContentGenerator/minimumPDFSize``, so
    /// smaller sizes, and everything else, are arbitrary bytes.
    private static func generated(size: Int, id: String, version: Int, like previous: Content? = nil) -> Content {
        let seed = id.utf8.reduce(UInt64(truncatingIfNeeded: version)) { $0 &* 31 &+ UInt64($1) }
        let fitsAPDF = size >= ContentGenerator.minimumPDFSize
        switch previous {
        case .generated(let kind, let previousSeed, _)? where kind != .pdf || fitsAPDF:
            return .generated(
                kind: kind, seed: ContentProfile.revised(previousSeed, kind: kind, version: seed), size: size)
        case .bytes(let data)? where data.starts(with: Array("%PDF-".utf8)) && fitsAPDF:
            return .generated(kind: .pdf, seed: seed, size: size)
        default:
            return .generated(kind: .binary, seed: seed, size: size)
        }
    }

    private func string(_ input: JSON, _ key: String) throws -> String? {
        switch input[key] {
        case nil, .null?: return nil
        case .string(let value)?: return value
        default: throw Failure(status: 400, message: "\(key) must be a string")
        }
    }

    private func required(_ input: JSON, _ key: String) throws -> String {
        guard let value = try string(input, key) else { throw Failure(status: 400, message: "\(key) is required") }
        return value
    }

    private func bool(_ input: JSON, _ key: String) throws -> Bool? {
        switch input[key] {
        case nil, .null?: return nil
        case .bool(let value)?: return value
        default: throw Failure(status: 400, message: "\(key) must be true or false")
        }
    }

    private func int(_ input: JSON, _ key: String) throws -> Int? {
        switch input[key] {
        case nil, .null?: return nil
        case .int(let value)?: return value
        default: throw Failure(status: 400, message: "\(key) must be an integer")
        }
    }
}
