import AsyncHelpers
import CampusFS
import ContentCache
import ContentIndexing
import ControlProtocol
import Desktop
import FUSEKit
import Foundation
import Logging
import MetadataStore
import StudIPKit
import StudIPModel
import Synchronization
import SystemSupport

/// Everything a daemon needs to serve one profile (docs/architecture.md, "Paths" and "Promises").
public struct DaemonConfiguration: Sendable {
    public var profile: String
    public var mountpoint: String
    public var databasePath: String
    public var cacheDirectory: String
    public var socketPath: String
    public var client: ClientConfiguration
    public var tree: TreeOptions
    /// Semester titles or ids to show; nil shows all.
    public var semesters: Set<String>?
    public var cache: ContentCacheConfiguration
    /// How often the poller refreshes everything (with up to 10 % jitter).
    public var refreshInterval: Duration
    /// How old a course's listing may be before a look into it triggers a background refresh of that course; also
    /// how long a cached document's bytes are trusted before an open revalidates them with the server.
    public var listingTTL: Duration
    /// Never touch the network (`campusfs mount --offline`).
    public var offline: Bool
    /// Where to find credentials again when the server refuses `client.credentials` (a password command); nil
    /// keeps those.
    public var credentialLookup: ServerLink.CredentialLookup?
    /// Where refreshed OAuth2 tokens go (the keyring), also for tokens `campusfs login` hands over later.
    public var tokenStorage: (any TokenStorage)?
    /// How long the cached bytes and the user's tags and pins of what Stud.IP removed are kept, in case it comes
    /// back (a listing that was empty by mistake).
    public var removalGrace: Duration = .seconds(7 * 86_400)
    /// The longest one refresh may take before it is stopped (what it applied stays).
    public var refreshTimeout: Duration = .seconds(600)
    /// The generated files (issue 18); German and all on unless the profile says otherwise.
    public var courseFiles = CourseFilesOptions()
    /// The service manager that started the daemon (systemd, `Type=notify`); nil when none did.
    public var serviceManager: ServiceManager?
    /// Desktop notifications about new documents and a refused login; nil sends none.
    public var notifications: NotificationSettings?
    /// The command that logs this profile in again, for messages (`campusfs login --profile uni`).
    public var loginCommand = "campusfs login"

    public init(
        profile: String, mountpoint: String, databasePath: String, cacheDirectory: String, socketPath: String,
        client: ClientConfiguration, tree: TreeOptions = TreeOptions(), semesters: Set<String>? = nil,
        cache: ContentCacheConfiguration = ContentCacheConfiguration(), refreshInterval: Duration = .seconds(600),
        listingTTL: Duration = .seconds(600), offline: Bool = false,
        credentialLookup: ServerLink.CredentialLookup? = nil
    ) {
        self.profile = profile
        self.mountpoint = mountpoint
        self.databasePath = databasePath
        self.cacheDirectory = cacheDirectory
        self.socketPath = socketPath
        self.client = client
        self.tree = tree
        self.semesters = semesters
        self.cache = cache
        self.refreshInterval = refreshInterval
        self.listingTTL = listingTTL
        self.offline = offline
        self.credentialLookup = credentialLookup
    }
}

/// Why a daemon did not start; `exitCode` follows docs/architecture.md, "Exit codes".
public enum DaemonError: Error, Sendable, CustomStringConvertible {
    case store(StoreError)
    case firstRefresh(RefreshError)
    case control(ControlSocketError)
    case mount(CampusMount.MountError)
    /// Offline (or `--offline`) and nothing was ever fetched for this profile.
    case nothingCached(detail: String)

    public var description: String {
        switch self {
        case .store(let error): "metadata store: \(error)"
        case .firstRefresh(let error): "the first refresh failed: \(error)"
        case .control(let error): error.description
        case .mount(let error): error.description
        case .nothingCached(let detail):
            "nothing is known about this profile yet and Stud.IP cannot be asked (\(detail)); mount once while online"
        }
    }

    public var exitCode: Int32 {
        switch self {
        case .firstRefresh(.studIP(let error)): error.exitCode
        case .nothingCached: 3
        case .mount(.session(.mountFailed)): 1
        default: 4
        }
    }
}

