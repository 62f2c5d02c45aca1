import AsyncHelpers
import ContentCache
import FUSEKit
import Foundation
import Glibc
import Logging
import MetadataStore
import StudIPKit
import StudIPModel
import Synchronization
import Uploading

/// The filesystem (docs/architecture.md, "The tree" and "Promises"; docs/mount.md): FUSE operations answered from the
/// metadata store (names, attributes, listings) and the content cache (bytes).
///
/// ## Caching model (docs/mount.md, "Caching model")
/// The daemon runs every refresh itself, so it knows when metadata changes and can let the kernel cache
/// everything for a long time, then drop exactly what a refresh changed (``apply(_:session:)``):
/// - names and attributes: every entry and attribute reply carries ``Timeouts/entry``/``Timeouts/attributes``
///   (a day by default); names that do not exist are cached as negative entries for ``Timeouts/negative``;
/// - listings: READDIRPLUS carries each child's attributes, so a listing costs no LOOKUP per name, and OPENDIR is
///   answered with `ENOSYS` (``CampusMount``'s kernel settings), so the kernel caches every listing until
///   `invalidateInode(dir)`;
/// - content: `open` answers `keep_cache` while the bytes it serves (``ContentHandle/contentID``) are the ones the
///   kernel saw last for that inode, so a warm `cat` sends no READ, and new bytes — also of a version whose listing
///   did not change — never meet old pages;
/// - symlink targets: cached by the kernel (``KernelSettings/cacheSymlinks``).
///
/// ## Threads
/// Metadata requests are local SQLite reads and are answered on the FUSE worker. `open` and `read` may wait for
/// the network, so they start a task and return; the worker goes back to `/dev/fuse` at once. A FUSE INTERRUPT (the
/// caller got a signal) cancels that task from the libfuse worker that read it; the task then answers `EINTR`.
public final class CampusFileSystem: FileSystemOperations {
    /// How long the kernel may trust its answers.
    public struct Timeouts: Sendable, Hashable {
        public var entry: Duration
        public var attributes: Duration
        /// For names that do not exist (desktops probe `.hidden`, `autorun.inf`, … constantly).
        public var negative: Duration

        public init(
            entry: Duration = .seconds(86_400), attributes: Duration = .seconds(86_400),
            negative: Duration = .seconds(300)
        ) {
            self.entry = entry
            self.attributes = attributes
            self.negative = negative
        }
    }

    /// One open document: the cache handle it reads through.
    private struct OpenFile: Sendable {
        let handle: ContentHandle
        let inode: Inode
        /// The process that opened it, whose burst its reads and release extend (``ScanDetector``).
        let opener: pid_t
    }

    private struct OpenFiles: Sendable {
        var lastID: UInt64 = 0
        var files: [UInt64: OpenFile] = [:]
        /// Generated files (announcements, calendars, timetables) open now, with the bytes they were opened with.
        var generated: [UInt64: (content: Data, opener: pid_t)] = [:]
        /// The content the kernel's page cache holds for an inode: the last one an open served.
        var servedContent: [Inode: String] = [:]
    }

    /// How the filesystem asks its daemon to refresh one course (by Stud.IP id).
    public struct CourseRefreshing: Sendable {
        /// A listing inside a course whose last refresh is older than this is answered from the store at once and
        /// the course refreshed behind it (stale-while-revalidate, docs/architecture.md, "Promises").
        public var listingTTL: Duration
        /// Starts a refresh and returns at once.
        public var inBackground: @Sendable (String) -> Void
        /// Refreshes and returns once the store and the kernel have the result: a download whose length disagrees
        /// with the metadata waits for it.
        public var now: @Sendable (String) async -> Void

        public init(
            listingTTL: Duration, inBackground: @escaping @Sendable (String) -> Void,
            now: @escaping @Sendable (String) async -> Void
        ) {
            self.listingTTL = listingTTL
            self.inBackground = inBackground
            self.now = now
        }
    }

    /// Course folders whose content a first refresh has not stored yet, and how to fetch one now.
    public struct FirstListings: Sendable {
        /// The course folders' inodes, with their Stud.IP course ids.
        public var pending: [Inode: String]
        /// Fetches the course now, or waits for its fetch under way; true once its content is stored.
        public var fetch: @Sendable (String) async -> Bool
        /// How long a lookup or listing waits for the fetch before it fails with `EIO`.
        public var patience: Duration

