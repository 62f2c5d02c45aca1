import Foundation
import StudIPModel
import StudIPWire

/// The client's write half: uploads, new versions, renames, moves, deletes and new folders, each as the API at hand
/// does it (docs/client.md, "Writing"). Obtained from the connection that reads (``DocumentSource/writer``), so it
/// shares its login, its connections and its request count; writes are counted, not charged to a refresh's budget.
///
/// Nothing here retries a request that may have changed something: a POST, PATCH or DELETE is sent once, and a
/// failure after it left is thrown as it is (``StudIPError/isRetryable``). The caller (the outbox) decides whether
/// to send it again, after looking whether it was stored (``documents(inFolder:)``, ``folders(inFolder:)``,
/// ``document(id:)``). Reads (the read-back after an upload, listings) are retried as the refresh's are.
public protocol DocumentWriter: Sendable {
    /// Which API writes ("JSON:API" / "legacy REST").
    var apiName: String { get }

    /// Uploads the file at `file` as a new document `name` into the folder `folderID`, with the licence `termsID`
    /// (nil: the installation's default, `UNDEF_LICENSE` on 5.0.7). The bytes are streamed from disk; `progress`
    /// hears how far. A taken name is stored as `Name[2].ext`: the receipt's document says which.
    func upload(
        file: String, toFolder folderID: String, name: String, termsID: String?, progress: UploadProgress?
    ) async throws(StudIPError) -> UploadReceipt

    /// Replaces the content of one's own document `documentID` with the file at `file`, keeping its id. `name` is
    /// sent as the document's name: Stud.IP renames the document to whatever name comes with the bytes.
    func uploadNewVersion(
        documentID: String, file: String, name: String, progress: UploadProgress?
    ) async throws(StudIPError) -> UploadReceipt

    /// Renames one's own document; the answer has the name Stud.IP gave (`Name[1].ext` when taken).
    func rename(documentID: String, to name: String) async throws(StudIPError) -> RemoteDocument

    /// Moves one's own document into another folder. Only legacy REST can: JSON:API throws
    /// ``StudIPError/unsupported(operation:api:)``.
    func move(documentID: String, toFolder folderID: String) async throws(StudIPError) -> RemoteDocument

    /// Deletes one's own document. A document already gone is ``StudIPError/notFound(what:)``.
    func delete(documentID: String) async throws(StudIPError)

    /// Creates an ordinary folder `name` in `parentFolderID` (where `is-subfolder-allowed`); a taken name becomes
    /// `Name[1]`.
    func makeFolder(parentFolderID: String, name: String) async throws(StudIPError) -> RemoteFolder

    /// The installation's terms of use, for the licence an upload sends (``TermsOfUse/forOwnWork(in:)``).
    func termsOfUse() async throws(StudIPError) -> [TermsOfUse]

    /// The documents of one folder as the user sees them now: "was it stored?" after an unclear answer. A folder
    /// the user may not list (a homework folder, for a student) is ``StudIPError/forbidden(what:)``.
    func documents(inFolder folderID: String) async throws(StudIPError) -> [RemoteDocument]

    /// The readable subfolders of one folder as the user sees them now: "was it made?" after a new folder's
    /// request broke off. A folder the user may not list is ``StudIPError/forbidden(what:)``.
    func folders(inFolder folderID: String) async throws(StudIPError) -> [RemoteFolder]

    /// One document as the user sees it now: "did someone change it meanwhile?" before a new version
    /// (``RemoteDocument/version``). Gone: ``StudIPError/notFound(what:)``.
    func document(id: String) async throws(StudIPError) -> RemoteDocument

    /// The content's `ETag` ("inode mtime size"), the one signal of a new version at the same size
    /// (docs/client.md, "Downloads"): one HEAD request on JSON:API; nil on legacy REST, which has none.
    func contentETag(documentID: String) async throws(StudIPError) -> String?
}

