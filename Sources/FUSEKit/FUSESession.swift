import CFuse3
import Glibc
import Synchronization

/// A `struct fuse_session *`, which imports as a non-Sendable `OpaquePointer`.
///
/// Safe to send because ``FUSESession`` only uses it under its lock (notifications, unmount, destroy) or
/// from the thread running the loop while the lock's state says the session is alive; libfuse itself is
/// written for replies and notifications from any thread.
struct SessionHandle: @unchecked Sendable {
    let raw: OpaquePointer
}

/// The signal that wakes the loop thread (see ``FUSESession/exit()``). Only that thread is ever sent it,
/// but its process-wide handler replaces any other use of SIGUSR1 in the process.
public let loopWakeSignal = SIGUSR1

/// A mounted filesystem and the loop serving it.
///
/// ```swift
/// let session = try FUSESession(fileSystem: MyFileSystem(), options: MountOptions(fileSystemName: "myfs"))
/// try session.mount(at: "/mnt/myfs")
/// try session.exitOnTerminationSignals()   // SIGINT, SIGTERM, SIGHUP unmount cleanly
/// try session.run()                          // blocks until exit() or a signal; then unmounted
/// ```
///
/// ## Shutdown
/// ``exit()`` (also what a termination signal triggers) sets libfuse's exit flag and then interrupts the
/// thread blocked in `fuse_session_loop_mt` with ``loopWakeSignal`` every 50 ms until the loop returns:
/// libfuse 3.14 parks that thread in `sem_wait` and does not wake it itself (libfuse #997, fixed in 3.18),
/// and a single signal could land just before `sem_wait`. ``run(_:)`` then unmounts with
/// `fuse_session_unmount`, which closes `/dev/fuse` (aborting the connection, so clients holding files
/// open get `ENOTCONN` instead of hanging) and detaches the mount lazily; a busy mount cannot block it.
/// Waiting for an unmount to end the loop would hang while a client holds a file open.
///
/// ## Notifications
/// The `invalidate…`/`notify…` methods tell the kernel to drop cached names, attributes or content. Call
/// them from any thread *outside* request handlers, never from a handler of a related request or while
/// holding a lock such a handler needs: the kernel may wait for that very request (libfuse's
/// `README.notifications`). A refresh task that finished its database writes is the right caller.
public final class FUSESession: Sendable {
    private enum Phase: Sendable {
        case idle
        case running(pthread_t)
        case finished
    }

    private struct State: Sendable {
        var handle: SessionHandle?
        var mounted = false
        var mountpoint: String?
        var phase = Phase.idle
        var exitRequested = false
        var waking = false
        var signals: TerminationSignalWatcher?
        var whenExiting: (@Sendable () -> Void)?
    }

    let core: SessionCore
    private let state: Mutex<State>

    /// Creates the session; nothing is mounted yet.
    public init(fileSystem: some FileSystemOperations, options: MountOptions = MountOptions()) throws(FUSEKitError) {
        let core = SessionCore(fileSystem: fileSystem, settings: options.kernel)
        var arguments = fuse_args(argc: 0, argv: nil, allocated: 0)
        defer { fuse_opt_free_args(&arguments) }
        for argument in ["fusekit", "-o", options.optionString] {
            guard fuse_opt_add_arg(&arguments, argument) == 0 else { throw .sessionCreationFailed }
        }
        var operations = makeLowLevelOperations()
        // The session holds one reference to the core, released after fuse_session_destroy.
        let userdata = Unmanaged.passRetained(core)
        guard
            let raw = fuse_session_new(
                &arguments, &operations, MemoryLayout<fuse_lowlevel_ops>.size, userdata.toOpaque())
        else {
            userdata.release()
            throw .sessionCreationFailed
        }
        self.core = core
        state = Mutex(State(handle: SessionHandle(raw: raw)))
    }

    deinit {
        tearDown(gracePeriod: .zero)
        state.withLock { $0.signals }?.stop()
    }

    /// Mounts at `mountpoint` (an existing directory). Requests queue in the kernel until ``run(_:)``. When it
    /// fails, the error carries what libfuse and `fusermount3` said why (they only write it to standard error,
    /// which for a daemon is a log file nobody reads at that moment).
    public func mount(at mountpoint: String) throws(FUSEKitError) {
        try state.withLock { state throws(FUSEKitError) in
            guard let handle = state.handle, !state.mounted, case .idle = state.phase else { throw .notRunnable }
            let (result, said) = StandardError.capturing { fuse_session_mount(handle.raw, mountpoint) }
            guard result == 0 else { throw .mountFailed(mountpoint: mountpoint, reason: said) }
            state.mounted = true
            state.mountpoint = mountpoint
        }
    }