        public init(
            pending: [Inode: String], fetch: @escaping @Sendable (String) async -> Bool,
            patience: Duration = .seconds(120)
        ) {
            self.pending = pending
            self.fetch = fetch
            self.patience = patience
        }
    }

    public let store: MetadataStore
    public let cache: ContentCache
    public let counters = RequestCounters()
    public let timeouts: Timeouts
    let owner: (user: uid_t, group: gid_t)
    private let openFiles = Mutex(OpenFiles())
    private let courseRefreshing = Mutex<CourseRefreshing?>(nil)
    private let firstListings = Mutex<FirstListings?>(nil)
    private let scans = ScanDetector()
    /// The mounted session, for the tag view's invalidations (``showInTagView(_:)``); set by ``CampusMount``.
    let session = Mutex<FUSESession?>(nil)
    /// The write path, when uploads are on (``write(through:)``, Writing.swift).
    let writing = Mutex<Writing?>(nil)
    let logger: Logger

    /// Readdir pages fetched from the store at a time; a kernel buffer holds about this many entries.
    private static let pageSize = 128

    public init(
        store: MetadataStore, cache: ContentCache, timeouts: Timeouts = Timeouts(),
        logger: Logger = Logger(label: "campusfs.filesystem")
    ) {
        self.store = store
        self.cache = cache
        self.timeouts = timeouts
        self.logger = logger
        owner = (getuid(), getgid())
    }

    /// Lets the filesystem refresh courses: stale listings in the background, and before retrying a download
    /// whose length shows the metadata is out of date. Without it, neither happens.
    public func refreshCourses(with refreshing: CourseRefreshing) {
        courseRefreshing.withLock { $0 = refreshing }
    }

    /// "A folder never listed before is fetched before answering" (docs/architecture.md, "Promises"): lookups and
    /// listings in these course folders wait until their course is stored (a first mount returns before the courses
    /// are).
    public func fetchBeforeListing(_ listings: FirstListings) {
        firstListings.withLock { $0 = listings }
        narrowFirstListings { _ in }
    }

    /// Narrows the folders to wait for to `pending` (those whose course a first refresh could not store), so that
    /// once every course is stored a lookup no longer consults the list at all.
    public func fetchBeforeListing(only pending: [Inode: String]) {
        narrowFirstListings { $0 = pending }
    }

    /// Changes the folders waited for; a list left empty is dropped, which is what makes the check in
    /// ``awaitFirstListing(of:)`` one lock of an empty optional from then on.
    private func narrowFirstListings(_ change: (inout [Inode: String]) -> Void) {
        firstListings.withLock { listings in
            guard var narrowed = listings else { return }
            change(&narrowed.pending)
            listings = narrowed.pending.isEmpty ? nil : narrowed
        }
    }

    /// Blocks this FUSE worker (which may block; Swift's pool may not) until the course whose folder `directory` is
    /// has its content in the store. False when it could not be fetched: the caller answers `EIO`, and the next
    /// look tries again. Once the courses are stored this is one lock of an empty optional.
    private func awaitFirstListing(of directory: Inode) -> Bool {
        guard
            let (courseID, fetch, patience) = firstListings.withLock({ listings in
                listings.flatMap { listings in
                    listings.pending[directory].map { ($0, listings.fetch, listings.patience) }
                }
            })
        else { return true }
        let done = DispatchSemaphore(value: 0)
        let stored = Atomic<Bool>(false)
        Task {
            stored.store(await fetch(courseID), ordering: .releasing)
            done.signal()
        }
        guard done.wait(timeout: .now() + patience.seconds) == .success, stored.load(ordering: .acquiring) else {
            logger.warning("course \(courseID) is not stored yet, so its folder cannot be listed")
            return false
        }
        narrowFirstListings { $0.removeValue(forKey: directory) }
        return true
    }

    // MARK: - Metadata (store only)

    public func lookup(parent: Inode, name: String, reply: EntryReply) {
        counters.countLookup()
        guard awaitFirstListing(of: parent) else {
            reply.error(EIO)
            return
        }
        do throws(StoreError) {
            let found: Node?
            switch try overlaidLookup(parent: parent, name: name) {
            case .entry(let entry): return reply.entry(entry)
            case .hidden: return reply.negative(timeout: .zero)
            case .failed: return reply.error(EIO)
            case .store(let node): found = node
            case nil: found = try store.lookup(parent: Int64(parent), name: name)
            }
            guard let node = found else {
                reply.negative(timeout: timeouts.negative)
                return
            }
            reply.entry(entry(for: node))
        } catch {
            fail(reply, error)
        }
    }

