import MetadataStore

/// Why the outbox could not take or change an operation, with what the user can do about it.
public enum OutboxError: Error, Sendable, Hashable, CustomStringConvertible {
    case store(StoreError)
    /// The bytes could not be taken over, kept or dropped.
    case bytes(path: String, operation: String, detail: String)
    /// An upload or new version without bytes, or another operation with them.
    case bytesMismatch(OutboxOperation)
    case noSuchEntry(Int64)
    /// The entry is being sent right now: it can be discarded once the attempt ended.
    case busy(Int64)

    public var description: String {
        switch self {
        case .store(let error): "\(error)"
        case .bytes(let path, let operation, let detail): "outbox: cannot \(operation) \(path): \(detail)"
        case .bytesMismatch(let operation):
            operation.carriesBytes
                ? "outbox: \(operation) needs the bytes to send" : "outbox: \(operation) sends no bytes"
        case .noSuchEntry(let id): "no outbox entry \(id) (`campusfs outbox` lists them)"
        case .busy(let id): "outbox entry \(id) is being sent right now; try again when the attempt has ended"
        }
    }
}
