import Foundation
import Glibc
import Logging
import StudIPKit
import Synchronization
import SystemSupport

/// Document blobs on disk, download coordination and eviction (docs/architecture.md, "Promises"): one blob per document
/// version under the profile's cache directory (layout: ``CacheLayout``).
///
/// Concurrency model: the actor owns the bookkeeping — the index of completed blobs, the downloads in flight (at
/// most one per document, which is what coalesces concurrent opens), open handles, pins and LRU order — and
/// every change to the directory's committed state (sidecars, eviction, removal) happens on it, so those
/// decisions never race. The index and the open claims sit in a `Mutex` (``Book``) that the actor changes in one
/// locked step per decision, so that ``openCached(_:revalidate:)`` — an open of a cached current version, the one
/// a `grep -r` makes thousands of times — claims a blob on the FUSE worker that asked, without a task or a hop. The
/// expensive work stays off it: each download runs in its own task (``DownloadJob``), and reads never touch the actor:
/// ``withAvailableRange(_:offset:length:_:)`` and ``read(_:offset:length:)`` are `nonisolated` and go from the handle
/// to `pread`; only the second waits, on the download's ``Transfer`` (a `Mutex` plus continuations), when the range has
/// not arrived yet. Every system call on the cache directory that a task makes (open, `pread`, `pwrite`, `fsync`,
/// `unlink`, `statvfs`) runs on ``ContentCacheConfiguration/pool`` (``BlockingPool/shared`` unless a test gives it
/// its own), never on the actor's or another task's thread; the actor decides and updates its bookkeeping first and
/// checks it again after each such hop, because other calls run meanwhile. Downloads are unstructured tasks, not
/// children of the first opener, so a cancelled open does not cancel a download others share;
/// ``remove(documentIDs:)`` cancels them.
public actor ContentCache {
    /// The `pwrite`s of download bodies since the cache opened (``BodyWriter``: one per batch, not per chunk).
    nonisolated let bodyWrites = Counter()

    private struct Indexed {
        var entry: CacheEntry
        /// A logical clock: larger is more recent. Persisted as the blob's mtime.
        var lastAccess: UInt64
        /// The same in wall-clock time, for `campusfs cache clean --older-than`.
        var lastUsed: Date
        /// When the server last confirmed these bytes (download or 304); nil after a restart, so the first open
        /// asks again.
        var validatedAt: ContinuousClock.Instant?
    }

    private struct Active {
        let transfer: Transfer
        let task: Task<Void, Never>
        var deadline: Task<Void, Never>
    }

    private enum Source {
        case blob(CacheEntry, Descriptor)
        case transfer(Transfer)
    }

    /// What an open needs to know and change, shared by the actor and ``openCached(_:revalidate:)``.
    private struct Book {
        var index: [String: Indexed] = [:]
        var openHandles: [UInt64: String] = [:]
        var openCounts: [String: Int] = [:]
        var accessClock: UInt64 = 0
        var lastHandleID: UInt64 = 0
        /// The documents of ``ContentCache/transfers``: none of them is served without the actor.
        var downloading: Set<String> = []

        mutating func tick() -> UInt64 {
            accessClock += 1
            return accessClock
        }

        /// Claims `documentID` for a new handle and returns the handle's id.
        mutating func claim(_ documentID: String) -> UInt64 {
            openCounts[documentID, default: 0] += 1
            lastHandleID += 1
            openHandles[lastHandleID] = documentID
            return lastHandleID
        }

        mutating func releaseClaim(_ documentID: String) {
            let remaining = openCounts[documentID, default: 1] - 1
            openCounts[documentID] = remaining > 0 ? remaining : nil
        }

        /// Marks a cached copy used now, for LRU eviction and `cache clean --older-than`.
        mutating func touch(_ documentID: String) {
            let clock = tick()
            index[documentID]?.lastAccess = clock
            index[documentID]?.lastUsed = Date()
        }
    }

    private let layout: CacheLayout
    private let downloader: any DocumentDownloader
    private let configuration: ContentCacheConfiguration
    /// ``ContentCacheConfiguration/pool``.
    nonisolated var pool: BlockingPool { configuration.pool }
    private let logger: Logger
    private let book = Mutex(Book())
    private var transfers: [String: Active] = [:]
    /// Partial downloads a previous run left with a valid range map, by document: the next open of that version
    /// resumes them (docs/ranges.md, "In the cache").
    private var keptPartials: [String: PartialMap] = [:]
    /// Whether the downloader answers byte ranges; learnt once per cache lifetime.
    private let rangeSupport = RangeSupport()
    private var pinned: Set<String> = []
    private var diskShortage: DiskShortage?

    /// Opens (creating it with mode 0700) the cache directory and recovers from a crash: only blobs with a matching
    /// sidecar and partial downloads with a valid range map are kept; the next open of a partial's version resumes it.
    public init(
        directory: String, downloader: any DocumentDownloader, configuration: ContentCacheConfiguration = .init(),
        logger: Logger = Logger(label: "campusfs.content-cache")
    ) throws(ContentCacheError) {
        layout = try CacheLayout(root: directory)
        self.downloader = downloader
        self.configuration = configuration
        self.logger = logger
        let (entries, partials) = layout.recover()
        keptPartials = Dictionary(partials.map { ($0.documentID, $0) }) { first, _ in first }
        let recovered = entries.sorted {
            ($0.lastAccess.tv_sec, $0.lastAccess.tv_nsec) < ($1.lastAccess.tv_sec, $1.lastAccess.tv_nsec)
        }
        book.withLock { book in
            for (position, item) in recovered.enumerated() {
                book.index[item.entry.documentID] = Indexed(
                    entry: item.entry, lastAccess: UInt64(position + 1), lastUsed: CacheLayout.date(item.lastAccess))
            }
            book.accessClock = UInt64(recovered.count)
        }
    }

    /// Opens a document for reading. A cached current version is served from its blob; otherwise this starts or
    /// joins the one download of that version and returns as soon as the server has answered (within
    /// ``ContentCacheConfiguration/startDeadline``), while the body keeps streaming in. When the server cannot be
    /// reached and an older version is cached, that version is served (see ``ContentHandle/version``).
    ///
    /// A cached current version with an `ETag` that the server has not confirmed for
    /// ``ContentCacheConfiguration/revalidationInterval`` is revalidated first (`If-None-Match`): a 304 serves the
    /// blob, new bytes replace it. While the downloader knows the server is unreachable or refusing the login, or
    /// when it fails to answer, the blob is served as it is: revalidation never makes an offline open wait or fail.
    /// Without `revalidate` (a scan reading everything), a cached current version is served as it is.
    public func open(_ document: CacheDocument, revalidate: Bool = true) async throws(ContentCacheError)
        -> ContentHandle
    {
        // Claimed from the start, so an eviction while this waits cannot take the blob it gets.
        let id = book.withLock { $0.claim(document.id) }
        let source: Source
        do throws(ContentCacheError) {
            source = try await acquire(document, allowStale: true, revalidate: revalidate)
        } catch {
            release(id: id)
            throw error
        }
        switch source {
        case .blob(let entry, let descriptor):
            return ContentHandle(
                id: id, documentID: entry.documentID, version: entry.version, contentID: entry.blob,
                size: entry.size, descriptor: descriptor, transfer: nil, storedETag: entry.etag)
        case .transfer(let transfer):
            return ContentHandle(
                id: id, documentID: document.id, version: document.version, contentID: transfer.blob,
                size: document.size, descriptor: transfer.descriptor, transfer: transfer)
        }
    }

    /// ``open(_:revalidate:)`` of a cached current version, on the calling thread and without the actor; nil when
    /// the open needs the actor: nothing or another version cached, a download of the document running, the copy
    /// due for revalidation (with `revalidate`), or its blob deleted from the directory. It blocks on `open(2)`:
    /// call it from a thread that may block (a FUSE worker), never from Swift's cooperative pool.
    public nonisolated func openCached(_ document: CacheDocument, revalidate: Bool = true) -> ContentHandle? {
        let configuration = configuration
        let claimed = book.withLock { book -> (UInt64, CacheEntry)? in
            guard !book.downloading.contains(document.id), let cached = book.index[document.id],
                cached.entry.version == document.version,
                !revalidate || !Self.needsRevalidation(cached, configuration)
            else { return nil }
            book.touch(document.id)
            return (book.claim(document.id), cached.entry)
        }
        guard let (id, entry) = claimed else { return nil }
        guard let descriptor = try? Descriptor.open(layout.blobPath(entry.blob), flags: O_RDONLY) else {
            // Deleted from the directory (docs/architecture.md, "Paths", allows it): the actor's path finds out and
            // forgets it.
            release(id: id)
            return nil
        }
        descriptor.markAccessed()
        return ContentHandle(
            id: id, documentID: entry.documentID, version: entry.version, contentID: entry.blob, size: entry.size,
            descriptor: descriptor, transfer: nil, storedETag: entry.etag)
    }

    /// Reads like `pread(2)`: short or empty past the end. Waits (suspending, never blocking a thread) until the
    /// range is on disk, and throws if the download fails before reaching it.
    public nonisolated func read(
        _ handle: ContentHandle, offset: Int64, length: Int
    ) async throws(ContentCacheError) -> [UInt8] {
        try await handle.read(offset: offset, length: length, on: pool)
    }

    /// Lends `send` the handle's descriptor when the range is on disk now, with how many of the `length` bytes
    /// from `offset` the file holds (0 past the end), so a FUSE reply takes them from the file without a copy
    /// through Swift; nil, without calling `send`, while the download has not written the range yet. The
    /// descriptor is open until `send` returns. Reading it blocks on disk I/O, so call this from threads that may
    /// block (the FUSE loop's workers), never from Swift's cooperative pool.
    public nonisolated func withAvailableRange<Result>(
        _ handle: ContentHandle, offset: Int64, length: Int, _ send: (_ descriptor: Int32, _ count: Int) -> Result
    ) -> Result? {
        handle.withAvailableRange(offset: offset, length: length, send)
    }

    /// Ends a handle's claim on its document (evictable again once no handle is left). Idempotent; needs no actor,
    /// so a `close` costs no task.
    public nonisolated func release(_ handle: ContentHandle) {
        release(id: handle.id)
    }

    private nonisolated func release(id: UInt64) {
        book.withLock { book in
            guard let documentID = book.openHandles.removeValue(forKey: id) else { return }
            book.releaseClaim(documentID)
        }
    }

    /// Makes sure the current version is cached, downloading it if needed, without opening it (pins).
    public func prefetch(_ document: CacheDocument) async throws(ContentCacheError) {
        if case .transfer(let transfer) = try await acquire(document, allowStale: false, revalidate: false) {
            try await transfer.awaitEnd()
        }
    }

    /// Makes the next open of each cached copy of `documentIDs` (nil: of every document) ask the server first, as
    /// one past the revalidation interval does: `campusfs refresh` means "what is on Stud.IP now", and a new version
    /// of the same size changes nothing a listing shows (docs/mount.md, "Versions"). Scans still do not ask.
    public nonisolated func requireRevalidation(of documentIDs: Set<String>?) {
        book.withLock { book in
            guard let documentIDs else {
                for id in book.index.keys { book.index[id]?.validatedAt = nil }
                return
            }
            for id in documentIDs { book.index[id]?.validatedAt = nil }
        }
    }

    /// The length of the cached copy of `documentID`, nil when none is cached: what `stat` shows of a document whose
    /// metadata says 0 bytes, which for one hosted elsewhere means "unknown" (``DownloadJob``).
    public nonisolated func cachedSize(of documentID: String) -> Int64? {
        book.withLock { $0.index[documentID]?.entry.size }
    }

    /// The `ETag` the cached copy of `document`'s version came with, nil when that version is not cached or came
    /// without one: what a draft saved over the document started from, which the outbox compares with Stud.IP's
    /// before a new version (docs/writing.md, "The outbox").
    public nonisolated func cachedETag(of document: CacheDocument) -> String? {
        book.withLock { book in
            book.index[document.id].flatMap { $0.entry.version == document.version ? $0.entry.etag : nil }
        }
    }

    /// `user.campusfs.state` for a document whose metadata names `currentVersion`.
    public func state(of documentID: String, currentVersion: String) -> DocumentCacheState {
        if activeTransfer(documentID) != nil { return .downloading }
        guard let cached = book.withLock({ $0.index[documentID] }) else { return .remote }
        return cached.entry.version == currentVersion ? .cached : .stale
    }

    /// Pinned documents are never evicted. Pins live in the metadata store; the filesystem repeats them here
    /// after a start.
    public func setPinned(_ documentID: String, _ isPinned: Bool) {
        if isPinned { pinned.insert(documentID) } else { pinned.remove(documentID) }
    }

    /// Drops documents deleted online: their blobs and any download in flight. Open handles keep reading the
    /// unlinked file until released.
    public func remove(documentIDs: some Sequence<String>) async {
        var entries: [CacheEntry] = []
        var partials: [String] = []
        var kept: [PartialMap] = []
        var ended: [Transfer] = []
        for documentID in documentIDs {
            if let active = transfers.removeValue(forKey: documentID) {
                active.task.cancel()
                active.deadline.cancel()
                // Cancels its range fetches too.
                active.transfer.finish(.failed(.cancelled))
                partials += partialPaths(active.transfer)
                ended.append(active.transfer)
            }
            if let partial = keptPartials.removeValue(forKey: documentID) { kept.append(partial) }
            let removed = book.withLock { book in
                book.downloading.remove(documentID)
                return book.index.removeValue(forKey: documentID)
            }
            if let removed { entries.append(removed.entry) }
        }
        for transfer in ended { await transfer.closeCheckpoints() }
        await delete(entries: entries, partials: kept, paths: partials)
    }

    public func usage() -> CacheUsage {
        CacheUsage(
            bytes: cachedBytes(), count: book.withLock { $0.index.count }, limit: configuration.sizeLimit,
            downloadsInFlight: transfers.count,
            diskShortage: diskShortage)
    }

    /// What is cached and downloading now.
    public func inventory() -> CacheInventory {
        CacheInventory(
            copies: book.withLock { $0.index }.mapValues { layout.copy($0.entry, lastUsed: $0.lastUsed) },
            downloading: transfers.compactMapValues { active in
                let transfer = active.transfer
                guard !transfer.phase.isTerminal else { return nil }
                return CacheInventory.Partial(version: transfer.document.version, bytes: transfer.received)
            }.merging(keptPartials.mapValues(CacheInventory.Partial.init)) { active, _ in active },
            limit: configuration.sizeLimit)
    }

    /// Removes the cached copies `request` selects, never one that is pinned, open or downloading
    /// (`campusfs cache clean`). The documents download again when opened.
    public func clean(_ request: CleanRequest) async -> CleanResult {
        var result = CleanResult()
        var removed: [CacheEntry] = []
        let now = Date()
        // One locked step: an open on a FUSE worker either claimed a copy before (it stays) or finds it gone.
        book.withLock { book in
            for (id, cached) in book.index where request.documentIDs?.contains(id) ?? true {
                let copy = layout.copy(cached.entry, lastUsed: cached.lastUsed)
                let isPinned = pinned.contains(id) || request.pinned.contains(id)
                let isOpen = book.openCounts[id] != nil || transfers[id] != nil
                guard request.removes(copy, isPinned: isPinned, isOpen: isOpen, now: now, counting: &result) else {
                    continue
                }
                book.index[id] = nil
                removed.append(cached.entry)
                logger.debug("cleaned", metadata: ["document": "\(id)"])
            }
        }
        // Partial downloads left by a previous run go too (their bytes counted as freed), unless pinned.
        var partials: [PartialMap] = []
        for (id, partial) in keptPartials where request.documentIDs?.contains(id) ?? true {
            guard !pinned.contains(id), !request.pinned.contains(id) else { continue }
            keptPartials[id] = nil
            partials.append(partial)
            result.freedBytes += ByteRanges(partial.ranges).count
        }
        await delete(entries: removed, partials: partials)
        return result
    }

    /// Evicts least recently used blobs while the cache exceeds its size limit or the disk has less than the
    /// minimum free space, skipping open, pinned and downloading documents. Returns how many were evicted.
    @discardableResult
    public func evict() async -> Int {
        let free = await pool.run { [layout] in layout.freeSpace() }
        let (evicted, partials) = evictFromIndex(free: free)
        await delete(entries: evicted, partials: partials)
        return evicted.count
    }

    /// ``evict()``'s decision, given the free space measured just before: drops the evicted entries from the
    /// index and returns them, for their files to be deleted. Partial downloads a previous run left go first: nobody
    /// used them since.
    private func evictFromIndex(free measured: Int64?) -> (entries: [CacheEntry], partials: [PartialMap]) {
        var free = measured ?? .max
        let partialBytes = keptPartials.values.reduce(0) { $0 + ByteRanges($1.ranges).count }
        var bytes = cachedBytes() + partialBytes
        func needed() -> Bool { bytes > configuration.sizeLimit || free < configuration.minimumFreeSpace }
        guard needed() else {
            diskShortage = nil
            return ([], [])
        }
        let partials = Array(keptPartials.values)
        keptPartials = [:]
        bytes -= partialBytes
        free = free > .max - partialBytes ? .max : free + partialBytes
        var evicted: [CacheEntry] = []
        // One locked step, as in clean(_:).
        book.withLock { book in
            let candidates = book.index.values.filter {
                let id = $0.entry.documentID
                return !pinned.contains(id) && book.openCounts[id] == nil && transfers[id] == nil
            }
            for candidate in candidates.sorted(by: { $0.lastAccess < $1.lastAccess }) where needed() {
                book.index[candidate.entry.documentID] = nil
                evicted.append(candidate.entry)
                bytes -= candidate.entry.size
                free = free > .max - candidate.entry.size ? .max : free + candidate.entry.size
                logger.debug("evicted", metadata: ["document": "\(candidate.entry.documentID)"])
            }
        }
        noteDiskShortage(free: free)
        return (evicted, partials)
    }

    /// Remembers (for `status`) and logs once when even evicting everything evictable leaves less than the minimum
    /// free space: from then on each download evicts every other cached document, which must not go unnoticed.
    private func noteDiskShortage(free: Int64) {
        guard free < configuration.minimumFreeSpace else {
            diskShortage = nil
            return
        }
        if diskShortage == nil {
            logger.warning(
                """
                the cache's disk has only \(free) bytes free, less than the \(configuration.minimumFreeSpace) \
                CampusFS keeps free: each download now evicts the other cached documents; free space on that disk
                """)
        }
        diskShortage = DiskShortage(free: free, keptFree: configuration.minimumFreeSpace)
    }

    // MARK: - Download coordination

    /// Loops until the current version is cached (and, with `revalidate`, confirmed within the interval) or its
    /// download has started, starting it if nobody has.
    private func acquire(
        _ document: CacheDocument, allowStale: Bool, revalidate: Bool
    ) async throws(ContentCacheError) -> Source {
        var revalidate = revalidate
        while true {
            if Task.isCancelled { throw .cancelled }
            if let transfer = activeTransfer(document.id) {
                guard transfer.document.version == document.version else {
                    try? await transfer.awaitEnd()
                    continue
                }
                // Every byte is on disk and the commit is under way (its fsyncs run on the blocking pool): wait for
                // it, so this open sees the committed blob, with its validators, like any cached one.
                if transfer.hasBytes(0..<document.size), (try? await transfer.awaitEnd()) != nil { continue }
                switch await transfer.awaitStart() {
                case .streaming, .completed:
                    return .transfer(transfer)
                case .failed(let error):
                    let isCurrent = book.withLock { $0.index[document.id]?.entry.version == document.version }
                    if allowStale, isCurrent ? error.allowsCachedCopy : error.isOffline,
                        let cached = try await openBlob(document.id)
                    {
                        return cached
                    }
                    throw error
                case .starting, .validating, .notModified:
                    continue
                }
            }
            if let cached = book.withLock({ $0.index[document.id] }), cached.entry.version == document.version {
                if revalidate, Self.needsRevalidation(cached, configuration) {
                    // Asked only when it matters, so warm opens cost no hop to the downloader; the state may change
                    // while this waits, hence the loop.
                    revalidate = !(await downloader.isKnownUnavailable)
                    if revalidate {
                        try await startTransfer(document)
                        revalidate = false
                    }
                    continue
                }
                if let source = try await openBlob(document.id) { return source }
            }
            try await startTransfer(document)
        }
    }

    /// A blob with an `ETag` the server has not confirmed within the revalidation interval.
    private static func needsRevalidation(_ cached: Indexed, _ configuration: ContentCacheConfiguration) -> Bool {
        guard cached.entry.etag != nil, let interval = configuration.revalidationInterval else { return false }
        guard let validatedAt = cached.validatedAt else { return true }
        return validatedAt.duration(to: .now) >= interval
    }

    /// Opens the indexed blob and marks it accessed; forgets it (nil) when someone deleted it from the cache
    /// directory, which docs/architecture.md, "Paths", allows at any time.
    private func openBlob(_ documentID: String) async throws(ContentCacheError) -> Source? {
        guard let cached = book.withLock({ $0.index[documentID] }) else { return nil }
        let path = layout.blobPath(cached.entry.blob)
        let descriptor: Descriptor
        do throws(ContentCacheError) {
            descriptor = try await pool.run { () throws(ContentCacheError) in
                let descriptor = try Descriptor.open(path, flags: O_RDONLY)
                descriptor.markAccessed()
                return descriptor
            }
        } catch .io(_, _, ENOENT) {
            book.withLock { book in
                if book.index[documentID]?.entry.blob == cached.entry.blob { book.index[documentID] = nil }
            }
            return nil
        }
        // Replaced or removed while it was opened: look again.
        let unchanged = book.withLock { book in
            guard book.index[documentID]?.entry.blob == cached.entry.blob else { return false }
            book.touch(documentID)
            return true
        }
        guard unchanged else { return try await openBlob(documentID) }
        return .blob(cached.entry, descriptor)
    }

    /// Starts the download unless another open started it while the sparse file was being created. A partial download
    /// of this version that a previous run left is resumed (its bytes are served at once); one of another version
    /// is deleted.
    private func startTransfer(_ document: CacheDocument) async throws(ContentCacheError) {
        let key = try CacheLayout.key(for: document.id)
        // The partial stays in keptPartials until its transfer is registered, so a job that ends meanwhile (one the
        // start deadline failed) leaves its file alone; the loop in acquire asks again when this returns without one.
        if let partial = keptPartials[document.id] {
            if partial.version == document.version, partial.size == document.size,
                let descriptor = try? await pool.run({ [layout] () throws(ContentCacheError) in
                    try Descriptor.open(layout.partialPath(partial.file), flags: O_RDWR)
                })
            {
                guard activeTransfer(document.id) == nil, keptPartials[document.id]?.file == partial.file else {
                    return
                }
                keptPartials[document.id] = nil
                return begin(
                    Transfer(
                        document: document, blob: partial.file, temporaryPath: layout.partialPath(partial.file),
                        descriptor: descriptor, fetcher: fetcher, present: ByteRanges(partial.ranges),
                        resumedETag: partial.etag))
            }
            // Another version's, or its file is gone.
            guard keptPartials[document.id]?.file == partial.file else { return }
            keptPartials[document.id] = nil
            await delete(partials: [partial])
        }
        let (blob, temporaryPath) = layout.newDownload(key: key)
        let descriptor = try await pool.run { () throws(ContentCacheError) in
            try Descriptor.open(temporaryPath, flags: O_RDWR | O_CREAT | O_EXCL, mode: 0o600)
        }
        guard activeTransfer(document.id) == nil else {
            await delete(paths: [temporaryPath])
            return
        }
        begin(
            Transfer(
                document: document, blob: blob, temporaryPath: temporaryPath, descriptor: descriptor, fetcher: fetcher))
    }

    private var fetcher: RangeFetcher {
        RangeFetcher(
            downloader: downloader, pool: pool, writes: bodyWrites, support: rangeSupport, layout: layout,
            streamWindow: configuration.streamWindow, logger: logger)
    }

    /// Runs `transfer`'s job.
    private func begin(_ transfer: Transfer) {
        let document = transfer.document
        let blob = transfer.blob
        let stored = book.withLock { $0.index[document.id]?.entry }
        let job = DownloadJob(
            transfer: transfer,
            request: DownloadRequest(
                documentID: document.id, ifNoneMatch: stored?.etag, ifModifiedSince: stored?.lastModified),
            blob: blob, blobPath: layout.blobPath(blob), downloader: downloader, cache: self,
            sizeCap: configuration.sizeLimit)
        book.withLock { _ = $0.downloading.insert(document.id) }
        transfers[document.id] = Active(
            transfer: transfer, task: Task.detached { await job.run() }, deadline: startDeadline(for: transfer))
    }

    private func startDeadline(for transfer: Transfer) -> Task<Void, Never> {
        let startDeadline = configuration.startDeadline
        return Task.detached { [self] in
            try? await Task.sleep(for: startDeadline)
            if !Task.isCancelled { await startDeadlinePassed(transfer) }
        }
    }

    /// The start deadline tells an unreachable server from a slow start, not a busy one: while another download is
    /// streaming, the server answers, and this one waits for a download slot (measured: with 4 large downloads
    /// running, a fifth open failed with ENETDOWN after 3.05 s and would have started 0.1 s later). It waits on,
    /// until the server answers it or its own request times out.
    private func startDeadlinePassed(_ transfer: Transfer) async {
        let id = transfer.document.id
        let serverAnswers = transfers.values.contains { active in
            guard active.transfer !== transfer, case .streaming = active.transfer.phase else { return false }
            return true
        }
        if serverAnswers, transfers[id]?.transfer === transfer {
            transfers[id]?.deadline = startDeadline(for: transfer)
            return
        }
        guard transfer.failIfStarting(.startTimedOut(documentID: id, after: configuration.startDeadline)) else {
            return
        }
        logger.info("download did not start in time", metadata: ["document": "\(id)"])
        if transfers[id]?.transfer === transfer { transfers[id]?.task.cancel() }
        detach(transfer)
        await discardPartial(of: transfer, after: .startTimedOut(documentID: id, after: configuration.startDeadline))
    }

    /// Deletes a failed transfer's sparse file and range map; a resumed partial that failed because the server could
    /// not be reached is kept for the next open instead: being offline says nothing about the bytes it holds.
    /// Decided before anything suspends (closing checkpoints leaves the actor): an open meanwhile must find a kept
    /// partial in ``keptPartials``, or it starts a download of its own whose file this one then deletes.
    private func discardPartial(of transfer: Transfer, after error: ContentCacheError) async {
        let id = transfer.document.id
        // Kept already (the start deadline failed it, and its job ends later), or resumed by an open since.
        let resumedSince = transfers[id].map { $0.transfer !== transfer && $0.transfer.blob == transfer.blob } ?? false
        let keptAlready = keptPartials[id]?.file == transfer.blob || resumedSince
        let keep =
            !keptAlready && error.isOffline && transfer.isResumed && keptPartials[id] == nil
            && (transfers[id] == nil || transfers[id]?.transfer === transfer)
        if keep {
            // Bytes present are written already (a writer adds them after `pwrite`); the kept map claims no others.
            let document = transfer.document
            keptPartials[id] = PartialMap(
                documentID: id, version: document.version, size: document.size, etag: transfer.resumedETag,
                file: transfer.blob, ranges: transfer.present.ranges)
        }
        await transfer.closeCheckpoints()
        if !keep && !keptAlready { await delete(paths: partialPaths(transfer)) }
    }

    /// The job finished a body of `size` bytes (the metadata's, unless that was 0: unknown): record the blob
    /// (sidecar = commit point), drop the version it replaces.
    func commit(_ transfer: Transfer, blob: String, size: Int64, etag: String?, lastModified: Date?) async {
        let document = transfer.document
        guard isCurrent(transfer) else {
            await delete(paths: [layout.blobPath(blob)])
            return
        }
        let entry = CacheEntry(
            documentID: document.id, version: document.version, size: size, etag: etag, lastModified: lastModified,
            blob: blob)
        let free: Int64?
        do throws(ContentCacheError) {
            free = try await pool.run { [layout] () throws(ContentCacheError) in
                try layout.writeSidecar(entry)
                return layout.freeSpace()
            }
        } catch {
            await delete(paths: [layout.blobPath(blob)])
            await abandon(transfer, error: error)
            return
        }
        // Removed while the sidecar was written: the blob and its sidecar go too.
        guard isCurrent(transfer) else {
            await delete(entries: [entry])
            return
        }
        // Bookkeeping, eviction and the waiters' wake-up in one step, so whoever the download wakes sees them done.
        let replaced = book.withLock { book in
            defer {
                book.index[document.id] = Indexed(
                    entry: entry, lastAccess: book.tick(), lastUsed: Date(), validatedAt: .now)
            }
            return book.index[document.id]?.entry
        }
        detach(transfer)
        let (evicted, partials) = evictFromIndex(free: free)
        transfer.finish(.completed)
        if book.withLock({ $0.index[document.id] }) != nil { announce(entry) }
        let replacedBlob = replaced.flatMap { $0.blob != blob ? layout.blobPath($0.blob) : nil }
        // The range map names a file that is a blob now; deleting it after the sidecar keeps a crash harmless.
        await delete(
            entries: evicted, partials: partials, paths: (replacedBlob.map { [$0] } ?? []) + [mapPath(of: transfer)])
    }

    /// The server answered 304: the cached bytes become the new version, keeping their validators.
    func commitNotModified(_ transfer: Transfer) async {
        let document = transfer.document
        guard transfers[document.id]?.transfer === transfer else { return }
        guard var entry = book.withLock({ $0.index[document.id]?.entry }) else {
            let detail = "304 Not Modified, but no version is cached"
            await abandon(
                transfer,
                error: .downloadFailed(
                    documentID: document.id, .malformedResponse(what: "document \(document.id)", detail: detail)))
            return
        }
        entry.version = document.version
        do throws(ContentCacheError) {
            try await pool.run { [layout, entry] () throws(ContentCacheError) in
                try layout.writeSidecar(entry)
                unlink(transfer.temporaryPath)
            }
        } catch {
            await abandon(transfer, error: error)
            return
        }
        // Removed (or replaced) while the sidecar was written: the sidecar names a blob that is gone.
        let unchanged =
            transfers[document.id]?.transfer === transfer
            && book.withLock { book in
                guard book.index[document.id]?.entry.blob == entry.blob else { return false }
                book.index[document.id] = Indexed(
                    entry: entry, lastAccess: book.tick(), lastUsed: Date(), validatedAt: .now)
                return true
            }
        guard unchanged else {
            if let key = try? CacheLayout.key(for: document.id) { await delete(paths: [layout.sidecarPath(key: key)]) }
            return
        }
        detach(transfer)
        transfer.finish(.notModified)
        announce(entry)
    }

    private func announce(_ entry: CacheEntry) {
        configuration.committed?(
            CommittedCopy(documentID: entry.documentID, version: entry.version, path: layout.blobPath(entry.blob)))
    }

    /// The job failed: delete the partial file and its range map, then fail its waiters (who may look for it).
    func abandon(_ transfer: Transfer, error: ContentCacheError) async {
        await discardPartial(of: transfer, after: error)
        transfer.finish(.failed(error))
        detach(transfer)
        logger.warning("\(error)")
    }

    /// Whether `transfer` is still this document's download and has not ended.
    private func isCurrent(_ transfer: Transfer) -> Bool {
        transfers[transfer.document.id]?.transfer === transfer && !transfer.phase.isTerminal
    }

    /// Deletes, on the blocking pool, files the bookkeeping no longer names. Blob and partial names are unique per
    /// download, so no later download reuses them while this waits for a thread; a sidecar (named by document)
    /// could only be rewritten meanwhile by a whole new download's commit.
    private func delete(entries: [CacheEntry] = [], partials: [PartialMap] = [], paths: [String] = []) async {
        guard !entries.isEmpty || !partials.isEmpty || !paths.isEmpty else { return }
        await pool.run { [layout] in
            for entry in entries { layout.removeEntry(entry) }
            for partial in partials { layout.removePartial(partial) }
            for path in paths { unlink(path) }
        }
    }

    /// A transfer's sparse file and its range map, when it has one (its map may still be written while it ends: the
    /// next start deletes a map whose file is gone).
    private func partialPaths(_ transfer: Transfer) -> [String] {
        [mapPath(of: transfer), transfer.temporaryPath]
    }

    /// The range map of `transfer`'s file.
    private func mapPath(of transfer: Transfer) -> String { layout.partialMapPath(transfer.blob) }

    private func detach(_ transfer: Transfer) {
        let id = transfer.document.id
        guard let active = transfers[id], active.transfer === transfer else { return }
        active.deadline.cancel()
        transfers[id] = nil
        book.withLock { _ = $0.downloading.remove(id) }
    }

    private func activeTransfer(_ documentID: String) -> Transfer? {
        guard let transfer = transfers[documentID]?.transfer, !transfer.phase.isTerminal else { return nil }
        return transfer
    }

    private func cachedBytes() -> Int64 { book.withLock { $0.index.values.reduce(0) { $0 + $1.entry.size } } }
}

