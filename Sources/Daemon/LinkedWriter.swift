import Foundation
import StudIPKit
import StudIPModel
import Synchronization

/// The outbox's writer (docs/writing.md, "The outbox"): each write goes over the server link's connection, so it
/// shares the mount's login and counts for `status` (offline, login needed) as downloads do; and an upload
/// without terms of use gets the profile's `upload_terms`, else the installation's entry for a student's own work
/// (``TermsOfUse/forOwnWork(in:)``), asked once — never Stud.IP's `UNDEF_LICENSE`.
public final class LinkedWriter: DocumentWriter {
    private let link: ServerLink
    /// The profile's `upload_terms`.
    private let terms: String?
    /// The installation's pick for own work, once asked (the inner nil: it lists none).
    private let installationTerms = Mutex<String??>(nil)
    /// How far the uploads under way are: bytes handed to the connection, and the file's size.
    private let sending = Mutex<[Transfer: (sent: Int64, total: Int64)]>([:])

    /// An upload under way, named as the outbox's operation names it (the writer never sees the entry's id).
    public enum Transfer: Hashable, Sendable {
        case upload(folderID: String, name: String)
        case newVersion(documentID: String)
    }

    public init(link: ServerLink, terms: String?) {
        self.link = link
        self.terms = terms
    }

    /// The API the profile asks for (`auto` until connected): the writer in use names its own in its errors.
    public var apiName: String { link.configuration.api.rawValue }

    public func upload(
        file: String, toFolder folderID: String, name: String, termsID: String?, progress: UploadProgress?
    ) async throws(StudIPError) -> UploadReceipt {
        var chosen = termsID
        if chosen == nil { chosen = try await termsForUploads() }
        let tracked = tracking(.upload(folderID: folderID, name: name), progress)
        defer { done(.upload(folderID: folderID, name: name)) }
        return try await writing { writer throws(StudIPError) in
            try await writer.upload(file: file, toFolder: folderID, name: name, termsID: chosen, progress: tracked)
        }
    }

    public func uploadNewVersion(
        documentID: String, file: String, name: String, progress: UploadProgress?
    ) async throws(StudIPError) -> UploadReceipt {
        let tracked = tracking(.newVersion(documentID: documentID), progress)
        defer { done(.newVersion(documentID: documentID)) }
        return try await writing { writer throws(StudIPError) in
            try await writer.uploadNewVersion(documentID: documentID, file: file, name: name, progress: tracked)
        }
    }

    public func rename(documentID: String, to name: String) async throws(StudIPError) -> RemoteDocument {
        try await writing { writer throws(StudIPError) in try await writer.rename(documentID: documentID, to: name) }
    }

    public func move(documentID: String, toFolder folderID: String) async throws(StudIPError) -> RemoteDocument {
        try await writing { writer throws(StudIPError) in
            try await writer.move(documentID: documentID, toFolder: folderID)
        }
    }

    public func delete(documentID: String) async throws(StudIPError) {
        try await writing { writer throws(StudIPError) in try await writer.delete(documentID: documentID) }
    }

    public func makeFolder(parentFolderID: String, name: String) async throws(StudIPError) -> RemoteFolder {
        try await writing { writer throws(StudIPError) in
            try await writer.makeFolder(parentFolderID: parentFolderID, name: name)
        }
    }

    public func termsOfUse() async throws(StudIPError) -> [TermsOfUse] {
        try await writing { writer throws(StudIPError) in try await writer.termsOfUse() }
    }

    public func documents(inFolder folderID: String) async throws(StudIPError) -> [RemoteDocument] {
        try await writing { writer throws(StudIPError) in try await writer.documents(inFolder: folderID) }
    }

    public func folders(inFolder folderID: String) async throws(StudIPError) -> [RemoteFolder] {
        try await writing { writer throws(StudIPError) in try await writer.folders(inFolder: folderID) }
    }

    public func document(id: String) async throws(StudIPError) -> RemoteDocument {
        try await writing { writer throws(StudIPError) in try await writer.document(id: id) }
    }

    public func contentETag(documentID: String) async throws(StudIPError) -> String? {
        try await writing { writer throws(StudIPError) in try await writer.contentETag(documentID: documentID) }
    }

    /// How far `transfer` is, while it is under way (`campusfs upload`'s progress, `campusfs outbox`).
    public func progress(of transfer: Transfer) -> (sent: Int64, total: Int64)? {
        sending.withLock { $0[transfer] }
    }

    /// `progress`, also noting how far `transfer` is.
    private func tracking(_ transfer: Transfer, _ progress: UploadProgress?) -> UploadProgress {
        { [self] sent, total in
            sending.withLock { $0[transfer] = (sent, total) }
            progress?(sent, total)
        }
    }

    private func done(_ transfer: Transfer) {
        _ = sending.withLock { $0.removeValue(forKey: transfer) }
    }

    /// The profile's terms, else the installation's pick for own work (asked once per daemon).
    private func termsForUploads() async throws(StudIPError) -> String? {
        if let terms { return terms }
        if let known = installationTerms.withLock({ $0 }) { return known }
        let picked = TermsOfUse.forOwnWork(in: try await termsOfUse())?.id
        installationTerms.withLock { $0 = .some(picked) }
        return picked
    }

    /// `body` with the connection's writer; how it went is the link's state, as for a download.
    private func writing<T: Sendable>(
        _ body: (any DocumentWriter) async throws(StudIPError) -> T
    ) async throws(StudIPError) -> T {
        let source = try await link.connected()
        guard let writer = source.writer else {
            throw .unsupported(operation: "writing", api: source.apiName)
        }
        do throws(StudIPError) {
            let result = try await body(writer)
            await link.recordSuccess()
            return result
        } catch {
            await link.record(error)
            throw error
        }
    }
}
