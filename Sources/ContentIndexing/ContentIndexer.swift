import ContentCache
import Foundation
import Glibc
import Logging
import MetadataStore
import StudIPModel
import Synchronization
import SystemSupport
import TextExtraction

/// Keeps the search index's text in step with the content cache (issue 16, docs/search.md "Indexing"): every
/// version the cache commits, and at start every cached version the index lacks, has its text extracted and stored,
/// one document at a time on a thread of its own at a low priority (nice 10, inherited by `pdftotext`), so reads,
/// listings and downloads keep the CPU while it works.
///
/// The queue holds each document once, with the newest copy the cache announced; a copy whose version is no
/// longer the document's, or whose version the index already holds (text or failure) from this extractor version,
/// is skipped. Failures are recorded per version and extractor version: the same bytes fail the same way, except
/// where the machine decided (``TextExtraction/ExtractionError/isRetryable``: a time-out under load), which is
/// tried again, later each time, in this run and the next, until it failed so ``Retries/attempts`` times in all (the
/// store counts them, so a PDF that always takes too long costs a few tries, not a few at every start), and is then
/// final like any other failure. Nothing here downloads:
/// the indexer reads blobs the cache already has, and a blob evicted while it is read is skipped, not recorded as
/// a failure.
public final class ContentIndexer: Sendable {
    /// How often and how late a failure that depended on the machine is tried again.
    public struct Retries: Sendable, Hashable {
        /// Extractions of one version by one extractor at most, the first included, over every run.
        public var attempts = 3
        /// The wait before the first retry; each further one waits as many times longer as attempts were made.
        public var delay: Duration = .seconds(300)

        public init(attempts: Int = 3, delay: Duration = .seconds(300)) {
            self.attempts = attempts
            self.delay = delay
        }
    }

    /// What indexing one copy came to.
    public enum Outcome: Sendable, Hashable {
        case indexed(parts: Int)
        /// With how often these bytes failed so when they may be tried again; nil when the failure is final.
        case failed(ExtractionError, tries: Int?)
        /// The index already holds this version (text or failure).
        case alreadyIndexed
        /// The copy is not the document's current version, or the document left the tree.
        case outdated
        /// The cache evicted or replaced the copy while it was read.
        case copyGone
    }

    private struct Queue {
        var copies: [String: CommittedCopy] = [:]
        /// Document ids in arrival order; an id already queued keeps its place and takes the newer copy.
        var order: [String] = []
        var head = 0
        /// The document being indexed now.
        var current: String?
        /// Copies that failed retryably, each with the task that queues it again; cancelled by ``stop()``.
        var retrying: [CommittedCopy: Task<Void, Never>] = [:]
        var stopped = false

        var waiting: Int { copies.count }

        mutating func push(_ copy: CommittedCopy) -> Bool {
            let isNew = copies.updateValue(copy, forKey: copy.documentID) == nil
            if isNew { order.append(copy.documentID) }
            return isNew
        }

        /// Queues a copy again unless the document is queued already (with this or a newer copy).
        mutating func pushAgain(_ copy: CommittedCopy) -> Bool {
            copies[copy.documentID] == nil && push(copy)
        }

        mutating func pop() -> CommittedCopy? {
            while head < order.count {
                let id = order[head]
                head += 1
                if let copy = copies.removeValue(forKey: id) {
                    current = id
                    if head > 1024, head * 2 > order.count {
                        order.removeFirst(head)
                        head = 0
                    }
                    return copy
                }
            }
            return nil
        }
    }

    private let store: MetadataStore
    private let limits: TextExtractor.Limits
    private let retries: Retries
    private let logger: Logger
    private let queue = Mutex(Queue())
    private let worker = BlockingPool(threads: 1, name: "campusfs-index", niceness: 10)
    private let batchEnded: @Sendable () -> Void