/// A cache directory that no daemon serves (`campusfs cache` without a mount): nothing is open or downloading.
extension ContentCache {
    /// What `directory` holds, without changing anything; empty when it does not exist.
    public static func inventory(directory: String, limit: Int64) -> CacheInventory {
        var copies: [String: CacheInventory.Copy] = [:]
        if access(directory + "/blobs", F_OK) == 0 {
            let layout = CacheLayout(existing: directory)
            for (entry, lastAccess) in layout.scan().entries {
                copies[entry.documentID] = layout.copy(entry, lastUsed: CacheLayout.date(lastAccess))
            }
        }
        // Partial downloads a run left, as its next start keeps them.
        let partials = CacheLayout(existing: directory).scanPartials().maps
        let downloading = Dictionary(partials.map { ($0.documentID, CacheInventory.Partial($0)) }) { first, _ in first }
        return CacheInventory(copies: copies, downloading: downloading, limit: limit)
    }

    /// The completed copy of one document in `directory`, nil when there is none: what ``inventory(directory:limit:)``
    /// says about it, without reading every sidecar (`campusfs search` asks about a few documents of a cache that
    /// may hold thousands). A daemon may be serving `directory`: sidecars are renamed into place, never rewritten.
    public static func cachedCopy(of documentID: String, directory: String) -> CacheInventory.Copy? {
        let layout = CacheLayout(existing: directory)
        return layout.entry(documentID: documentID).map {
            layout.copy($0.entry, lastUsed: CacheLayout.date($0.lastAccess))
        }
    }

    /// ``clean(_:)`` on `directory`, which no daemon may be serving; also removes what a crash left behind, as a
    /// daemon's start does.
    public static func clean(directory: String, _ request: CleanRequest) throws(ContentCacheError) -> CleanResult {
        var result = CleanResult()
        guard access(directory + "/blobs", F_OK) == 0 else { return result }
        let layout = try CacheLayout(root: directory)
        let now = Date()
        let (entries, partials) = layout.recover()
        for (entry, lastAccess) in entries where request.documentIDs?.contains(entry.documentID) ?? true {
            let copy = layout.copy(entry, lastUsed: CacheLayout.date(lastAccess))
            let isPinned = request.pinned.contains(entry.documentID)
            if request.removes(copy, isPinned: isPinned, isOpen: false, now: now, counting: &result) {
                layout.removeEntry(entry)
            }
        }
        // As the daemon's clean: partial downloads go too, their bytes counted as freed.
        for partial in partials where request.documentIDs?.contains(partial.documentID) ?? true {
            guard !request.pinned.contains(partial.documentID) else { continue }
            layout.removePartial(partial)
            result.freedBytes += ByteRanges(partial.ranges).count
        }
        return result
    }
}