    /// Inodes are stable store rows that are never reused, so the kernel's reference counts need no bookkeeping.
    public func forget(_ inode: Inode, lookups: UInt64) {}

    public func getAttributes(_ inode: Inode, file: FileInfo?, reply: AttributesReply) {
        counters.countGetattr()
        do throws(StoreError) {
            if let overlaid = try overlaidAttributes(inode) {
                return reply.attributes(overlaid, timeout: .seconds(1))
            }
            guard let node = try store.node(inode: Int64(inode)) else {
                reply.error(ENOENT)
                return
            }
            reply.attributes(attributes(of: node), timeout: timeouts.attributes)
        } catch {
            fail(reply, error)
        }
    }

    /// The kernel checks no permission bits on this mount (see ``CampusMount``), so `access(2)` gets its answer
    /// here, from the same modes `getattr` reports: nothing is writable (`EROFS`, as for every mutation), documents
    /// are readable unless Stud.IP locks them, directories are searchable. Normally the mounting user is the only one
    /// the kernel lets in (`allow_other` only in tests), so the owner's bits are the ones that count.
    public func access(_ inode: Inode, mask: Int32, reply: StatusReply) {
        if mask & W_OK != 0, case let refused = writeAccess(inode), refused != 0 { return reply.error(refused) }
        if writer?.workspace.draft(inode: Int64(inode)) != nil { return reply.ok() }
        do throws(StoreError) {
            guard let node = try store.node(inode: Int64(inode)) else {
                reply.error(ENOENT)
                return
            }
            let mode = mode(of: node)
            if mask & R_OK != 0 && mode & S_IRUSR == 0 || mask & X_OK != 0 && mode & S_IXUSR == 0 {
                reply.error(EACCES)
            } else {
                reply.ok()
            }
        } catch {
            fail(reply, error)
        }
    }

    public func readLink(_ inode: Inode, reply: LinkReply) {
        do throws(StoreError) {
            guard let node = try store.node(inode: Int64(inode)) else {
                reply.error(ENOENT)
                return
            }
            guard let target = node.symlinkTarget else {
                reply.error(EINVAL)
                return
            }
            reply.target(target)
        } catch {
            fail(reply, error)
        }
    }

    /// Only reached when the kernel cannot skip OPENDIR; then the listing is cached as it would be without.
    public func openDirectory(_ inode: Inode, file: FileInfo, reply: OpenReply) {
        reply.open(keepCache: true, cacheDirectory: true)
    }

    public func readDirectory(_ inode: Inode, offset: Int64, file: FileInfo, reply: DirectoryReply) {
        counters.countReaddir()
        var buffer = DirectoryBuffer(for: reply)
        do throws(StoreError) {
            let listed = try listEntries(of: inode, from: offset) { name, entry, nextOffset in
                buffer.append(
                    name: name, inode: entry.attributes.inode, mode: entry.attributes.mode, nextOffset: nextOffset)
            }
            if let listed {
                reply.error(listed)
            } else {
                reply.entries(buffer)
            }
        } catch {
            fail(reply, error)
        }
    }

    public func readDirectoryPlus(_ inode: Inode, offset: Int64, file: FileInfo, reply: DirectoryPlusReply) {
        counters.countReaddir()
        var buffer = DirectoryBuffer(for: reply)
        do throws(StoreError) {
            let listed = try listEntries(of: inode, from: offset) { name, entry, nextOffset in
                buffer.append(name: name, entry: entry, nextOffset: nextOffset)
            }
            if let listed {
                reply.error(listed)
            } else {
                reply.entries(buffer)
            }
        } catch {
            fail(reply, error)
        }
    }

    /// Sizes live on the server, not here: report no blocks (like other network filesystems) and the name limit.
    public func statistics(_ inode: Inode, reply: StatisticsReply) {
        reply.statistics(draftSpace() ?? FileSystemStatistics(blockSize: 4096, maximumNameLength: 255))
    }

    // MARK: - Content (cache, asynchronous)

