import Foundation

/// One operation in the outbox (docs/writing.md, "The outbox") as `campusfs outbox` lists it: what it does, to
/// which item, where, and how far it is. The daemon and the daemon-less command build it alike from the outbox's
/// entries and the store's paths.
public struct OutboxItem: Codable, Sendable, Hashable {
    public enum Kind: String, Codable, Sendable {
        case upload
        case newVersion = "new version"
        case rename, move, delete
        case makeFolder = "new folder"
    }

    public var id: Int64
    public var kind: Kind
    /// The name Stud.IP is to store (an upload, a new version, a rename, a new folder), or the document's name.
    public var name: String
    /// Where: the folder's (or the document's) path in the tree; Stud.IP's id where the tree does not know it.
    public var place: String
    /// `queued`, `sending`, `waiting`, `failed`, `unconfirmed` (the outbox's states).
    public var state: String
    /// Stud.IP's refusal of a failed entry, or the last error of a waiting one.
    public var reason: String?
    public var attempts: Int
    /// When a waiting entry goes again.
    public var nextAttempt: Date?
    /// The bytes an upload or a new version sends.
    public var bytes: Int64?
    /// While it is being sent: how many of them went out so far.
    public var sentBytes: Int64?
    public var created: Date

    public init(
        id: Int64, kind: Kind, name: String, place: String, state: String, reason: String?, attempts: Int,
        nextAttempt: Date?, bytes: Int64?, created: Date
    ) {
        self.id = id
        self.kind = kind
        self.name = name
        self.place = place
        self.state = state
        self.reason = reason
        self.attempts = attempts
        self.nextAttempt = nextAttempt
        self.bytes = bytes
        self.created = created
    }

    /// Whether the entry waits for the user (`campusfs outbox retry` or `discard`), not for Stud.IP.
    public var needsTheUser: Bool { state == "failed" || state == "unconfirmed" }
}

/// How an entry left the outbox, or stopped in it for the user: what `campusfs upload` waits for, and what a
/// desktop notification says.
public struct OutboxSettlement: Codable, Sendable, Hashable {
    public enum Result: String, Codable, Sendable {
        /// Stud.IP confirmed it.
        case done
        /// The document changed (or went) on Stud.IP meanwhile: the user's bytes were kept beside it.
        case conflict
        /// Refused; the entry stays in the outbox with the reason.
        case failed
        /// Interrupted where arrival cannot be checked (a homework folder): resent only on `campusfs outbox retry`.
        case unconfirmed
        case discarded
    }

    public var id: Int64
    public var result: Result
    /// Done: the name Stud.IP stored (nil when the user cannot read it back: handed in as homework). Conflict: the
    /// name the user's bytes were kept as.
    public var name: String?
    public var reason: String?

    public init(id: Int64, result: Result, name: String? = nil, reason: String? = nil) {
        self.id = id
        self.result = result
        self.name = name
        self.reason = reason
    }
}

/// `campusfs upload FILE DEST` handed to the daemon: `file` is the command's copy of FILE in the profile's data
/// directory, which the outbox takes over by rename (the user's file stays as it was).
public struct UploadOrder: Codable, Sendable, Hashable {
    public var file: String
    /// Stud.IP's id of the folder to upload into (the command checked that the user may write there).
    public var folderID: String
    public var name: String
    /// The terms-of-use id; nil: the profile's `upload_terms`, else the installation's pick for own work.
    public var terms: String?

    public init(file: String, folderID: String, name: String, terms: String?) {
        self.file = file
        self.folderID = folderID
        self.name = name
        self.terms = terms
    }
}

/// Pending and failed operations, for `campusfs status` and the service's status line; nil in a status when uploads
/// are off.
public struct UploadCounts: Codable, Sendable, Hashable {
    /// Queued, being sent, or waiting to be sent again.
    public var pending: Int
    /// Refused or unconfirmed: waiting for `campusfs outbox retry` or `discard`.
    public var failed: Int
    /// The first few failed entries, each "<name>: <reason>".
    public var failures: [String]

    public init(pending: Int, failed: Int, failures: [String]) {
        self.pending = pending
        self.failed = failed
        self.failures = failures
    }

    /// "2 uploads pending, 1 failed: Blatt 3.pdf: too large"; nil when there is nothing to say.
    public var line: String? {
        var parts: [String] = []
        if pending > 0 { parts.append("\(pending) upload\(pending == 1 ? "" : "s") pending") }
        if failed > 0 {
            let noun = parts.isEmpty ? " upload\(failed == 1 ? "" : "s")" : ""
            parts.append("\(failed)\(noun) failed" + (failures.first.map { ": \($0)" } ?? ""))
        }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }
}
