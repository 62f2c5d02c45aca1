import Synchronization

/// One download of one document version, shared by every open and prefetch that wants it.
///
/// The download task advances it; readers wait on it. Its state sits behind a `Mutex` rather than in the cache
/// actor, so a read of bytes already on disk costs one uncontended lock instead of an actor hop, and a reader
/// waiting for bytes suspends on a continuation (no thread blocks) that the writer resumes after `pwrite` — and
/// tells the writer to stop gathering chunks (``BodyWriter``).
final class Transfer: Sendable {
    enum Phase: Sendable {
        /// Waiting for the server's answer (the start deadline applies).
        case starting
        /// A 304 arrived; the cache is re-labelling the old blob.
        case validating
        case streaming
        case completed
        case notModified
        case failed(ContentCacheError)

        var isTerminal: Bool {
            switch self {
            case .completed, .notModified, .failed: true
            case .starting, .validating, .streaming: false
            }
        }
    }

    private enum Condition {
        case started
        case bytes(Int64)
        case finished
    }

    private struct Waiter {
        let condition: Condition
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var phase = Phase.starting
        var written: Int64 = 0
        /// Bytes the server sent so far, written or not.
        var received: Int64 = 0
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiterID: UInt64 = 0
        /// Whether a reader has waited for bytes not yet on disk.
        var bytesAwaited = false
        /// What to call when one does (``whenBytesAwaited(_:)``).
        var onBytesAwaited: (@Sendable () -> Void)?

        func satisfies(_ condition: Condition) -> Bool {
            switch (condition, phase) {
            case (.started, .starting), (.started, .validating): false
            case (.started, _): true
            case (.bytes(let end), _): written >= end || phase.isTerminal
            case (.finished, _): phase.isTerminal
            }
        }

        mutating func takeSatisfied() -> [CheckedContinuation<Void, Never>] {
            let ready = waiters.filter { satisfies($0.value.condition) }
            for id in ready.keys { waiters[id] = nil }
            return ready.values.map(\.continuation)
        }
    }

    let document: CacheDocument
    /// The blob name the download becomes.
    let blob: String
    let temporaryPath: String
    /// Read-write on the temporary file: the download writes through it, handles opened meanwhile read through it.
    let descriptor: Descriptor
    private let state = Mutex(State())

    init(document: CacheDocument, blob: String, temporaryPath: String, descriptor: Descriptor) {
        self.document = document
        self.blob = blob
        self.temporaryPath = temporaryPath
        self.descriptor = descriptor
    }

    var phase: Phase { state.withLock { $0.phase } }

    /// Bytes on disk so far.
    var written: Int64 { state.withLock { $0.written } }

    /// Bytes the server sent so far: on disk or about to be (a pin's progress).
    var received: Int64 { state.withLock { max($0.received, $0.written) } }

    /// Records bytes the server sent, before they are written.
    func receive(upTo received: Int64) {
        state.withLock { $0.received = received }
    }

    /// The server answered; false when the transfer already ended (deadline, removal) and the answer is moot.
    func respond(notModified: Bool) -> Bool {
        update { state in
            guard case .starting = state.phase else { return false }
            state.phase = notModified ? .validating : .streaming
            return true
        }
    }

    /// Records bytes written; false when the transfer was abandoned meanwhile and the download should stop.
    func advance(to written: Int64) -> Bool {
        update { state in
            guard case .streaming = state.phase else { return false }
            state.written = written
            return true
        }
    }

    func finish(_ phase: Phase) {
        _ = update { state in
            guard !state.phase.isTerminal else { return false }
            state.phase = phase
            return true
        }
    }

    /// Fails the transfer only if the server has not answered yet (the start deadline).
    func failIfStarting(_ error: ContentCacheError) -> Bool {
        update { state in
            guard case .starting = state.phase else { return false }
            state.phase = .failed(error)
            return true
        }
    }

    /// Waits for the server's answer (or the end).
    func awaitStart() async -> Phase {
        await wait(for: .started)
        return phase
    }

    /// Waits for the end (completed, not modified or failed).
    func awaitEnd() async throws(ContentCacheError) {
        await wait(for: .finished)
        if case .failed(let error) = phase { throw error }
        if Task.isCancelled { throw .cancelled }
    }

    /// Whether the first `end` bytes are on disk now.
    func hasBytes(upTo end: Int64) -> Bool {
        state.withLock { state in
            if case .completed = state.phase { return true }
            return state.written >= end
        }
    }

    /// Calls `hurry` whenever a reader starts waiting for bytes not yet on disk, so that the download writes what it
    /// holds at once (``BodyWriter``); returns whether one waits already.
    func whenBytesAwaited(_ hurry: @escaping @Sendable () -> Void) -> Bool {
        state.withLock { state in
            state.onBytesAwaited = hurry
            return state.bytesAwaited
        }
    }

    /// Waits until the first `end` bytes are on disk; throws if the download fails before it gets there.
    func awaitBytes(upTo end: Int64) async throws(ContentCacheError) {
        await wait(for: .bytes(end))
        let (phase, written) = state.withLock { ($0.phase, $0.written) }
        if written >= end { return }
        switch phase {
        case .completed: return
        case .failed(let error): throw error
        default: throw .cancelled
        }
    }

    private func update(_ change: (inout State) -> Bool) -> Bool {
        let (changed, ready) = state.withLock { state in
            let changed = change(&state)
            return (changed, changed ? state.takeSatisfied() : [])
        }
        for continuation in ready { continuation.resume() }
        return changed
    }

    /// Suspends until `condition` holds or the task is cancelled. Registration and cancellation both take the
    /// lock, and cancellation sets the task's flag before its handler runs, so no wake-up is lost.
    private func wait(for condition: Condition) async {
        if state.withLock({ $0.satisfies(condition) }) { return }
        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let (resumeNow, hurry) = state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
                    if state.satisfies(condition) || Task.isCancelled { return (true, nil) }
                    state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    guard case .bytes = condition else { return (false, nil) }
                    state.bytesAwaited = true
                    return (false, state.onBytesAwaited)
                }
                if resumeNow { continuation.resume() }
                hurry?()
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.continuation.resume()
        }
    }
}
