import Foundation

/// The legacy routes (API.md §2.3): `Course.php` refuses strangers with 401, `FileSystem.php` with 403.
extension LegacyEnvironment {
    /// The activated routes of the captured installation (`GET discovery`), bundled with the fixtures.
    static let discoveryMap: JSON = {
        guard let url = Bundle.module.url(forResource: "fixtures-5.0.7/legacy-discovery", withExtension: "json"),
            let data = try? Data(contentsOf: url), let map = JSON.parse(String(decoding: data, as: UTF8.self))
        else { return .array([]) }
        return map
    }()

    func discovery() -> SimResponse { json(Self.discoveryMap) }

    func userShow(_ user: User) -> SimResponse { tagged(self.user(user)) }

    func userShow(id: String) -> SimResponse {
        guard let found = university.users[id] else { return error(404, "User not found") }
        return tagged(user(found))
    }

    /// All semesters unless `limit` says otherwise (5.x default).
    func semesters() -> SimResponse {
        let items = university.orderedSemesters.map { (key: href("semester/\($0.id)"), value: semester($0)) }
        return paginated(items, keyed: true, defaultLimit: max(items.count, 1))
    }

    func semester(id: String) -> SimResponse {
        guard let found = university.semesters[id] else { return error(404, "Semester not found.") }
        return tagged(semester(found))
    }

    /// Own courses (root may ask for anyone) by membership date, optionally of one semester.
    func userCourses(id: String, viewer: User) -> SimResponse {
        guard viewer.id == id || viewer.isRoot else { return error(401, "") }
        var courses = university.courses(of: id).sorted {
            let lhs = university.membership(of: id, in: $0.id)?.mkdate ?? 0
            let rhs = university.membership(of: id, in: $1.id)?.mkdate ?? 0
            return lhs != rhs ? lhs < rhs : $0.id < $1.id
        }
        if let semesterID = request.queryValue("semester") {
            guard university.semesters[semesterID] != nil else { return error(400, "Semester not found.") }
            courses = courses.filter { $0.isIn(semester: semesterID) }
        }
        let items = courses.map { (key: href("course/\($0.id)"), value: course($0, viewer: viewer)) }
        return tagged(envelope(items, keyed: true))
    }

    func courseShow(id: String, viewer: User) -> SimResponse {
        guard let found = university.courses[id] else { return error(404, "Course not found") }
        guard university.canAccess(course: found, user: viewer) else { return error(401, "") }
        return tagged(course(found, viewer: viewer), headers: [("Last-Modified", StudIPDate.http(found.chdate))])
    }

    func courseTopFolder(id: String, viewer: User) -> SimResponse {
        guard let found = university.courses[id] else { return error(404, "Course not found") }
        guard university.canAccess(course: found, user: viewer) else { return error(401, "") }
        return folderShow(id: found.topFolderID, viewer: viewer)
    }

    /// The personal file area, only for yourself; Stud.IP creates the root folder on first access.
    func userTopFolder(id: String, viewer: User) -> SimResponse {
        guard university.users[id] != nil else { return error(404, "User not found") }
        guard viewer.id == id else { return error(403, "You are not allowed to see the files of another user!") }
        guard university.personalRootFolder(of: id) == nil else {
            return folderShow(id: university.personalRootFolder(of: id)?.id ?? "", viewer: viewer)
        }
        guard let updated = try? context.mutate({ $0.ensurePersonalRootFolder(of: id) }),
            let root = updated.personalRootFolder(of: id)
        else { return error(500, "Could not create the top folder.") }
        return with(updated).folderShow(id: root.id, viewer: viewer)
    }

    func folderShow(id: String, viewer: User) -> SimResponse {
        guard let found = university.folders[id] else { return error(404, "Folder with id \(id) not found!") }
        guard university.canRead(folder: found, user: viewer) else { return notReadable(id) }
        return json(folder(found, viewer: viewer, extended: true))
    }

    /// Visible children; `total` is the raw child count, so a page can be shorter than the numbers suggest.
    func subfolders(id: String, viewer: User) -> SimResponse {
        guard let found = university.folders[id] else { return error(404, "Folder with id \(id) not found!") }
        guard university.canRead(folder: found, user: viewer) else { return notReadable(id) }
        let children = university.subfolders(of: id).filter { university.canSee(folder: $0, user: viewer) }
        return paginated(children.map { (key: $0.id, value: folder($0, viewer: viewer)) }, keyed: false)
    }

    /// Straight from the `file_refs` table, not filtered by the folder type.
    func folderFiles(id: String, viewer: User) -> SimResponse {
        guard let found = university.folders[id] else { return error(404, "Folder with id \(id) not found!") }
        guard university.canRead(folder: found, user: viewer) else { return notReadable(id) }
        let refs = university.fileRefs(in: id)
        return paginated(refs.map { (key: $0.id, value: fileRef($0, viewer: viewer)) }, keyed: false)
    }