    /// Sets how far the kernel reads ahead in files of this mount: the `read_ahead_kb` of the mount's BDI,
    /// 128 KiB by default, which also caps the size of READ requests. A daemon can only lower it through INIT,
    /// so raising it takes a write to sysfs after INIT, which only root may do.
    ///
    /// Call it once ``run(_:)`` serves, from outside request handlers: it waits for the kernel's INIT with a
    /// `statvfs` of the mountpoint (INIT would lower the value again), then finds the BDI by `st_dev`.
    public func setReadahead(kibibytes: Int) throws(FUSEKitError) {
        guard let mountpoint = state.withLock({ $0.mounted ? $0.mountpoint : nil }) else { throw .notMounted }
        var fileSystem = statvfs()
        var status = stat()
        // Only the wait matters: a filesystem without statfs answers ENOSYS after INIT all the same.
        _ = statvfs(mountpoint, &fileSystem)
        guard stat(mountpoint, &status) == 0 else {
            throw .readaheadFailed(path: mountpoint, errno: errno)
        }
        // glibc's major()/minor() are macros Swift does not import.
        let device = UInt64(status.st_dev)
        let major = (device >> 8) & 0xfff | (device >> 32) & ~0xfff
        let minor = device & 0xff | (device >> 12) & ~0xff
        let path = "/sys/class/bdi/\(major):\(minor)/read_ahead_kb"
        let descriptor = open(path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .readaheadFailed(path: path, errno: errno) }
        defer { close(descriptor) }
        let line = Array("\(kibibytes)\n".utf8)
        guard write(descriptor, line, line.count) == line.count else {
            throw .readaheadFailed(path: path, errno: errno)
        }
    }

    /// Serves requests on the calling thread until ``exit()``, a termination signal (see
    /// ``exitOnTerminationSignals(_:)``) or an external unmount; then unmounts and destroys the session.
    ///
    /// Blocks, so call it from the main thread or a thread of its own, never from a Swift concurrency task.
    public func run(_ configuration: LoopConfiguration = LoopConfiguration()) throws(FUSEKitError) {
        let thread = pthread_self()
        let (handle, exitRequested) = try state.withLock { state throws(FUSEKitError) in
            guard let handle = state.handle, state.mounted, case .idle = state.phase else { throw .notRunnable }
            state.phase = .running(thread)
            return (handle, state.exitRequested)
        }
        var result: Int32 = 0
        if !exitRequested {
            result = withWakeSignalUnblocked { Self.loop(handle, configuration) }
        }
        state.withLock { $0.phase = .finished }
        tearDown(gracePeriod: configuration.replyGracePeriod)
        let signals = state.withLock { state in
            defer { state.signals = nil }
            return state.signals
        }
        signals?.stop()
        // Positive values name the signal that stopped a loop using libfuse's own handlers.
        if result < 0 { throw .loopFailed(errno: -result) }
    }

    /// Ends ``run(_:)`` from any thread; returns at once. Also valid before `run`, which then returns at once.
    public func exit() {
        let whenExiting = state.withLock { state in
            defer { state.whenExiting = nil }
            return state.whenExiting
        }
        whenExiting?()
        let wake = state.withLock { state -> Bool in
            state.exitRequested = true
            if let handle = state.handle { fuse_session_exit(handle.raw) }
            guard case .running = state.phase, !state.waking else { return false }
            state.waking = true
            return true
        }
        guard wake else { return }
        let started = startThread { [self] in wakeLoop() }
        if !started { log(FUSE_LOG_ERR, "cannot start the thread that wakes the loop") }
    }

    /// Sends the wake signal while the loop runs. The lock keeps the loop thread alive while it is signalled:
    /// `run` leaves the running phase under the same lock before its thread can go away.
    private func wakeLoop() {
        while state.withLock({ state -> Bool in
            guard case .running(let thread) = state.phase else { return false }
            pthread_kill(thread, loopWakeSignal)
            return true
        }) {
            usleep(50_000)
        }
    }

    private static func loop(_ handle: SessionHandle, _ configuration: LoopConfiguration) -> Int32 {
        guard let loopConfiguration = fuse_loop_cfg_create() else { return -ENOMEM }
        defer { fuse_loop_cfg_destroy(loopConfiguration) }
        fuse_loop_cfg_set_max_threads(loopConfiguration, UInt32(clamping: configuration.maxThreads))
        if let idle = configuration.maxIdleThreads {
            fuse_loop_cfg_set_idle_threads(loopConfiguration, UInt32(clamping: idle))
        }
        fuse_loop_cfg_set_clone_fd(loopConfiguration, configuration.cloneFD ? 1 : 0)
        return fuse_session_loop_mt(handle.raw, loopConfiguration)
    }

