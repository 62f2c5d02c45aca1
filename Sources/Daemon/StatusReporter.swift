import ContentCache
import ContentIndexing
import ControlProtocol
import Foundation
import Glibc
import Logging
import MetadataStore
import Refreshing
import Synchronization
import SystemSupport

/// What a daemon tells about itself: `campusfs status`, the service manager's status line and watchdog, and the
/// server link's changes on their way to the desktop's notifications.
final class StatusReporter: Sendable {
    /// What the reports name: the profile, where it is mounted, the server, how to log in again.
    struct Identity: Sendable {
        var profile: String
        var mountpoint: String
        var serverURL: String
        var loginCommand: String
    }

    let identity: Identity
    private let store: MetadataStore
    private let link: ServerLink
    private let cache: ContentCache
    private let indexer: ContentIndexer
    private let refreshes: RefreshCoordinator
    /// The service manager that started the daemon (systemd, `Type=notify`); nil when none did.
    private let service: ServiceManager?
    /// Desktop notifications; nil without a session bus or when the profile turned them off.
    private let notifier: NewsNotifier?
    /// The outbox; nil when the profile's uploads are off.
    private let uploads: UploadDesk?
    /// Tells the task that keeps the service manager's status line current that something changed.
    private let changes: AsyncStream<Void>.Continuation
    private let updates: AsyncStream<Void>
    /// The status line and the watchdog: cancelled at ``stop()``.
    private let tasks = Mutex<[Task<Void, Never>]>([])
    private let logger: Logger

    /// `changes` must reach `updates`: the daemon hands the coordinator `changes.yield` before it makes this.
    init(
        identity: Identity, store: MetadataStore, link: ServerLink, cache: ContentCache, indexer: ContentIndexer,
        refreshes: RefreshCoordinator, service: ServiceManager?, notifier: NewsNotifier?, uploads: UploadDesk? = nil,
        changes: (updates: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation), logger: Logger
    ) {
        self.identity = identity
        self.store = store
        self.link = link
        self.cache = cache
        self.indexer = indexer
        self.refreshes = refreshes
        self.service = service
        self.notifier = notifier
        self.uploads = uploads
        (updates, self.changes) = changes
        self.logger = logger
    }

    /// A stream for ``init``'s `changes`: only the newest change matters.
    static func changeStream() -> (updates: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation) {
        let (stream, continuation) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        return (stream, continuation)
    }

    /// A refresh that failed because the server could not be reached or refused the login stops counting as
    /// "failed since" once any request succeeds again (a download, say), not only at the next refresh.
    func status() async -> DaemonStatus {
        let usage = await cache.usage()
        let last = refreshes.last
        // Only until the first refresh of this run: the time of the last one before it, from the store.
        let stored = last.at == nil ? try? await store.run { store throws(StoreError) in try store.syncState() } : nil
        let server = await link.state
        let failure = last.error.flatMap { error -> String? in
            if case .studIP(let cause) = error, cause.concernsTheServer, server == .online { return nil }
            return error.description
        }
        return DaemonStatus(
            profile: identity.profile, mountpoint: identity.mountpoint, pid: getpid(),
            serverURL: identity.serverURL, server: server, serverDetail: await link.problem,
            api: await link.apiName, lastRefresh: last.at ?? stored?.lastOverviewAt,
            lastRefreshError: failure, failedCourses: last.failedCourses, cacheBytes: usage.bytes,
            cacheLimit: usage.limit, cachedDocuments: usage.count,
            downloadsInFlight: usage.downloadsInFlight, cacheDiskShortage: usage.diskShortage,
            refreshing: refreshes.progress, index: await indexStatus(), uploads: await uploads?.counts())
    }

    /// The search index's state; `measuringSize` reads every page of the index (`campusfs index`).
    func indexStatus(measuringSize: Bool = false) async -> IndexStatus? {
        let statistics = try? await store.run { store throws(StoreError) in
            try store.indexStatistics(measuringSize: measuringSize)
        }
        return statistics.map { IndexStatus($0, waiting: indexer.waiting) }
    }

    /// What `systemctl status` shows: the server's state, what the last refresh found, and the outbox's pending and
    /// failed operations.
    func statusLine() async -> String {
        let line = await serverLine()
        guard let uploads = await uploads?.counts()?.line else { return line }
        return line + "; " + uploads
    }