/// One profile mounted and kept fresh: the FUSE mount, the control socket, the background poller and the
/// refreshes they trigger (docs/mount.md, "Refreshes").
///
/// ## Refreshes
/// All refreshes — the poller's, `campusfs refresh`, and the stale-while-revalidate ones a look into an old
/// listing starts — go through ``refresh(courseIDs:)``, one at a time, so one refresh writes at a time (FUSE
/// handlers' user-state writes interleave, serialized by the store) and the kernel is told about each change
/// exactly once, from a task that holds no request handler's locks.
public final class CampusDaemon: Sendable {
    public let configuration: DaemonConfiguration
    public let store: MetadataStore
    public let link: ServerLink
    public let mount: CampusMount
    /// Extracts the text of what the cache holds into the search index, in the background.
    public let indexer: ContentIndexer
    private let control: ControlServer
    private let logger: Logger
    /// One refresh at a time, in the order asked for.
    private let refreshes = ConcurrencyLimiter(limit: 1)
    /// Courses with a background refresh pending, so that many looks into one old listing ask once.
    private let backgroundRefreshes = Mutex<Set<String>>([])
    private let poller = Mutex<Task<Void, Never>?>(nil)
    private let lastRefresh = Mutex(LastRefresh())
    /// How far the running refresh is, for `status` and `campusfs refresh`'s progress line.
    private let refreshProgress = Mutex<RefreshProgress?>(nil)
    /// Desktop notifications; nil without a session bus or when the profile turned them off.
    private let notifier: NewsNotifier?
    /// Tells the task that keeps the service manager's status line current that something changed.
    private let statusChanges: AsyncStream<Void>.Continuation
    private let statusUpdates: AsyncStream<Void>
    /// The status line and the watchdog: cancelled at shutdown.
    private let serviceTasks = Mutex<[Task<Void, Never>]>([])

    /// How the last refresh went, for `status`.
    private struct LastRefresh {
        var at: Date?
        var error: RefreshError?
        /// Courses the last successful refresh could not read, with why.
        var failedCourses: [String] = []
        /// What the last successful refresh found: new, changed and removed items.
        var found: (added: Int, changed: Int, removed: Int)?
    }

