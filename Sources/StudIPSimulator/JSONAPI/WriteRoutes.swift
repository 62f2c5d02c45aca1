import Foundation

/// The file write routes as Stud.IP 5.0.7 answers them (fixtures-5.0.7-writes steps 2–7; docs/simulator.md
/// "Writing"):
///
/// | route | answer |
/// |---|---|
/// | `POST folders/{id}/file-refs`, multipart | 201, empty `text/html` body, absolute `Location`; one file part (any field name), named by a percent-encoded `Slug` header or else its filename, `Name[2].ext` when taken; licence from a text part `term-id` (unchecked), else the installation's default; 400 `Bad Request` for no, two or an unnamed file, `.exe`, over 64 MiB, a request over 70 MiB; 403 `Forbidden` when the folder is not writable (a homework folder is: the student hands in, then reads nothing back) |
/// | `POST folders/{id}/file-refs`, JSON | an empty document from `attributes.name`: 201 with the file-ref, relative `Location` |
/// | `POST file-refs/{id}/content`, multipart | a new version: 201, absolute `Location`; same id and file id; the document takes the uploaded name (Slug or filename); 403 `Forbidden` for someone else's document or a homework submission |
/// | `PATCH file-refs/{id}` | name (`Name[1].ext` when taken), description, licence; 422 without `relationships.terms-of-use`; `relationships.parent` ignored (no move) |
/// | `DELETE file-refs/{id}`, `DELETE folders/{id}` | 204; 403 (JSON:API error) for a student, even on a folder they created |
/// | `POST folders/{id}/folders`, `POST courses/{id}/folders` (`relationships.parent`) | 201 with the folder, relative `Location`, `Name[1]` when taken; 403 where `is-subfolder-allowed` is false; 400 with `detail` for a folder type that is no class or that a student may not create |
extension JSONAPIEnvironment {
    /// `POST folders/{id}/file-refs`: an upload when multipart, else a document created from JSON.
    func upload(into folderID: String, user: User) -> SimResponse {
        guard let folder = university.folders[folderID] else { return plain(404, "Not Found") }
        guard let form = MultipartForm(body: request.body, contentType: request.header("content-type")) else {
            return createEmptyDocument(in: folder, user: user)
        }
        guard university.canWrite(folder: folder, user: user) else { return plain(403, "Forbidden") }
        guard let file = acceptedFile(form) else { return plain(400, "Bad Request") }
        let name = slug ?? file.fileName
        let terms = form.fields["term-id"] ?? university.defaultTermsOfUseID
        let now = university.now
        let ref = FileRef(
            id: PHP.newID(), fileID: PHP.newID(), folderID: folderID, name: name, userID: user.id,
            mimeType: Self.mimeType(of: file, named: name), size: file.data.count, mkdate: now, chdate: now,
            content: .bytes(file.data), termsOfUseID: terms)
        guard (try? context.mutate({ $0.addUpload(ref) })) != nil else { return plain(500, "Internal Server Error") }
        return created(ref.id)
    }

    /// `POST file-refs/{id}/content`: new bytes under the same id and file id, renamed to the name sent.
    func newVersion(of id: String, user: User) -> SimResponse {
        guard let ref = university.fileRefs[id] else { return plain(404, "Not Found") }
        guard university.canEdit(ref, user: user) else { return plain(403, "Forbidden") }
        guard let form = MultipartForm(body: request.body, contentType: request.header("content-type")),
            let file = acceptedFile(form)
        else { return plain(400, "Bad Request") }
        let name = slug ?? file.fileName
        let mimeType = Self.mimeType(of: file, named: name)
        do {
            _ = try context.mutate { university in
                guard var document = university.fileRefs[id] else { throw ModelError("no document with id \(id)") }
                let time = university.now
                if document.name != name {
                    document.name = name
                    document.fileName = name
                    document.chdate = time
                    document.fileChdate = time
                }
                document.mimeType = mimeType
                document.storeVersion(.bytes(file.data), size: file.data.count, via: .jsonapi, at: time)
                try university.update(document)
            }
        } catch {
            return plain(404, "Not Found")
        }
        return created(id)
    }

