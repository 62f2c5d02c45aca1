import Foundation
import StudIPModel
import StudIPWire

/// Writing through JSON:API as Stud.IP 5.0.7 answers (fixtures-5.0.7-writes; docs/client.md, "Writing").
struct JSONAPIWriter: DocumentWriter {
    let apiName = "JSON:API"
    private let exchange: WriteExchange

    init(transport: HTTPTransport) {
        exchange = WriteExchange(transport)
    }

    private var installation: Installation { exchange.transport.installation }
    private static let mediaType = JSONAPISource.mediaType

    /// `POST folders/{id}/file-refs`, one file part, the name as `Slug`, the licence as a `term-id` text part:
    /// 201 with an absolute `Location`, then one GET of it for the name Stud.IP gave. In a homework folder that GET
    /// is 403 for the student who handed it in: stored all the same.
    func upload(
        file: String, toFolder folderID: String, name: String, termsID: String?, progress: UploadProgress?
    ) async throws(StudIPError) -> UploadReceipt {
        let opened = try await UploadFile.open(file)
        let what = "the upload of \"\(name)\" into folder \(folderID)"
        let parts = termsID.map { [(name: "term-id", value: $0)] } ?? []
        let response = try await sendUpload(
            opened, name: name, textParts: parts, progress: progress,
            url: installation.jsonAPI(["folders", folderID, "file-refs"]), what: what)
        return await readBack(
            documentID: WriteFormat.id(fromLocation: response.header("Location")), name: name, size: opened.size)
    }

    /// `POST file-refs/{id}/content`: 201, same file-ref and file id. The name goes along as `Slug` (and file
    /// name), or Stud.IP names the document after the uploaded file (`w4_version_other_name`).
    func uploadNewVersion(
        documentID: String, file: String, name: String, progress: UploadProgress?
    ) async throws(StudIPError) -> UploadReceipt {
        let opened = try await UploadFile.open(file)
        let what = "the new version of \"\(name)\" (document \(documentID))"
        _ = try await sendUpload(
            opened, name: name, textParts: [], progress: progress,
            url: installation.jsonAPI(["file-refs", documentID, "content"]), what: what)
        return await readBack(documentID: documentID, name: name, size: opened.size)
    }

    private func sendUpload(
        _ file: UploadFile, name: String, textParts: [(name: String, value: String)], progress: UploadProgress?,
        url: String, what: String
    ) async throws(StudIPError) -> HTTPResponse {
        let upload = MultipartUpload(file: file, fileName: name, textParts: textParts, progress: progress)
        let request = HTTPRequest(
            method: .post, url: url,
            headers: ["Accept": Self.mediaType, "Slug": WriteFormat.slug(name)], body: upload.body, what: what,
            extraTime: WriteExchange.extraTime(forBytes: file.size))
        // A bare 400 "Bad Request" is all Stud.IP says (too large, a forbidden type, no name): read it from what
        // was sent.
        return try await exchange.send(request) { status, said in
            WriteFormat.uploadRefusal(status: status, size: file.size, name: name, serverSaid: said)
        }
    }

    /// The receipt of a stored upload: the document read back where the user may read it. A failed read-back
    /// never throws: the bytes are stored, and an error would make the caller send them again.
    private func readBack(documentID: String?, name: String, size: Int64) async -> UploadReceipt {
        guard let documentID else {
            return UploadReceipt(
                documentID: nil, outcome: .storedUnverified(reason: "the answer named no document"), sentName: name,
                sentSize: size)
        }
        let outcome: UploadReceipt.Outcome
        do {
            outcome = .stored(try await document(id: documentID))
        } catch .forbidden {
            outcome = .storedUnreadable
        } catch {
            outcome = .storedUnverified(reason: error.description)
        }
        return UploadReceipt(documentID: documentID, outcome: outcome, sentName: name, sentSize: size)
    }

    /// `PATCH file-refs/{id}` with the name and the document's own licence (required: 422 without). One GET first
    /// learns the licence.
    func rename(documentID: String, to name: String) async throws(StudIPError) -> RemoteDocument {
        let current = try await document(id: documentID)
        let request = HTTPRequest(
            method: .patch, url: installation.jsonAPI(["file-refs", documentID]), headers: ["Accept": Self.mediaType],
            body: .json(
                WriteFormat.renameBody(documentID: documentID, name: name, termsID: current.license),
                contentType: Self.mediaType),
            what: "renaming \"\(current.name)\" to \"\(name)\"")
        return try decodedDocument(try await exchange.send(request), what: request.what)
    }

    /// JSON:API has no move: a PATCH of `relationships.parent` answers 200 and leaves the document where it was
    /// (`w4_move_patch_parent`).
    func move(documentID: String, toFolder folderID: String) async throws(StudIPError) -> RemoteDocument {
        throw .unsupported(operation: "move a document into another folder", api: apiName)
    }

