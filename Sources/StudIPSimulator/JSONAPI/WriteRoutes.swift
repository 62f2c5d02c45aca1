import Foundation

/// The write routes a mirror with upload support uses: upload, create folder, delete document, delete folder.
extension JSONAPIEnvironment {
    /// `POST folders/{id}/file-refs` with one `multipart/form-data` file: 201, empty body, absolute `Location`.
    func upload(into folderID: String, user: User) -> SimResponse {
        guard let folder = university.folders[folderID] else { return plain(404, "Not Found") }
        guard university.canWrite(folder: folder, user: user) else { return plain(403, "Forbidden") }
        guard let files = MultipartFile.files(body: request.body, contentType: request.header("content-type")),
            files.count == 1, let upload = files.first
        else { return plain(400, "Bad Request") }
        let now = Int(Date().timeIntervalSince1970)
        let type = upload.contentType.flatMap { $0 == "application/octet-stream" ? nil : $0 }
        let ref = FileRef(
            id: PHP.newID(), fileID: PHP.newID(), folderID: folderID, name: upload.fileName, userID: user.id,
            mimeType: type ?? MIMEType.guess(fileName: upload.fileName), size: upload.data.count, mkdate: now,
            chdate: now, content: .bytes(upload.data), termsOfUseID: "UNDEF_LICENSE")
        do {
            _ = try context.mutate { $0.add(ref) }
        } catch {
            return plain(500, "Internal Server Error")
        }
        return SimResponse(
            status: 201,
            headers: [
                ("Content-Type", "text/html; charset=UTF-8"),
                ("Location", context.baseURL + "/jsonapi.php/v1/file-refs/\(ref.id)"),
            ],
            route: route)
    }

    /// `POST folders/{id}/folders` with a `folders` resource object: 201 with the new folder.
    func createFolder(in parentID: String, user: User) -> SimResponse {
        guard let parent = university.folders[parentID] else { return notFound() }
        guard (request.header("content-type") ?? "").lowercased().hasPrefix("application/vnd.api+json") else {
            return error(415, title: "Unsupported Media Type")
        }
        guard university.canCreateSubfolder(in: parent, user: user) else { return forbidden() }
        guard let body = JSON.parse(String(decoding: request.body, as: UTF8.self)),
            case .string(let name)? = body["data"]?["attributes"]?["name"], !name.isEmpty
        else { return error(400, title: "Bad Request", detail: "Folder name required.") }
        var description = ""
        if case .string(let text)? = body["data"]?["attributes"]?["description"] { description = text }
        let now = Int(Date().timeIntervalSince1970)
        let folder = Folder(
            id: PHP.newID(), userID: user.id, parentID: parentID, rangeID: parent.rangeID, folderType: "StandardFolder",
            name: name, mkdate: now, chdate: now, rangeType: parent.rangeType, description: description)
        guard let updated = try? context.mutate({ $0.add(folder) }) else {
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
