import AsyncHelpers
import Foundation
import Logging
import MetadataStore
import StudIPKit
import StudIPModel
import SystemSupport

/// The operations waiting for Stud.IP, and their sending (docs/writing.md, "The outbox"). An operation is in the
/// store, and its bytes in `<data directory>/outbox/`, before ``enqueue(_:bytes:draftID:)`` returns; it leaves the
/// outbox when Stud.IP confirmed it and `onSettled` was told, or when the user discards it.
///
/// An actor for its in-memory part (the sender's wake-ups); every file and store access runs on `pool`, never on
/// the cooperative pool (docs/threads.md).
public actor Outbox {
    /// Told once per outcome: done, a conflict resolved, a refusal, an unconfirmed upload, a discard. Called from
    /// the outbox's task; a done or conflicting entry leaves the store only after the handler returned, so that a
    /// crash in between reports it again at the next start.
    public typealias SettledHandler = @Sendable (OutboxEntry, OutboxOutcome) async -> Void

    /// Pending and failed entries, for `campusfs status` and the service's status line.
    public struct Counts: Sendable, Hashable {
        /// Queued, being sent or waiting to be sent again.
        public var pending: Int
        /// Refused by Stud.IP, kept until retried or discarded.
        public var failed: Int
        /// Interrupted where arrival cannot be checked: resent only on retry.
        public var unconfirmed: Int
    }

    let store: MetadataStore
    let bytes: OutboxBytes
    let writer: any DocumentWriter
    let pool: BlockingPool
    let backoff: Backoff
    let onSettled: SettledHandler
    let logger: Logger

    /// Whether ``run()`` is sending.
    var running = false
    /// The entry being sent, which `discard` leaves alone.
    var sendingEntry: Int64?
    /// Wakes the sender when it sleeps: a new entry, a retry, the server back.
    var wakeUp: CheckedContinuation<Void, Never>?
    var woken = false

    /// `dataDirectory`: the profile's data directory (docs/architecture.md, "Paths"); the bytes go to its `outbox/`.
    public init(
        store: MetadataStore, dataDirectory: URL, writer: any DocumentWriter, pool: BlockingPool = .shared,
        backoff: Backoff = Backoff(), logger: Logger = Logger(label: "campusfs.outbox"),
        onSettled: @escaping SettledHandler
    ) {
        self.store = store
        bytes = OutboxBytes(directory: dataDirectory.appendingPathComponent("outbox", isDirectory: true))
        self.writer = writer
        self.pool = pool
        self.backoff = backoff
        self.logger = logger
        self.onSettled = onSettled
    }

    /// Queues `operation`. `bytes`: the file to send, for an upload or a new version; the outbox takes it over by
    /// rename (it must be on the data directory's filesystem, as drafts are) and holds it until Stud.IP confirmed
    /// it. Returns the entry's id once the row and the bytes are on disk.
    @discardableResult
    public func enqueue(_ operation: OutboxOperation, bytes source: String?, draftID: Int64?)
        async throws(OutboxError) -> Int64
    {
        guard operation.carriesBytes == (source != nil) else { throw .bytesMismatch(operation) }
        let text = try OutboxCoding.encode(operation)
        let (store, bytes) = (self.store, self.bytes)
        let id = try await pool.run { () throws(OutboxError) -> Int64 in
            var byteCount: Int64?
            if let source {
                try bytes.prepare()
                byteCount = try bytes.size(of: source)
            }
            let row = OutboxRow(
                operation: text, draftID: draftID, state: OutboxState.queued.rawValue, byteCount: byteCount,
                bytesSource: source, created: Date())
            let id = try OutboxCoding.storing { () throws(StoreError) in try store.insertOutboxRow(row) }
            guard let source else { return id }
            do throws(OutboxError) {
                try bytes.takeOver(source, as: id)
            } catch {
                // The bytes are still where they were: the row goes, and the caller keeps its file.
                if !bytes.exists(id) { _ = try? store.deleteOutboxRow(id: id) }
                throw error
            }
            return id
        }
        logger.info("outbox: queued \(id): \(operation)")
        wake()
        return id
    }

    /// Every entry, oldest first.
    public func entries() async throws(OutboxError) -> [OutboxEntry] {
        try await rows().compactMap(\.entry)
    }

    /// Sends a failed, unconfirmed or waiting entry again, at once.
    public func retry(_ id: Int64) async throws(OutboxError) {
        try await change(id) { row in
            guard let state = OutboxState(rawValue: row.state) else { return }
            switch state {
            case .failed, .unconfirmed, .waiting:
                row.state = OutboxState.queued.rawValue
                row.reason = nil
                row.notBefore = nil
                // The user asked for it: an unconfirmed upload is sent without the check it could not pass. A
                // waiting one that may have arrived is still looked for first (and stays not to be taken back:
                // ``OutboxProgress/requestLeft`` is never cleared).
                if state == .unconfirmed {
                    var progress = OutboxProgress(row.progress)
                    progress.mayHaveArrived = false
                    row.progress = progress.text
                }
            case .queued, .sending, .settled: break
            }
        }
        wake()
    }

    /// Removes an entry that is not being sent, and its bytes; `onSettled` is told (`.discarded`). Entries that
    /// waited for the folder it was to make fail. Whether it is being sent is decided by the store's row in the
    /// transaction that removes it: the sender marks it `sending` there before any byte leaves. A row left
    /// `sending` by a sender that died is not being sent: no sender holds the lock (a live one resets such rows
    /// before it sends, ``recover()``), and none can start while the discard holds it.
    public func discard(_ id: Int64) async throws(OutboxError) {
        guard sendingEntry != id else { throw .busy(id) }
        let (store, bytes) = (self.store, self.bytes)
        let found = try await pool.run { () throws(OutboxError) in
            let idle = try OutboxLock.acquire(in: bytes)
            defer { withExtendedLifetime(idle) {} }
            return try OutboxCoding.storing { () throws(StoreError) in
                try store.removeOutboxRow(id: id) { row in
                    row.state != OutboxState.sending.rawValue || idle != nil
                } updating: { other in
                    guard other.entry?.operation.awaitedEntry == id else { return nil }
                    var other = other
                    other.state = OutboxState.failed.rawValue
                    other.reason = "the folder it was to go into was discarded from the outbox (entry \(id))"
                    return other
                }
            }
        }
        guard let found else { throw .noSuchEntry(id) }
        guard found.removed else { throw .busy(id) }
        guard let entry = found.row.entry else { throw .noSuchEntry(id) }
        try? await pool.run { () throws(OutboxError) in try bytes.remove(id) }
        logger.info("outbox: discarded \(id): \(entry.operation)")
        await onSettled(entry, .discarded)
        for dependent in found.dependents {
            if let entry = dependent.entry, let reason = dependent.reason {
                await onSettled(entry, .failed(reason: reason))
            }
        }
    }

    /// Takes the entries of a draft back before the user renames or deletes it, and writes `draft` (editing again)
    /// in the same transaction, when that is certain to be safe: each entry carries bytes, is not being sent and no
    /// attempt of it may have reached Stud.IP (``isWithdrawable(_:)``). Only then are the bytes the outbox held for
    /// them removed: a start in between finds the draft editing with its own file, and ``recover()`` removes the
    /// bytes no row names. Returns the ids taken back (none: the draft has no entry, and nothing was written); nil
    /// when an entry may not be taken back. Blocks: called from libfuse's workers (docs/writing.md, "Renaming or
    /// deleting a file in the outbox").
    public nonisolated func withdraw(_ draft: DraftRecord) throws(OutboxError) -> [Int64]? {
        var sources: [String] = []
        let withdrawn = try OutboxCoding.storing { () throws(StoreError) in
            try store.withdrawOutboxRows(of: draft) { row in
                if let source = row.bytesSource { sources.append(source) }
                return Self.isWithdrawable(row)
            }
        }
        guard let withdrawn, !withdrawn.isEmpty else { return withdrawn }
        for id in withdrawn { try? bytes.remove(id) }
        // Bytes committed with their row and not yet moved in (a start's recovery moves them): the outbox's too.
        for source in sources { unlink(source) }
        logger.info("outbox: took back \(withdrawn) of draft \(draft.id ?? 0) (\(draft.name)) before it was sent")
        return withdrawn
    }

    /// Whether taking an entry back cannot leave a copy on Stud.IP: it carries bytes (an upload or a new version,
    /// whose draft holds the same bytes), it is queued, waiting or refused, never `sending`, and no attempt of it
    /// may have arrived: never attempted, or each attempt ended before its request left (the folder's listing
    /// failed, a connection that never delivered it) or with an answer proving nothing was stored (a refusal,
    /// 429, 503) (``OutboxProgress/requestLeft``).
    static func isWithdrawable(_ row: OutboxRow) -> Bool {
        guard let entry = row.entry, entry.operation.carriesBytes,
            [.queued, .waiting, .failed].contains(entry.state)
        else { return false }
        let progress = OutboxProgress(row.progress)
        return !progress.mayHaveArrived && !progress.sent(after: row.attempts)
    }

    /// The content `ETag` of document `documentID` now (one `HEAD` through the writer), nil when the API has none,
    /// the document is hosted elsewhere, or the request failed: what a draft over it starts from
    /// (``Workspace/learnBaseETag(of:)``).
    public nonisolated func contentETag(of documentID: String) async -> String? {
        try? await writer.contentETag(documentID: documentID)
    }

    public func counts() async throws(OutboxError) -> Counts {
        let store = self.store
        let counts = try await pool.run { () throws(OutboxError) in
            try OutboxCoding.storing { () throws(StoreError) in try store.outboxStateCounts() }
        }
        func count(_ states: OutboxState...) -> Int { states.reduce(0) { $0 + (counts[$1.rawValue] ?? 0) } }
        return Counts(
            pending: count(.queued, .sending, .waiting), failed: count(.failed), unconfirmed: count(.unconfirmed))
    }

    /// Tells the sender that Stud.IP answers again (the daemon's link is back): waiting entries go now, not
    /// after their backoff.
    public func serverIsBack() async {
        let store = self.store
        _ = try? await pool.run { () throws(OutboxError) in
            try OutboxCoding.storing { () throws(StoreError) in
                try store.modifyOutboxRows { rows in
                    rows.filter { $0.state == OutboxState.waiting.rawValue }.map {
                        var row = $0
                        row.notBefore = nil
                        return row
                    }
                }
            }
        }
        wake()
    }

    // MARK: - Store access

    func rows() async throws(OutboxError) -> [OutboxRow] {
        let store = self.store
        return try await pool.run { () throws(OutboxError) in
            try OutboxCoding.storing { () throws(StoreError) in try store.outboxRows() }
        }
    }

    /// Writes the rows; returns the ids of those no longer in the store (discarded meanwhile).
    @discardableResult
    func save(_ rows: [OutboxRow]) async throws(OutboxError) -> [Int64] {
        let store = self.store
        return try await pool.run { () throws(OutboxError) in
            try OutboxCoding.storing { () throws(StoreError) in try store.updateOutboxRows(rows) }
        }
    }

    /// Reads, changes and writes one row (in two transactions: only this actor changes rows).
    /// Changes row `id` as the store has it, in one transaction (``MetadataStore/modifyOutboxRows(_:)``): a row the
    /// sender marked `sending` meanwhile is changed as `sending`, never written back as it was before.
    func change(_ id: Int64, _ body: @escaping @Sendable (inout OutboxRow) -> Void) async throws(OutboxError) {
        let store = self.store
        let found = try await pool.run { () throws(OutboxError) -> Bool in
            try OutboxCoding.storing { () throws(StoreError) -> Bool in
                var found = false
                try store.modifyOutboxRows { rows in
                    guard var row = rows.first(where: { $0.id == id }) else { return [] }
                    found = true
                    body(&row)
                    return [row]
                }
                return found
            }
        }
        guard found else { throw .noSuchEntry(id) }
    }

    func wake() {
        if let wakeUp {
            self.wakeUp = nil
            wakeUp.resume()
        } else {
            woken = true
        }
    }
}

