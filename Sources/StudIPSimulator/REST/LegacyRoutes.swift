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

    /// 403 for a folder the user may not read, though its listing shows it writable (`w1_rest_folder_homework_demo_permissions`).
    func folderPermissions(id: String, viewer: User) -> SimResponse {
        guard let found = university.folders[id] else { return error(404, "Folder with id \(id) not found!") }
        guard university.canRead(folder: found, user: viewer) else { return notReadable(id) }
        let permissions = university.folderPermissions(found, user: viewer)
        return json([
            "folder_id": .string(id), "user_id": .string(viewer.id), "is_visible": .bool(permissions.visible),
            "is_readable": .bool(permissions.readable), "is_writable": .bool(permissions.writable),
        ])
    }

    func fileShow(id: String, viewer: User) -> SimResponse {
        guard let ref = university.fileRefs[id] else { return fileRefNotFound(id) }
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
        guard let ref = university.fileRefs[id] else { return fileRefNotFound(id) }
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

    /// `POST file/:folder_id`: Stud.IP 5.0.7 stores every file part, then fails rendering the answer
    /// (`filerefToJSON()` gets a `StandardFile`): 500 with an HTML error page although the files are stored
    /// (`w8_rest_upload*`). Its refusals are 500 JSON strings with Stud.IP's message; an unreadable folder (a
    /// homework folder, for a student) is a 403 (`w6_rest_upload_autor`).
    func upload(into folderID: String, user: User) -> SimResponse {
        guard let folder = university.folders[folderID] else {
            return error(404, "Folder with id \(folderID) not found!")
        }
        guard university.canRead(folder: folder, user: user) else { return notReadable(folderID) }
        guard let form = MultipartForm(body: request.body, contentType: request.header("content-type")),
            !form.files.isEmpty
        else { return error(400, "No files found in request.") }
        guard university.canWrite(folder: folder, user: user) else {
            return error(500, "Error while uploading files: Keine Schreibrechte für Zielordner!")
        }
        let policy = UploadPolicy.studIP507
        for file in form.files where !policy.accepts(name: file.fileName, size: file.data.count) {
            let ext = file.fileName.split(separator: ".").last.map(String.init) ?? ""
            let reason =
                file.data.count > policy.maxFileSize
                ? "Die maximale Größe für einen Upload (\(policy.maxFileSize >> 20) MB) wurde überschritten."
                : "Sie dürfen den Dateityp \(ext) nicht hochladen!"
            return error(500, "Error while uploading files: \(reason)")
        }
        let now = university.now
        let uploads = form.files.map { file in
            FileRef(
                id: PHP.newID(), fileID: PHP.newID(), folderID: folderID, name: file.fileName, userID: user.id,
                mimeType: MIMEType.guess(fileName: file.fileName), size: file.data.count, mkdate: now, chdate: now,
                content: .bytes(file.data), termsOfUseID: university.defaultTermsOfUseID)
        }
        _ = try? context.mutate { university in
            for upload in uploads { university.addUpload(upload) }
        }
        return .text(
            "<!DOCTYPE html><html><body><div class=\"messagebox messagebox_exception\">"
                + "Fehler! Bitte wenden Sie sich an Ihren Systemadministrator. Argument 1 passed to "
                + "RESTAPI\\Routes\\FileSystem::filerefToJSON() must be an instance of FileRef, instance of "
                + "StandardFile given</div></body></html>",
            status: 500, route: route)
    }

    /// `DELETE file/:file_ref_id`: 200 with an empty body (`w8_rest_delete`); refusals are 500 with an empty reason
    /// (`w5_rest_delete`).
    func deleteFile(id: String, user: User) -> SimResponse {
        guard let ref = university.fileRefs[id] else { return fileRefNotFound(id) }
        guard university.canEdit(ref, user: user) else {
            return error(500, "Error while deleting a file reference: ")
        }
        guard (try? context.mutate({ try $0.removeFileRef(id) })) != nil else {
            return fileRefNotFound(id)
        }
        return SimResponse(status: 200, headers: [("Content-Type", "application/json;charset=utf-8")], route: route)
    }

    /// `POST file/:file_ref_id/move/:destination_folder_id`, the only move 5.0.7 has (`w4_move_rest`): 200 with
    /// the document; without the right to edit it or to write into the target, 500 (`w4_move_rest_nonwritable`).
    func moveFile(id: String, to folderID: String, user: User) -> SimResponse {
        guard let ref = university.fileRefs[id] else { return fileRefNotFound(id) }
        guard let target = university.folders[folderID] else {
            return error(404, "Folder with id \(folderID) not found!")
        }
        guard university.canEdit(ref, user: user), university.canWrite(folder: target, user: user) else {
            return error(
                500,
                "Error while moving a file reference: Ungenügende Berechtigungen zum Kopieren der Datei \(ref.name) "
                    + "in Ordner \(displayName(of: target))!")
        }
        return changeFile(id, user: user) { document, time in
            document.folderID = folderID
            document.chdate = time
        }
    }

    /// `POST file/:file_ref_id/update`, multipart: a new `files` row with the bytes (``UploadPath/rest``), 200
    /// with the document (fixtures-5.0.7-more `p2_v4_rest_file_update`); someone else's document: 500
    /// (`w5_rest_update`).
    func updateFile(id: String, user: User) -> SimResponse {
        guard let ref = university.fileRefs[id] else { return fileRefNotFound(id) }
        guard university.canEdit(ref, user: user) else {
            return error(
                500,
                "Error while updating a file reference: Sie sind nicht dazu berechtigt, die Datei \(ref.name) zu "
                    + "aktualisieren!")
        }
        guard let form = MultipartForm(body: request.body, contentType: request.header("content-type")),
            let file = form.files.first
        else { return error(400, "No files found in request.") }
        return changeFile(id, user: user) { document, time in
            document.storeVersion(.bytes(file.data), size: file.data.count, via: .rest, at: time)
        }
    }

    /// `PUT file/:file_ref_id` with JSON `name`/`description`; someone else's document: 500 (`w5_rest_rename`).
    /// Only the refusal was captured; a rename answers the document as a move does.
    func editFile(id: String, user: User) -> SimResponse {
        guard let ref = university.fileRefs[id] else { return fileRefNotFound(id) }
        guard university.canEdit(ref, user: user) else {
            return error(
                500,
                "Error while editing a file reference: Ungenügende Berechtigungen zum Bearbeiten der Datei \(ref.name)!"
            )
        }
        let body = JSON.parse(String(decoding: request.body, as: UTF8.self))
        var name: String?
        if case .string(let text)? = body?["name"], !text.isEmpty { name = text }
        var description: String?
        if case .string(let text)? = body?["description"] { description = text }
        return changeFile(id, user: user) { [name, description] document, time in
            if let name { document.name = name }
            if let description { document.description = description }
            document.chdate = time
        }
    }

    /// `POST folder/:folder_id/new_folder` with JSON `name`, `description`: 200 (not 201) with the folder
    /// (`w7_rest_new_folder_groupfolder`); 403 into a folder not writable, 500 where writable but no subfolders
    /// are allowed (`w7_rest_new_folder_*`).
    func createFolder(in parentID: String, user: User) -> SimResponse {
        guard let parent = university.folders[parentID] else {
            return error(404, "Folder with id \(parentID) not found!")
        }
        guard university.canWrite(folder: parent, user: user) else {
            return error(403, "You are not permitted to create a subfolder in the parent folder!")
        }
        guard university.canCreateSubfolder(in: parent, user: user) else {
            return error(
                500, "Error while creating a folder: Sie sind nicht dazu berechtigt, einen Unterordner zu erstellen!")
        }
        let body = JSON.parse(String(decoding: request.body, as: UTF8.self))
        guard case .string(let name)? = body?["name"], !name.isEmpty else {
            return error(400, "A folder name is required!")
        }
        var description = ""
        if case .string(let text)? = body?["description"] { description = text }
        let now = university.now
        let new = Folder(
            id: PHP.newID(), userID: user.id, parentID: parentID, rangeID: parent.rangeID,
            folderType: "StandardFolder", name: name, mkdate: now, chdate: now, rangeType: parent.rangeType,
            description: description)
        guard let updated = try? context.mutate({ $0.addNewFolder(new) }), let folder = updated.folders[new.id] else {
            return error(500, "Error while creating a folder: ")
        }
        return json(with(updated).folder(folder, viewer: user))
    }

    /// `DELETE folder/:folder_id`: a student may not, not even a folder they created (`w7_rest_delete_folder`).
    func deleteFolder(id: String, user: User) -> SimResponse {
        guard let folder = university.folders[id] else { return error(404, "Folder with id \(id) not found!") }
        guard university.canEdit(folder: folder, user: user) else {
            return error(
                500,
                "Error while deleting a folder: Unzureichende Berechtigungen zum Löschen von Ordner \(folder.name)!")
        }
        guard (try? context.mutate({ try $0.removeFolder(id) })) != nil else {
            return error(404, "Folder with id \(id) not found!")
        }
        return SimResponse(status: 200, headers: [("Content-Type", "application/json;charset=utf-8")], route: route)
    }

    /// `studip/file_system/folder_types`: the class names, a plain list (`w1_rest_folder_types`).
    func folderTypes() -> SimResponse {
        json(.array(JSONAPIEnvironment.folderTypeOrder.map { .string($0) }))
    }

    /// Applies `change` to a document at the server's time and answers it as the routes that change one do.
    private func changeFile(
        _ id: String, user: User, _ change: @escaping @Sendable (inout FileRef, Int) -> Void
    ) -> SimResponse {
        guard
            let updated = try? context.mutate({ university in
                guard var document = university.fileRefs[id] else { throw ModelError("no document with id \(id)") }
                change(&document, university.now)
                try university.update(document)
            }), let document = updated.fileRefs[id]
        else { return fileRefNotFound(id) }
        return json(with(updated).fileRef(document, viewer: user))
    }

    /// What the legacy REST API answers for a file-ref id it does not know (or the user may not see).
    private func fileRefNotFound(_ id: String) -> SimResponse {
        error(404, "File reference with id \(id) not found!")
    }

    /// A course's root folder is named after the course, as Stud.IP's messages name it.
    private func displayName(of folder: Folder) -> String {
        guard folder.isRoot, let course = university.course(ofFolder: folder.id) else { return folder.name }
        return course.fullName
    }

    /// By name (`w1_rest_terms_of_use`).
    func termsList() -> SimResponse {
        let all = University.collated(Array(university.termsOfUse.values))
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