    /// Opens the store, mounts, and starts the control socket and the poller. Returns once the mount serves requests.
    /// An empty store gets the overview first (semesters and courses), and each course's content fills in behind
    /// the mount (``FirstFill``); a filled one is refreshed right after mounting, in the background.
    public static func start(
        _ configuration: DaemonConfiguration, logger: Logger = Logger(label: "campusfs.daemon")
    ) async throws(DaemonError) -> CampusDaemon {
        #if DEBUG
            // Every mount test's daemon then stops at blocking work done in a task (docs/threads.md).
            BlockingPool.trapBlockingInTasks()
        #endif
        let store: MetadataStore
        let synced: Bool
        do throws(StoreError) {
            (store, synced) = try await BlockingPool.shared.run { () throws(StoreError) in
                let store = try MetadataStore(path: configuration.databasePath)
                return (store, try store.syncState().lastOverviewAt != nil)
            }
        } catch {
            throw .store(error)
        }
        let offline = configuration.offline
        let link = ServerLink(configuration: configuration.client, lookup: configuration.credentialLookup) {
            client throws(StudIPError) in
            if offline { throw .unreachable(server: client.baseURL, detail: "mounted with --offline") }
            return try await StudIP.connect(client)
        }
        // A first refresh cut short (the daemon stopped or was killed before it stored every course) goes on like
        // a first mount's: the courses it did not reach fill in behind the mount, none is listed empty.
        let unlisted = try? await store.run { store throws(StoreError) in
            try store.placedCourses().contains { $0.listedAt == nil }
        }
        let resumes = synced && !offline && unlisted == true
        var firstStep: (source: any DocumentSource, step: Refresher.OverviewStep)?
        if !synced || resumes {
            do throws(RefreshError) {
                let source = try await connected(link)
                firstStep = (
                    source, try await Self.refresher(configuration, store: store, source: source).refreshOverview()
                )
            } catch {
                if !synced {
                    await link.shutdown()
                    if case .studIP(.unreachable(_, let detail)) = error { throw .nothingCached(detail: detail) }
                    throw .firstRefresh(error)
                }
                logger.warning("cannot go on with the first refresh: \(error); the stored tree is mounted")
            }
        }
        let mount: CampusMount
        let indexer = ContentIndexer(store: store)
        var cacheConfiguration = configuration.cache
        cacheConfiguration.revalidationInterval = configuration.listingTTL
        cacheConfiguration.committed = { indexer.enqueue($0) }
        do throws(CampusMount.MountError) {
            // The cache's crash recovery reads and cleans its directory.
            mount = try await BlockingPool.shared.run { [cacheConfiguration] () throws(CampusMount.MountError) in
                try CampusMount(
                    store: store, cacheDirectory: configuration.cacheDirectory, downloader: link,
                    cacheConfiguration: cacheConfiguration)
            }
        } catch {
            await link.shutdown()
            throw .mount(error)
        }
        let daemon = Holder()
        let control: ControlServer
        do throws(ControlSocketError) {
            control = try ControlServer(path: configuration.socketPath) { request in
                guard let daemon = daemon.value else { return .failure("the daemon is starting", exitCode: 4) }
                return await daemon.handle(request)
            }
        } catch {
            await link.shutdown()
            throw .control(error)
        }
        var notifier: NewsNotifier?
        if let settings = configuration.notifications {
            do throws(NotificationError) {
                let bus = try await BlockingPool.shared.run { () throws(NotificationError) in
                    try NotificationBus(address: settings.busAddress)
                }
                notifier = NewsNotifier(
                    bus: bus, store: store, mountpoint: configuration.mountpoint,
                    loginCommand: configuration.loginCommand, minimumInterval: settings.minimumInterval,
                    logger: logger)
            } catch {
                logger.warning("no desktop notifications: \(error)")
            }
        }
        let started = CampusDaemon(
            configuration: configuration, store: store, link: link, mount: mount, indexer: indexer, control: control,
            notifier: notifier, logger: logger)
        daemon.value = started
        do throws(CampusMount.MountError) {
            // Mounting runs fusermount3 and waits for it.
            let service = configuration.serviceManager
            try await BlockingPool.shared.run { () throws(CampusMount.MountError) in
                try mount.start(
                    at: configuration.mountpoint, fileSystemName: fileSystemName(profile: configuration.profile),
                    exitOnSignals: true,
                    whenStopping: {
                        // On the thread that stops the mount, before it unmounts: the manager hears it first.
                        let message = "STOPPING=1\n" + ServiceManager.status("Unmounting \(configuration.mountpoint)")
                        if service?.send(message, waiting: true) == false {
                            logger.warning("the service manager did not take STOPPING=1 within 5 s")
                        }
                    })
            }
        } catch {
            control.stop()
            await started.closeNotifications()
            await link.shutdown()
            throw .mount(error)
        }
        if let notifier { Task { await notifier.handleServerChanges() } }
        await link.observe { [weak started] state, problem, loggedOut in
            started?.serverChanged(to: state, problem: problem, loggedOut: loggedOut)
        }
        mount.fileSystem.refreshCourses(
            with: CampusFileSystem.CourseRefreshing(
                listingTTL: configuration.listingTTL,
                inBackground: { [weak started] courseID in started?.refreshInBackground(courseID) },
                now: { [weak started] courseID in _ = await started?.refresh(courseIDs: [courseID]) }))
        if let (source, step) = firstStep {
            let fill = FirstFill(
                refresher: Self.refresher(configuration, store: store, source: source) { [weak started] done, total in
                    started?.refreshProgress.withLock { $0 = RefreshProgress(done: done, total: total) }
                    started?.statusChanges.yield()
                },
                step: step)
            mount.fileSystem.fetchBeforeListing(
                CampusFileSystem.FirstListings(pending: fill.pending, fetch: { await fill.course($0) }))
            // Before `campusfs mount` returns, so `status` shows the refresh from the start.
            started.refreshProgress.withLock { $0 = RefreshProgress(done: 0, total: step.courses.count) }
            started.fillInBackground(fill)
        }
        control.start()
        started.startPoller()
        Task { [weak started] in
            await started?.collect()
            await started?.indexCachedDocuments()
        }
        // A mount from the store: refresh at once rather than at the first poll, so `status` soon knows the server
        // and what changed while nothing was mounted shows without `campusfs refresh`; and wait a moment for the
        // server's first answer, so `campusfs mount` can say right away that the login was refused.
        if synced, !offline {
            Task { [weak started] in _ = await started?.refresh() }
            await started.waitForTheServer(patience: Self.loginCheckPatience)
        }
        await started.reportReady()
        return started
    }

