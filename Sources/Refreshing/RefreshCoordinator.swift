import AsyncHelpers
import ContentCache
import ControlProtocol
import Foundation
import Logging
import MetadataStore
import StudIPKit
import StudIPModel
import Synchronization

/// Where the coordinator's refreshes get their connection, and what they tell it of the server's answers: the
/// daemon's server link (a refused login moves it to "login needed", a refresh that worked back online).
public protocol RefreshConnection: Sendable {
    func connected(retryingRefusedLogin: Bool) async throws(StudIPError) -> any DocumentSource
    func recordSuccess() async
    func record(_ error: StudIPError) async
}

extension RefreshConnection {
    /// The source a refresh reads, logging in again if the server refused the last login; its failure as a refresh's.
    public func connectedForRefresh() async throws(RefreshError) -> any DocumentSource {
        do throws(StudIPError) {
            return try await connected(retryingRefusedLogin: true)
        } catch {
            throw .studIP(error)
        }
    }
}

/// How a profile's refreshes are made: what its tree shows, how long one may take, how long what Stud.IP removed
/// is kept.
public struct RefreshSettings: Sendable {
    public var tree: TreeOptions
    /// Semester titles or ids to show; nil shows all.
    public var semesters: Set<String>?
    public var courseFiles: CourseFilesOptions
    /// The longest one refresh may take before it is stopped (what it applied stays).
    public var timeout: Duration
    /// How long the cached bytes and the user's tags and pins of what Stud.IP removed are kept, in case it comes
    /// back (a listing that was empty by mistake).
    public var removalGrace: Duration

    public init(
        tree: TreeOptions = TreeOptions(), semesters: Set<String>? = nil,
        courseFiles: CourseFilesOptions = CourseFilesOptions(), timeout: Duration = .seconds(600),
        removalGrace: Duration = .seconds(7 * 86_400)
    ) {
        self.tree = tree
        self.semesters = semesters
        self.courseFiles = courseFiles
        self.timeout = timeout
        self.removalGrace = removalGrace
    }

    /// A refresher of `store` from `source` with these settings.
    public func refresher(
        source: any DocumentSource, store: MetadataStore, progress: (@Sendable (Int, Int) -> Void)? = nil
    ) -> Refresher {
        Refresher(
            source: source, store: store, options: tree, semesters: semesters, courseFiles: courseFiles,
            progress: progress)
    }
}

/// Where a refresh's changes go besides the store. The daemon tells the kernel (its mount's invalidations) and the
/// desktop; tests record them.
public struct RefreshEffects: Sendable {
    /// Tells the kernel what changed; called once per refresh that worked, before ``announce``.
    public var invalidate: @Sendable (RefreshSummary) async -> Void
    /// The news for desktop notifications; not called for a first mount's fill (everything would be news).
    public var announce: @Sendable (RefreshSummary) async -> Void
    /// Something the status line shows changed: a refresh ended, or a first fill got further.
    public var statusChanged: @Sendable () -> Void
    /// A refresh or a first fill ended, worked or not, and everything it held is free: the daemon hands the freed
    /// memory back to the system (docs/performance.md, "Memory and order of a refresh").
    public var settled: @Sendable () async -> Void

    public init(
        invalidate: @escaping @Sendable (RefreshSummary) async -> Void,
        announce: @escaping @Sendable (RefreshSummary) async -> Void = { _ in },
        statusChanged: @escaping @Sendable () -> Void = {},
        settled: @escaping @Sendable () async -> Void = {}
    ) {
        self.invalidate = invalidate
        self.announce = announce
        self.statusChanged = statusChanged
        self.settled = settled
    }
}

