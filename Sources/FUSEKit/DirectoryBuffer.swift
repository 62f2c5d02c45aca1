import CFuse3
import Glibc

/// One name of a listing chunk, as the kernel receives it.
public struct ListedName: Sendable {
    public var name: String
    public var inode: Inode
    /// Only the file type bits (`S_IFMT`) reach the kernel.
    public var mode: mode_t
    /// The cookie the kernel passes back to continue after this entry.
    public var nextOffset: Int64
    /// The full entry in a READDIRPLUS answer (a lookup of ``inode``); nil in a plain listing.
    public var entry: Entry?

    /// The bytes this entry takes on the wire (libfuse computes it when given no buffer).
    var size: Int {
        entry == nil ? fuse_add_direntry(nil, nil, 0, name, nil, 0) : fuse_add_direntry_plus(nil, nil, 0, name, nil, 0)
    }

    /// The kernel's `fuse_dirent`/`fuse_direntplus` records of `entries`.
    static func encode(_ entries: [ListedName]) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: entries.reduce(0) { $0 + $1.size })
        bytes.withUnsafeMutableBytes { buffer in
            guard var cursor = buffer.baseAddress?.assumingMemoryBound(to: CChar.self) else { return }
            var remaining = buffer.count
            for item in entries {
                let written: Int
                if let entry = item.entry {
                    var parameters = entry.parameters
                    written = fuse_add_direntry_plus(
                        nil, cursor, remaining, item.name, &parameters, off_t(item.nextOffset))
                } else {
                    var attributes = stat()
                    attributes.st_ino = ino_t(item.inode)
                    attributes.st_mode = item.mode
                    written = fuse_add_direntry(nil, cursor, remaining, item.name, &attributes, off_t(item.nextOffset))
                }
                cursor += written
                remaining -= written
            }
        }
        return bytes
    }
}

/// One READDIR or READDIRPLUS answer under construction.
///
/// The kernel asks for a directory in chunks: each request carries the offset where the previous chunk
/// ended and a buffer size (``Reply/size``). Append entries starting at that offset until ``append`` returns
/// false, then send the chunk with ``Reply/entries(_:)``. `nextOffset` is the cookie the kernel passes back
/// to continue after this entry; it must be stable for a listing and never 0.
public struct DirectoryBuffer<Kind: ReplyPayload>: Sendable {
    /// What was appended so far.
    public private(set) var entries: [ListedName] = []
    private let capacity: Int
    private var used = 0

    /// A chunk as large as the kernel accepts for `reply`. Fill it before sending the reply.
    public init(for reply: Reply<Kind>) {
        capacity = reply.size
    }

    /// Whether nothing has been appended.
    public var isEmpty: Bool { entries.isEmpty }

    private mutating func add(_ entry: ListedName) -> Bool {
        let size = entry.size
        guard size <= capacity - used else { return false }
        used += size
        entries.append(entry)
        return true
    }
}

extension DirectoryBuffer where Kind == ReplyKind.Directory {
    /// Appends a name with its inode and file type (only `S_IFMT` bits of `mode` matter here); false if
    /// the buffer is full and the entry was not added.
    public mutating func append(name: String, inode: Inode, mode: mode_t, nextOffset: Int64) -> Bool {
        add(ListedName(name: name, inode: inode, mode: mode, nextOffset: nextOffset))
    }
}

extension DirectoryBuffer where Kind == ReplyKind.DirectoryPlus {
    /// Appends a name with its full entry, so the kernel needs no LOOKUP per name. Every entry except `.`
    /// and `..` counts as a lookup of its inode (a `forget` follows); false if the buffer is full.
    public mutating func append(name: String, entry: Entry, nextOffset: Int64) -> Bool {
        add(
            ListedName(
                name: name, inode: entry.attributes.inode, mode: entry.attributes.mode, nextOffset: nextOffset,
                entry: entry))
    }
}

extension Reply where Kind == ReplyKind.Directory {
    /// Sends the chunk; an empty buffer tells the kernel the listing is complete.
    public func entries(_ buffer: DirectoryBuffer<Kind>) {
        send(.directory(buffer.entries))
    }
}

extension Reply where Kind == ReplyKind.DirectoryPlus {
    /// Sends the chunk; an empty buffer tells the kernel the listing is complete.
    public func entries(_ buffer: DirectoryBuffer<Kind>) {
        send(.directory(buffer.entries))
    }
}
