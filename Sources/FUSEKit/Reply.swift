import AsyncHelpers
import CFuse3
import Glibc
import Synchronization

/// Marks what a ``Reply`` may answer with; the reply methods are extensions constrained on it.
public protocol ReplyPayload {
    /// Whether requests answered with this kind watch for the kernel's INTERRUPT; told by the type, so that no
    /// request pays a dynamic cast to find out.
    static var isInterruptible: Bool { get }
}

extension ReplyPayload {
    public static var isInterruptible: Bool { false }
}

/// The kinds of reply whose requests can take an interrupt handler (``Reply/onInterrupt(_:)``): `open` and
/// `read`, the requests a filesystem answers after waiting for the network (`opendir` shares `open`'s reply kind,
/// so it is watched too, though it answers at once). Only these pay for watching the kernel's INTERRUPT (a lock
/// and a dictionary entry each).
public protocol InterruptiblePayload: ReplyPayload {}

extension InterruptiblePayload {
    public static var isInterruptible: Bool { true }
}

/// The reply payloads, one per kind of answer the kernel expects.
public enum ReplyKind {
    public enum Entry: ReplyPayload {}
    public enum Attributes: ReplyPayload {}
    public enum Link: ReplyPayload {}
    public enum Open: InterruptiblePayload {}
    public enum Create: ReplyPayload {}
    public enum Data: InterruptiblePayload {}
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

/// One answer to one request, as a ``ReplySink`` receives it.
public enum ReplyAnswer: Sendable {
    /// An errno; 0 is success for requests without payload.
    case error(Int32)
    case entry(Entry)
    /// The name does not exist; the kernel may remember that for `timeout`.
    case negativeEntry(timeout: Duration)
    case attributes(Attributes, timeout: Duration)
    case linkTarget(String)
    case open(OpenedFile)
    case created(Entry, OpenedFile)
    /// File content, an extended attribute's value, or nothing (end of file).
    case data([UInt8])
    /// File content the kernel takes from a descriptor itself, valid only while ``ReplySink/send(_:)`` runs.
    case fileRange(FileRange)
    case written(Int)
    case statistics(FileSystemStatistics)
    /// The answer to a getxattr/listxattr size probe.
    case attributeSize(Int)
    case attributeNames([String])
    /// One chunk of a listing; empty means the listing is complete.
    case directory([ListedName])
}

/// Bytes of an open file, answered without copying them through Swift: libfuse splices them from the descriptor
/// into `/dev/fuse` (``KernelSettings/spliceReplies``) or reads them into one buffer of its own.
public struct FileRange: Sendable, Hashable {
    /// Open while the answer is sent; the sink must not keep it.
    public var descriptor: Int32
    public var offset: Int64
    /// Bytes to send: the caller has checked that the file holds them (fewer would end the kernel's read early).
    public var count: Int

    public init(descriptor: Int32, offset: Int64, count: Int) {
        self.descriptor = descriptor
        self.offset = offset
        self.count = count
    }
}

/// How an `open`, `opendir` or `create` answer lets the kernel treat the file.
public struct OpenedFile: Sendable, Hashable {
    public var handle: UInt64
    public var keepCache: Bool
    public var cacheDirectory: Bool
    public var directIO: Bool
    public var nonSeekable: Bool

    public init(
        handle: UInt64 = 0, keepCache: Bool = false, cacheDirectory: Bool = false, directIO: Bool = false,
        nonSeekable: Bool = false
    ) {
        self.handle = handle
        self.keepCache = keepCache
        self.cacheDirectory = cacheDirectory
        self.directIO = directIO
        self.nonSeekable = nonSeekable
    }
}

/// Where a ``Reply`` sends its one answer: the kernel (the session's libfuse requests), or a recorder in tests
/// (`FUSEKitTesting`), so the same filesystem code runs in-process and mounted.
public protocol ReplySink: Sendable {
    /// Delivers the answer; ``Reply`` calls it exactly once. False when the kernel no longer waits for it (an
    /// interrupted `open`, which is then followed by no `release`).
    func send(_ answer: ReplyAnswer) -> Bool
    /// Calls `handler` once if the request is interrupted before it is answered, at once if it already was;
    /// never after the answer was sent.
    func onInterrupt(_ handler: @escaping @Sendable () -> Void)
}

/// The one answer to one kernel request.
///
/// The kernel waits for every request until it is answered, so a reply must be sent exactly once. A
/// `Reply` is a class so it can be answered later from any thread or task: a handler that needs the
/// network returns at once and the libfuse worker goes back to reading `/dev/fuse`. A second answer is
/// logged and ignored; a reply released without an answer logs and answers `EIO`, so a forgotten path
/// shows up as an error instead of a hung process. (A `~Copyable` reply would catch double answers at
/// compile time, but cannot be consumed inside an escaping `Task` closure.)
public final class Reply<Kind: ReplyPayload>: Sendable {
    private let sink: any ReplySink
    private let operation: StaticString
    private let sent = Atomic<Bool>(false)
    /// Who sent the request.
    public let context: RequestContext
    /// The buffer size the kernel offered (read, readdir, getxattr, listxattr); 0 for other requests.
    public let size: Int

