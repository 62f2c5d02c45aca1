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
