import FUSEKit
import Glibc
import Synchronization

/// A reply for calling a ``FileSystemOperations`` implementation directly, without a kernel: it records the
/// answer, lets a test wait for one given later from a task, and simulates the kernel's interrupt.
///
/// ```swift
/// let open = RecordingReply<ReplyKind.Open>()
/// fileSystem.open(inode, file: FileInfo(), reply: open.reply)
/// let opened = try await open.answer().opened
/// ```
///
/// ``reply`` is an ordinary ``Reply``: answered once, a second answer ignored, and `EIO` answered when it is
/// released unanswered (which a test holding the recording never sees; ``answer(within:)`` fails instead).
public final class RecordingReply<Kind: ReplyPayload>: Sendable {
    /// What the filesystem under test answers.
    public let reply: Reply<Kind>
    private let recorder: Recorder

    /// - Parameters:
    ///   - size: the buffer the "kernel" offers: bytes for reads, listings, getxattr and listxattr (0 is the
    ///     size probe of getxattr/listxattr).
    ///   - context: who "sent" the request.
    public init(size: Int = 0, context: RequestContext = RequestContext(), operation: StaticString = "test") {
        let recorder = Recorder()
        self.recorder = recorder
        reply = Reply(sink: recorder, operation: operation, context: context, size: size)
    }

    /// The answer given so far.
    public var answered: ReplyAnswer? { recorder.answered }

    /// Waits for the answer; fails when none comes within `timeout`.
    public func answer(within timeout: Duration = .seconds(10)) async throws(RecordingError) -> ReplyAnswer {
        guard let answer = await recorder.wait(timeout: timeout) else { throw .noAnswer(within: timeout) }
        return answer
    }

    /// Interrupts the request as the kernel does when its caller gets a signal (FUSE_INTERRUPT).
    public func interrupt() {
        recorder.interrupt()
    }
}

/// Why a test got no answer.
public enum RecordingError: Error, CustomStringConvertible {
    case noAnswer(within: Duration)
    /// The answer was of another kind than the test expected.
    case unexpected(ReplyAnswer, expected: String)

    public var description: String {
        switch self {
        case .noAnswer(let timeout): "no answer within \(timeout)"
        case .unexpected(let answer, let expected): "expected \(expected), the answer was \(answer)"
        }
    }
}

/// The ``ReplySink`` behind a ``RecordingReply``.
private final class Recorder: ReplySink {
    private struct State {
        var answer: ReplyAnswer?
        var waiters: [Int: CheckedContinuation<ReplyAnswer?, Never>] = [:]
        var nextWaiter = 0
        var interrupted = false
        var interruptHandler: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    var answered: ReplyAnswer? { state.withLock { $0.answer } }

    func send(_ answer: ReplyAnswer) -> Bool {
        // A descriptor is only valid during this call: the recording keeps its bytes, as the kernel would.
        let answer = if case .fileRange(let range) = answer { ReplyAnswer.data(range.bytes()) } else { answer }
        let waiters = state.withLock { state in
            state.answer = answer
            state.interruptHandler = nil
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: answer) }
        return true
    }

    func onInterrupt(_ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            guard state.answer == nil else { return false }
            if state.interrupted { return true }
            state.interruptHandler = handler
            return false
        }
        if runNow { handler() }
    }

    func interrupt() {
        let handler = state.withLock { state -> (@Sendable () -> Void)? in
            guard state.answer == nil else { return nil }
            state.interrupted = true
            defer { state.interruptHandler = nil }
            return state.interruptHandler
        }
        handler?()
    }

    func wait(timeout: Duration) async -> ReplyAnswer? {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let timer = Task { [self] in
            try? await Task.sleep(for: timeout)
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(returning: nil)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            let answer = state.withLock { state -> ReplyAnswer? in
                if state.answer == nil { state.waiters[id] = continuation }
                return state.answer
            }
            if let answer { continuation.resume(returning: answer) }
        }
    }
}

extension FileRange {
    /// The bytes the kernel would take from the descriptor (fewer at its end of file).
    fileprivate func bytes() -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            guard let base = buffer.baseAddress else { return }
            while initialized < count {
                let n = pread(descriptor, base + initialized, count - initialized, off_t(offset) + off_t(initialized))
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { return }
                initialized += n
            }
        }
    }
}
