import Foundation
import StudIPKit
import StudIPModel
import Synchronization

/// Deterministic bytes, different for every seed.
func content(_ seed: String, size: Int) -> [UInt8] {
    let hash = seed.utf8.reduce(14_695_981_039_346_656_037) { ($0 ^ UInt64($1)) &* 1_099_511_628_211 }
    var generator = SeededGenerator(seed: hash)
    // Eight bytes per step: documents of 24 MB are made in a debug build's test in well under a second.
    return [UInt8](unsafeUninitializedCapacity: size) { buffer, initialized in
        var offset = 0
        while offset < size {
            let word = generator.next()
            for shift in 0..<min(8, size - offset) {
                buffer[offset + shift] = UInt8(truncatingIfNeeded: word >> (shift * 8))
            }
            offset += 8
        }
        initialized = size
    }
}

/// SplitMix64: reproducible random offsets.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A gate the fake body stops at until the test opens it.
final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Mutex(State())

    var hasWaiter: Bool { state.withLock { !$0.waiters.isEmpty } }

    func wait() async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state in
                if state.isOpen { return true }
                state.waiters[id] = continuation
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    /// Waits like ``wait()``, or until the task is cancelled, as a network read does.
    func waitUnlessCancelled() async {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state in
                    if state.isOpen || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [:] }
            return state.waiters.values
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A Stud.IP that serves deterministic documents (whole, and by ranges when asked to), counts requests and the bytes
/// it sent, and misbehaves on demand.
final class FakeDownloader: DocumentDownloader {
    enum Behavior: Sendable {
        case serve
        case fail(StudIPError)
        /// Never answers (until cancelled).
        case hang
    }

    struct Document: Sendable {
        var bytes: [UInt8]
        var etag: String?
        var lastModified: Date?
    }

    struct Settings: Sendable {
        var behavior = Behavior.serve
        var startDelay = Duration.zero
        var chunkSize = 4096
        var chunkDelay = Duration.zero
        /// Sends `Content-Length` (the body's real length).
        var sendsLength = true
        /// The body stops at the gate before the chunk that starts at this offset.
        var pauseAt: Int?
        /// The body throws `.unreachable` once this many bytes were sent.
        var failAfter: Int?
        /// What ``isKnownUnavailable`` answers.
        var knownUnavailable = false
        /// Documents whose answer (whole or range) waits at the gate, as a request waits for a download slot others
        /// hold.
        var queuedAtTheGate: Set<String> = []
        /// Answers ``downloadRange(_:)``; otherwise it throws `.rangesUnavailable`, as a stream-only installation.
        var servesRanges = false
        /// What a range request throws instead of an answer.
        var rangeFailure: StudIPError?
        /// Range answers wait at ``rangeGate`` before their first chunk.
        var rangesWaitAtGate = false
    }

    private struct State {
        var documents: [String: Document] = [:]
        var settings = Settings()
        var requests: [DownloadRequest] = []
        var rangeRequests: [RangeRequest] = []
        var bodies = 0
        var liveBodies = 0
        var liveRangeBodies = 0
        var bytesSent = 0
    }

    private let state = Mutex(State())
    let gate = Gate()
    /// Where range answers wait (``Settings/rangesWaitAtGate``).
    let rangeGate = Gate()

    var requests: [DownloadRequest] { state.withLock { $0.requests } }
    /// Range requests asked, answered or not.
    var rangeRequests: [RangeRequest] { state.withLock { $0.rangeRequests } }
    /// Body bytes sent, of whole documents and of ranges.
    var bytesSent: Int { state.withLock { $0.bytesSent } }
    /// Bodies sent (304s and failures not counted).
    var bodies: Int { state.withLock { $0.bodies } }
    /// Stream bodies the cache still holds: dropping one cancels its transfer (``DownloadBody``).
    var liveBodies: Int { state.withLock { $0.liveBodies } }
    /// Range bodies the cache still holds (a fetch under way).
    var liveRangeBodies: Int { state.withLock { $0.liveRangeBodies } }

    func set(_ id: String, _ bytes: [UInt8], etag: String? = nil, lastModified: Date? = nil) {
        state.withLock { $0.documents[id] = Document(bytes: bytes, etag: etag, lastModified: lastModified) }
    }

    func configure(_ change: (inout Settings) -> Void) {
        state.withLock { change(&$0.settings) }
    }

    var isKnownUnavailable: Bool { state.withLock { $0.settings.knownUnavailable } }