extension DocumentSource {
    /// The write half of a connection ``StudIP/connect(_:)`` made: the same login, connections and request count.
    /// nil for sources that are no connection (test fakes).
    public var writer: (any DocumentWriter)? { (self as? any WritingSource)?.makeWriter() }

    /// Whether this connection's writer can move a document into another folder: only legacy REST can
    /// (``DocumentWriter/move(documentID:toFolder:)``), which `api = auto` picks where JSON:API does not answer.
    public var movesDocuments: Bool { self is LegacyRESTSource }
}

extension StudIPError {
    /// A write (POST, PUT, PATCH, DELETE) that broke off after it had left, by a timeout or a reset: Stud.IP may
    /// have acted on it, so an upload may be stored. False for one that never left (no connection) and for every
    /// answer Stud.IP gave; what a 5xx means is the caller's to decide (legacy REST stores and then answers 500).
    public var brokeOffAfterSending: Bool {
        if case .unreachable(_, let detail) = self { detail.hasSuffix(HTTPTransport.actedOnNote) } else { false }
    }
}

/// A source that writes over its own transport.
protocol WritingSource: DocumentSource {
    func makeWriter() -> any DocumentWriter
}

/// Sending a write and reading its answer, shared by both APIs' writers.
struct WriteExchange: Sendable {
    let transport: HTTPTransport
    let format: WriteFormat

    init(_ transport: HTTPTransport) {
        self.transport = transport
        format = WriteFormat(installation: transport.installation)
    }

    /// What an upload may take beyond the request timeout before it counts as stuck: the file at 64 KiB/s, a slow
    /// uplink's pace (64 MiB: 17 minutes).
    static func extraTime(forBytes bytes: Int64) -> Duration {
        .seconds(bytes / (64 << 10))
    }

    /// Sends `request` once (never again after it left, see ``DocumentWriter``) and returns a 2xx answer; any other
    /// status becomes the error it means, by `refusal` for 400 and 422.
    func send(
        _ request: HTTPRequest, refusal: (_ status: Int, _ serverSaid: String?) -> WriteRefusal = Self.invalid
    ) async throws(StudIPError) -> HTTPResponse {
        let response = try await answer(request)
        guard (200..<300).contains(response.status) else {
            throw error(for: response, what: request.what, refusal: refusal)
        }
        return response
    }

    /// Sends `request` once, unbudgeted, and returns whatever Stud.IP answered (a 401 renews the login first).
    func answer(_ request: HTTPRequest) async throws(StudIPError) -> HTTPResponse {
        var request = request
        request.budgeted = false
        return try await transport.authenticated(request)
    }

    /// The error a refused write means: 400, 409, 413 and 422 by `refusal`, 403 "not permitted", the rest as for
    /// reads (404 gone, 5xx and 429 retryable).
    func error(
        for response: HTTPResponse, what: String,
        refusal: (_ status: Int, _ serverSaid: String?) -> WriteRefusal = Self.invalid
    ) -> StudIPError {
        let said = WriteFormat.serverSaid(response.body)
        switch response.status {
        case 400, 409, 413, 422:
            return .refused(refusal(response.status, said), what: what)
        default:
            let error = transport.error(for: response, what: what)
            // A 403 that is no missing API ("Route not activated") is a refusal of this user.
            if case .forbidden = error { return .refused(.notPermitted(serverSaid: said), what: what) }
            return error
        }
    }

    static func invalid(_ status: Int, _ serverSaid: String?) -> WriteRefusal {
        .invalid(status: status, serverSaid: serverSaid)
    }

    /// An unbudgeted GET whose answer must be 2xx JSON (listings and read-backs are safe to repeat: the transport
    /// retries them).
    func fetchJSON(_ url: String, accept: String? = nil, what: String) async throws(StudIPError) -> JSONValue {
        var request = HTTPRequest(url: url, what: what, budgeted: false)
        if let accept { request.headers["Accept"] = accept }
        let response = try await transport.fetch(request)
        return try JSONValue.parse(response.body, what: what)
    }
}
