import Synchronization

/// One download of one document version, shared by every open and prefetch that wants it.
///
/// Its file is sparse (docs/ranges.md, "In the cache"): the stream from byte 0 and range fetches for reads out of
/// order write into it, and ``present`` records which bytes are on disk. The download task and the fetches advance
/// it; readers wait on it. Its state sits behind a `Mutex` rather than in the cache actor, so a read of bytes already
/// on disk costs one uncontended lock instead of an actor hop, and a reader waiting for bytes suspends on a
/// continuation (no thread blocks) that the writer resumes after `pwrite` — and tells the stream's writer to stop
/// gathering chunks (``BodyWriter``).
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

    /// What the gap filler (``DownloadJob``) does next.
    enum Gap: Sendable {
        /// Every byte is present.
        case complete
        /// Fetch these bytes; `claim`: the part marked as being fetched (``atLeastTwo(_:size:)`` may add a byte
        /// present or another fetch's).
        case fetch(Range<Int64>, claim: Range<Int64>)
        /// The missing bytes are all being fetched: wait for a change after this generation.
        case wait(UInt64)
        /// Ranges do not work for this download (or it ended): read the stream.
        case unavailable
    }

    private enum Condition {
        case started
        case range(Range<Int64>)
        case finished
        /// No checkpoint job is queued or running.
        case checkpointsIdle
        /// Anything changed since this generation (bytes present, a fetch ended).
        case changed(UInt64)
    }

    private struct Waiter {
        let condition: Condition
        let continuation: CheckedContinuation<Void, Never>
    }

    private struct State {
        var phase = Phase.starting
        var present: ByteRanges
        /// Bytes range fetches are getting now: nobody asks for them again.
        var fetching = ByteRanges()
        /// Bytes the stream has received (written or not); nil while no stream runs.
        var streamPosition: Int64?
        /// The end of the farthest read that waits for the stream: a reader following it, whose next reads (the
        /// kernel's readahead) continue from there rather than from the stream (``RangeFetcher/streamWindow``).
        var followed: Int64 = 0
        /// Bytes writers hold that are not on disk yet (a pin's progress).
        var unwritten: Int64 = 0
        /// A range fetch of this download failed: from now on it reads its stream only.
        var rangesFailed = false
        /// The `ETag` of the bytes present: the stream's, or the one a resumed partial was recorded with.
        var etag: String?
        /// Whether a checkpoint job is queued or running (``RangeFetcher/checkpoint(_:)``), asked to write again, and
        /// whether checkpoints are over (the file is committed or deleted: a map written now would be stale).
        var checkpoint = (running: false, again: false, closed: false)
        /// The last fetch a read started: a read that continues where it ended is sequential and fetches more.
        var lastFetch: Range<Int64>?
        var generation: UInt64 = 0
        var fetchTasks: [UInt64: Task<Void, Never>] = [:]
        var waiters: [UInt64: Waiter] = [:]
        var nextID: UInt64 = 0
        /// Whether a reader has waited for bytes not yet on disk.
        var bytesAwaited = false
        /// What to call when one does (``whenBytesAwaited(_:)``).
        var onBytesAwaited: (@Sendable () -> Void)?

        func satisfies(_ condition: Condition) -> Bool {
            switch (condition, phase) {
            case (.started, .starting), (.started, .validating): false
            case (.started, _): true
            case (.range(let range), _): present.contains(range) || phase.isTerminal
            case (.finished, _): phase.isTerminal
            case (.checkpointsIdle, _): !checkpoint.running
            case (.changed(let since), _): generation > since || phase.isTerminal
            }
        }

        mutating func takeSatisfied() -> [CheckedContinuation<Void, Never>] {
            let ready = waiters.filter { satisfies($0.value.condition) }
            for id in ready.keys { waiters[id] = nil }
            return ready.values.map(\.continuation)
        }

        mutating func newID() -> UInt64 {
            nextID += 1
            return nextID
        }
    }

    let document: CacheDocument
    /// The blob name the download becomes.
    let blob: String
    /// The sparse file being filled (`partial/`, ``CacheLayout``).
    let temporaryPath: String
    /// Read-write on the temporary file: the download writes through it, handles opened meanwhile read through it.
    let descriptor: Descriptor
    /// Fetches parts by ranges; nil when this download cannot use them (size unknown or below two bytes).
    let fetcher: RangeFetcher?
    /// The `ETag` the bytes already present came with (a resumed partial), nil for a fresh download.
    let resumedETag: String?
    /// Whether it resumed a partial download a previous run left.
    let isResumed: Bool
    private let state: Mutex<State>

    init(
        document: CacheDocument, blob: String, temporaryPath: String, descriptor: Descriptor,
        fetcher: RangeFetcher? = nil, present: ByteRanges = ByteRanges(), resumedETag: String? = nil
    ) {
        self.document = document
        self.blob = blob
        self.temporaryPath = temporaryPath
        self.descriptor = descriptor
        self.fetcher = document.size >= 2 ? fetcher : nil
        self.resumedETag = resumedETag
        isResumed = !present.isEmpty
        state = Mutex(State(present: present, etag: resumedETag))
    }

    var phase: Phase { state.withLock { $0.phase } }

    /// Bytes on disk so far.
    var present: ByteRanges { state.withLock { $0.present } }

    /// What a checkpoint records (``RangeFetcher/checkpoint(_:)``); nil once the transfer ended.
    var checkpointState: (present: ByteRanges, etag: String?)? {
        state.withLock { $0.phase.isTerminal ? nil : ($0.present, $0.etag) }
    }

    /// Asks for a checkpoint: true when the caller starts the job, false when the running one writes again.
    func requestCheckpoint() -> Bool {
        state.withLock { state in
            if state.checkpoint.closed { return false }
            if state.checkpoint.running {
                state.checkpoint.again = true
                return false
            }
            state.checkpoint.running = true
            return true
        }
    }

    /// The job wrote a map: whether it writes another (asked meanwhile), else it ends.
    func checkpointAgain() -> Bool {
        var again = false
        _ = update { state in
            state.checkpoint.running = state.checkpoint.again && !state.checkpoint.closed
            state.checkpoint.again = false
            again = state.checkpoint.running
            return true
        }
        return again
    }

    /// Ends checkpoints and waits for a job under way, before the file is renamed into `blobs/` or deleted and its map
    /// with it: no map is written after. It waits also when the caller's task is cancelled (a removal, a superseded
    /// job), in a task of its own: a job is one `fdatasync` and a rename on the pool, and a map that lands after its
    /// deletion would name a file that is gone.
    func closeCheckpoints() async {
        let running = state.withLock { state in
            state.checkpoint.closed = true
            return state.checkpoint.running
        }
        guard running else { return }
        await Task.detached { [self] in await wait(for: .checkpointsIdle) }.value
    }

    /// What the transfer made of the stream's answer (``streamAnswered(etag:)``).
    enum StreamStart: Sendable {
        case streaming
        /// It ended already (deadline, removal): the answer is moot.
        case ended
        /// The bytes present, or a range under way, are of this other `ETag`: mixing would corrupt the document.
        case otherVersion(String)
    }

    /// The stream answered with `etag`: the bytes it brings are that version's, from byte 0 on. One step with the
    /// start, which wakes the openers: a read between the two would not see the stream and fetch its first bytes by
    /// a range, where the stream then stops (docs/ranges.md, "In the cache").
    func streamAnswered(etag: String?) -> StreamStart {
        var start = StreamStart.ended
        _ = update { state in
            switch state.phase {
            case .starting, .streaming: break
            default: return false
            }
            if let known = state.etag, let etag, known != etag {
                start = .otherVersion(known)
                return false
            }
            state.phase = .streaming
            state.etag = etag ?? state.etag
            state.streamPosition = 0
            start = .streaming
            return true
        }
        return start
    }

    /// The `ETag` of the bytes present, which range fetches send as `If-Range`.
    var etag: String? { state.withLock { $0.etag } }

    /// A range answered with `etag`: false when it is another version than the bytes present (a range asked before
    /// the stream or a resumed partial named one); the first `ETag` known becomes the download's, which the stream
    /// must then have too.
    func adopt(etag: String?) -> Bool {
        state.withLock { state in
            guard let etag else { return true }
            guard let known = state.etag else {
                state.etag = etag
                return true
            }
            return known == etag
        }
    }

    /// Reads waiting for bytes now (tests watch coalescing with it).
    var waitingReads: Int {
        state.withLock { $0.waiters.values.filter { if case .range = $0.condition { true } else { false } }.count }
    }

    /// Bytes the server sent so far: on disk or about to be (a pin's progress).
    var received: Int64 {
        state.withLock { state in
            let received = state.present.count + state.unwritten
            return document.size > 0 ? min(received, document.size) : received
        }
    }

    /// Records bytes a writer got, before they are written; `streamPosition`: the stream has received this far.
    func receive(_ count: Int, streamPosition: Int64?) {
        state.withLock { state in
            state.unwritten += Int64(count)
            if let streamPosition { state.streamPosition = streamPosition }
        }
    }

    /// The stream stopped (it reached bytes present, or failed over to ranges): reads no longer wait for it.
    func streamStopped() {
        _ = update { state in
            state.streamPosition = nil
            state.generation += 1
            return true
        }
    }

    /// The server answered a range, or a revalidation with 304; false when the transfer already ended (deadline,
    /// removal) and the answer is moot. A stream's answer is ``streamAnswered(etag:)``.
    func respond(notModified: Bool) -> Bool {
        update { state in
            if !notModified, case .streaming = state.phase { return true }
            guard case .starting = state.phase else { return false }
            state.phase = notModified ? .validating : .streaming
            return true
        }
    }

    /// Records bytes written; false when the transfer was abandoned meanwhile and the writer should stop.
    func add(_ range: Range<Int64>) -> Bool {
        update { state in
            state.unwritten = max(0, state.unwritten - Int64(range.count))
            guard !state.phase.isTerminal else { return false }
            state.present.insert(range)
            state.generation += 1
            return true
        }
    }

    /// Drops bytes a writer held but will not write (it failed or was discarded).
    func dropUnwritten(_ count: Int) {
        state.withLock { $0.unwritten = max(0, $0.unwritten - Int64(count)) }
    }

    func finish(_ phase: Phase) {
        let changed = update { state in
            guard !state.phase.isTerminal else { return false }
            state.phase = phase
            return true
        }
        if changed { cancelFetches() }
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

    /// Waits until something changes after `generation` (``Gap/wait(_:)``).
    func awaitChange(since generation: UInt64) async {
        await wait(for: .changed(generation))
    }

    /// Whether every byte of `range` is on disk now.
    func hasBytes(_ range: Range<Int64>) -> Bool {
        state.withLock { state in
            if case .completed = state.phase { return true }
            return state.present.contains(range)
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

    /// Waits until `range` is on disk, fetching it by ranges when the stream will not bring it soon; throws if the
    /// download fails before it gets there.
    func awaitBytes(_ range: Range<Int64>) async throws(ContentCacheError) {
        if let fetcher {
            for (piece, claim) in plan(range, fetcher) { startFetch(piece, claim: claim, fetcher) }
        }
        await wait(for: .range(range))
        let (phase, present) = state.withLock { ($0.phase, $0.present) }
        if present.contains(range) { return }
        switch phase {
        case .completed: return
        case .failed(let error): throw error
        default: throw .cancelled
        }
    }

    /// The stream is at `position`: whether to stop it. `.complete` when every byte from there on is present;
    /// `.fetch` (nothing marked) when ranges work and it reached bytes present or being fetched (a read's range, still
    /// arriving: streaming on would fetch them twice), so the gaps are fetched instead.
    func streamShouldStop(at position: Int64) -> Gap? {
        state.withLock { state in
            let size = document.size
            guard size > 0, position < size else { return nil }
            if state.present.contains(position..<size) { return .complete }
            guard let fetcher, !state.rangesFailed, fetcher.support.isAvailable,
                state.present.range(containing: position) != nil || state.fetching.range(containing: position) != nil
            else { return nil }
            return .fetch(position..<size, claim: position..<position)
        }
    }

    /// The next bytes the gap filler fetches, at most `limit` of them (and at least two: see ``RangeRequest``).
    func nextGap(limit: Int64) -> Gap {
        state.withLock { state in
            let size = document.size
            if state.present.contains(0..<size) { return .complete }
            guard let fetcher, !state.phase.isTerminal, !state.rangesFailed, fetcher.support.isAvailable else {
                return .unavailable
            }
            var claimed = state.present
            for range in state.fetching.ranges { claimed.insert(range) }
            guard let gap = claimed.gaps(in: 0..<size).first else { return .wait(state.generation) }
            let claim = gap.lowerBound..<min(gap.upperBound, gap.lowerBound + limit)
            state.fetching.insert(claim)
            return .fetch(Self.atLeastTwo(claim, size: size), claim: claim)
        }
    }

    /// Decides the range fetches a read of `range` needs and marks them as being fetched (docs/ranges.md, "In the
    /// cache"): none when the bytes are present or coming (fetched, or within ``RangeFetcher/streamWindow`` of the
    /// stream or of the reads that follow it
    /// stream); else the chunk around the first missing byte, larger for a read that continues the last fetch,
    /// minus what is present or being fetched.
    private func plan(_ range: Range<Int64>, _ fetcher: RangeFetcher) -> [(Range<Int64>, claim: Range<Int64>)] {
        state.withLock { state in
            guard !state.phase.isTerminal, !state.rangesFailed, fetcher.support.isAvailable else { return [] }
            let size = document.size
            var claimed = state.present
            for fetching in state.fetching.ranges { claimed.insert(fetching) }
            let wanted: Range<Int64>
            if let first = claimed.gaps(in: range).first?.lowerBound {
                if let stream = state.streamPosition, first < max(stream, state.followed) + fetcher.streamWindow {
                    state.followed = max(state.followed, range.upperBound)
                    return []
                }
                if let last = state.lastFetch, first >= last.upperBound, first < last.upperBound + RangeFetcher.chunk {
                    wanted = last.upperBound..<min(last.upperBound + Self.grown(last), size)
                } else {
                    let start = first / RangeFetcher.chunk * RangeFetcher.chunk
                    wanted = start..<min(start + RangeFetcher.chunk, size)
                }
            } else if let last = state.lastFetch, last.upperBound < size,
                range.upperBound > last.lowerBound + Int64(last.count) / 2, range.upperBound <= last.upperBound
            {
                // Read-ahead: a read in the second half of the last fetch starts the next one, twice as large.
                if let stream = state.streamPosition,
                    last.upperBound < max(stream, state.followed) + fetcher.streamWindow
                {
                    return []
                }
                wanted = last.upperBound..<min(last.upperBound + Self.grown(last), size)
            } else {
                return []
            }
            state.lastFetch = wanted
            let claims = claimed.gaps(in: wanted)
            for claim in claims { state.fetching.insert(claim) }
            return claims.map { (Self.atLeastTwo($0, size: size), $0) }
        }
    }

    /// The size of the fetch after `last` for a sequential reader: twice as large, up to the read-ahead limit.
    private static func grown(_ last: Range<Int64>) -> Int64 {
        min(max(Int64(last.count), RangeFetcher.chunk) * 2, RangeFetcher.readAheadLimit)
    }

    /// `range` grown by a byte before or after it when it holds only one. Only `range` is claimed: the byte added
    /// may be another fetch's, which must stay claimed when this one ends.
    private static func atLeastTwo(_ range: Range<Int64>, size: Int64) -> Range<Int64> {
        guard range.count < 2 else { return range }
        return range.lowerBound > 0 ? range.lowerBound - 1..<range.upperBound : range.lowerBound..<range.upperBound + 1
    }

    /// Runs a range fetch in a task of its own: a cancelled read does not cancel a fetch others may wait for. The task
    /// is registered in the same lock step as it is made, so one that ends at once finds its entry to remove.
    private func startFetch(_ piece: Range<Int64>, claim: Range<Int64>, _ fetcher: RangeFetcher) {
        let ended = state.withLock { state in
            guard !state.phase.isTerminal else { return true }
            let id = state.newID()
            state.fetchTasks[id] = Task.detached { [self] in
                _ = await fetcher.fetch(piece, claim: claim, into: self)
                self.fetchTaskEnded(id)
            }
            return false
        }
        if ended { fetchEnded(claim, failed: false) }
    }

    private func fetchTaskEnded(_ id: UInt64) {
        _ = state.withLock { $0.fetchTasks.removeValue(forKey: id) }
    }

    /// A range fetch that claimed `claim` ended; `failed`: from now on this download reads its stream only.
    func fetchEnded(_ claim: Range<Int64>, failed: Bool) {
        _ = update { state in
            state.fetching.remove(claim)
            if failed { state.rangesFailed = true }
            state.generation += 1
            return true
        }
    }

    /// Whether this download may still fetch ranges.
    var rangesWork: Bool {
        guard let fetcher else { return false }
        return !state.withLock { $0.rangesFailed } && fetcher.support.isAvailable
    }

    /// Cancels the range fetches under way and waits for them to end, before the complete file is fsynced and
    /// renamed: a fetch of bytes the stream brought meanwhile (after another fetch failed) must not write into the
    /// blob after that.
    func endFetches() async {
        let tasks = state.withLock { state in
            defer { state.fetchTasks = [:] }
            return Array(state.fetchTasks.values)
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }

    private func cancelFetches() {
        let tasks = state.withLock { state in
            defer { state.fetchTasks = [:] }
            return state.fetchTasks.values
        }
        for task in tasks { task.cancel() }
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
        let id = state.withLock { $0.newID() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let (resumeNow, hurry) = state.withLock { state -> (Bool, (@Sendable () -> Void)?) in
                    if state.satisfies(condition) || Task.isCancelled { return (true, nil) }
                    state.waiters[id] = Waiter(condition: condition, continuation: continuation)
                    guard case .range = condition else { return (false, nil) }
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