    private init(
        configuration: DaemonConfiguration, store: MetadataStore, link: ServerLink, mount: CampusMount,
        indexer: ContentIndexer, control: ControlServer, notifier: NewsNotifier?, logger: Logger
    ) {
        self.configuration = configuration
        self.notifier = notifier
        (statusUpdates, statusChanges) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.store = store
        self.link = link
        self.mount = mount
        self.indexer = indexer
        self.control = control
        self.logger = logger
    }

    /// How long a mount from the store waits for the server's first answer before it reports ready anyway.
    static let loginCheckPatience = Duration.seconds(3)

    /// Returns once the server answered the first connection, a refresh failed, or `patience` is over.
    private func waitForTheServer(patience: Duration) async {
        let deadline = ContinuousClock.now + patience
        while await link.state == .unknown, lastRefresh.withLock({ $0.error }) == nil, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The FUSE fsname of a profile's mount, `campusfs:<profile>`: the mount table's source column then says
    /// whose mount it is, so `campusfs unmount` can leave other profiles' mounts alone.
    public static func fileSystemName(profile: String) -> String { "campusfs:" + profile }

    /// Waits until the mount ends: `campusfs unmount`, a termination signal, or an external `fusermount3 -u`.
    public func waitUntilUnmounted() async {
        await mount.waitUntilFinished()
    }

    /// Unmounts (if still mounted) and stops the poller, the control socket and the connections.
    public func shutdown() async {
        // Stopping waits up to 5 s for the FUSE loop: on a thread of its own, not a pool's.
        _ = await Self.onThread { [mount] in mount.stop() }
        poller.withLock { $0 }?.cancel()
        for task in serviceTasks.withLock({ $0 }) { task.cancel() }
        statusChanges.finish()
        control.stop()
        await closeNotifications()
        await link.shutdown()
    }

    private func closeNotifications() async {
        guard let notifier else { return }
        // Closing waits for the bus's signal thread to end.
        await BlockingPool.shared.run { notifier.close() }
    }

    // MARK: - The service manager and the desktop

    /// Says `READY=1` to the service manager once the mount answers a `stat` (its root is another device than the
    /// directory it covers), then keeps the status line current and the watchdog fed.
    private func reportReady() async {
        guard let service = configuration.serviceManager else { return }
        let mountpoint = configuration.mountpoint
        // Mounting waited for the kernel's INIT already; this is the promise READY=1 makes, checked as a client
        // sees it, for up to 10 s. A mount that never answers gets no READY=1: the unit's start then fails.
        var answers = false
        for _ in 0..<200 where !answers {
            answers = await BlockingPool.shared.run { () -> Bool in
                var root = stat()
                var covered = stat()
                return stat(mountpoint, &root) == 0 && stat(mountpoint + "/..", &covered) == 0
                    && root.st_dev != covered.st_dev
            }
            if !answers { try? await Task.sleep(for: .milliseconds(50)) }
        }
        guard answers else {
            logger.error("the mount at \(mountpoint) does not answer; not telling the service manager it is ready")
            service.send(ServiceManager.status("The mount at \(mountpoint) does not answer"))
            return
        }
        let line = await statusLine()
        service.send("READY=1\n" + ServiceManager.status(line))
        var tasks = [
            Task { [weak self, statusUpdates] in
                var last = line
                for await _ in statusUpdates {
                    guard let self else { return }
                    let now = await self.statusLine()
                    if now != last { service.send(ServiceManager.status(now)) }
                    last = now
                }
            }
        ]
        if let interval = service.watchdogInterval {
            // From a task: a ping proves that the cooperative pool, which every open and refresh needs, still runs.
            tasks.append(
                Task {
                    while !Task.isCancelled {
                        service.send("WATCHDOG=1")
                        try? await Task.sleep(for: interval)
                    }
                })
        }
        serviceTasks.withLock { $0 += tasks }
    }

    /// What `systemctl status` shows: the server's state, and what the last refresh found.
    func statusLine() async -> String {
        let last = lastRefresh.withLock { $0 }
        let problem = await link.problem
        var refreshed = ""
        if let at = last.at {
            let time = Self.clock.string(from: at)
            refreshed =
                "last refresh \(time)"
                + (last.found.map { ": \($0.added) new, \($0.changed) changed, \($0.removed) removed" } ?? "")
        }
        if let progress = refreshProgress.withLock({ $0 }) {
            refreshed += (refreshed.isEmpty ? "" : "; ") + "refreshing: \(progress.done) of \(progress.total) courses"
        }
        switch await link.state {
        case .unknown:
            return "Mounted at \(configuration.mountpoint); connecting to \(configuration.client.baseURL)"
        case .online:
            let api = await link.apiName.map { " (\($0))" } ?? ""
            return "Online\(api)" + (refreshed.isEmpty ? "" : "; \(refreshed)")
        case .offline:
            return "Offline: \(problem ?? "Stud.IP cannot be reached"); serving the cached tree"
                + (refreshed.isEmpty ? "" : "; \(refreshed)")
        case .loginNeeded:
            // The link's problem often says "login needed: …" itself.
            let reason = problem.map { $0.hasPrefix("login needed: ") ? String($0.dropFirst(14)) : $0 }
            return "Login needed: \(reason ?? "Stud.IP refused the login"); run \(configuration.loginCommand); "
                + "serving the cached tree"
        }
    }

    private static let clock: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm"
        return formatter
    }()

