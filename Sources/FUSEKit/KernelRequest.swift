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

/// The ``ReplySink`` of a request from the kernel: answers through libfuse and counts the answer for the session,
/// which may only be destroyed once every request is answered.
final class KernelRequest: ReplySink {
    private let request: RequestHandle
    private let core: SessionCore
    private let fileInfo: FileInfoCopy
    /// Whether the request is in ``SessionCore/interrupts``: only the kinds that can take an interrupt handler
    /// (``InterruptiblePayload``), so that the many other requests take no lock for it.
    private let interruptible: Bool
    let context: RequestContext

    init(
        _ request: fuse_req_t, core: SessionCore, fileInfo: UnsafeMutablePointer<fuse_file_info>?,
        interruptible: Bool
    ) {
        self.request = RequestHandle(raw: request)
        self.core = core
        self.fileInfo = FileInfoCopy(raw: fileInfo?.pointee ?? fuse_file_info())
        self.interruptible = interruptible
        let raw = fuse_req_ctx(request)?.pointee
        context = RequestContext(
            userID: raw?.uid ?? 0, groupID: raw?.gid ?? 0, processID: raw?.pid ?? 0, umask: raw?.umask ?? 0)
        core.replyCreated()
        // Here, on the worker, before the filesystem sees the request: libfuse's registration must not race the
        // reply, which frees the request (a handler set later only goes into the dictionary).
        if interruptible { core.interrupts.watch(request, core: core) }
    }

    func onInterrupt(_ handler: @escaping @Sendable () -> Void) {
        if interruptible { core.interrupts.onInterrupt(request.raw, handler) }
    }

    func send(_ answer: ReplyAnswer) -> Bool {
        if interruptible { core.interrupts.answered(request.raw) }
        let result = reply(request.raw, answer)
        core.replyFinished()
        return result == 0
    }

    private func reply(_ request: fuse_req_t, _ answer: ReplyAnswer) -> Int32 {
        switch answer {
        case .error(let errno):
            return fuse_reply_err(request, errno)
        case .entry(let entry):
            var parameters = entry.parameters
            return fuse_reply_entry(request, &parameters)
        case .negativeEntry(let timeout):
            var parameters = fuse_entry_param()
            parameters.entry_timeout = timeout.seconds
            return fuse_reply_entry(request, &parameters)
        case .attributes(let attributes, let timeout):
            var value = attributes.stat
            return fuse_reply_attr(request, &value, timeout.seconds)
        case .linkTarget(let target):
            return fuse_reply_readlink(request, target)
        case .open(let opened):
            var info = fileInfo(opened)
            return fuse_reply_open(request, &info)
        case .created(let entry, let opened):
            var parameters = entry.parameters
            var info = fileInfo(opened)
            return fuse_reply_create(request, &parameters, &info)
        case .data(let bytes):
            return bytes.withUnsafeBytes { fuse_reply_buf(request, $0.baseAddress, $0.count) }
        case .fileRange(let range):
            return cfuse_reply_fd_range(request, range.descriptor, off_t(range.offset), range.count)
        case .written(let count):
            return fuse_reply_write(request, count)
        case .statistics(let statistics):
            var value = statistics.statvfs
            return fuse_reply_statfs(request, &value)
        case .attributeSize(let size):
            return fuse_reply_xattr(request, size)
        case .attributeNames(let names):
            let bytes = names.flatMap { name -> [UInt8] in Array(name.utf8) + [0] }
            return bytes.withUnsafeBytes { fuse_reply_buf(request, $0.baseAddress, $0.count) }
        case .directory(let entries):
            let bytes = ListedName.encode(entries)
            return bytes.withUnsafeBytes { fuse_reply_buf(request, $0.baseAddress, $0.count) }
        }
    }

    private func fileInfo(_ opened: OpenedFile) -> fuse_file_info {
        var info = fileInfo.raw
        info.fh = opened.handle
        info.keep_cache = opened.keepCache ? 1 : 0
        info.cache_readdir = opened.cacheDirectory ? 1 : 0
        info.direct_io = opened.directIO ? 1 : 0
        info.nonseekable = opened.nonSeekable ? 1 : 0
        return info
    }
}

extension Reply {
    /// The reply to a request from the kernel.
    convenience init(
        _ request: fuse_req_t, core: SessionCore, operation: StaticString, size: Int = 0,
        fileInfo: UnsafeMutablePointer<fuse_file_info>? = nil
    ) {
        let sink = KernelRequest(
            request, core: core, fileInfo: fileInfo, interruptible: Kind.isInterruptible)
        self.init(sink: sink, operation: operation, context: sink.context, size: size)
    }
}

/// The interrupt handlers of the requests not yet answered (FUSE_INTERRUPT: the kernel asks to give up on a
/// request whose caller got a signal).
///
/// libfuse calls its interrupt callback with the request, from the worker that read the INTERRUPT, and may do so
/// just after the request was answered (it takes the callback under its lock and calls it outside). So the
/// callback's data is the session core, which outlives every request, and requests are found here by address: one
/// is present from its arrival until its answer, and a request's address is not reused while a callback for it
/// runs (libfuse holds a reference).
final class InterruptWatch: Sendable {
    private struct Watched {
        var handler: (@Sendable () -> Void)?
        var interrupted = false
    }

    private let watched = Mutex<[Int: Watched]>([:])
    /// Requests watched since the session began, for the tests that check which requests pay for watching.
    let registrations = Atomic(0)

    /// Called for every interruptible request before the filesystem sees it, on the worker that read it.
    func watch(_ request: fuse_req_t, core: SessionCore) {
        registrations.add(1, ordering: .relaxed)
        watched.withLock { $0[Int(bitPattern: request)] = Watched() }
        fuse_req_interrupt_func(
            request,
            { request, data in
                guard let request, let data else { return }
                Unmanaged<SessionCore>.fromOpaque(data).takeUnretainedValue().interrupts.interrupted(request)
            }, Unmanaged.passUnretained(core).toOpaque())
    }

    func onInterrupt(_ request: fuse_req_t, _ handler: @escaping @Sendable () -> Void) {
        let runNow = watched.withLock { watched -> Bool in
            let key = Int(bitPattern: request)
            guard let entry = watched[key] else { return false }
            if entry.interrupted { return true }
            watched[key]?.handler = handler
            return false
        }
        if runNow { handler() }
    }

    func answered(_ request: fuse_req_t) {
        _ = watched.withLock { $0.removeValue(forKey: Int(bitPattern: request)) }
    }

    private func interrupted(_ request: fuse_req_t) {
        let handler = watched.withLock { watched -> (@Sendable () -> Void)? in
            let key = Int(bitPattern: request)
            guard watched[key] != nil else { return nil }
            watched[key]?.interrupted = true
            defer { watched[key]?.handler = nil }
            return watched[key]?.handler
        }
        handler?()
    }
}
