import Glibc
import StudIPKit
import StudIPModel

/// Why the content cache could not deliver a document, phrased so a user knows what to do.
public enum ContentCacheError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server refused or could not be reached; the `StudIPError` says which.
    case downloadFailed(documentID: String, StudIPError)
    /// The body broke off with an error that is not a `StudIPError` (a transport or decoding failure).
    case interrupted(documentID: String, detail: String)
    /// The server did not start answering within the configured deadline (offline, or a hanging connection).
    case startTimedOut(documentID: String, after: Duration)
    /// The body's length differs from the size the metadata promised; nothing was cached.
    case sizeMismatch(documentID: String, expected: Int64, received: Int64)
    /// A document of unknown size (Stud.IP says 0: hosted elsewhere) whose host sent more than the cache may hold
    /// (``ContentCacheConfiguration/sizeLimit``, `cache_limit`); the partial download was discarded.
    case tooLarge(documentID: String, limit: Int64, received: Int64)
    /// A write failed with `ENOSPC`/`EDQUOT`; the partial download was discarded.
    case diskFull(path: String)
    /// Any other failing system call on the cache directory.
    case io(operation: String, path: String, errno: Int32)
    /// The document id cannot name a cache file (empty or longer than 128 bytes).
    case invalidDocumentID(String)
    /// The download was abandoned: the document was removed, or the task waiting for it was cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .downloadFailed(let id, let error): "download of document \(id) failed: \(error)"
        case .interrupted(let id, let detail): "download of document \(id) broke off: \(detail); open it again"
        case .startTimedOut(let id, let after):
            "no answer from Stud.IP for document \(id) within \(after) (offline?); try again when connected"
        case .sizeMismatch(let id, let expected, let received):
            "document \(id): Stud.IP sent \(received) bytes, the metadata says \(expected); nothing was cached"
        case .tooLarge(let id, let limit, let received):
            "document \(id) has no size on Stud.IP and its host sends at least \(received) bytes, "
                + "more than the cache limit of \(limit) bytes (cache_limit in config.toml); nothing was cached"
        case .diskFull(let path):
            "disk full while writing \(path): free some space or lower the cache limit in config.toml"
        case .io(let operation, let path, let code):
            "\(operation) failed on \(path): \(String(cString: strerror(code)))"
        case .invalidDocumentID(let id): "cannot cache document with id \"\(id)\" (empty or too long)"
        case .cancelled: "download cancelled"
        }
    }

    /// True when the network is the problem: the filesystem answers `ENETDOWN` and may serve an older version.
    public var isOffline: Bool {
        switch self {
        case .downloadFailed(_, .unreachable), .startTimedOut: true
        default: false
        }
    }

    /// Whether an open may fall back to the cached bytes of the current version: the server cannot be reached,
    /// refuses the login or is failing, so it cannot say anything newer (cached documents need no login).
    public var allowsCachedCopy: Bool {
        switch self {
        case _ where isOffline: true
        case .downloadFailed(_, .serverError): true
        case .downloadFailed(_, let error) where error.isLoginFailure: true
        default: false
        }
    }

    /// The errno a filesystem operation should fail with (docs/mount.md, "Downloads and offline": offline → `ENETDOWN`,
    /// refused → `EACCES`; a document hosted elsewhere whose host is down → `EHOSTUNREACH`, one this API cannot fetch →
    /// `EREMOTE`).
    public var errorNumber: Int32 {
        switch self {
        case _ where isOffline: ENETDOWN
        case .downloadFailed(_, .hostUnreachable): EHOSTUNREACH
        case .downloadFailed(_, .hostedElsewhere): EREMOTE
        case .downloadFailed(_, .forbidden): EACCES
        case .downloadFailed(_, let error) where error.isLoginFailure: EACCES
        case .downloadFailed(_, .notFound): ENOENT
        case .downloadFailed(_, .brokeOff(_, _, let stalled)): stalled ? ETIMEDOUT : EIO
        case .downloadFailed(_, .serverError(429, _)): EAGAIN
        case .diskFull: ENOSPC
        case .tooLarge: EFBIG
        case .cancelled: EINTR
        default: EIO
        }
    }

    /// Maps a failed system call, singling out a full disk so the message can say so.
    static func system(_ operation: String, path: String, errno code: Int32) -> ContentCacheError {
        code == ENOSPC || code == EDQUOT ? .diskFull(path: path) : .io(operation: operation, path: path, errno: code)
    }
}
