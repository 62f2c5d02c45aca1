import AsyncHelpers
import CFuse3
import Glibc
import Synchronization

/// A `fuse_req_t`, which imports as a non-Sendable `OpaquePointer`.
///
/// Safe to send: libfuse lets any thread reply to a request, and the request stays allocated until that
/// one reply, which ``Reply`` guarantees to send exactly once.
struct RequestHandle: @unchecked Sendable {
    let raw: fuse_req_t
}

/// A copy of the request's `fuse_file_info` (plain integers and bit fields), taken because libfuse frees
/// the original when the callback returns and an asynchronous `open` reply needs it later.
struct FileInfoCopy: @unchecked Sendable {
    var raw: fuse_file_info
}

/// Marks what a ``Reply`` may answer with; the reply methods are extensions constrained on it.
public protocol ReplyPayload {}

/// The reply payloads, one per kind of answer the kernel expects.
public enum ReplyKind {
    public enum Entry: ReplyPayload {}
    public enum Attributes: ReplyPayload {}
    public enum Link: ReplyPayload {}
    public enum Open: ReplyPayload {}
    public enum Create: ReplyPayload {}
    public enum Data: ReplyPayload {}
    public enum Write: ReplyPayload {}
    public enum Directory: ReplyPayload {}
    public enum DirectoryPlus: ReplyPayload {}
    public enum Statistics: ReplyPayload {}
    public enum ExtendedAttribute: ReplyPayload {}
    public enum ExtendedAttributeNames: ReplyPayload {}
    /// Success without payload (`fuse_reply_err(req, 0)`): release, setxattr, unlink, …
    public enum Status: ReplyPayload {}
}

public typealias EntryReply = Reply<ReplyKind.Entry>
public typealias AttributesReply = Reply<ReplyKind.Attributes>
public typealias LinkReply = Reply<ReplyKind.Link>
public typealias OpenReply = Reply<ReplyKind.Open>
public typealias CreateReply = Reply<ReplyKind.Create>
public typealias DataReply = Reply<ReplyKind.Data>
public typealias WriteReply = Reply<ReplyKind.Write>
public typealias DirectoryReply = Reply<ReplyKind.Directory>
public typealias DirectoryPlusReply = Reply<ReplyKind.DirectoryPlus>
public typealias StatisticsReply = Reply<ReplyKind.Statistics>
public typealias ExtendedAttributeReply = Reply<ReplyKind.ExtendedAttribute>
public typealias ExtendedAttributeNamesReply = Reply<ReplyKind.ExtendedAttributeNames>
public typealias StatusReply = Reply<ReplyKind.Status>

/// The one answer to one kernel request.
///
/// The kernel waits for every request until it is answered, so a reply must be sent exactly once. A
/// `Reply` is a class so it can be answered later from any thread or task: a handler that needs the
/// network returns at once and the libfuse worker goes back to reading `/dev/fuse`. A second answer is
/// logged and ignored; a reply released without an answer logs and answers `EIO`, so a forgotten path
/// shows up as an error instead of a hung process. (A `~Copyable` reply would catch double answers at
/// compile time, but cannot be consumed inside an escaping `Task` closure.)
public final class Reply<Kind: ReplyPayload>: Sendable {
    private let request: RequestHandle
    private let core: SessionCore
    private let operation: StaticString
    private let sent = Atomic<Bool>(false)
    /// Who sent the request.
    public let context: RequestContext
    /// The buffer size the kernel offered (read, readdir, getxattr, listxattr); 0 for other requests.
    public let size: Int
    let fileInfo: FileInfoCopy

    init(
        _ request: fuse_req_t, core: SessionCore, operation: StaticString, size: Int = 0,
        fileInfo: UnsafeMutablePointer<fuse_file_info>? = nil
    ) {
        self.request = RequestHandle(raw: request)
        self.core = core
        self.operation = operation
        self.size = size
        self.fileInfo = FileInfoCopy(raw: fileInfo?.pointee ?? fuse_file_info())
        let raw = fuse_req_ctx(request)?.pointee
        context = RequestContext(
            userID: raw?.uid ?? 0, groupID: raw?.gid ?? 0, processID: raw?.pid ?? 0, umask: raw?.umask ?? 0)
        core.replyCreated()
    }

    deinit {
        guard !sent.load(ordering: .acquiring) else { return }
        log(FUSE_LOG_ERR, "\(operation) reply dropped without an answer; answering EIO")
        fuse_reply_err(request.raw, EIO)
        core.replyFinished()
    }

    /// Answers with an errno (`ENOENT`, `EROFS`, …). 0 means success for requests without payload.
    public func error(_ errno: Int32) {
        send { fuse_reply_err($0, errno) }
    }

    /// Claims the reply and sends it; nil if it had been answered before.
    @discardableResult
    func send(_ body: (fuse_req_t) -> Int32) -> Int32? {
        guard sent.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else {
            log(FUSE_LOG_ERR, "\(operation) answered twice; the second answer is ignored")
            return nil
        }
        let result = body(request.raw)
        core.replyFinished()
        return result
    }

    /// For building directory listings before the reply is sent.
    var rawRequest: fuse_req_t { request.raw }

    /// Sends `bytes` with the getxattr/listxattr size protocol: a probe (``size`` 0) gets the length, a
    /// buffer too small gets `ERANGE`.
    func sendSizeProbed(_ bytes: [UInt8]) {
        if size == 0 {
            send { fuse_reply_xattr($0, bytes.count) }
        } else if bytes.count > size {
            error(ERANGE)
        } else {
            _ = bytes.withUnsafeBytes { buffer in send { fuse_reply_buf($0, buffer.baseAddress, buffer.count) } }
        }
    }
}