    /// `PATCH file-refs/{id}`: rename, describe, relicense; Stud.IP insists on the licence being sent.
    func updateFileRef(id: String, user: User) -> SimResponse {
        guard let ref = university.fileRefs[id] else { return notFound() }
        guard university.canEdit(ref, user: user) else { return forbidden() }
        let body = JSON.parse(String(decoding: request.body, as: UTF8.self))
        guard case .string(let terms)? = body?["data"]?["relationships"]?["terms-of-use"]?["data"]?["id"] else {
            return error(422, title: "Unprocesssable Entity", detail: "Missing `terms-of-use` relationship.")
        }
        let attributes = body?["data"]?["attributes"]
        let name = attributes?["name"].flatMap(Self.text).flatMap { $0.isEmpty ? nil : $0 }
        let description = attributes?["description"].flatMap(Self.text)
        guard
            let updated = try? context.mutate({ university in
                guard var document = university.fileRefs[id] else { throw ModelError("no document with id \(id)") }
                let before = document
                if let name {
                    document.name = University.uniqueName(
                        name, among: university.documentNames(in: document.folderID, excluding: id), first: 1)
                }
                if let description { document.description = description }
                document.termsOfUseID = terms
                if document != before { document.chdate = university.now }
                try university.update(document)
            }), let document = updated.fileRefs[id]
        else { return notFound() }
        return with(updated).document(["data": with(updated).fileRef(document, viewer: user)])
    }

    /// `POST folders/{id}/folders`, or `POST courses/{id}/folders` with the parent as a relationship (the root
    /// folder without one).
    func createFolder(in parentID: String?, course courseID: String? = nil, user: User) -> SimResponse {
        guard (request.header("content-type") ?? "").lowercased().hasPrefix("application/vnd.api+json") else {
            return error(415, title: "Unsupported Media Type")
        }
        let body = JSON.parse(String(decoding: request.body, as: UTF8.self))
        var parentID = parentID
        if let courseID {
            guard let course = university.courses[courseID] else { return notFound() }
            parentID = course.topFolderID
            if case .string(let id)? = body?["data"]?["relationships"]?["parent"]?["data"]?["id"] { parentID = id }
        }
        guard let parentID, let parent = university.folders[parentID],
            courseID == nil || university.course(ofFolder: parentID)?.id == courseID
        else { return notFound() }
        guard university.canCreateSubfolder(in: parent, user: user) else { return forbidden() }
        guard case .string(let name)? = body?["data"]?["attributes"]?["name"], !name.isEmpty else {
            return error(400, title: "Bad Request", detail: "Folder name required.")
        }
        var description = ""
        if case .string(let text)? = body?["data"]?["attributes"]?["description"] { description = text }
        var type = "StandardFolder"
        if case .string(let text)? = body?["data"]?["attributes"]?["folder-type"] { type = text }
        guard Self.folderTypes.contains(type) else {
            return error(400, title: "Bad Request", detail: "Die Klasse \(type) ist nicht von FolderType abgeleitet!")
        }
        let teacher = university.course(ofFolder: parentID).map { university.isTeacher(in: $0, user: user) } ?? false
        guard type == "StandardFolder" || teacher else {
            return error(
                400, title: "Bad Request",
                detail:
                    "Ein Ordner vom Typ \(type) kann nicht in einem Ordner vom Typ \(parent.folderType) erzeugt werden!"
            )
        }
        let now = university.now
        let new = Folder(
            id: PHP.newID(), userID: user.id, parentID: parentID, rangeID: parent.rangeID, folderType: type,
            name: name, mkdate: now, chdate: now, rangeType: parent.rangeType, description: description)
        guard let updated = try? context.mutate({ $0.addNewFolder(new) }), let folder = updated.folders[new.id] else {
            return error(500, title: "Internal Server Error")
        }
        return with(updated).document(
            ["data": with(updated).folder(folder, viewer: user)], status: 201,
            headers: [("Location", link("folders/\(folder.id)"))])
    }

