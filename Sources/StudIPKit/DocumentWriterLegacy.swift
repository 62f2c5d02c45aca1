import Foundation
import StudIPModel
import StudIPWire

/// Writing through the legacy REST API as Stud.IP 5.0.7 answers (fixtures-5.0.7-writes steps 4–8; docs/client.md,
/// "Writing"). Its refusals are 500 with Stud.IP's own message as a JSON string; its upload stores the file and
/// then answers 500 with an HTML error page.
struct LegacyRESTWriter: DocumentWriter {
    let apiName = "legacy REST"
    private let exchange: WriteExchange

    init(transport: HTTPTransport) {
        exchange = WriteExchange(transport)
    }

    private var installation: Installation { exchange.transport.installation }

    /// `POST file/{folder}`, one file part. 5.0.7 stores it, then fails to render the answer: a 500 HTML page is
    /// ``UploadReceipt/Outcome/maybeStored``, for the caller to look in the folder. The route takes no licence: the
    /// document gets the installation's default, whatever `termsID` says.
    func upload(
        file: String, toFolder folderID: String, name: String, termsID: String?, progress: UploadProgress?
    ) async throws(StudIPError) -> UploadReceipt {
        let opened = try await UploadFile.open(file)
        let request = uploadRequest(
            opened, name: name, progress: progress, url: installation.legacy(["file", folderID]),
            what: "the upload of \"\(name)\" into folder \(folderID)")
        let response = try await exchange.answer(request)
        if response.status == 500, WriteFormat.legacyRouteMessage(response.body) == nil {
            exchange.transport.logger.notice(
                "\(request.what): HTTP 500 without a message, which Stud.IP 5.0.7 answers after storing the file")
            return UploadReceipt(documentID: nil, outcome: .maybeStored, sentName: name, sentSize: opened.size)
        }
        let document = try decodedDocument(
            try checked(response, what: request.what, upload: (opened.size, name)), request.what)
        return UploadReceipt(documentID: document.id, outcome: .stored(document), sentName: name, sentSize: opened.size)
    }

    /// `POST file/{id}/update`, multipart: 200 with the document, which gets a new file id (fixtures-5.0.7-more
    /// `p2_v4_rest_file_update`).
    func uploadNewVersion(
        documentID: String, file: String, name: String, progress: UploadProgress?
    ) async throws(StudIPError) -> UploadReceipt {
        let opened = try await UploadFile.open(file)
        let request = uploadRequest(
            opened, name: name, progress: progress, url: installation.legacy(["file", documentID, "update"]),
            what: "the new version of \"\(name)\" (document \(documentID))")
        let response = try checked(
            try await exchange.answer(request), what: request.what, upload: (opened.size, name))
        let document = try decodedDocument(response, request.what)
        return UploadReceipt(documentID: documentID, outcome: .stored(document), sentName: name, sentSize: opened.size)
    }

    private func uploadRequest(
        _ file: UploadFile, name: String, progress: UploadProgress?, url: String, what: String
    ) -> HTTPRequest {
        let upload = MultipartUpload(file: file, fileName: name, textParts: [], progress: progress)
        return HTTPRequest(
            method: .post, url: url, body: upload.body, what: what,
            extraTime: WriteExchange.extraTime(forBytes: file.size))
    }

    /// `PUT file/{id}` with JSON `name`; answers the document (only its refusal was captured, `w5_rest_rename`).
    func rename(documentID: String, to name: String) async throws(StudIPError) -> RemoteDocument {
        try await change(
            HTTPRequest(
                method: .put, url: installation.legacy(["file", documentID]),
                body: .json(WriteFormat.legacyRenameBody(name: name), contentType: "application/json"),
                what: "renaming document \(documentID) to \"\(name)\""))
    }

    /// `POST file/{id}/move/{folder}`: 200 with the document in its new folder (`w4_move_rest`).
    func move(documentID: String, toFolder folderID: String) async throws(StudIPError) -> RemoteDocument {
        try await change(
            HTTPRequest(
                method: .post, url: installation.legacy(["file", documentID, "move", folderID]),
                what: "moving document \(documentID) into folder \(folderID)"))
    }

    /// `DELETE file/{id}`: 200 with an empty body (`w8_rest_delete`), then 404.
    func delete(documentID: String) async throws(StudIPError) {
        let request = HTTPRequest(
            method: .delete, url: installation.legacy(["file", documentID]),
            what: "deleting document \(documentID)")
        _ = try checked(try await exchange.answer(request), what: request.what)
    }