    /// The loop thread must receive the wake signal even when it comes from a pool that blocks signals.
    private func withWakeSignalUnblocked(_ body: () -> Int32) -> Int32 {
        _ = cfuse_install_signal_handler(loopWakeSignal, { _ in }, 0)
        var wake = sigset_t()
        var previous = sigset_t()
        sigemptyset(&wake)
        sigaddset(&wake, loopWakeSignal)
        pthread_sigmask(SIG_UNBLOCK, &wake, &previous)
        defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
        return body()
    }

    /// Unmounts, waits for asynchronous replies still in flight, then destroys the session. If replies are
    /// still pending after `gracePeriod`, the session is leaked on purpose: a late reply to a destroyed
    /// session would write through freed memory.
    private func tearDown(gracePeriod: Duration) {
        state.withLock { state in
            guard state.mounted, let handle = state.handle else { return }
            fuse_session_unmount(handle.raw)
            state.mounted = false
        }
        let deadline = ContinuousClock.now + gracePeriod
        while core.outstandingReplies > 0, ContinuousClock.now < deadline {
            usleep(10_000)
        }
        if core.outstandingReplies > 0 {
            log(FUSE_LOG_ERR, "\(core.outstandingReplies) replies still pending; not destroying the session")
            return
        }
        let destroyed = state.withLock { state -> Bool in
            guard let handle = state.handle else { return false }
            fuse_session_destroy(handle.raw)
            state.handle = nil
            return true
        }
        if destroyed { Unmanaged.passUnretained(core).release() }
    }

    // MARK: - Notifications

    /// Drops the kernel's cached attributes of `inode` and its cached content from `offset` for `length`
    /// bytes (0: to the end). A negative `offset` drops only the attributes. For a directory this drops its
    /// cached listing.
    /// - Returns: false if the kernel did not know the inode (nothing was cached).
    @discardableResult
    public func invalidateInode(_ inode: Inode, offset: Int64 = 0, length: Int64 = 0) throws(FUSEKitError) -> Bool {
        try notify { fuse_lowlevel_notify_inval_inode($0, inode, off_t(offset), off_t(length)) }
    }

    /// Drops the cached name `name` in `parent` (positive or negative), and the parent's attributes.
    /// - Returns: false if the kernel had nothing cached.
    @discardableResult
    public func invalidateEntry(parent: Inode, name: String) throws(FUSEKitError) -> Bool {
        try notify { session in
            fuse_lowlevel_notify_inval_entry(session, parent, name, name.utf8.count)
        }
    }

    /// Runs a notification under the lock, so it never races the unmount closing `/dev/fuse`.
    private func notify(_ body: (OpaquePointer) -> Int32) throws(FUSEKitError) -> Bool {
        let result = try state.withLock { state throws(FUSEKitError) -> Int32 in
            guard state.mounted, let handle = state.handle else { throw .notMounted }
            return body(handle.raw)
        }
        switch result {
        case 0: return true
        case -ENOENT: return false
        default: throw .notifyFailed(errno: -result)
        }
    }

    // MARK: - Signals

    /// Runs `body` once, on the thread that first asks for the exit (``exit()``, a termination signal), before the
    /// loop is told to end: the owner's last word while the mount is still there (systemd's `STOPPING=1`). An
    /// external unmount ends the loop without it.
    public func whenExiting(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.whenExiting = body }
    }

    /// Makes SIGINT, SIGTERM and SIGHUP (or `signals`) end ``run(_:)`` cleanly, with the mount busy or not;
    /// the previous dispositions are replaced and reset to the default when `run` returns.
    ///
    /// The handlers are installed with `sigaction` on every listed signal regardless of its disposition
    /// (a non-interactive shell starts background jobs with SIGINT ignored, which made libfuse's own
    /// `fuse_set_signal_handlers` skip it), so no signal mask has to be set before threads exist. A handler
    /// only writes the signal number to a pipe (async-signal-safe); a dedicated thread reads it and calls
    /// ``exit()``. Do not combine with `DispatchSource` signal sources for the same signals: resuming one
    /// installs its own handler. One session per process may own the signals.
    public func exitOnTerminationSignals(_ signals: [Int32] = [SIGINT, SIGTERM, SIGHUP]) throws(FUSEKitError) {
        let watcher = try TerminationSignalWatcher(signals: signals) { [weak self] in self?.exit() }
        state.withLock { $0.signals = watcher }
    }
}