    func deleteFileRef(id: String, user: User) -> SimResponse {
        guard let ref = university.fileRefs[id] else { return notFound() }
        guard university.canEdit(ref, user: user) else { return forbidden() }
        guard (try? context.mutate({ try $0.removeFileRef(id) })) != nil else { return notFound() }
        return SimResponse(status: 204, route: route)
    }

    func deleteFolder(id: String, user: User) -> SimResponse {
        guard let folder = university.folders[id] else { return notFound() }
        guard university.canEdit(folder: folder, user: user) else { return forbidden() }
        guard (try? context.mutate({ try $0.removeFolder(id) })) != nil else { return notFound() }
        return SimResponse(status: 204, route: route)
    }

    /// `GET file-refs/{id}/relationships/terms-of-use`.
    func termsOfUseRelationship(of id: String, viewer: User) -> SimResponse {
        guard let ref = university.fileRefs[id] else { return notFound() }
        guard let folder = university.folders[ref.folderID], university.canRead(folder: folder, user: viewer) else {
            return forbidden()
        }
        return document(["data": identifier("terms-of-use", termsOfUseID(of: ref))])
    }

    /// The folder classes of 5.0.7 in its order (legacy REST `studip/file_system/folder_types`,
    /// `w1_rest_folder_types`).
    static let folderTypeOrder = [
        "StandardFolder", "CourseDateFolder", "CourseTopicFolder", "PublicFolder", "HomeworkFolder", "MaterialFolder",
        "CourseGroupFolder", "TimedFolder", "HiddenFolder", "InstitutePublicFolder", "CoursePublicFolder",
        "PermissionEnabledFolder", "MVVFolder", "InboxOutboxFolder", "MessageFolder", "OutboxFolder", "InboxFolder",
        "RootFolder", "UnknownFolderType", "VirtualFolderType",
    ]
    static let folderTypes = Set(folderTypeOrder)

    /// The `POST folders/{id}/file-refs` route without multipart: an empty document (`w2_create_json_no_upload`).
    private func createEmptyDocument(in folder: Folder, user: User) -> SimResponse {
        guard university.canWrite(folder: folder, user: user) else { return forbidden() }
        let body = JSON.parse(String(decoding: request.body, as: UTF8.self))
        guard case .string(let name)? = body?["data"]?["attributes"]?["name"], !name.isEmpty else {
            return error(400, title: "Bad Request")
        }
        var description = ""
        if case .string(let text)? = body?["data"]?["attributes"]?["description"] { description = text }
        var terms = university.defaultTermsOfUseID
        if case .string(let id)? = body?["data"]?["relationships"]?["terms-of-use"]?["data"]?["id"] { terms = id }
        let now = university.now
        let new = FileRef(
            id: PHP.newID(), fileID: PHP.newID(), folderID: folder.id, name: name, userID: user.id, mimeType: "",
            size: 0, mkdate: now, chdate: now, content: .bytes(Data()), description: description,
            termsOfUseID: terms)
        guard let updated = try? context.mutate({ $0.addUpload(new) }), let ref = updated.fileRefs[new.id] else {
            return error(500, title: "Internal Server Error")
        }
        return with(updated).document(
            ["data": with(updated).fileRef(ref, viewer: user)], status: 201,
            headers: [("Location", link("file-refs/\(ref.id)"))])
    }

    /// The one file part Stud.IP takes, or nil for what it refuses with a bare 400: no file, two, an empty
    /// filename, a request or file too large, a forbidden extension of the final name (the Slug's, if sent).
    private func acceptedFile(_ form: MultipartForm) -> MultipartFile? {
        let policy = UploadPolicy.studIP507
        guard request.body.count <= policy.maxRequestSize, form.files.count == 1, let file = form.files.first,
            !file.fileName.isEmpty, policy.accepts(name: slug ?? file.fileName, size: file.data.count)
        else { return nil }
        return file
    }

