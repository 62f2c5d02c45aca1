import CMalloc
import CampusFS
import ContentIndexing
import ControlProtocol
import Foundation
import Logging
import MetadataStore
import Refreshing
import StudIPKit
import StudIPModel
import SystemSupport
import Uploading

/// Why a daemon did not start; `exitCode` follows docs/architecture.md, "Exit codes".
public enum DaemonError: Error, Sendable, CustomStringConvertible {
    case store(StoreError)
    case firstRefresh(RefreshError)
    case control(ControlSocketError)
    case mount(CampusMount.MountError)
    /// The drafts of a profile that uploads could not be opened (docs/writing.md).
    case workspace(WorkspaceError)
    /// Offline (or `--offline`) and nothing was ever fetched for this profile.
    case nothingCached(detail: String)

    public var description: String {
        switch self {
        case .store(let error): "metadata store: \(error)"
        case .firstRefresh(let error): "the first refresh failed: \(error)"
        case .control(let error): error.description
        case .mount(let error): error.description
        case .workspace(let error): "the drafts and the outbox: \(error)"
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

/// One profile mounted and kept fresh (docs/mount.md, "Refreshes"): the composition of the FUSE mount, the server
/// link, the refresh coordinator (every refresh, one at a time), the control socket's handler and the status
/// reporter (`status`, the service manager, desktop notifications).
public final class CampusDaemon: Sendable {
    public let configuration: DaemonConfiguration
    public let store: MetadataStore
    public let link: ServerLink
    public let mount: CampusMount
    /// Extracts the text of what the cache holds into the search index, in the background.
    public let indexer: ContentIndexer
    private let refreshes: RefreshCoordinator
    private let reporter: StatusReporter
    private let control: ControlServer
    /// The outbox and the workspace's loops while uploads are on: cancelled at ``shutdown()``.
    private let writing: [Task<Void, Never>]
    private let logger: Logger

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
        returnLargeBlocksWhenFreed()
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
                let source = try await link.connectedForRefresh()
                let refresher = configuration.refreshSettings.refresher(source: source, store: store)
                firstStep = (source, try await refresher.refreshOverview())
            } catch {
                if !synced {
                    await link.shutdown()
                    if case .studIP(.unreachable(_, let detail)) = error { throw .nothingCached(detail: detail) }
                    throw .firstRefresh(error)
                }
                logger.warning("cannot go on with the first refresh: \(error); the stored tree is mounted")
            }
        }
        // Uploads on: the outbox and the drafts, before the mount that writes into them.
        var uploads: (desk: UploadDesk, workspace: Workspace)?
        if let settings = configuration.uploads {
            do throws(WorkspaceError) {
                uploads = try await UploadDesk.open(settings, store: store, link: link, logger: logger)
            } catch {
                await link.shutdown()
                throw .workspace(error)
            }
        }
        let mount: CampusMount
        // What extracting a batch freed goes back to the system, as after a refresh (`settled` below).
        let indexer = ContentIndexer(store: store, batchEnded: returnFreedMemory)
        var cacheConfiguration = configuration.cache
        cacheConfiguration.revalidationInterval = configuration.listingTTL
        cacheConfiguration.committed = { indexer.enqueue($0) }
        do throws(CampusMount.MountError) {
            // The cache's crash recovery reads and cleans its directory.
            let workspace = uploads?.workspace
            mount = try await BlockingPool.shared.run { [cacheConfiguration] () throws(CampusMount.MountError) in
                try CampusMount(
                    store: store, cacheDirectory: configuration.cacheDirectory, downloader: link,
                    cacheConfiguration: cacheConfiguration, workspace: workspace)
            }
        } catch {
            await link.shutdown()
            throw .mount(error)
        }
        // Bound before anything else is made: a daemon already serving the profile answers there.
        let control: ControlServer
        do throws(ControlSocketError) {
            control = try ControlServer(path: configuration.socketPath)
        } catch {
            await link.shutdown()
            throw .control(error)
        }
        let notifier = await NewsNotifier.connect(configuration, store: store, logger: logger)
        let changes = StatusReporter.changeStream()
        let refreshes = RefreshCoordinator(
            store: store, cache: mount.fileSystem.cache, connection: link, settings: configuration.refreshSettings,
            effects: RefreshEffects(
                // Kernel invalidations write to /dev/fuse and wait for the kernel; re-pinning reads the store.
                invalidate: { summary in await BlockingPool.shared.run { mount.apply(summary) } },
                announce: { summary in await notifier?.refreshed(summary) },
                statusChanged: { changes.continuation.yield() },
                // glibc keeps what a refresh freed in its arenas: 119 MB after a refresh of `huge`, 73 MB trimmed.
                settled: { await BlockingPool.shared.run(returnFreedMemory) }),
            logger: logger)
        let reporter = StatusReporter(
            identity: StatusReporter.Identity(
                profile: configuration.profile, mountpoint: configuration.mountpoint,
                serverURL: configuration.client.baseURL, loginCommand: configuration.loginCommand),
            store: store, link: link, cache: mount.fileSystem.cache, indexer: indexer, refreshes: refreshes,
            service: configuration.serviceManager, notifier: notifier, uploads: uploads?.desk, changes: changes,
            logger: logger)
        let handler = ControlHandler(
            store: store, link: link, cache: mount.fileSystem.cache, indexer: indexer, refreshes: refreshes,
            reporter: reporter, uploads: uploads?.desk, tokenStorage: configuration.tokenStorage,
            // Answer first; stopping waits for the loop, so it runs on a thread of its own.
            unmount: { Thread { mount.stop() }.start() }, logger: logger)
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
            await reporter.stop()
            await link.shutdown()
            throw .mount(error)
        }
        var writing: [Task<Void, Never>] = []
        if let (desk, workspace) = uploads {
            // A confirmed draft stays until a refresh of its course worked and lists what Stud.IP made of it: the
            // refresh as a whole, and this course's listing in it.
            workspace.refreshCourses { [weak refreshes] courseID in
                guard case .success(let report) = await refreshes?.refresh(courseIDs: [courseID]) else { return false }
                return !report.failedCourses.contains { $0.itemID == courseID }
            }
            desk.whenSettled { entry, outcome, settlement in
                await workspace.settled(entry, outcome)
                await notifier?.outboxSettled(OutboxItem(entry), settlement)
                reporter.statusChanged()
            }
            writing = [Task { await desk.outbox.run() }, Task { await workspace.run() }]
        }
        let daemon = CampusDaemon(
            configuration: configuration, store: store, link: link, mount: mount, indexer: indexer,
            refreshes: refreshes, reporter: reporter, control: control, writing: writing, logger: logger)
        await reporter.observeTheServer()
        mount.fileSystem.refreshCourses(
            with: CampusFileSystem.CourseRefreshing(
                listingTTL: configuration.listingTTL,
                inBackground: { [weak refreshes] in refreshes?.refreshInBackground($0) },
                now: { [weak refreshes] in _ = await refreshes?.refresh(courseIDs: [$0]) }))
        if let (source, step) = firstStep {
            let fill = refreshes.firstFill(source: source, step: step)
            mount.fileSystem.fetchBeforeListing(
                CampusFileSystem.FirstListings(pending: fill.pending, fetch: { await fill.course($0) }))
            // Progress from now, before `campusfs mount` returns, so `status` shows the refresh from the start.
            refreshes.fillInBackground(fill) { mount.fileSystem.fetchBeforeListing(only: fill.pending) }
        }
        control.start(handling: handler.handle)
        refreshes.startPoller(every: configuration.refreshInterval)
        Task {
            await refreshes.collect()
            await daemon.indexCachedDocuments()
        }
        // A mount from the store: refresh at once rather than at the first poll, so `status` soon knows the server
        // and what changed while nothing was mounted shows without `campusfs refresh`; and wait a moment for the
        // server's first answer, so `campusfs mount` can say right away that the login was refused.
        if synced, !offline {
            Task { _ = await refreshes.refresh() }
            await daemon.waitForTheServer(patience: Self.loginCheckPatience)
        }
        await reporter.reportReady()
        return daemon
    }

    /// glibc serves a block below its mmap threshold from an arena, and raises the threshold to the size of each
    /// mapped block freed (up to 32 MiB), the heap's trim threshold to twice that. After root's reads and downloads,
    /// freed blocks of 1-3.4 MiB stayed resident in the daemon's 16 arenas between small live ones: 98 of 107 MB of
    /// arena memory was free before root's `campusfs index --rebuild` in `Scripts/bench` (docs/performance.md,
    /// "Root's indexing RSS"). Fixed at 2 MiB, both stop moving: libfuse's 1 MiB reply buffer (root's 1 MiB READs
    /// when the reply cannot be spliced) is still reused from an arena without page faults, each heap keeps at most
    /// 2 MiB free at its top, and larger blocks are mapped on their own and unmapped when freed.
    static func returnLargeBlocksWhenFreed() {
        _ = mallopt(M_MMAP_THRESHOLD, 2 << 20)
        _ = mallopt(M_TRIM_THRESHOLD, 2 << 20)
    }

    /// Hands what glibc keeps free in its arenas back to the system (after a refresh, after a batch of extractions).
    @Sendable static func returnFreedMemory() {
        _ = malloc_trim(0)
    }

    private init(
        configuration: DaemonConfiguration, store: MetadataStore, link: ServerLink, mount: CampusMount,
        indexer: ContentIndexer, refreshes: RefreshCoordinator, reporter: StatusReporter, control: ControlServer,
        writing: [Task<Void, Never>], logger: Logger
    ) {
        self.configuration = configuration
        self.store = store
        self.link = link
        self.mount = mount
        self.indexer = indexer
        self.refreshes = refreshes
        self.reporter = reporter
        self.control = control
        self.writing = writing
        self.logger = logger
    }

    /// How long a mount from the store waits for the server's first answer before it reports ready anyway.
    static let loginCheckPatience = Duration.seconds(3)

    /// Returns once the server answered the first connection, a refresh failed, or `patience` is over.
    private func waitForTheServer(patience: Duration) async {
        let deadline = ContinuousClock.now + patience
        while await link.state == .unknown, refreshes.last.error == nil, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// The FUSE fsname of a profile's mount, `campusfs:<profile>`: the mount table's source column then says
    /// whose mount it is, so `campusfs unmount` can leave other profiles' mounts alone.
    public static func fileSystemName(profile: String) -> String { "campusfs:" + profile }

    /// What `campusfs status` shows.
    public func status() async -> DaemonStatus { await reporter.status() }

    /// Waits until the mount ends: `campusfs unmount`, a termination signal, or an external `fusermount3 -u`.
    public func waitUntilUnmounted() async {
        await mount.waitUntilFinished()
    }

    /// Unmounts (if still mounted) and stops the poller, the control socket and the connections.
    public func shutdown() async {
        // Stopping waits up to 5 s for the FUSE loop: on a thread of its own, not a pool's.
        _ = await Self.onThread { [mount] in mount.stop() }
        // What is queued stays in the outbox (on disk) for the next mount; an upload cut short is checked then.
        for task in writing { task.cancel() }
        for task in writing { await task.value }
        refreshes.stop()
        indexer.stop()
        control.stop()
        await reporter.stop()
        await link.shutdown()
    }

    /// Queues the cached documents whose text the index lacks: those cached before indexing existed, or whose
    /// indexing a crash or `kill` cut short.
    private func indexCachedDocuments() async {
        do throws(StoreError) {
            let queued = try await indexer.enqueueUnindexed(in: await mount.fileSystem.cache.inventory())
            if queued > 0 { logger.info("indexing the text of \(queued) cached documents") }
        } catch {
            logger.warning("cannot read which documents are indexed: \(error)")
        }
    }

    /// Runs a long wait on a thread of its own: on the cooperative pool it would stall the mount's tasks, on the
    /// blocking pool the store's and the cache's work.
    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in Thread { continuation.resume(returning: body()) }.start() }
    }

}

extension ServerLink: RefreshConnection {}