/// A daemon's refreshes (docs/mount.md, "Refreshes"): the poller's, `campusfs refresh`'s, the stale-while-revalidate
/// ones a look into an old listing starts and a first mount's fill all run one at a time, so one refresh writes at a
/// time (FUSE handlers' user-state writes interleave, serialized by the store) and the kernel hears of each change
/// exactly once, from a task that holds no request handler's locks. Keeps what `status` shows of them.
public final class RefreshCoordinator: Sendable {
    public let store: MetadataStore
    public let cache: ContentCache
    public let settings: RefreshSettings
    private let connection: any RefreshConnection
    private let effects: RefreshEffects
    private let logger: Logger
    /// One refresh at a time, in the order asked for.
    private let slot = ConcurrencyLimiter(limit: 1)
    /// Courses with a background refresh pending, so that many looks into one old listing ask once.
    private let backgroundRefreshes = Mutex<Set<String>>([])
    private let poller = Mutex<Task<Void, Never>?>(nil)
    private let lastRecord = Mutex(Record())
    private let currentProgress = Mutex<RefreshProgress?>(nil)

    /// How the last refresh went, for `status`.
    public struct Record: Sendable {
        public var at: Date?
        public var error: RefreshError?
        /// Courses the last successful refresh could not read, with why.
        public var failedCourses: [String] = []
        /// What the last successful refresh found: new, changed and removed items.
        public var found: (added: Int, changed: Int, removed: Int)?
    }

    public init(
        store: MetadataStore, cache: ContentCache, connection: any RefreshConnection, settings: RefreshSettings,
        effects: RefreshEffects, logger: Logger
    ) {
        self.store = store
        self.cache = cache
        self.connection = connection
        self.settings = settings
        self.effects = effects
        self.logger = logger
    }

    /// How the last refresh went.
    public var last: Record { lastRecord.withLock { $0 } }

    /// How far the running refresh is; nil while none runs.
    public var progress: RefreshProgress? { currentProgress.withLock { $0 } }