    /// The percent-decoded `Slug` header: it names the document instead of the part's filename.
    private var slug: String? {
        request.header("slug").flatMap { $0.removingPercentEncoding }.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// 201 with an empty HTML body and the new document's absolute URL, as the upload routes answer.
    private func created(_ id: String) -> SimResponse {
        SimResponse(
            status: 201,
            headers: [
                ("Content-Type", "text/html; charset=UTF-8"),
                ("Location", context.baseURL + "/jsonapi.php/v1/file-refs/\(id)"),
            ],
            route: route)
    }

    private static func text(_ value: JSON) -> String? {
        if case .string(let text) = value { return text }
        return nil
    }

    private static func mimeType(of file: MultipartFile, named name: String) -> String {
        file.contentType.flatMap { $0 == "application/octet-stream" ? nil : $0 } ?? MIMEType.guess(fileName: name)
    }
}

extension JSONAPIEnvironment {
    /// `POST courses/{id}/news` (teachers): Stud.IP stores midnight of `publication-start` and counts `expire` to
    /// the midnight *after* `publication-end`, so the end comes back a day later than sent; its HTML purifier marks
    /// external links and closes `<br>`.
    func createNews(in courseID: String, user: User) -> SimResponse {
        guard let course = university.courses[courseID] else { return notFound() }
        guard user.isRoot || university.membership(of: user.id, in: courseID)?.isTeacher == true else {
            return forbidden()
        }
        guard let body = JSON.parse(String(decoding: request.body, as: UTF8.self)),
            case .string(let title)? = body["data"]?["attributes"]?["title"], !title.isEmpty,
            case .string(let startText)? = body["data"]?["attributes"]?["publication-start"],
            case .string(let endText)? = body["data"]?["attributes"]?["publication-end"],
            let start = Self.parseISO8601(startText), let end = Self.parseISO8601(endText)
        else { return error(400, title: "Bad Request") }
        var content = ""
        if case .string(let text)? = body["data"]?["attributes"]?["content"] { content = Self.purified(text) }
        var comments = false
        if case .bool(let allowed)? = body["data"]?["attributes"]?["comments-allowed"] { comments = allowed }
        let date = university.startOfDay(start)
        // The midnight after the last day: 36 hours past its midnight lands in the next day even across DST.
        let expire = university.startOfDay(university.startOfDay(end) + 36 * 3600) - date
        guard expire > 0 else { return error(400, title: "Bad Request") }
        let now = university.now
        let item = News(
            id: PHP.newID(), title: title, content: content, authorID: user.id, rangeIDs: [course.id], date: date,
            expire: expire, allowComments: comments, mkdate: now, chdate: now)
        guard let updated = try? context.mutate({ $0.add(item) }) else {
            return error(500, title: "Internal Server Error")
        }
        return with(updated).document(
            ["data": with(updated).news(item)], status: 201, headers: [("Location", link("news/\(item.id)"))])
    }

    static func parseISO8601(_ text: String) -> Int? {
        (ISO8601DateFormatter().date(from: text)).map { Int($0.timeIntervalSince1970) }
    }

    /// What Stud.IP's HTML purifier visibly does to WYSIWYG content (as captured): `<br>` becomes `<br />`, an
    /// external link gets `class="link-extern" target="_blank" rel="noreferrer noopener"`.
    static func purified(_ html: String) -> String {
        html.replacing(/<br\s*\/?>/, with: "<br />")
            .replacing(/<a href="(https?:[^"]*)">/) { match in
                "<a href=\"\(match.1)\" class=\"link-extern\" target=\"_blank\" rel=\"noreferrer noopener\">"
            }
    }
}