    /// `batchEnded` runs on the indexer's thread whenever an extraction leaves the queue empty: the daemon hands
    /// back there what extracting freed (docs/performance.md, "Root's indexing RSS").
    public init(
        store: MetadataStore, limits: TextExtractor.Limits = TextExtractor.Limits(), retries: Retries = Retries(),
        logger: Logger = Logger(label: "campusfs.index"), batchEnded: @escaping @Sendable () -> Void = {}
    ) {
        self.store = store
        self.limits = limits
        self.retries = retries
        self.logger = logger
        self.batchEnded = batchEnded
    }

    /// Documents queued, and the one being indexed (not those waiting to be tried again).
    public var waiting: Int {
        queue.withLock { $0.waiting + ($0.current == nil ? 0 : 1) }
    }

    /// Queues a copy; returns at once (the content cache calls it on its actor).
    public func enqueue(_ copy: CommittedCopy) {
        guard queue.withLock({ $0.push(copy) }) else { return }
        worker.submit { [self] in indexNext() }
    }

    /// Queues the cached copies the index lacks, most recently used first (what a student searches for first), and
    /// returns how many. The store work runs where the store's always does (``MetadataStore/run(_:)``), not on the
    /// indexer's thread, where it would wait behind every extraction already queued.
    @discardableResult
    public func enqueueUnindexed(in inventory: CacheInventory) async throws(StoreError) -> Int {
        let copies = try await store.run { store throws(StoreError) in
            Self.unindexed(in: inventory, subjects: try store.indexingSubjects())
        }
        for copy in copies { enqueue(copy) }
        return copies.count
    }

    /// Drops all extracted text and queues every cached copy again (`campusfs index --rebuild`); returns how many.
    /// An extraction running meanwhile stores its text after the drop, and the queueing then skips that document.
    public func rebuild(from inventory: CacheInventory) async throws(StoreError) -> Int {
        try await store.run { store throws(StoreError) in try store.forgetExtractions() }
        return try await enqueueUnindexed(in: inventory)
    }

    /// Stops trying failed extractions again (the daemon's shutdown): their waiting tasks end now, not minutes later
    /// over a closed store.
    public func stop() {
        let waiting = queue.withLock { queue in
            queue.stopped = true
            defer { queue.retrying = [:] }
            return Array(queue.retrying.values)
        }
        for task in waiting { task.cancel() }
    }

    private func indexNext() {
        guard let copy = queue.withLock({ $0.pop() }) else { return }
        let outcome = extract(copy)
        let drained = queue.withLock { queue in
            queue.current = nil
            return queue.waiting == 0
        }
        switch outcome {
        case .indexed, .failed: if drained { batchEnded() }
        case .alreadyIndexed, .outdated, .copyGone, nil: break
        }
    }

    /// Indexes one copy, logs what came of it and schedules a retry; nil when the store failed.
    private func extract(_ copy: CommittedCopy) -> Outcome? {
        // Queued again before its retry was due (the cache committed it anew): this extraction is that retry.
        queue.withLock { $0.retrying.removeValue(forKey: copy) }?.cancel()
        let started = ContinuousClock.now
        var outcome: Outcome?
        do throws(StoreError) {
            outcome = try Self.index(copy, store: store, limits: limits, maximumTries: retries.attempts)
        } catch {
            logger.warning("indexing failed", metadata: ["document": "\(copy.documentID)", "error": "\(error)"])
        }
        switch outcome {
        case .indexed(let parts):
            logger.debug(
                "indexed",
                metadata: [
                    "document": "\(copy.documentID)", "parts": "\(parts)", "time": "\(ContinuousClock.now - started)",
                ])
        case .failed(let error, let tries):
            logger.info(
                "no text indexed",
                metadata: [
                    "document": "\(copy.documentID)", "reason": "\(error)",
                    "retry": "\(tries.map { "in \(retries.delay * $0)" } ?? "no")",
                ])
            if let tries { retry(copy, after: retries.delay * tries) }
        case .alreadyIndexed, .outdated, .copyGone, nil:
            break
        }
        return outcome
    }