    /// The server link's state changed (on its actor: must not block).
    private func serverChanged(to state: DaemonStatus.Server, problem: String?, loggedOut: Bool) {
        statusChanges.yield()
        notifier?.serverChanged(to: state, problem: problem, loggedOut: loggedOut)
    }

    // MARK: - Control requests

    func handle(_ request: ControlRequest) async -> ControlResponse {
        switch request {
        case .status:
            return ControlResponse(status: await status())
        case .unmount:
            logger.info("unmount requested")
            // Answer first; stopping waits for the loop, so it runs on a thread of its own.
            Thread { [mount] in mount.stop() }.start()
            return .ok
        case .refresh(let path):
            let courseIDs: Set<String>?
            do throws(StoreError) {
                courseIDs = try await store.run { store throws(StoreError) in try store.courseIDs(below: path) }
            } catch {
                return .failure("\(path ?? "/"): \(error)", exitCode: 1)
            }
            switch await refresh(courseIDs: courseIDs) {
            case .success(let report):
                await revalidateOnOpen(courseIDs: courseIDs)
                return ControlResponse(refresh: RefreshOutcome(report))
            case .failure(let error): return .failure(error.description, exitCode: error.exitCode)
            }
        case .login(let given):
            guard given.isComplete else { return .failure("the login message is incomplete", exitCode: 4) }
            do throws(StudIPError) {
                try await link.use(given.credentials(storage: configuration.tokenStorage))
            } catch {
                return .failure(error.description, exitCode: error.exitCode)
            }
            logger.info("new login accepted")
            // What changed while the login was refused shows without waiting for the poller.
            Task { [self] in _ = await refresh() }
            return ControlResponse(status: await status())
        case .logout:
            await link.logOut()
            logger.info("logged out")
            return ControlResponse(status: await status())
        case .checkLogin:
            await link.checkLogin()
            return ControlResponse(status: await status())
        case .cache:
            let inventory = await mount.fileSystem.cache.inventory()
            do throws(StoreError) {
                return ControlResponse(
                    cache: try await store.run { store throws(StoreError) in
                        try CacheReport(inventory: inventory, store: store)
                    })
            } catch {
                return .failure(error.description, exitCode: 4)
            }
        case .cleanCache(let path, let olderThan):
            // The daemon cleans, not the command: only it knows which documents are open.
            let request: CleanRequest
            do throws(StoreError) {
                request = try await store.run { store throws(StoreError) in
                    try CleanRequest(store: store, path: path, olderThan: olderThan)
                }
            } catch {
                return .failure("\(path ?? "/"): \(error)", exitCode: 1)
            }
            return ControlResponse(clean: await mount.fileSystem.cache.clean(request))
        case .progress(let documents):
            return ControlResponse(progress: await mount.fileSystem.cache.inventory().progress(of: documents))
        case .index(let rebuild):
            if rebuild {
                do throws(StoreError) {
                    let queued = try await indexer.rebuild(from: await mount.fileSystem.cache.inventory())
                    logger.info("rebuilding the search index from \(queued) cached documents")
                } catch {
                    return .failure(error.description, exitCode: 4)
                }
            }
            guard let index = await indexStatus(measuringSize: true) else {
                return .failure("the search index cannot be read (see the daemon's log)", exitCode: 4)
            }
            return ControlResponse(index: index)
        }
    }