    /// `POST folder/{id}/new_folder` with JSON `name`, `description`: 200 with the folder
    /// (`w7_rest_new_folder_groupfolder`).
    func makeFolder(parentFolderID: String, name: String) async throws(StudIPError) -> RemoteFolder {
        let request = HTTPRequest(
            method: .post, url: installation.legacy(["folder", parentFolderID, "new_folder"]),
            body: .json(WriteFormat.legacyNewFolderBody(name: name), contentType: "application/json"),
            what: "creating folder \"\(name)\" in folder \(parentFolderID)")
        let response = try checked(try await exchange.answer(request), what: request.what)
        let json = try JSONValue.parse(response.body, what: request.what)
        guard let folder = exchange.format.legacyFolder(json, parentID: parentFolderID) else {
            throw .malformedResponse(what: request.what, detail: "no folder with id and dates")
        }
        return folder
    }

    /// `studip/content_terms_of_use_list` (`w1_rest_terms_of_use`).
    func termsOfUse() async throws(StudIPError) -> [TermsOfUse] {
        let what = "the terms of use"
        let limit = exchange.transport.pageSize
        return try await Paging.collect(limit: limit, what: what, idKey: "id") {
            (offset) async throws(StudIPError) -> Page in
            let json = try await exchange.fetchJSON(
                installation.legacy(
                    ["studip", "content_terms_of_use_list"],
                    query: [("offset", String(offset)), ("limit", String(limit))]),
                what: what)
            guard let elements = json["collection"]?.elements else {
                throw .malformedResponse(what: what, detail: "no collection")
            }
            return Page(elements: elements, total: json["pagination"]?["total"]?.int.map { Int($0) })
        } decode: { elements in
            elements.compactMap(WriteFormat.legacyTermsOfUse)
        }
    }

    /// `folder/{id}`: the folder with its documents, as the refresh lists it.
    func documents(inFolder folderID: String) async throws(StudIPError) -> [RemoteDocument] {
        let json = try await exchange.fetchJSON(
            installation.legacy(["folder", folderID]), what: "the documents of folder \(folderID)")
        return exchange.format.legacyDocuments(inListing: json, folderID: folderID)
    }

    /// `folder/{id}` again: the same listing names the readable subfolders (`w1_rest_folder_root`).
    func folders(inFolder folderID: String) async throws(StudIPError) -> [RemoteFolder] {
        let json = try await exchange.fetchJSON(
            installation.legacy(["folder", folderID]), what: "the folders in folder \(folderID)")
        return exchange.format.legacySubfolders(inListing: json, folderID: folderID)
    }

    func document(id: String) async throws(StudIPError) -> RemoteDocument {
        let what = "document \(id)"
        let json = try await exchange.fetchJSON(installation.legacy(["file", id]), what: what)
        guard let document = exchange.format.legacyDocument(json) else {
            throw .malformedResponse(what: what, detail: "no document with id, folder, name and dates")
        }
        return document
    }

    /// Legacy REST's download sends no `ETag` (docs/client.md, "Downloads").
    func contentETag(documentID: String) async throws(StudIPError) -> String? { nil }

    /// A rename or move: the changed document.
    private func change(_ request: HTTPRequest) async throws(StudIPError) -> RemoteDocument {
        try decodedDocument(try checked(try await exchange.answer(request), what: request.what), request.what)
    }

    /// `response` when it is 2xx; else the refusal Stud.IP's message names (a 500 with a JSON string), or the error
    /// its status means. `upload` is the file sent, if any.
    private func checked(
        _ response: HTTPResponse, what: String, upload: (size: Int64, name: String)? = nil
    ) throws(StudIPError) -> HTTPResponse {
        if (200..<300).contains(response.status) { return response }
        if response.status == 500, let message = WriteFormat.legacyRouteMessage(response.body) {
            throw .refused(
                WriteFormat.legacyRefusal(message, size: upload?.size) ?? .invalid(status: 500, serverSaid: message),
                what: what)
        }
        throw exchange.error(for: response, what: what) { status, said in
            guard let upload else { return .invalid(status: status, serverSaid: said) }
            return WriteFormat.uploadRefusal(status: status, size: upload.size, name: upload.name, serverSaid: said)
        }
    }

    private func decodedDocument(_ response: HTTPResponse, _ what: String) throws(StudIPError) -> RemoteDocument {
        guard let document = exchange.format.legacyDocument(try JSONValue.parse(response.body, what: what)) else {
            throw .malformedResponse(what: what, detail: "no document with id, folder, name and dates")
        }
        return document
    }
}

extension LegacyRESTSource: WritingSource {
    func makeWriter() -> any DocumentWriter { LegacyRESTWriter(transport: transport) }
}