extension Reply where Kind == ReplyKind.Entry {
    /// The name exists.
    public func entry(_ entry: Entry) {
        var parameters = entry.parameters
        send { fuse_reply_entry($0, &parameters) }
    }

    /// The name does not exist, and the kernel may remember that for `timeout` (a negative dentry). Desktops
    /// probe missing names constantly (`.hidden`, `autorun.inf`), so a timeout saves a request per probe.
    public func negative(timeout: Duration) {
        var parameters = fuse_entry_param()
        parameters.entry_timeout = timeout.seconds
        send { fuse_reply_entry($0, &parameters) }
    }
}

extension Reply where Kind == ReplyKind.Attributes {
    /// The kernel trusts `attributes` for `timeout` without another `getattr`.
    public func attributes(_ attributes: Attributes, timeout: Duration) {
        var value = attributes.stat
        send { fuse_reply_attr($0, &value, timeout.seconds) }
    }
}

extension Reply where Kind == ReplyKind.Link {
    /// A symlink's target (cached by the kernel if the session enables ``KernelSettings/cacheSymlinks``).
    public func target(_ target: String) {
        send { fuse_reply_readlink($0, target) }
    }
}

extension Reply where Kind == ReplyKind.Open {
    /// Opens the file or directory.
    ///
    /// - Parameters:
    ///   - keepCache: keep the page cache from earlier opens (`FOPEN_KEEP_CACHE`), so a warm read sends no
    ///     READ at all; drop it with ``FUSESession/invalidateInode(_:offset:length:)`` when content changes.
    ///     For directories it must be set together with `cacheDirectory`.
    ///   - cacheDirectory: let the kernel cache this directory's listing (`FOPEN_CACHE_DIR`).
    ///   - directIO: bypass the page cache (for content whose size is unknown).
    /// - Returns: false if the request had been interrupted: then no `release` follows, so free `handle`.
    @discardableResult
    public func open(
        handle: UInt64 = 0, keepCache: Bool = false, cacheDirectory: Bool = false, directIO: Bool = false,
        nonSeekable: Bool = false
    ) -> Bool {
        var info = fileInfo.raw
        info.fh = handle
        info.keep_cache = keepCache ? 1 : 0
        info.cache_readdir = cacheDirectory ? 1 : 0
        info.direct_io = directIO ? 1 : 0
        info.nonseekable = nonSeekable ? 1 : 0
        return send { fuse_reply_open($0, &info) } == 0
    }
}

extension Reply where Kind == ReplyKind.Create {
    /// Creates and opens the file; see ``Reply/open(handle:keepCache:cacheDirectory:directIO:nonSeekable:)``.
    @discardableResult
    public func created(_ entry: Entry, handle: UInt64 = 0, keepCache: Bool = false, directIO: Bool = false)
        -> Bool
    {
        var parameters = entry.parameters
        var info = fileInfo.raw
        info.fh = handle
        info.keep_cache = keepCache ? 1 : 0
        info.direct_io = directIO ? 1 : 0
        return send { fuse_reply_create($0, &parameters, &info) } == 0
    }
}

extension Reply where Kind == ReplyKind.Data {
    /// Answers with these bytes (at most ``size``; fewer means end of file).
    public func data(_ bytes: some Collection<UInt8>) {
        _ = Array(bytes.prefix(size)).withUnsafeBytes { buffer in
            send { fuse_reply_buf($0, buffer.baseAddress, buffer.count) }
        }
    }

    /// Answers with bytes the caller owns; they are copied to the kernel before this returns.
    public func buffer(_ buffer: UnsafeRawBufferPointer) {
        send { fuse_reply_buf($0, buffer.baseAddress, min(buffer.count, size)) }
    }

    /// Answers with `length` bytes of an open file at `offset`, read (or spliced, with
    /// ``KernelSettings/spliceWrite``) by libfuse without a copy through Swift. The descriptor must stay
    /// open until this returns.
    public func file(descriptor: Int32, offset: Int64, length: Int) {
        var bufferVector = cfuse_bufvec_fd(min(length, size), descriptor, off_t(offset))
        send { fuse_reply_data($0, &bufferVector, fuse_buf_copy_flags(rawValue: 0)) }
    }
}

extension Reply where Kind == ReplyKind.Write {
    public func written(_ count: Int) {
        send { fuse_reply_write($0, count) }
    }
}

extension Reply where Kind == ReplyKind.Statistics {
    public func statistics(_ statistics: FileSystemStatistics) {
        var value = statistics.statvfs
        send { fuse_reply_statfs($0, &value) }
    }
}

extension Reply where Kind == ReplyKind.Status {
    /// Success.
    public func ok() {
        error(0)
    }
}

extension Reply where Kind == ReplyKind.ExtendedAttribute {
    /// Answers with an attribute's value, following the getxattr protocol: a size probe (``size`` 0) gets
    /// the length, a buffer too small for the value gets `ERANGE`.
    public func value(_ value: some Collection<UInt8>) {
        sendSizeProbed(Array(value))
    }
}

extension Reply where Kind == ReplyKind.ExtendedAttributeNames {
    /// Answers listxattr with these names (NUL-terminated on the wire), with the same size-probe and
    /// `ERANGE` protocol as getxattr.
    public func names(_ names: some Sequence<String>) {
        sendSizeProbed(names.flatMap { Array($0.utf8) + [0] })
    }
}