    /// `DELETE file-refs/{id}`: 204, then 404.
    func delete(documentID: String) async throws(StudIPError) {
        let request = HTTPRequest(
            method: .delete, url: installation.jsonAPI(["file-refs", documentID]),
            headers: ["Accept": Self.mediaType], what: "deleting document \(documentID)")
        _ = try await exchange.send(request)
    }

    /// `POST folders/{id}/folders`: 201 with the folder.
    func makeFolder(parentFolderID: String, name: String) async throws(StudIPError) -> RemoteFolder {
        let request = HTTPRequest(
            method: .post, url: installation.jsonAPI(["folders", parentFolderID, "folders"]),
            headers: ["Accept": Self.mediaType],
            body: .json(WriteFormat.newFolderBody(name: name), contentType: Self.mediaType),
            what: "creating folder \"\(name)\" in folder \(parentFolderID)")
        let response = try await exchange.send(request)
        let json = try JSONValue.parse(response.body, what: request.what)
        guard let element = json["data"], var folder = exchange.format.folder(element) else {
            throw .malformedResponse(what: request.what, detail: "no folder with id and dates")
        }
        folder.parentID = folder.parentID ?? parentFolderID
        return folder
    }

    func termsOfUse() async throws(StudIPError) -> [TermsOfUse] {
        try await collection(["terms-of-use"], what: "the terms of use") { elements in
            elements.compactMap(WriteFormat.termsOfUse)
        }
    }

    /// `GET folders/{id}/file-refs`, paged; every document of the folder, restricted ones included.
    func documents(inFolder folderID: String) async throws(StudIPError) -> [RemoteDocument] {
        let format = exchange.format
        return try await collection(["folders", folderID, "file-refs"], what: "the documents of folder \(folderID)") {
            elements in
            elements.compactMap { element in
                var document = format.document(element)
                if document?.folderID.isEmpty == true { document?.folderID = folderID }
                return document
            }
        }
    }

    /// `GET folders/{id}/folders`, paged; Stud.IP lists only the readable ones (`w7_groupfolder_subfolders`).
    func folders(inFolder folderID: String) async throws(StudIPError) -> [RemoteFolder] {
        let format = exchange.format
        return try await collection(["folders", folderID, "folders"], what: "the folders in folder \(folderID)") {
            elements in
            elements.compactMap { element in
                guard var folder = format.folder(element) else { return nil }
                folder.parentID = folder.parentID ?? folderID
                return folder
            }
        }
    }

    func document(id: String) async throws(StudIPError) -> RemoteDocument {
        let what = "document \(id)"
        let json = try await exchange.fetchJSON(
            installation.jsonAPI(["file-refs", id]), accept: Self.mediaType, what: what)
        return try decoded(json, what: what)
    }

    /// `HEAD file-refs/{id}/content`: the ETag without the bytes.
    func contentETag(documentID: String) async throws(StudIPError) -> String? {
        let request = HTTPRequest(
            method: .head, url: installation.jsonAPI(["file-refs", documentID, "content"]),
            what: "the content of document \(documentID)", budgeted: false)
        return try await exchange.transport.fetch(request).header("ETag")
    }

    /// Every element of the collection at `segments`, a page per request, each decoded as it arrives. Outside the
    /// refresh's request budget (``WriteExchange``), which is why the reading source's collection is not used.
    private func collection<Element>(
        _ segments: [String], what: String, decode: ([JSONValue]) throws(StudIPError) -> [Element]
    ) async throws(StudIPError) -> [Element] {
        try await Paging.collect(limit: exchange.transport.pageSize, what: what, idKey: "id") {
            (offset) async throws(StudIPError) -> Page in
            try await page(segments, offset: offset, what: what)
        } decode: { elements throws(StudIPError) in
            try decode(elements)
        }
    }

    private func page(_ segments: [String], offset: Int, what: String) async throws(StudIPError) -> Page {
        let limit = exchange.transport.pageSize
        let json = try await exchange.fetchJSON(
            installation.jsonAPI(segments, query: [("page[offset]", String(offset)), ("page[limit]", String(limit))]),
            accept: Self.mediaType, what: what)
        guard let data = json["data"]?.array else { throw .malformedResponse(what: what, detail: "no data list") }
        return Page(elements: data, total: json["meta"]?["page"]?["total"]?.int.map { Int($0) })
    }

    private func decodedDocument(_ response: HTTPResponse, what: String) throws(StudIPError) -> RemoteDocument {
        try decoded(try JSONValue.parse(response.body, what: what), what: what)
    }

    private func decoded(_ json: JSONValue, what: String) throws(StudIPError) -> RemoteDocument {
        guard let element = json["data"], let document = exchange.format.document(element) else {
            throw .malformedResponse(what: what, detail: "no document with id, name and dates")
        }
        return document
    }
}

extension JSONAPISource: WritingSource {
    func makeWriter() -> any DocumentWriter { JSONAPIWriter(transport: transport) }
}
