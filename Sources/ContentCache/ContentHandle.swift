import SystemSupport

/// An open document: reads go straight to its file descriptor, without the cache actor.
///
/// A handle opened during a download shares the download's descriptor on the temporary file; the rename into
/// place keeps the inode, so the same descriptor serves the completed blob. Release it with
/// ``ContentCache/release(_:)``; until then its document is never evicted.
public final class ContentHandle: Sendable {
    public let documentID: String
    /// The version whose bytes this handle reads: an older one than asked for when it was opened offline.
    public let version: String
    /// Names these exact bytes: every download gets a new one, also a download of the same version whose bytes
    /// changed on the server. A page cache filled from another content id must be dropped.
    public let contentID: String
    /// Bytes readable through this handle; reads past it come back short.
    public let size: Int64
    let id: UInt64
    let descriptor: Descriptor
    /// The download still writing the file, nil when the blob was complete at open.
    let transfer: Transfer?
    /// The complete blob's `ETag` at open (nil for a download: its own is the transfer's).
    let storedETag: String?

    /// The `ETag` these bytes came with, nil when the server sent none (or, while downloading, before it answered):
    /// what a draft copied from them started from (docs/writing.md, "The outbox").
    public var etag: String? { transfer?.etag ?? storedETag }

    init(
        id: UInt64, documentID: String, version: String, contentID: String, size: Int64, descriptor: Descriptor,
        transfer: Transfer?, storedETag: String? = nil
    ) {
        self.id = id
        self.documentID = documentID
        self.version = version
        self.contentID = contentID
        self.size = size
        self.descriptor = descriptor
        self.transfer = transfer
        self.storedETag = storedETag
    }

    /// Calls `send` with the descriptor and the readable count when the range is on disk now; nil while the
    /// download has not written it. The handle keeps the descriptor open until `send` returns.
    func withAvailableRange<Result>(
        offset: Int64, length: Int, _ send: (_ descriptor: Int32, _ count: Int) -> Result
    ) -> Result? {
        let count = readable(offset: offset, length: length) ?? 0
        if count > 0, let transfer, !transfer.hasBytes(offset..<offset + Int64(count)) { return nil }
        return withExtendedLifetime(descriptor) { send(descriptor.fd, count) }
    }

    /// Returns once the range is on disk: at once for a complete blob, otherwise as soon as the download's stream or
    /// a range fetch (``Transfer/awaitBytes(_:)``) has written it, without waiting for the rest. The `pread` runs on
    /// `pool`.
    func read(offset: Int64, length: Int, on pool: BlockingPool) async throws(ContentCacheError) -> [UInt8] {
        guard let count = readable(offset: offset, length: length) else { return [] }
        try await transfer?.awaitBytes(offset..<offset + Int64(count))
        return try await pool.run { [descriptor] () throws(ContentCacheError) in
            try descriptor.read(at: offset, count: count)
        }
    }

    /// How many bytes a read gets, like `pread(2)`: nil when none (past the end, or an empty request).
    private func readable(offset: Int64, length: Int) -> Int? {
        guard offset >= 0, offset < size, length > 0 else { return nil }
        return Int(min(Int64(length), size - offset))
    }
}