    /// Answers once the cache has the document or its download has started: the cache coalesces concurrent
    /// opens into one download and fails offline opens within its start deadline. Opening is what clears
    /// `new`/`changed` once the opener's burst turns out not to be a scan (``ScanDetector``): reading is no sign,
    /// since a warm `cat` sends no READ and an empty document is never read.
    public func open(_ inode: Inode, file: FileInfo, reply: OpenReply) {
        counters.countOpen()
        if openOverlaid(inode, file: file, reply: reply) { return }
        let document: DocumentInfo
        do throws(StoreError) {
            // Documents first: they are nearly every open, and then cost one query.
            if let found = try store.document(inode: Int64(inode)) {
                document = found
            } else if let content = try store.generatedContent(inode: Int64(inode)) {
                openGenerated(content, inode: inode, opener: reply.context.processID, reply: reply)
                return
            } else {
                reply.error(ENOENT)
                return
            }
        } catch {
            fail(reply, error)
            return
        }
        guard document.isDownloadable else {
            reply.error(EACCES)
            return
        }
        let opener = reply.context.processID
        let opening = judging(inode, by: opener)
        // A cached current version opens here, on the worker: no task, no hop (a `grep -r` makes thousands).
        let wanted = CacheDocument(id: document.id, version: document.version)
        if let handle = cache.openCached(wanted, revalidate: !opening.isScan) {
            answer(reply, with: handle, of: document, inode: inode, opener: opener)
            return
        }
        let answering = Task { [scans] in
            let handle: ContentHandle
            let current: DocumentInfo
            do throws(ContentCacheError) {
                (handle, current) = try await openContent(document, inode: inode, revalidate: !opening.isScan)
            } catch {
                report(error, "open of \(document.id)")
                reply.error(error.errorNumber)
                scans.answered(inode, by: opener, served: nil)
                return
            }
            answer(reply, with: handle, of: current, inode: inode, opener: opener)
        }
        // A signal to the opener ends its wait for a download slot or the server's answer with EINTR. Only the wait
        // is cancelled: the download is not this task's child, so others opening the same document keep it.
        reply.onInterrupt { answering.cancel() }
    }

    /// Registers an opened document and answers the open; a kernel that stopped waiting (an interrupted open,
    /// which no `release` follows) gets the handle released at once.
    private func answer(
        _ reply: OpenReply, with handle: ContentHandle, of current: DocumentInfo, inode: Inode, opener: pid_t
    ) {
        let key = CacheDocument(id: current.id, version: current.version).version
        let (id, keepCache) = register(handle, inode: inode, opener: opener, current: key)
        if current.size == 0, handle.size > 0 {
            forgetSize(of: inode)
            Task { await recordHostSize(handle.size, of: inode) }
        }
        let opened = reply.open(handle: id, keepCache: keepCache)
        scans.answered(inode, by: opener, served: opened ? .document(current.version) : nil)
        if !opened {
            openFiles.withLock { _ = $0.files.removeValue(forKey: id) }
            cache.release(handle)
        }
    }

    /// Registers an open with the scan detector; the first of a burst waits for its end and then clears what a
    /// person opened (``ScanDetector``).
    private func judging(_ inode: Inode, by opener: pid_t) -> ScanDetector.Opening {
        let opening = scans.opening(inode, by: opener)
        if opening.startsBurst {
            Task { [scans] in
                for (opened, served) in await scans.documentsToClear(after: opener) {
                    await clearHighlight(of: opened, version: served.version)
                }
            }
        }
        return opening
    }

    /// A generated file is served from the bytes the store had at the open, so a refresh meanwhile cannot tear a
    /// read; no cache, no download. Opening an announcement is reading it: its `new`/`changed` highlight clears as
    /// a document's does, unless the open is part of a scan (`grep -r` reads every announcement).
    private func openGenerated(_ content: Data, inode: Inode, opener: pid_t, reply: OpenReply) {
        _ = judging(inode, by: opener)
        let id = openFiles.withLock { state in
            state.lastID += 1
            state.generated[state.lastID] = (content, opener)
            return state.lastID
        }
        let opened = reply.open(handle: id, keepCache: false)
        scans.answered(inode, by: opener, served: opened ? .generated : nil)
        if !opened { openFiles.withLock { _ = $0.generated.removeValue(forKey: id) } }
    }