    /// The status line's part about the server and the refreshes.
    private func serverLine() async -> String {
        let last = refreshes.last
        let problem = await link.problem
        var refreshed = ""
        if let at = last.at {
            let time = Self.clock.string(from: at)
            refreshed =
                "last refresh \(time)"
                + (last.found.map { ": \($0.added) new, \($0.changed) changed, \($0.removed) removed" } ?? "")
        }
        if let progress = refreshes.progress {
            refreshed += (refreshed.isEmpty ? "" : "; ") + "refreshing: \(progress.done) of \(progress.total) courses"
        }
        switch await link.state {
        case .unknown:
            return "Mounted at \(identity.mountpoint); connecting to \(identity.serverURL)"
        case .online:
            let api = await link.apiName.map { " (\($0))" } ?? ""
            return "Online\(api)" + (refreshed.isEmpty ? "" : "; \(refreshed)")
        case .offline:
            return "Offline: \(problem ?? "Stud.IP cannot be reached"); serving the cached tree"
                + (refreshed.isEmpty ? "" : "; \(refreshed)")
        case .loginNeeded:
            // The link's problem often says "login needed: …" itself.
            let reason = problem.map { $0.hasPrefix("login needed: ") ? String($0.dropFirst(14)) : $0 }
            return "Login needed: \(reason ?? "Stud.IP refused the login"); run \(identity.loginCommand); "
                + "serving the cached tree"
        }
    }

    /// How often the service manager's line looks at the outbox's counts (one count query).
    static let outboxCheckInterval = Duration.seconds(2)

    private static let clock: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm"
        return formatter
    }()

    /// Something the status line shows changed outside a refresh (the outbox settled an entry).
    func statusChanged() { changes.yield() }

    /// Starts passing the server link's changes to the status line and the notifier.
    func observeTheServer() async {
        if let notifier { Task { await notifier.handleServerChanges() } }
        await link.observe { [weak self] state, problem, loggedOut in
            self?.serverChanged(to: state, problem: problem, loggedOut: loggedOut)
        }
    }

    /// The server link's state changed (on its actor: must not block).
    private func serverChanged(to state: DaemonStatus.Server, problem: String?, loggedOut: Bool) {
        changes.yield()
        // Waiting operations go now rather than after their backoff.
        if state == .online, let outbox = uploads?.outbox { Task { await outbox.serverIsBack() } }
        notifier?.serverChanged(to: state, problem: problem, loggedOut: loggedOut)
    }

    /// Says `READY=1` to the service manager once the mount answers a `stat` as a client sees it (its root is
    /// another device than the directory it covers), asked for up to 10 s; mounting waited for the kernel's INIT
    /// already. A mount that never answers gets no `READY=1`: the unit's start then fails.
    func reportReady() async {
        guard service != nil else { return }
        let mountpoint = identity.mountpoint
        for _ in 0..<200 {
            let answers = await BlockingPool.shared.run { () -> Bool in
                var root = stat()
                var covered = stat()
                return stat(mountpoint, &root) == 0 && stat(mountpoint + "/..", &covered) == 0
                    && root.st_dev != covered.st_dev
            }
            if answers { return await ready() }
            try? await Task.sleep(for: .milliseconds(50))
        }
        logger.error("the mount at \(mountpoint) does not answer; not telling the service manager it is ready")
        service?.send(ServiceManager.status("The mount at \(mountpoint) does not answer"))
    }

    /// Says `READY=1` and the status line to the service manager, then keeps the status line current and the
    /// watchdog fed.
    func ready() async {
        guard let service else { return }
        let line = await statusLine()
        service.send("READY=1\n" + ServiceManager.status(line))
        var started = [
            Task { [weak self, updates] in
                var last = line
                for await _ in updates {
                    guard let self else { return }
                    let now = await self.statusLine()
                    if now != last { service.send(ServiceManager.status(now)) }
                    last = now
                }
            }
        ]
        if uploads != nil {
            // The mount's workspace queues uploads without telling anyone: look at the outbox's counts now and then.
            started.append(
                Task { [changes] in
                    while !Task.isCancelled {
                        try? await Task.sleep(for: Self.outboxCheckInterval)
                        changes.yield()
                    }
                })
        }
        if let interval = service.watchdogInterval {
            // From a task: a ping proves that the cooperative pool, which every open and refresh needs, still runs.
            started.append(
                Task {
                    while !Task.isCancelled {
                        service.send("WATCHDOG=1")
                        try? await Task.sleep(for: interval)
                    }
                })
        }
        tasks.withLock { $0 += started }
    }

    /// Stops the status line and the watchdog, and closes the notifications' bus connection.
    func stop() async {
        for task in tasks.withLock({ $0 }) { task.cancel() }
        changes.finish()
        guard let notifier else { return }
        // Closing waits for the bus's signal thread to end.
        await BlockingPool.shared.run { notifier.close() }
    }
}
