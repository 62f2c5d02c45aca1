import CFuse3
import Glibc

/// One READDIR or READDIRPLUS answer under construction.
///
/// The kernel asks for a directory in chunks: each request carries the offset where the previous chunk
/// ended and a buffer size (``Reply/size``). Append entries starting at that offset until ``append`` returns
/// false, then send the buffer with ``Reply/entries(_:)``. `nextOffset` is the cookie the kernel passes back
/// to continue after this entry; it must be stable for a listing and never 0.
public struct DirectoryBuffer<Kind: ReplyPayload>: Sendable {
    private var storage: [UInt8]
    private var used = 0
    private let request: RequestHandle

    /// A buffer as large as the kernel accepts for `reply`. Fill it before sending the reply.
    public init(for reply: Reply<Kind>) {
        storage = [UInt8](repeating: 0, count: reply.size)
        request = RequestHandle(raw: reply.rawRequest)
    }

    /// Whether nothing has been appended.
    public var isEmpty: Bool { used == 0 }

    private mutating func add(_ write: (fuse_req_t, UnsafeMutablePointer<CChar>, Int) -> Int) -> Bool {
        let remaining = storage.count - used
        let needed = storage.withUnsafeMutableBytes { bytes -> Int in
            guard let base = bytes.baseAddress else { return 1 }
            return write(request.raw, (base + used).assumingMemoryBound(to: CChar.self), remaining)
        }
        guard needed <= remaining else { return false }
        used += needed
        return true
    }

    var bytes: ArraySlice<UInt8> { storage[..<used] }
}

extension DirectoryBuffer where Kind == ReplyKind.Directory {
    /// Appends a name with its inode and file type (only `S_IFMT` bits of `mode` matter here); false if
    /// the buffer is full and the entry was not added.
    public mutating func append(name: String, inode: Inode, mode: mode_t, nextOffset: Int64) -> Bool {
        var attributes = stat()
        attributes.st_ino = ino_t(inode)
        attributes.st_mode = mode
        return add { request, buffer, remaining in
            fuse_add_direntry(request, buffer, remaining, name, &attributes, off_t(nextOffset))
        }
    }
}

extension DirectoryBuffer where Kind == ReplyKind.DirectoryPlus {
    /// Appends a name with its full entry, so the kernel needs no LOOKUP per name. Every entry except `.`
    /// and `..` counts as a lookup of its inode (a `forget` follows); false if the buffer is full.
    public mutating func append(name: String, entry: Entry, nextOffset: Int64) -> Bool {
        var parameters = entry.parameters
        return add { request, buffer, remaining in
            fuse_add_direntry_plus(request, buffer, remaining, name, &parameters, off_t(nextOffset))
        }
    }
}

extension Reply where Kind == ReplyKind.Directory {
    /// Sends the chunk; an empty buffer tells the kernel the listing is complete.
    public func entries(_ buffer: DirectoryBuffer<Kind>) {
        _ = buffer.bytes.withUnsafeBytes { bytes in send { fuse_reply_buf($0, bytes.baseAddress, bytes.count) } }
    }
}

extension Reply where Kind == ReplyKind.DirectoryPlus {
    /// Sends the chunk; an empty buffer tells the kernel the listing is complete.
    public func entries(_ buffer: DirectoryBuffer<Kind>) {
        _ = buffer.bytes.withUnsafeBytes { bytes in send { fuse_reply_buf($0, bytes.baseAddress, bytes.count) } }
    }
}