    /// Refreshes (everything, or some courses), then tells the kernel and the desktop what changed.
    public func refresh(courseIDs: Set<String>? = nil) async -> Result<Refresher.Report, RefreshError> {
        await slot.withSlot { [self] () async -> Result<Refresher.Report, RefreshError> in
            let result: Result<Refresher.Report, RefreshError>
            do throws(RefreshError) {
                let source = try await connection.connectedForRefresh()
                let report = try await withDeadline(settings.timeout) { [self] () async throws(RefreshError) in
                    try await settings.refresher(source: source, store: store) { done, total in
                        self.currentProgress.withLock { $0 = RefreshProgress(done: done, total: total) }
                    }.refresh(courseIDs: courseIDs)
                }
                await connection.recordSuccess()
                result = .success(report)
            } catch {
                result = .failure(error)
            }
            currentProgress.withLock { $0 = nil }
            switch result {
            case .success(let report):
                record(report)
                await effects.invalidate(report.summary)
                // After the kernel heard of them, so a click on the notification finds the new documents listed.
                await effects.announce(report.summary)
                for sweep in report.summary.sweepingRemovals {
                    logger.warning(
                        """
                        Stud.IP removed \(sweep.removed) of the \(sweep.before) documents of \(sweep.course) at once; \
                        if that was a mistake on the server, their cached copies, tags and pins are kept for \
                        \(Self.days(settings.removalGrace)) and come back with them
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
            await effects.settled()
            return result
        } ?? .failure(.studIP(.cancelled))
    }

    /// Stale-while-revalidate: the listing was answered from the store; this brings the course up to date.
    public func refreshInBackground(_ courseID: String) {
        guard backgroundRefreshes.withLock({ $0.insert(courseID).inserted }) else { return }
        Task { [self] in
            _ = await refresh(courseIDs: [courseID])
            _ = backgroundRefreshes.withLock { $0.remove(courseID) }
        }
    }

    /// After `campusfs refresh` (not the poller's refreshes), the next open of each cached document below what
    /// was refreshed asks the server whether its bytes are still current: a same-size new version shows in no
    /// listing (docs/mount.md, "Versions").
    public func revalidateOnOpen(courseIDs: Set<String>?) async {
        guard let courseIDs else { return cache.requireRevalidation(of: nil) }
        do throws(StoreError) {
            cache.requireRevalidation(
                of: try await store.run { store throws(StoreError) in try store.documentIDs(inCourses: courseIDs) })
        } catch {
            logger.warning(
                "cannot list the refreshed courses' documents, so their cached copies are not asked: \(error)")
        }
    }

    /// The rest of a first refresh whose overview `step` stored, reading its courses from `source`.
    public func firstFill(source: any DocumentSource, step: Refresher.OverviewStep) -> FirstFill {
        FirstFill(
            refresher: settings.refresher(source: source, store: store) { [weak self] done, total in
                self?.currentProgress.withLock { $0 = RefreshProgress(done: done, total: total) }
                self?.effects.statusChanged()
            },
            step: step)
    }

    /// Runs `fill` behind the mount, holding the refresh slot, so `campusfs refresh` and the poller wait for it;
    /// `status` shows it from now on. The kernel hears only of what the fill stored last: it has cached no course's
    /// listing before that course's folders were stored, but may have cached it before its announcements and dates
    /// were, and a semester's listing before its timetable was.
    /// `finished` runs when the fill ends, before anything else is told.
    public func fillInBackground(_ fill: FirstFill, finished: @escaping @Sendable () -> Void) {
        currentProgress.withLock { $0 = RefreshProgress(done: 0, total: fill.courseCount) }
        Task { [self] in
            _ = await slot.withSlot { [self] in
                let result = await fill.run()
                currentProgress.withLock { $0 = nil }
                finished()
                switch result {
                case .success(let (report, late)):
                    await connection.recordSuccess()
                    record(report)
                    await effects.invalidate(late)
                    logger.info(
                        "first refresh: \(report.summary.added.count) items, \(report.requests) requests, \(report.failedCourses.count) courses not read"
                    )
                case .failure(let error):
                    await recordFailure(
                        error, logging: "first refresh failed: \(error); its courses are fetched when opened")
                }
                await effects.settled()
            }
        }
    }

    /// Refreshes everything every `interval` (with up to 10 % jitter) until ``stop()``.
    public func startPoller(every interval: Duration) {
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval + interval * Double.random(in: 0...0.1))
                guard !Task.isCancelled, let self else { return }
                _ = await self.refresh()
            }
        }
        poller.withLock { $0 = task }
    }

    /// Stops the poller.
    public func stop() {
        poller.withLock { $0 }?.cancel()
    }

    /// Forgets what Stud.IP removed longer than ``RefreshSettings/removalGrace`` ago — its cached bytes, the
    /// user's tags, rating and pin — and deletes cached copies of documents the store does not know at all (left
    /// by a crash between a refresh and this collection). Runs once at start and after every full refresh (the
    /// poller's, `campusfs refresh` without a path).
    public func collect(now: Date = Date()) async {
        do throws(StoreError) {
            let grace = settings.removalGrace.seconds
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

    /// Remembers a successful refresh for `status`, and logs every course it could not read.
    private func record(_ report: Refresher.Report) {
        let failed = report.failedCourses.map(\.message)
        let summary = report.summary
        lastRecord.withLock {
            $0 = Record(
                at: Date(), error: nil, failedCourses: failed,
                found: (summary.added.count, summary.changed.count, summary.removed.count))
        }
        effects.statusChanged()
        for message in failed { logger.warning("course not refreshed: \(message)") }
    }

    /// Remembers a failed refresh for `status` (and the server link's state, for a server's answer) and logs it.
    private func recordFailure(_ error: RefreshError, logging message: String) async {
        if case .studIP(let studIPError) = error { await connection.record(studIPError) }
        lastRecord.withLock { $0.error = error }
        effects.statusChanged()
        logger.warning("\(message)")
    }

    private static func days(_ duration: Duration) -> String {
        let seconds = duration.components.seconds
        return seconds % 86_400 == 0 ? "\(seconds / 86_400) days" : "\(seconds) s"
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
}