    /// Opens the document's content and returns it with the metadata it was opened for. A body whose length
    /// differs from the metadata's size means the listing is out of date (Stud.IP can replace the bytes without
    /// changing anything else): the course is refreshed, and the open tried once more with what the refresh found.
    /// A scan's opens do not revalidate cached bytes (``ContentCache/open(_:revalidate:)``).
    private func openContent(
        _ document: DocumentInfo, inode: Inode, revalidate: Bool
    ) async throws(ContentCacheError) -> (ContentHandle, DocumentInfo) {
        do {
            let wanted = CacheDocument(id: document.id, version: document.version)
            return (try await cache.open(wanted, revalidate: revalidate), document)
        } catch .sizeMismatch(let id, let expected, let received) {
            guard let refreshing = courseRefreshing.withLock({ $0 }) else {
                throw .sizeMismatch(documentID: id, expected: expected, received: received)
            }
            logger.notice(
                "document \(id) is \(received) bytes, the metadata says \(expected): refreshing its course first")
            await refreshing.now(document.courseID)
            guard let updated = try? store.document(inode: Int64(inode)), updated.version != document.version else {
                throw .sizeMismatch(documentID: id, expected: expected, received: received)
            }
            guard updated.isDownloadable else {
                throw .downloadFailed(documentID: id, .forbidden(what: "document \(id)"))
            }
            let retried = CacheDocument(id: updated.id, version: updated.version)
            return (try await cache.open(retried, revalidate: revalidate), updated)
        }
    }

    /// Bytes already on disk go to the kernel straight from the blob's descriptor, on the FUSE worker that asked
    /// (it may block; Swift's pool may not): libfuse splices them, so reads of cached documents cost no task, no
    /// thread hop and no copy through Swift. Only a range still downloading waits in a task.
    public func read(_ inode: Inode, offset: Int64, file: FileInfo, reply: DataReply) {
        counters.countRead()
        if file.handle > 1 << 62, readDraft(file.handle, offset: offset, reply: reply) { return }
        if let (content, opener) = openFiles.withLock({ $0.generated[file.handle] }) {
            scans.active(opener)
            let start = Int(clamping: max(offset, 0))
            reply.data(start < content.count ? content[start..<min(content.count, start + reply.size)] : Data())
            return
        }
        guard let open = openFiles.withLock({ $0.files[file.handle] }) else {
            reply.error(EBADF)
            return
        }
        let spliced =
            cache.withAvailableRange(open.handle, offset: offset, length: reply.size) { descriptor, count in
                reply.data(descriptor: descriptor, offset: offset, count: count)
                return true
            } ?? false
        if spliced {
            scans.active(open.opener)
            return
        }
        // A read waiting for its download keeps the opener's burst going, however slow the server.
        let counted = scans.active(open.opener, inFlight: true)
        let reading = Task { [cache, scans] in
            defer { if counted { scans.finished(by: open.opener) } }
            do throws(ContentCacheError) {
                reply.data(try await cache.read(open.handle, offset: offset, length: reply.size))
            } catch {
                report(error, "read of \(open.handle.documentID)")
                reply.error(error.errorNumber)
            }
        }
        // Reached only by a synchronous READ: asynchronous reads (this mount's) are background requests, which the
        // kernel never interrupts (docs/mount.md, "Interrupts").
        reply.onInterrupt { reading.cancel() }
    }

    public func release(_ inode: Inode, file: FileInfo, reply: StatusReply) {
        if file.handle > 1 << 62, releaseDraft(file.handle) { return reply.ok() }
        let (open, generated) = openFiles.withLock { state in
            (state.files.removeValue(forKey: file.handle), state.generated.removeValue(forKey: file.handle))
        }
        reply.ok()
        if let generated { scans.active(generated.opener) }
        guard let open else { return }
        scans.active(open.opener)
        cache.release(open.handle)
    }

    // MARK: - Invalidation

    /// Tells the kernel what a refresh changed, so the long timeouts stay correct: a changed name drops the
    /// kernel's dentry for it (`fuse_lowlevel_notify_inval_entry`, negative ones included), a changed node its
    /// attributes, and for a directory its cached listing (`fuse_lowlevel_notify_inval_inode`). Call it from the
    /// refresh task, never from a request handler (the kernel may wait for that very request); the one exception is
    /// ``showInTagView(_:)``.
    public func apply(_ summary: RefreshSummary, session: FUSESession) {
        for entry in summary.changedNames {
            do throws(FUSEKitError) {
                try session.invalidateEntry(parent: Inode(entry.parent), name: entry.name)
            } catch {
                logger.warning("cannot invalidate \(entry.name) in inode \(entry.parent): \(error)")
            }
        }
        for inode in summary.changedNodes {
            do throws(FUSEKitError) {
                try session.invalidateInode(Inode(inode))
            } catch {
                logger.warning("cannot invalidate inode \(inode): \(error)")
            }
        }
    }