    func folderPermissions(id: String, viewer: User) -> SimResponse {
        guard let found = university.folders[id] else { return error(404, "Folder with id \(id) not found!") }
        let permissions = university.folderPermissions(found, user: viewer)
        return json([
            "folder_id": .string(id), "user_id": .string(viewer.id), "is_visible": .bool(permissions.visible),
            "is_readable": .bool(permissions.readable), "is_writable": .bool(permissions.writable),
        ])
    }

    func fileShow(id: String, viewer: User) -> SimResponse {
        guard let ref = university.fileRefs[id] else { return error(404, "File reference with id \(id) not found!") }
        guard let folder = university.folders[ref.folderID], university.canRead(folder: folder, user: viewer) else {
            return error(403, "You are not permitted to read the file reference with id \(id)!")
        }
        return json(fileRef(ref, viewer: viewer, extended: request.queryValue("extended") == "1"))
    }

    /// `file/:id/download` (API.md §2.6): octet-stream, `Last-Modified` = the file's chdate, no Range, no ETag.
    /// Conditional requests as Stud.IP 5.0.7 answers them (captured): `If-Modified-Since` is ignored, and
    /// `If-Unmodified-Since` fails with an empty 412 whatever its date (`RouteMap::lastModified()` compares a date
    /// string with an integer).
    func download(id: String, viewer: User) -> SimResponse {
        guard let ref = university.fileRefs[id] else { return error(404, "File reference with id \(id) not found!") }
        guard let folder = university.folders[ref.folderID], university.canRead(folder: folder, user: viewer) else {
            return error(403, "You are not permitted to read the file reference with id \(id)!")
        }
        guard university.canDownload(ref, user: viewer) else {
            return error(403, "You may not download the file reference with the id \(id)")
        }
        guard !ref.isLink else { return error(500, "File was not found in the operating system's file system!") }
        let lastModified = ("Last-Modified", StudIPDate.http(ref.fileChdate))
        if request.header("if-unmodified-since") != nil { return SimResponse(status: 412, route: route) }
        return SimResponse(
            status: 200,
            headers: [
                lastModified, ("Content-Type", "application/octet-stream;charset=utf-8"),
                ("Content-Disposition", ContentDisposition.attachment(ref.name)),
            ],
            body: .document(documentID: ref.id, content: ref.content, size: ref.size), route: route)
    }

    /// `POST file/:folder_id`: Stud.IP 5.0 stores the upload, then fails rendering it (`filerefToJSON()` gets a
    /// `StandardFile`), so the client sees the HTML error page with status 500 (fixture `rest_upload_file`).
    func upload(into folderID: String, user: User) -> SimResponse {
        guard let folder = university.folders[folderID] else {
            return error(404, "Folder with id \(folderID) not found!")
        }
        guard university.canWrite(folder: folder, user: user) else {
            return error(403, "You are not allowed to upload files into the folder with the id \(folderID)!")
        }
        guard let files = MultipartFile.files(body: request.body, contentType: request.header("content-type")),
            let upload = files.first
        else { return error(400, "No file was uploaded!") }
        let now = Int(Date().timeIntervalSince1970)
        let ref = FileRef(
            id: PHP.newID(), fileID: PHP.newID(), folderID: folderID, name: upload.fileName, userID: user.id,
            mimeType: MIMEType.guess(fileName: upload.fileName), size: upload.data.count, mkdate: now, chdate: now,
            content: .bytes(upload.data), termsOfUseID: "UNDEF_LICENSE")
        _ = try? context.mutate { $0.add(ref) }
        return .text(
            "<!DOCTYPE html><html><body><div class=\"messagebox messagebox_exception\">"
                + "Fehler! Bitte wenden Sie sich an Ihren Systemadministrator. Argument 1 passed to "
                + "RESTAPI\\Routes\\FileSystem::filerefToJSON() must be an instance of FileRef, instance of "
                + "StandardFile given</div></body></html>",
            status: 500, route: route)
    }

    func termsList() -> SimResponse {
        let all = university.termsOfUse.values.sorted { ($0.position, $0.id) < ($1.position, $1.id) }
        return paginated(all.map { (key: $0.id, value: terms($0)) }, keyed: false)
    }

    private func notReadable(_ id: String) -> SimResponse {
        error(403, "You are not allowed to read the contents of the folder with the id \(id)!")
    }

    private func with(_ university: University) -> LegacyEnvironment {
        var context = self.context
        context.university = university
        return LegacyEnvironment(request: request, context: context, route: route)
    }
}