/// How long a waiting entry waits: `initial` after its first failure, doubling up to `maximum`
/// (docs/writing.md, "The outbox": 10 s to 10 min).
public struct Backoff: Sendable, Hashable {
    public var initial: Duration
    public var maximum: Duration

    public init(initial: Duration = .seconds(10), maximum: Duration = .seconds(600)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The wait after the `attempts`-th failed attempt in a row (1 for the first).
    public func delay(afterAttempts attempts: Int) -> Duration {
        var delay = initial
        for _ in 1..<max(1, attempts) where delay < maximum { delay *= 2 }
        return min(delay, maximum)
    }
}

/// The operation and the sender's notes as the store keeps them: JSON text.
enum OutboxCoding {
    static func encode<T: Encodable>(_ value: T) throws(OutboxError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            preconditionFailure("the outbox's own types always encode: \(error)")
        }
    }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String?) -> T? {
        guard let text else { return nil }
        return try? JSONDecoder().decode(type, from: Data(text.utf8))
    }

    /// `body`'s store errors as the outbox's.
    static func storing<T>(_ body: () throws(StoreError) -> T) throws(OutboxError) -> T {
        do {
            return try body()
        } catch {
            throw .store(error)
        }
    }
}

/// What the sender noted about an entry between attempts, kept in the row (`progress`).
struct OutboxProgress: Codable, Hashable {
    /// An attempt may have reached Stud.IP (interrupted, or an answer that does not say): look before sending again.
    var mayHaveArrived = false
    /// The folder cannot be listed by the user (a homework folder): arrival cannot be checked.
    var unlistable = false
    /// Documents (or folders) of the target folder with the name asked for or Stud.IP's variant of it, before the
    /// first attempt: one that is new afterwards is this entry's.
    var before: Set<String>?
    /// A new version that became an upload (a conflict): the name it goes up under, into `folder`.
    var keptAs: String?
    var conflictFolder: String?
    var conflictCause: OutboxOutcome.ConflictCause?
    /// Sticky: a request carrying the bytes left and Stud.IP's answer did not prove they were not stored (no answer,
    /// a 5xx other than 503, a connection that broke after sending). Set before the request leaves; an attempt
    /// refused for certain puts back what it was before; nothing clears it after (not `retry`, not a later check
    /// that does not find the bytes: legacy REST stores and then answers 500, and a listing may lag). An entry
    /// with it is never taken back (``Outbox/isWithdrawable(_:)``). Nil in rows written before it existed: see
    /// ``sent(after:)``.
    var requestLeft: Bool?