    /// A document the metadata says is empty opened with bytes (one hosted elsewhere, ``size(of:)``): the kernel
    /// would end every read at the size of 0 it cached, so it forgets the inode's attributes (only those: the page
    /// cache follows `keep_cache`) before the open answers, and asks `getattr` again at the first read. Safe inside
    /// the open: the kernel holds no lock an invalidation of attributes needs while it waits for an open without
    /// `O_TRUNC`.
    private func forgetSize(of inode: Inode) {
        guard let session = session.withLock({ $0 }) else { return }
        do throws(FUSEKitError) {
            try session.invalidateInode(inode, offset: -1)
        } catch {
            logger.warning("cannot invalidate the attributes of inode \(inode): \(error)")
        }
    }

    /// Lets ``showInTagView(_:)`` reach the kernel.
    func attach(_ session: FUSESession) {
        self.session.withLock { $0 = session }
    }

    /// Drops what the kernel cached of the tag view after a tag change, before the `setxattr` answers, so that
    /// `ls Tags/exam` right after it shows the change. Safe inside that request: the kernel holds only the tagged
    /// item's lock, and every node a tag change touches lies in the view, which takes no tags (`EPERM`).
    func showInTagView(_ summary: RefreshSummary) {
        guard let session = session.withLock({ $0 }) else { return }
        apply(summary, session: session)
    }

    // MARK: - Helpers

    /// Clears `new`/`changed` of a document a person opened (docs/mount.md, "Highlights: a person opening, not a
    /// scan"), from the burst's task: never on a request, which would wait for a running refresh's write.
    private func clearHighlight(of inode: Inode, version: DocumentVersion?) async {
        do throws(StoreError) {
            _ = try await store.run { store throws(StoreError) in
                try store.markRead(inode: Int64(inode), version: version)
            }
        } catch {
            logger.warning("cannot clear the highlight of inode \(inode): \(error)")
        }
    }

    /// Keeps the length the host sent for a document Stud.IP says is empty, so that `stat` still shows it once the
    /// cached copy is gone (docs/mount.md, "Documents hosted elsewhere"). From a task, like
    /// ``clearHighlight(of:version:)``: a request never waits for a refresh's write; an unchanged length takes no
    /// write.
    private func recordHostSize(_ size: Int64, of inode: Inode) async {
        do throws(StoreError) {
            _ = try await store.run { store throws(StoreError) in try store.recordHostSize(size, inode: Int64(inode)) }
        } catch {
            logger.warning("cannot record the host's size of inode \(inode): \(error)")
        }
    }

    /// Records an open handle and decides whether the kernel's page cache for the inode still holds its bytes.
    private func register(
        _ handle: ContentHandle, inode: Inode, opener: pid_t, current: String
    ) -> (id: UInt64, keepCache: Bool) {
        openFiles.withLock { state in
            state.lastID += 1
            state.files[state.lastID] = OpenFile(handle: handle, inode: inode, opener: opener)
            let previous = state.servedContent.updateValue(handle.contentID, forKey: inode)
            let keepCache = handle.version == current && (previous ?? handle.contentID) == handle.contentID
            return (state.lastID, keepCache)
        }
    }