    /// A reply answered through `sink`: FUSEKit makes them for the kernel's requests, tests with a recorder.
    public init(sink: some ReplySink, operation: StaticString, context: RequestContext, size: Int = 0) {
        self.sink = sink
        self.operation = operation
        self.context = context
        self.size = size
    }

    deinit {
        guard !sent.load(ordering: .acquiring) else { return }
        log(FUSE_LOG_ERR, "\(operation) reply dropped without an answer; answering EIO")
        _ = sink.send(.error(EIO))
    }

    /// Answers with an errno (`ENOENT`, `EROFS`, …). 0 means success for requests without payload.
    public func error(_ errno: Int32) {
        send(.error(errno))
    }

    /// Claims the reply and sends it; false if it had been answered before or the kernel no longer waits.
    @discardableResult
    func send(_ answer: ReplyAnswer) -> Bool {
        guard sent.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
        else {
            log(FUSE_LOG_ERR, "\(operation) answered twice; the second answer is ignored")
            return false
        }
        return sink.send(answer)
    }

    /// Sends the getxattr/listxattr size protocol: a probe (``size`` 0) gets the length, a buffer too small gets
    /// `ERANGE`.
    func sendSizeProbed(byteCount: Int, _ answer: ReplyAnswer) {
        if size == 0 {
            send(.attributeSize(byteCount))
        } else if byteCount > size {
            error(ERANGE)
        } else {
            send(answer)
        }
    }
}

extension Reply where Kind: InterruptiblePayload {
    /// Runs `handler` once if the kernel interrupts this request before it is answered: the calling process got
    /// a signal and waits for an answer (`EINTR`) before its handler can run. Make the pending work end soon, e.g.
    /// cancel the task that will answer; answering from `handler` itself is allowed. Runs at once if the request
    /// was interrupted already, and never once it is answered. The kernel interrupts only requests their caller waits
    /// for: with ``KernelSettings/asyncRead`` a read through the page cache is a background request and never
    /// interrupted; only a fatal signal ends the caller's wait for it (docs/mount.md, "Interrupts").
    public func onInterrupt(_ handler: @escaping @Sendable () -> Void) {
        guard !sent.load(ordering: .acquiring) else { return }
        sink.onInterrupt(handler)
    }
}

extension Reply where Kind == ReplyKind.Entry {
    /// The name exists.
    public func entry(_ entry: Entry) {
        send(.entry(entry))
    }

    /// The name does not exist, and the kernel may remember that for `timeout` (a negative dentry). Desktops
    /// probe missing names constantly (`.hidden`, `autorun.inf`), so a timeout saves a request per probe.
    public func negative(timeout: Duration) {
        send(.negativeEntry(timeout: timeout))
    }
}

extension Reply where Kind == ReplyKind.Attributes {
    /// The kernel trusts `attributes` for `timeout` without another `getattr`.
    public func attributes(_ attributes: Attributes, timeout: Duration) {
        send(.attributes(attributes, timeout: timeout))
    }
}

extension Reply where Kind == ReplyKind.Link {
    /// A symlink's target (cached by the kernel if the session enables ``KernelSettings/cacheSymlinks``).
    public func target(_ target: String) {
        send(.linkTarget(target))
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
        send(
            .open(
                OpenedFile(
                    handle: handle, keepCache: keepCache, cacheDirectory: cacheDirectory, directIO: directIO,
                    nonSeekable: nonSeekable)))
    }
}

extension Reply where Kind == ReplyKind.Create {
    /// Creates and opens the file; see ``Reply/open(handle:keepCache:cacheDirectory:directIO:nonSeekable:)``.
    @discardableResult
    public func created(_ entry: Entry, handle: UInt64 = 0, keepCache: Bool = false, directIO: Bool = false)
        -> Bool
    {
        send(.created(entry, OpenedFile(handle: handle, keepCache: keepCache, directIO: directIO)))
    }
}

extension Reply where Kind == ReplyKind.Data {
    /// Answers with these bytes (at most ``size``; fewer means end of file).
    public func data(_ bytes: some Collection<UInt8>) {
        send(.data(Array(bytes.prefix(size))))
    }

    /// Answers with `count` bytes (at most ``size``) of an open file at `offset`, which the kernel copies from the
    /// descriptor: no bytes pass through Swift. `descriptor` must stay open until this returns.
    public func data(descriptor: Int32, offset: Int64, count: Int) {
        let count = min(count, size)
        send(count > 0 ? .fileRange(FileRange(descriptor: descriptor, offset: offset, count: count)) : .data([]))
    }
}

extension Reply where Kind == ReplyKind.Write {
    public func written(_ count: Int) {
        send(.written(count))
    }
}

extension Reply where Kind == ReplyKind.Statistics {
    public func statistics(_ statistics: FileSystemStatistics) {
        send(.statistics(statistics))
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
        let bytes = Array(value)
        sendSizeProbed(byteCount: bytes.count, .data(bytes))
    }
}

extension Reply where Kind == ReplyKind.ExtendedAttributeNames {
    /// Answers listxattr with these names (NUL-terminated on the wire), with the same size-probe and
    /// `ERANGE` protocol as getxattr.
    public func names(_ names: some Sequence<String>) {
        let names = Array(names)
        sendSizeProbed(byteCount: names.reduce(0) { $0 + $1.utf8.count + 1 }, .attributeNames(names))
    }
}
