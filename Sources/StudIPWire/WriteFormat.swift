import Foundation
import StudIPModel

/// The wire format of the writes (docs/client.md, "Writing"): the request bodies both APIs expect and their answers
/// read into the model, as a real Stud.IP 5.0.7 answered them (fixtures-5.0.7-writes). Apart from the client, like
/// `JSONAPIFormat` and `LegacyRESTFormat`, whose decoders it reuses so that a document read back after a write is
/// the same model a listing gives.
package struct WriteFormat: Sendable {
    package let installation: Installation

    package init(installation: Installation) {
        self.installation = installation
    }

    /// What every refusal infers from: JSON:API's upload limit for students on a default 5.0.7
    /// (`$UPLOAD_TYPES["default"]`, 64 MiB; PHP's `upload_max_filesize` is the same).
    package static let defaultUploadLimit: Int64 = 64 << 20
    /// The only type the default `$UPLOAD_TYPES` refuses; the check is case-insensitive on the final name.
    package static let defaultForbiddenExtensions: Set<String> = ["exe"]

    // MARK: - Requests

    /// The parts of a multipart upload around the file's bytes: the text parts first (JSON:API `term-id`), then
    /// one file part. The bytes are streamed between `head` and `tail`, never held whole.
    package static func multipart(
        boundary: String, textParts: [(name: String, value: String)], fileField: String, fileName: String
    ) -> (head: [UInt8], tail: [UInt8]) {
        var head = ""
        for part in textParts {
            head += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(part.name)\"\r\n\r\n\(part.value)\r\n"
        }
        head += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(fileField)\"; "
        head += "filename=\"\(dispositionName(fileName))\"\r\nContent-Type: \(contentType(of: fileName))\r\n\r\n"
        return (Array(head.utf8), Array("\r\n--\(boundary)--\r\n".utf8))
    }

    /// The file part's type, as a browser names it by the extension: Stud.IP may store the type it is sent, and a
    /// PDF stored as `application/octet-stream` would be offered for download instead of shown. Unknown extensions
    /// are `application/octet-stream`, which Stud.IP replaces by its own guess from the name.
    static func contentType(of fileName: String) -> String {
        guard fileName.contains("."), let suffix = fileName.split(separator: ".").last else {
            return "application/octet-stream"
        }
        return contentTypes[suffix.lowercased()] ?? "application/octet-stream"
    }

    private static let contentTypes: [String: String] = [
        "pdf": "application/pdf", "txt": "text/plain", "md": "text/markdown", "csv": "text/csv", "html": "text/html",
        "tex": "text/x-tex", "zip": "application/zip", "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg",
        "odt": "application/vnd.oasis.opendocument.text",
        "ods": "application/vnd.oasis.opendocument.spreadsheet",
        "odp": "application/vnd.oasis.opendocument.presentation",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "doc": "application/msword", "xls": "application/vnd.ms-excel", "ppt": "application/vnd.ms-powerpoint",
    ]

    /// A name inside a quoted `Content-Disposition` parameter as browsers write it (WHATWG's multipart encoding):
    /// `"` and line breaks percent-encoded, everything else as UTF-8. Stud.IP takes the name from the `Slug` anyway.
    static func dispositionName(_ name: String) -> String {
        name.replacing("\"", with: "%22").replacing("\r", with: "%0D").replacing("\n", with: "%0A")
    }

    /// The `Slug` header naming an upload: percent-encoded UTF-8, which Stud.IP decodes (`w2_upload_slug`).
    package static func slug(_ name: String) -> String { Installation.encode(name) }

    /// `PATCH file-refs/{id}`: the new name with the document's licence, which Stud.IP requires (422 "Missing
    /// `terms-of-use` relationship." without it, `w4_rename_patch_no_terms`).
    package static func renameBody(documentID: String, name: String, termsID: String) -> Data {
        json([
            "data": [
                "type": "file-refs", "id": documentID, "attributes": ["name": name],
                "relationships": ["terms-of-use": ["data": ["type": "terms-of-use", "id": termsID]]],
            ]
        ])
    }

    /// `POST folders/{id}/folders`: an ordinary folder; a student may create no other type (`w7_*`).
    package static func newFolderBody(name: String) -> Data {
        json(["data": ["type": "folders", "attributes": ["name": name, "folder-type": "StandardFolder"]]])
    }

    /// Legacy REST `POST folder/{id}/new_folder` (`w7_rest_new_folder_groupfolder`).
    package static func legacyNewFolderBody(name: String) -> Data {
        json(["name": name, "description": ""])
    }

    /// Legacy REST `PUT file/{id}` (`w5_rest_rename`).
    package static func legacyRenameBody(name: String) -> Data {
        json(["name": name])
    }

    private static func json(_ object: [String: Any]) -> Data {
        // Only strings and dictionaries of them: serialising cannot fail.
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
    }

    // MARK: - Answers

    /// The file-ref id a 201's `Location` names (absolute for an upload, relative for a folder).
    package static func id(fromLocation location: String?) -> String? {
        guard let location, let path = location.split(separator: "?").first,
            let last = path.split(separator: "/").last, !last.isEmpty
        else { return nil }
        return String(last).removingPercentEncoding ?? String(last)
    }

    /// A JSON:API `file-refs` resource read back, in its folder; nil without id, name or dates.
    package func document(_ element: JSONValue) -> RemoteDocument? {
        let courseID = element["relationships"]?["range"]?["data"]?["id"]?.id ?? ""
        let listed = JSONAPIFormat(installation: installation).document(element, courseID: courseID)
        guard var document = listed.document else { return nil }
        document.folderID = listed.parentID ?? ""
        return document
    }

    /// A JSON:API `folders` resource; nil without id or dates.
    package func folder(_ element: JSONValue) -> RemoteFolder? {
        let courseID = element["relationships"]?["range"]?["data"]?["id"]?.id ?? ""
        return JSONAPIFormat(installation: installation).folder(element, courseID: courseID).folder
    }

    /// The documents of a legacy REST folder listing (`folder/{id}`), decoded as the refresh decodes them.
    package func legacyDocuments(inListing json: JSONValue, folderID: String) -> [RemoteDocument] {
        legacyWalk(json, folderID: folderID).walk.content.documents
    }

    /// The readable subfolders of a legacy REST folder listing (`folder/{id}`), decoded as the refresh decodes them
    /// (an unreadable one is listed without id and left out).
    package func legacySubfolders(inListing json: JSONValue, folderID: String) -> [RemoteFolder] {
        legacyWalk(json, folderID: folderID).subfolders
    }

    /// One legacy folder listing taken in by the refresh's walk.
    private func legacyWalk(_ json: JSONValue, folderID: String) -> (walk: FolderWalk, subfolders: [RemoteFolder]) {
        var walk = FolderWalk(
            course: Self.course(json["range_id"]?.id), rootID: folderID, installation: installation)
        let subfolders = walk.add(listing: json, of: folderID, parentID: nil, label: "folder \(folderID)")
        return (walk, subfolders)
    }

    /// A legacy REST file-ref (`file/{id}`, the answer of a move), decoded as the refresh decodes it: as the one
    /// document of its folder's listing, which is all `FolderWalk` reads documents from. A file-ref does not name its
    /// course: the web link lacks the `cid` (Stud.IP finds the details page by the id alone).
    package func legacyDocument(_ json: JSONValue) -> RemoteDocument? {
        guard let folderID = json["folder_id"]?.id else { return nil }
        let listing = JSONValue.object([
            "id": .string(folderID), "mkdate": json["mkdate"] ?? .null, "chdate": json["chdate"] ?? .null,
            "file_refs": .array([json]),
        ])
        return legacyDocuments(inListing: listing, folderID: folderID).first
    }

    /// A legacy REST folder (`new_folder`'s answer), decoded as the refresh decodes it.
    package func legacyFolder(_ json: JSONValue, parentID: String?) -> RemoteFolder? {
        guard let id = json["id"]?.id else { return nil }
        var walk = FolderWalk(course: Self.course(json["range_id"]?.id), rootID: id, installation: installation)
        _ = walk.add(listing: json, of: id, parentID: parentID, label: "folder \(id)")
        return walk.content.folders.first
    }

    /// The course a legacy answer names, for the web links; the refresh knows more of it, the links need only its id.
    private static func course(_ id: String?) -> RemoteCourse {
        RemoteCourse(id: id ?? "", number: "", title: "", semesterIDs: [])
    }

    /// A JSON:API `terms-of-use` resource (`w1_terms_of_use`).
    package static func termsOfUse(_ element: JSONValue) -> TermsOfUse? {
        guard let id = element["id"]?.id else { return nil }
        let attributes = element["attributes"]
        return TermsOfUse(
            id: id, name: attributes?["name"]?.string ?? id, description: attributes?["description"]?.string ?? "",
            isDefault: attributes?["is-default"]?.bool ?? false,
            downloadCondition: Int(attributes?["download-condition"]?.int ?? 0))
    }

    /// A legacy REST `content_terms_of_use_list` entry (`w1_rest_terms_of_use`: numbers as strings).
    package static func legacyTermsOfUse(_ element: JSONValue) -> TermsOfUse? {
        guard let id = element["id"]?.id else { return nil }
        return TermsOfUse(
            id: id, name: element["name"]?.string ?? id, description: element["description"]?.string ?? "",
            isDefault: element["is_default"]?.bool ?? false,
            downloadCondition: Int(element["download_condition"]?.int ?? 0))
    }

    // MARK: - Refusals

    /// What Stud.IP said in a refusal, when it said something: JSON:API's `errors[0].detail` (or its title when
    /// that is more than the status's name), legacy REST's JSON string or `message`. Bare statuses (`Bad Request`,
    /// `Forbidden` as text/html) say nothing.
    package static func serverSaid(_ body: Data) -> String? {
        guard let json = try? JSONValue.parse(body, what: "a refusal") else { return nil }
        let said: String?
        if let error = json["errors"]?.array?.first {
            let title = error["title"]?.string
            said = error["detail"]?.string ?? (["Forbidden", "Bad Request", "Not Found"].contains(title) ? nil : title)
        } else {
            said = json.string ?? json["message"]?.string
        }
        return said.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The message of a legacy REST route's own error: a JSON string body (`"Error while …"`, API.md §2.7). nil for
    /// anything else, an uncaught exception's `{"status":500,…}` or an HTML error page included.
    package static func legacyRouteMessage(_ body: Data) -> String? {
        guard body.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "\"") else { return nil }
        return (try? JSONValue.parse(body, what: "a refusal"))?.string
    }

    /// An upload's refusal. JSON:API's bare 400 is read as over the limit or a forbidden type when what was sent
    /// says so; a 413 (PHP's `post_max_size`, or a proxy's own limit before Stud.IP) is always too large.
    package static func uploadRefusal(status: Int, size: Int64, name: String, serverSaid: String?) -> WriteRefusal {
        if status == 413 { return .tooLarge(size: size, limit: size > defaultUploadLimit ? defaultUploadLimit : nil) }
        guard status == 400 else { return .invalid(status: status, serverSaid: serverSaid) }
        let fileExtension = name.split(separator: ".", omittingEmptySubsequences: false).last.map {
            $0.lowercased()
        }
        if size > defaultUploadLimit { return .tooLarge(size: size, limit: defaultUploadLimit) }
        if name.contains("."), let fileExtension, defaultForbiddenExtensions.contains(fileExtension) {
            return .forbiddenType(fileExtension: fileExtension)
        }
        return .invalid(status: 400, serverSaid: serverSaid)
    }

    /// Legacy REST refuses with 500 and Stud.IP's own German message (fixtures-5.0.7-writes steps 4–8): the refusal
    /// it means, nil when the message is none of the known ones.
    package static func legacyRefusal(_ message: String, size: Int64?) -> WriteRefusal? {
        if message.contains("Dateityp"), let type = message.firstMatch(of: /Dateityp (\S+)/)?.1 {
            return .forbiddenType(fileExtension: String(type).lowercased())
        }
        if message.contains("maximale Größe") {
            return .tooLarge(size: size ?? 0, limit: defaultUploadLimit)
        }
        let permission = ["Berechtigung", "berechtigt", "Schreibrechte", "not allowed", "not permitted"]
        if permission.contains(where: message.contains) { return .notPermitted(serverSaid: message) }
        return nil
    }
}