    /// Feeds `.`, `..` and the children after `offset` to `append` until it reports a full buffer. Offsets 1 and
    /// 2 are `.` and `..`; the store's cursors (always > 2) follow, then the overlay's entries when writing is on
    /// (from ``Workspace/inodeBase`` on), without the store's nodes it hides.
    /// - Returns: the errno to answer instead of the entries, nil when the listing is in the buffer.
    private func listEntries(
        of inode: Inode, from offset: Int64, _ append: (String, Entry, Int64) -> Bool
    ) throws(StoreError) -> Int32? {
        if isLocalFolder(inode) {
            guard let attributes = try overlaidAttributes(inode) else { return ENOENT }
            let this = Entry(attributes: attributes, entryTimeout: timeouts.entry, attributeTimeout: .seconds(1))
            if offset < 1, !append(".", this, 1) { return nil }
            if offset < 2, !append("..", this, 2) { return nil }
            return try listOverlaid(of: inode, from: offset, append)
        }
        guard awaitFirstListing(of: inode) else { return EIO }
        guard let listing = try store.listing(of: Int64(inode), after: max(offset, 2), limit: Self.pageSize) else {
            return ENOENT
        }
        let directory = listing.directory
        guard directory.kind == .directory else { return ENOTDIR }
        if offset == 0 { revalidateIfStale(directory, listedAt: listing.listedAt) }
        if offset < 1, !append(".", entry(for: directory), 1) { return nil }
        if offset < 2, !append("..", entry(for: listing.parent ?? directory), 2) { return nil }
        var page = offset < Workspace.inodeBase ? listing.children : []
        while true {
            for child in page where !isHidden(child.node) {
                guard append(child.node.name, entry(for: child.node), child.offset) else { return nil }
            }
            guard page.count == Self.pageSize, let last = page.last else { break }
            page = try store.children(of: Int64(inode), after: last.offset, limit: Self.pageSize)
        }
        return try listOverlaid(of: inode, from: offset, append)
    }

    private func listOverlaid(
        of inode: Inode, from offset: Int64, _ append: (String, Entry, Int64) -> Bool
    ) throws(StoreError) -> Int32? {
        for (index, item) in try overlaidEntries(of: inode).enumerated() {
            let next = Workspace.inodeBase + Int64(index) + 1
            guard next > offset else { continue }
            guard append(item.name, item.entry, next) else { return nil }
        }
        return nil
    }

    private func revalidateIfStale(_ directory: Node, listedAt: Date?) {
        guard let courseID = directory.courseID, let refreshing = courseRefreshing.withLock({ $0 }) else { return }
        let ttl = refreshing.listingTTL.seconds
        if listedAt.map({ Date().timeIntervalSince($0) > ttl }) ?? true { refreshing.inBackground(courseID) }
    }

    func entry(for node: Node) -> Entry {
        Entry(attributes: attributes(of: node), entryTimeout: timeouts.entry, attributeTimeout: timeouts.attributes)
    }

    /// The modes a copy should get, since `cp -a`, `rsync -a` and file managers copy them: an ordinary tree the
    /// user may change and delete (with 0555 folders, `rm -r` of a copied course failed). The mount itself stays
    /// read-only all the same: every write is refused with `EROFS`, `access(W_OK)` included (docs/mount.md).
    private func mode(of node: Node) -> mode_t {
        switch node.kind {
        case .directory: S_IFDIR | 0o755
        case .file: S_IFREG | (node.isLocked ? 0 : 0o644)
        case .symlink: S_IFLNK | 0o777
        }
    }

    /// Directories report one link: the conventional "subdirectory count unknown", which keeps `find` from
    /// skipping subdirectories by counting links.
    func attributes(of node: Node) -> Attributes {
        // The decoders refuse dates outside the years 1–9999, but the store is a file on disk: a time `Int` cannot
        // hold would trap here, so it reads as the epoch instead.
        let seconds = node.mtime.timeIntervalSince1970.rounded(.down)
        let readable = seconds.isFinite && abs(seconds) < 1e15
        let time = timespec(
            tv_sec: readable ? Int(seconds) : 0,
            tv_nsec: readable ? Int((node.mtime.timeIntervalSince1970 - seconds) * 1_000_000_000) : 0)
        return Attributes(
            inode: Inode(node.inode), mode: mode(of: node), linkCount: 1, userID: owner.user, groupID: owner.group,
            size: size(of: node), accessed: time, modified: time, changed: time)
    }

    /// The metadata's size, except for a document it says is empty that has a cached copy: Stud.IP records 0 for
    /// a document hosted elsewhere whose size it was not told, so once the host sent it, its length is the truth (the
    /// store keeps it in ``Node/size`` for when the copy is gone).
    private func size(of node: Node) -> Int64 {
        guard node.size == 0, node.item == .document, let id = node.studipID else { return node.size }
        return cache.cachedSize(of: id) ?? 0
    }

    /// An interrupted wait is the caller's doing (a signal), not a failure worth a warning.
    private func report(_ error: ContentCacheError, _ what: String) {
        if error == .cancelled {
            logger.info("\(what) interrupted")
        } else {
            logger.warning("\(what) failed: \(error)")
        }
    }

    private func fail<Kind>(_ reply: Reply<Kind>, _ error: StoreError) {
        logger.error("metadata store: \(error)")
        reply.error(EIO)
    }
}