    /// After `campusfs refresh` (not the poller's refreshes), the next open of each cached document below what
    /// was refreshed asks the server whether its bytes are still current: a same-size new version shows in no
    /// listing (docs/mount.md, "Versions").
    private func revalidateOnOpen(courseIDs: Set<String>?) async {
        let cache = mount.fileSystem.cache
        guard let courseIDs else { return cache.requireRevalidation(of: nil) }
        do throws(StoreError) {
            cache.requireRevalidation(
                of: try await store.run { store throws(StoreError) in try store.documentIDs(inCourses: courseIDs) })
        } catch {
            logger.warning(
                "cannot list the refreshed courses' documents, so their cached copies are not asked: \(error)")
        }
    }

    /// Queues the cached documents whose text the index lacks: those cached before indexing existed, or whose
    /// indexing a crash or `kill` cut short.
    func indexCachedDocuments() async {
        do throws(StoreError) {
            let queued = try await indexer.enqueueUnindexed(in: await mount.fileSystem.cache.inventory())
            if queued > 0 { logger.info("indexing the text of \(queued) cached documents") }
        } catch {
            logger.warning("cannot read which documents are indexed: \(error)")
        }
    }

    private func indexStatus(measuringSize: Bool = false) async -> IndexStatus? {
        let statistics = try? await store.run { store throws(StoreError) in
            try store.indexStatistics(measuringSize: measuringSize)
        }
        return statistics.map { IndexStatus($0, waiting: indexer.waiting) }
    }

