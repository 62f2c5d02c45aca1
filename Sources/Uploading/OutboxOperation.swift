import Foundation
import StudIPModel

/// A folder an operation goes into: one Stud.IP has, or one an earlier `.makeFolder` in the outbox will make
/// (`mkdir` and a copy into it before either reached Stud.IP). An operation naming `.madeBy` waits for that entry
/// and then names the folder Stud.IP made (docs/writing.md, "The outbox").
public enum FolderReference: Sendable, Hashable, Codable, CustomStringConvertible {
    case folder(String)
    /// The folder the outbox entry with this id makes.
    case madeBy(entry: Int64)

    public var description: String {
        switch self {
        case .folder(let id): "folder \(id)"
        case .madeBy(let entry): "the folder outbox entry \(entry) makes"
        }
    }
}

/// One change to send to Stud.IP (docs/writing.md, "The outbox"). Names are the names Stud.IP is to store; the
/// tree's names (sanitized, `(2)`) are the workspace's business.
public enum OutboxOperation: Sendable, Hashable, Codable {
    /// A new document, with the bytes the outbox holds. `terms`: the terms-of-use id (nil: the installation's default).
    case upload(folder: FolderReference, name: String, terms: String?)
    /// New content of an existing document, based on the version the draft started from: when Stud.IP's current
    /// version is another, the bytes become a new document "`<name> (yours).<ext>`" beside it instead, and when
    /// the document is gone, a new document `name` in `folderID` (the document's folder; without it, the entry
    /// fails with the reason). `baseETag`: the content's `ETag` of `base` where the draft knew it, the one sign of
    /// a replacement at the same size through JSON:API (file id and size stay); nil: file id and size alone.
    case newVersion(
        documentID: String, name: String, base: DocumentVersion, folderID: String? = nil, baseETag: String? = nil)
    case rename(documentID: String, name: String)
    /// Legacy REST only: JSON:API has no move (the workspace answers `EXDEV` there).
    case move(documentID: String, folder: FolderReference)
    case delete(documentID: String)
    case makeFolder(parent: FolderReference, name: String)

    /// Whether the operation sends bytes (which the outbox then holds).
    public var carriesBytes: Bool {
        switch self {
        case .upload, .newVersion: true
        case .rename, .move, .delete, .makeFolder: false
        }
    }

    /// The document whose operations are sent one after another, in the order they were queued.
    var documentID: String? {
        switch self {
        case .newVersion(let id, _, _, _, _), .rename(let id, _), .move(let id, _), .delete(let id): id
        case .upload, .makeFolder: nil
        }
    }

    /// The outbox entry whose folder this operation needs first.
    var awaitedEntry: Int64? {
        switch self {
        case .upload(.madeBy(let entry), _, _), .move(_, .madeBy(let entry)), .makeFolder(.madeBy(let entry), _):
            entry
        default: nil
        }
    }

    /// The operation with a made folder's id in place of the reference to the entry that made it.
    func resolving(entry: Int64, to folderID: String) -> OutboxOperation {
        func resolved(_ reference: FolderReference) -> FolderReference {
            reference == .madeBy(entry: entry) ? .folder(folderID) : reference
        }
        return switch self {
        case .upload(let folder, let name, let terms): .upload(folder: resolved(folder), name: name, terms: terms)
        case .move(let document, let folder): .move(documentID: document, folder: resolved(folder))
        case .makeFolder(let parent, let name): .makeFolder(parent: resolved(parent), name: name)
        case .newVersion, .rename, .delete: self
        }
    }
}

/// Where an entry stands. Done and conflicting operations are `settled` only until their outcome was reported
/// to `onSettled`; then they leave the outbox.
public enum OutboxState: String, Sendable, Hashable, Codable {
    /// Not yet sent.
    case queued
    /// Being sent; found so at a start, it may have reached Stud.IP and is checked before it is sent again.
    case sending
    /// Offline, a 5xx or a 429: sent again after the backoff, or at once when the server is back.
    case waiting
    /// Stud.IP refused it (too large, forbidden type, not permitted): kept with the reason until retried or
    /// discarded. Later operations on the same document wait behind it.
    case failed
    /// Interrupted while sending where the outcome cannot be checked (a homework folder cannot be listed by a
    /// student): sent again only on retry, so that it is not handed in twice.
    case unconfirmed
    /// Confirmed (or a conflict resolved): its outcome is reported, then the entry is removed.
    case settled
}

/// How an operation ended, as `onSettled` is told.
public enum OutboxOutcome: Sendable, Hashable, Codable {
    /// Stud.IP confirmed it. The document as stored (its name may differ: `Name[2].ext`); nil when the user
    /// cannot read it back (a homework submission) and for a delete.
    case done(RemoteDocument?)
    /// Stud.IP made the folder.
    case madeFolder(RemoteFolder)
    /// Stud.IP refused it, with its reason; the entry stays in the outbox until retried or discarded.
    case failed(reason: String)
    /// A new version could not be stored as one: the lecturer changed the document meanwhile (`changed`), or it
    /// is gone (`gone`, then the bytes went up under the document's own name). The user's bytes are the document
    /// `keptAs` (nil when it cannot be read back).
    case conflict(keptAs: String, document: RemoteDocument?, documentWas: ConflictCause)
    /// An interrupted upload into a folder the user cannot list: not known to have arrived, not resent until retry.
    case unconfirmed(reason: String)
    /// The user discarded the entry: nothing more is sent, its bytes are gone.
    case discarded

    public enum ConflictCause: String, Sendable, Hashable, Codable {
        case changed, gone
    }
}

/// An operation in the outbox, as `entries()` lists it.
public struct OutboxEntry: Sendable, Hashable, Codable {
    public var id: Int64
    public var operation: OutboxOperation
    public var draftID: Int64?
    public var state: OutboxState
    /// Stud.IP's reason for a failure, or the last error of a waiting entry.
    public var reason: String?
    public var attempts: Int
    /// When a waiting entry is sent again.
    public var notBefore: Date?
    /// The bytes' length, for operations that carry bytes (nil after they were dropped).
    public var byteCount: Int64?
    public var created: Date
}