    /// Queues `copy` again after `delay`; a sleeping task, not a thread, waits meanwhile. Made under the queue's
    /// lock, so the task cannot look for its entry before it is there.
    private func retry(_ copy: CommittedCopy, after delay: Duration) {
        queue.withLock { queue in
            guard !queue.stopped else { return }
            queue.retrying[copy] = Task { [weak self] in
                try? await Task.sleep(for: delay)
                guard !Task.isCancelled, let self else { return }
                let queued = self.queue.withLock { queue in
                    // Gone: stopped, or extracted meanwhile. Queued already (this or a newer copy): that one runs.
                    queue.retrying.removeValue(forKey: copy) != nil && queue.pushAgain(copy)
                }
                if queued { self.worker.submit { [self] in self.indexNext() } }
            }
        }
    }
}

/// The steps themselves, synchronous and blocking, shared by the daemon's worker and `campusfs index --rebuild`
/// without a mount.
extension ContentIndexer {
    /// Extracts `copy`'s text and stores it, or records why there is none.
    public static func index(
        _ copy: CommittedCopy, store: MetadataStore, limits: TextExtractor.Limits = TextExtractor.Limits(),
        maximumTries: Int = Retries().attempts
    ) throws(StoreError) -> Outcome {
        guard let subject = try store.indexingSubject(documentID: copy.documentID),
            CacheDocument(id: subject.documentID, version: subject.version).version == copy.version
        else { return .outdated }
        guard needsExtraction(subject) else { return .alreadyIndexed }
        let extractor = TextExtractor.version(name: subject.name, mimeType: subject.mimeType)
        let text: ExtractedText
        do throws(ExtractionError) {
            text = try TextExtractor.extract(
                file: URL(fileURLWithPath: copy.path), name: subject.name, mimeType: subject.mimeType, limits: limits)
        } catch {
            // Not the document's fault: it is extracted again when it is cached again.
            guard access(copy.path, F_OK) == 0 else { return .copyGone }
            let tries = try store.recordExtractionFailure(
                documentID: subject.documentID, version: subject.version, extractor: extractor,
                reason: error.description, retryable: error.isRetryable, maximumTries: maximumTries)
            return .failed(error, tries: tries)
        }
        try store.indexContent(
            documentID: subject.documentID, version: subject.version, extractor: extractor,
            partKind: partKind(text.kind), parts: text.parts.map { ($0.number, $0.text) })
        return .indexed(parts: text.parts.count)
    }

    /// Whether the index lacks what this extractor would give for the document's current version: nothing stored,
    /// an older version's, an older extractor's, or a failure that depended on the machine.
    public static func needsExtraction(_ subject: IndexingSubject) -> Bool {
        guard subject.isIndexed, !subject.indexedRetryable, let extractor = subject.indexedExtractor else {
            return true
        }
        return extractor < TextExtractor.version(name: subject.name, mimeType: subject.mimeType)
    }

    /// The copies in `inventory` that are their document's current version and that ``needsExtraction(_:)``, most
    /// recently used first.
    public static func unindexed(in inventory: CacheInventory, subjects: [String: IndexingSubject]) -> [CommittedCopy] {
        inventory.copies.filter { id, copy in
            guard let subject = subjects[id], needsExtraction(subject) else { return false }
            return CacheDocument(id: id, version: subject.version).version == copy.version
        }
        .sorted { $0.value.lastUsed > $1.value.lastUsed }
        .map { CommittedCopy(documentID: $0.key, version: $0.value.version, path: $0.value.path) }
    }

    private static func partKind(_ kind: ExtractedText.Kind) -> TextPartKind? {
        switch kind {
        case .pdf: .page
        case .presentation: .slide
        case .spreadsheet: .sheet
        case .document, .text: nil
        }
    }
}