    /// Runs a long wait on a thread of its own: on the cooperative pool it would stall the mount's tasks, on the
    /// blocking pool the store's and the cache's work.
    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in Thread { continuation.resume(returning: body()) }.start() }
    }

    /// A refresh that failed because the server could not be reached or refused the login stops counting as
    /// "failed since" once any request succeeds again (a download, say), not only at the next refresh.
    public func status() async -> DaemonStatus {
        let usage = await mount.fileSystem.cache.usage()
        let last = lastRefresh.withLock { $0 }
        let (at, error) = (last.at, last.error)
        let server = await link.state
        let failure = error.flatMap { error -> String? in
            if case .studIP(let cause) = error, cause.concernsTheServer, server == .online { return nil }
            return error.description
        }
        return DaemonStatus(
            profile: configuration.profile, mountpoint: configuration.mountpoint, pid: getpid(),
            serverURL: configuration.client.baseURL, server: server, serverDetail: await link.problem,
            api: await link.apiName, lastRefresh: at ?? (try? store.syncState().lastOverviewAt),
            lastRefreshError: failure, failedCourses: last.failedCourses, cacheBytes: usage.bytes,
            cacheLimit: usage.limit, cachedDocuments: usage.count,
            downloadsInFlight: usage.downloadsInFlight, cacheDiskShortage: usage.diskShortage,
            refreshing: refreshProgress.withLock { $0 }, index: await indexStatus())
    }

    // MARK: - Refreshing

    /// Refreshes (everything, or some courses), then tells the kernel and the cache what changed.
    public func refresh(courseIDs: Set<String>? = nil) async -> Result<Refresher.Report, RefreshError> {
        await refreshes.withSlot { [self] () async -> Result<Refresher.Report, RefreshError> in
            let result: Result<Refresher.Report, RefreshError>
            do throws(RefreshError) {
                let source: any DocumentSource
                do throws(StudIPError) {
                    source = try await link.connected(retryingRefusedLogin: true)
                } catch {
                    throw .studIP(error)
                }
                let report = try await withDeadline(configuration.refreshTimeout) {
                    [self] () async throws(RefreshError) in
                    try await Self.refresher(configuration, store: store, source: source) { done, total in
                        self.refreshProgress.withLock { $0 = RefreshProgress(done: done, total: total) }
                    }.refresh(courseIDs: courseIDs)
                }
                await link.recordSuccess()
                result = .success(report)
            } catch {
                result = .failure(error)
            }
            refreshProgress.withLock { $0 = nil }
            switch result {
            case .success(let report):
                record(report)
                // Kernel invalidations write to /dev/fuse and wait for the kernel; re-pinning reads the store.
                await BlockingPool.shared.run { [mount] in mount.apply(report.summary) }
                // After the kernel heard of them, so a click on the notification finds the new documents listed.
                if let notifier { await notifier.refreshed(report.summary) }
                for sweep in report.summary.sweepingRemovals {
                    logger.warning(
                        """
                        Stud.IP removed \(sweep.removed) of the \(sweep.before) documents of \(sweep.course) at once; \
                        if that was a mistake on the server, their cached copies, tags and pins are kept for \
                        \(Self.days(configuration.removalGrace)) and come back with them
                        """)
                }
                // A whole-tree pass over the store and the cache: after full refreshes only, not after each
                // course a look into an old listing refreshes.
                if courseIDs == nil { await collect() }
                logger.info(
                    "refreshed: \(report.summary.added.count) new, \(report.summary.changed.count) changed, \(report.summary.removed.count) removed, \(report.requests) requests"
                )
            case .failure(let error):
                await recordFailure(error, logging: "refresh failed: \(error)")
            }
            return result
        } ?? .failure(.studIP(.cancelled))
    }

    /// Remembers a successful refresh for `status`, and logs every course it could not read.
    private func record(_ report: Refresher.Report) {
        let failed = report.failedCourses.map(\.message)
        let summary = report.summary
        lastRefresh.withLock {
            $0 = LastRefresh(
                at: Date(), error: nil, failedCourses: failed,
                found: (summary.added.count, summary.changed.count, summary.removed.count))
        }
        statusChanges.yield()
        for message in failed { logger.warning("course not refreshed: \(message)") }
    }

    /// Remembers a failed refresh for `status` (and the server link's state, for a server's answer) and logs it.
    private func recordFailure(_ error: RefreshError, logging message: String) async {
        if case .studIP(let studIPError) = error { await link.record(studIPError) }
        lastRefresh.withLock { $0.error = error }
        statusChanges.yield()
        logger.warning("\(message)")
    }

    /// Forgets what Stud.IP removed longer than ``DaemonConfiguration/removalGrace`` ago — its cached bytes, the
    /// user's tags, rating and pin — and deletes cached copies of documents the store does not know at all (left
    /// by a crash between a refresh and this collection). Runs once at start and after every full refresh (the
    /// poller's, `campusfs refresh` without a path).
    func collect(now: Date = Date()) async {
        let cache = mount.fileSystem.cache
        do throws(StoreError) {
            let grace = configuration.removalGrace.seconds
            let departed = try await store.run { store throws(StoreError) in
                try store.departed(before: now.addingTimeInterval(-grace))
            }
            let documents = departed.filter { $0.item == .document }.map(\.studipID)
            if !documents.isEmpty { await cache.remove(documentIDs: documents) }
            let known = try await store.run { store throws(StoreError) in
                try store.forget(departed)
                return try store.knownDocumentIDs()
            }
            let orphans = Set(await cache.inventory().copies.keys).subtracting(known)
            if !orphans.isEmpty { await cache.remove(documentIDs: orphans) }
            if !departed.isEmpty || !orphans.isEmpty {
                logger.info(
                    """
                    collected \(departed.count) items Stud.IP removed before the grace period and \
                    \(orphans.count) cached copies of unknown documents
                    """)
            }
        } catch {
            logger.warning("collecting removed documents failed: \(error)")
        }
    }

    private static func days(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        return seconds % 86_400 == 0 ? "\(seconds / 86_400) days" : "\(seconds) s"
    }

    /// The first refresh's courses, behind the mount; it holds the refresh slot, so `campusfs refresh` and the
    /// poller wait for it. The kernel hears only of the timetables: it has cached no course's listing before that
    /// course was stored, but may have cached a semester's listing before its timetable was.
    private func fillInBackground(_ fill: FirstFill) {
        Task { [self] in
            _ = await refreshes.withSlot { [self] in
                let result = await fill.run()
                refreshProgress.withLock { $0 = nil }
                mount.fileSystem.fetchBeforeListing(only: fill.pending)
                switch result {
                case .success(let (report, timetables)):
                    await link.recordSuccess()
                    record(report)
                    await BlockingPool.shared.run { [mount] in mount.apply(timetables) }
                    logger.info(
                        "first refresh: \(report.summary.added.count) items, \(report.requests) requests, \(report.failedCourses.count) courses not read"
                    )
                case .failure(let error):
                    await recordFailure(
                        error, logging: "first refresh failed: \(error); its courses are fetched when opened")
                }
            }
        }
    }

    /// Stale-while-revalidate: the listing was answered from the store; this brings the course up to date.
    private func refreshInBackground(_ courseID: String) {
        guard backgroundRefreshes.withLock({ $0.insert(courseID).inserted }) else { return }
        Task { [self] in
            _ = await refresh(courseIDs: [courseID])
            _ = backgroundRefreshes.withLock { $0.remove(courseID) }
        }
    }

    private func startPoller() {
        let interval = configuration.refreshInterval
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval + interval * Double.random(in: 0...0.1))
                guard !Task.isCancelled, let self else { return }
                _ = await self.refresh()
            }
        }
        poller.withLock { $0 = task }
    }

    private static func refresher(
        _ configuration: DaemonConfiguration, store: MetadataStore, source: any DocumentSource,
        progress: (@Sendable (Int, Int) -> Void)? = nil
    ) -> Refresher {
        Refresher(
            source: source, store: store, options: configuration.tree, semesters: configuration.semesters,
            courseFiles: configuration.courseFiles, progress: progress)
    }

    /// Runs `body`, cancelling it after `limit`: its requests end as cancelled, and the refresh reports that it
    /// took too long rather than that it was cancelled.
    private func withDeadline<T: Sendable>(
        _ limit: Duration, _ body: @escaping @Sendable () async throws(RefreshError) -> T
    ) async throws(RefreshError) -> T {
        let work = Task { () async -> Result<T, RefreshError> in
            do throws(RefreshError) {
                return .success(try await body())
            } catch {
                return .failure(error)
            }
        }
        let expired = Atomic<Bool>(false)
        let timer = Task {
            try? await Task.sleep(for: limit)
            guard !Task.isCancelled else { return }
            expired.store(true, ordering: .releasing)
            work.cancel()
        }
        let result = await work.value
        timer.cancel()
        if expired.load(ordering: .acquiring), case .failure = result { throw .tookTooLong(limit: limit) }
        return try result.get()
    }

    private static func connected(_ link: ServerLink) async throws(RefreshError) -> any DocumentSource {
        do throws(StudIPError) {
            return try await link.connected(retryingRefusedLogin: true)
        } catch {
            throw .studIP(error)
        }
    }
}

/// Lets the control socket's handler reach the daemon it is created before.
private final class Holder: Sendable {
    private let daemon = Mutex<CampusDaemon?>(nil)
    var value: CampusDaemon? {
        get { daemon.withLock { $0 } }
        set { daemon.withLock { $0 = newValue } }
    }
}
