import Synchronization
import SystemSupport

/// Writes one body — a download's stream from byte 0, or a range fetch's from its offset — into the transfer's
/// sparse file from the cache's pool, in batches rather than with a thread hop per network chunk (tens of KiB each),
/// and records each batch in ``Transfer/add(_:)`` once it is on disk.
///
/// A range fetch is for a reader that waits, so its chunks are written at once. For the stream, while nobody waits
/// for the bytes (a prefetch, a pin, a copy read only once it is complete), chunks gather in memory and one job writes
/// each mebibyte with one `pwrite`. Once a reader waits for bytes not on disk (``Transfer/whenBytesAwaited(_:)``),
/// every chunk is written as soon as the writer is free, together with what arrived while it wrote: a waiting reader
/// gets its bytes as soon as the network delivered them, and a busy disk still sees few large writes. At most one job
/// per body is queued or running, so the pool's queue stays bounded by the bodies in flight; the task reading the
/// body waits (holding no thread) only while ``capacity`` bytes are still gathered — the batch being written is not
/// counted, so a body holds at most about twice ``capacity`` in memory.
final class BodyWriter: Sendable {
    /// Bytes gathered before a write when no reader waits.
    static let batchBytes = 1 << 20
    /// Unwritten bytes at which the download stops reading the network until the writer catches up.
    static let capacity = 4 << 20

    private struct State {
        var pending: [[UInt8]] = []
        var pendingBytes = 0
        /// Where the pending bytes start in the file.
        var offset: Int64
        /// Whether a write job is queued or running.
        var writing = false
        /// A reader waits, or the body ended: write whatever is pending.
        var urgent = false
        var failure: ContentCacheError?
        /// The download task, waiting for room or for the writer to finish.
        var waiter: CheckedContinuation<Void, Never>?

        /// Whether a write should start now.
        var shouldWrite: Bool {
            !writing && failure == nil && !pending.isEmpty && (urgent || pendingBytes >= BodyWriter.batchBytes)
        }
    }

    private let transfer: Transfer
    private let isStream: Bool
    private let writes: Counter
    private let pool: BlockingPool
    private let state: Mutex<State>

    /// A writer of the body that starts at `offset`; `stream`: the download's stream, whose position reads compare
    /// with (``Transfer/receive(_:streamPosition:)``). `writes` counts the `pwrite` batches
    /// (``ContentCache/bodyWrites``); they run on `pool`.
    init(transfer: Transfer, offset: Int64 = 0, stream: Bool = true, writes: Counter, pool: BlockingPool) {
        self.transfer = transfer
        isStream = stream
        self.writes = writes
        self.pool = pool
        state = Mutex(State(offset: offset, urgent: !stream))
        guard stream else { return }
        let awaited = transfer.whenBytesAwaited { [weak self] in self?.hurry() }
        if awaited { state.withLock { $0.urgent = true } }
    }

    /// Queues a chunk; waits only while ``capacity`` bytes are unwritten. Throws what a write failed with, or
    /// `.cancelled` once the transfer was abandoned.
    func append(_ chunk: [UInt8]) async throws(ContentCacheError) {
        let (start, received) = try state.withLock { state throws(ContentCacheError) -> (Bool, Int64) in
            if let failure = state.failure { throw failure }
            state.pending.append(chunk)
            state.pendingBytes += chunk.count
            return (claim(&state), state.offset + Int64(state.pendingBytes))
        }
        transfer.receive(chunk.count, streamPosition: isStream ? received : nil)
        if start { submit() }
        try await wait { $0.pendingBytes < Self.capacity || $0.failure != nil }
    }

    /// Writes what is left and waits until it is on disk.
    func finish() async throws(ContentCacheError) {
        let start = state.withLock { state in
            state.urgent = true
            return claim(&state)
        }
        if start { submit() }
        try await wait { !$0.writing }
    }

    /// Drops what is unwritten and waits for a write under way: nothing touches the file after this returns.
    func discard() async {
        state.withLock { state in
            transfer.dropUnwritten(state.pendingBytes)
            state.pending = []
            state.pendingBytes = 0
            if state.failure == nil { state.failure = .cancelled }
        }
        try? await wait { !$0.writing }
    }

    /// A reader waits for bytes: from now on every chunk is written at once.
    private func hurry() {
        let start = state.withLock { state in
            state.urgent = true
            return claim(&state)
        }
        if start { submit() }
    }

    /// Marks a write as started when one should start; the caller then submits it.
    private func claim(_ state: inout State) -> Bool {
        guard state.shouldWrite else { return false }
        state.writing = true
        return true
    }

    private func submit() {
        pool.submit { [self] in writeWhilePending() }
    }

    /// The job: writes the pending chunks as one, until nothing more is due.
    private func writeWhilePending() {
        while true {
            let batch = state.withLock { state -> (chunks: [[UInt8]], offset: Int64)? in
                guard state.failure == nil, !state.pending.isEmpty else {
                    state.writing = false
                    return nil
                }
                defer {
                    state.offset += Int64(state.pendingBytes)
                    state.pending = []
                    state.pendingBytes = 0
                }
                return (state.pending, state.offset)
            }
            wake()
            guard let batch else { return }
            let bytes = batch.chunks.count == 1 ? batch.chunks[0] : Self.concatenated(batch.chunks)
            var failure: ContentCacheError?
            do throws(ContentCacheError) {
                try transfer.descriptor.write(bytes, at: batch.offset)
                writes.increment()
                if !transfer.add(batch.offset..<batch.offset + Int64(bytes.count)) { failure = .cancelled }
            } catch {
                transfer.dropUnwritten(bytes.count)
                failure = error
            }
            let more = state.withLock { state in
                if let failure { state.failure = failure }
                state.writing = false
                return claim(&state)
            }
            wake()
            if !more { return }
        }
    }

    /// The chunks as one array, copied chunk by chunk (`joined()` walks them byte by byte where the standard
    /// library's code is not inlined and optimised, as in a debug build, and the stream then lags the network).
    private static func concatenated(_ chunks: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(chunks.reduce(0) { $0 + $1.count })
        for chunk in chunks { bytes.append(contentsOf: chunk) }
        return bytes
    }

    /// Resumes the download task if it waits; it checks its condition again.
    private func wake() {
        state.withLock { state in
            defer { state.waiter = nil }
            return state.waiter
        }?.resume()
    }

    /// Suspends the download task until `condition` holds; then throws the writer's failure, if any.
    private func wait(until condition: (State) -> Bool) async throws(ContentCacheError) {
        while !state.withLock({ condition($0) }) {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state in
                    if condition(state) { return true }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
        if let failure = state.withLock({ $0.failure }) { throw failure }
    }
}

/// A count several threads add to.
final class Counter: Sendable {
    private let value = Atomic(0)

    func increment() { value.add(1, ordering: .relaxed) }

    var count: Int { value.load(ordering: .relaxed) }
}