    func download(_ request: DownloadRequest) async throws(StudIPError) -> DownloadResponse {
        let (settings, document) = state.withLock { state in
            state.requests.append(request)
            return (state.settings, state.documents[request.documentID])
        }
        if settings.startDelay > .zero { try await sleep(settings.startDelay) }
        if settings.queuedAtTheGate.contains(request.documentID) { await gate.wait() }
        switch settings.behavior {
        case .fail(let error): throw error
        case .hang:
            try await sleep(.seconds(3600))
            throw .cancelled
        case .serve: break
        }
        guard let document else { throw .notFound(what: request.documentID) }
        if let etag = request.ifNoneMatch, etag == document.etag { return .notModified }
        if let since = request.ifModifiedSince, let modified = document.lastModified, modified <= since {
            return .notModified
        }
        state.withLock {
            $0.bodies += 1
            $0.liveBodies += 1
        }
        let life = Life { [weak self] in self?.state.withLock { $0.liveBodies -= 1 } }
        let cursor = Cursor()
        let gate = gate
        return .content(
            DownloadBody(
                expectedLength: settings.sendsLength ? Int64(document.bytes.count) : nil, etag: document.etag,
                lastModified: document.lastModified
            ) {
                _ = life
                let position = cursor.position
                if let pauseAt = settings.pauseAt, position >= pauseAt, !cursor.paused {
                    cursor.paused = true
                    await gate.wait()
                }
                if let failAfter = settings.failAfter, position >= failAfter {
                    throw StudIPError.unreachable(server: "fake", detail: "connection reset")
                }
                if settings.chunkDelay > .zero { try await Task.sleep(for: settings.chunkDelay) }
                guard position < document.bytes.count else { return nil }
                let end = min(position + settings.chunkSize, document.bytes.count, settings.failAfter ?? .max)
                cursor.position = end
                return self.sent(Array(document.bytes[position..<end]))
            })
    }

    /// Serves the range exactly (as StudIPKit's verified answer), in chunks of ``Settings/chunkSize``.
    func downloadRange(_ request: RangeRequest) async throws(StudIPError) -> DownloadBody {
        let (settings, document) = state.withLock { state in
            state.rangeRequests.append(request)
            return (state.settings, state.documents[request.documentID])
        }
        if settings.queuedAtTheGate.contains(request.documentID) { await gate.wait() }
        guard settings.servesRanges else {
            throw .rangesUnavailable(what: "document \(request.documentID)", detail: "the fake serves no ranges")
        }
        if let failure = settings.rangeFailure { throw failure }
        guard let document else { throw .notFound(what: request.documentID) }
        guard request.range.count >= 2, request.range.upperBound <= document.bytes.count,
            request.documentSize == Int64(document.bytes.count)
        else { throw .rangesUnavailable(what: "document \(request.documentID)", detail: "bad range \(request.range)") }
        // As StudIPKit: a range whose If-Range is not the document's ETag (it changed) fails.
        if let ifRange = request.ifRange, ifRange != document.etag {
            throw .malformedResponse(what: "document \(request.documentID)", detail: "ETag \(document.etag ?? "none")")
        }
        let cursor = Cursor()
        cursor.position = Int(request.range.lowerBound)
        let end = Int(request.range.upperBound)
        let gate = rangeGate
        state.withLock { $0.liveRangeBodies += 1 }
        let life = Life { [weak self] in self?.state.withLock { $0.liveRangeBodies -= 1 } }
        return DownloadBody(expectedLength: Int64(request.range.count), etag: document.etag) {
            _ = life
            if settings.rangesWaitAtGate, !cursor.paused {
                cursor.paused = true
                await gate.waitUnlessCancelled()
                if Task.isCancelled { throw CancellationError() }
            }
            let position = cursor.position
            guard position < end else { return nil }
            let chunkEnd = min(position + settings.chunkSize, end)
            cursor.position = chunkEnd
            return self.sent(Array(document.bytes[position..<chunkEnd]))
        }
    }

    private func sent(_ chunk: [UInt8]) -> [UInt8] {
        state.withLock { $0.bytesSent += chunk.count }
        return chunk
    }

    private func sleep(_ duration: Duration) async throws(StudIPError) {
        do {
            try await Task.sleep(for: duration)
        } catch {
            throw .cancelled
        }
    }
}

/// Calls `end` when the last reference goes: a body's closure holds it.
private final class Life: Sendable {
    let end: @Sendable () -> Void

    init(end: @escaping @Sendable () -> Void) { self.end = end }

    deinit { end() }
}

/// The body's position; the cache pulls chunks one at a time, so a plain lock suffices.
private final class Cursor: Sendable {
    private let state = Mutex((position: 0, paused: false))

    var position: Int {
        get { state.withLock { $0.position } }
        set { state.withLock { $0.position = newValue } }
    }

    var paused: Bool {
        get { state.withLock { $0.paused } }
        set { state.withLock { $0.paused = newValue } }
    }
}