    /// Whether a request carrying the bytes may have left and been stored, after `attempts` attempts. A row written
    /// by a version without ``requestLeft`` that was attempted counts as sent: that version did not record how its
    /// attempts ended, and taking back bytes that may be on Stud.IP would leave a copy under a name the user no
    /// longer has.
    func sent(after attempts: Int) -> Bool {
        requestLeft ?? (attempts > 0)
    }

    /// This attempt's request was refused or never delivered: nothing to look for before the next one, and the
    /// sticky bit is what it was before the attempt (`sentBefore`).
    mutating func didNotArrive(sentBefore: Bool) {
        mayHaveArrived = false
        requestLeft = sentBefore
    }

    init(_ text: String?) {
        self = OutboxCoding.decode(OutboxProgress.self, text) ?? OutboxProgress()
    }

    init() {}

    var text: String? {
        self == OutboxProgress() ? nil : try? OutboxCoding.encode(self)
    }
}

extension OutboxRow {
    /// The row as an entry; nil for an operation this version cannot read (written by a newer one).
    var entry: OutboxEntry? {
        guard let operation = OutboxCoding.decode(OutboxOperation.self, operation),
            let state = OutboxState(rawValue: state)
        else { return nil }
        return OutboxEntry(
            id: id, operation: operation, draftID: draftID, state: state, reason: reason, attempts: attempts,
            notBefore: notBefore, byteCount: byteCount, created: created)
    }
}
