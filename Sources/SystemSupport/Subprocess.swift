import Foundation
import Synchronization

/// Why a child process could not be started.
public struct SubprocessError: Error, Sendable, Hashable, CustomStringConvertible {
    public let executable: String
    public let reason: String

    public var description: String { "cannot start \(executable): \(reason)" }
}

/// Child processes (the password command; the tests' tools), started one way and read one way: stdout and stderr
/// at the same time, since reading one after the other deadlocks once the child fills the other pipe (64 KiB)
/// and waits for it to drain.
public enum Subprocess {
    /// How a child ended and what it printed.
    public struct Output: Sendable, Hashable {
        /// The exit status, or the signal's number when ``signaled``.
        public var status: Int32
        public var stdout: Data
        public var stderr: Data
        /// Whether a signal ended the child (a crash, an abort on failed allocation, the time limit's kill).
        public var signaled = false
        /// Whether the child ran out of ``Limits/time`` and was killed.
        public var timedOut = false
    }

    /// Bounds for a child that reads untrusted input (a PDF from the server), so it can never stall or exhaust
    /// the caller: killed with SIGKILL after `time`; `addressSpace` bytes of virtual memory at most, set by
    /// util-linux's `prlimit`, which sets the limit on itself and then execs the tool (so the PID stays the tool's).
    public struct Limits: Sendable, Hashable {
        public var time: Duration?
        public var addressSpace: Int?

        public init(time: Duration? = nil, addressSpace: Int? = nil) {
            self.time = time
            self.addressSpace = addressSpace
        }
    }

    static let prlimit = URL(fileURLWithPath: "/usr/bin/prlimit")

    /// Starts `executable` with its output in two pipes, and stdin from /dev/null unless `inheritingInput`; the
    /// caller reads both pipes at once (as ``run(_:_:environment:inheritingInput:)`` does) and waits or kills.
    public static func launch(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, inheritingInput: Bool = false
    ) throws(SubprocessError) -> (process: Process, stdout: Pipe, stderr: Pipe) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        if !inheritingInput { process.standardInput = FileHandle.nullDevice }
        do {
            try process.run()
        } catch {
            throw SubprocessError(executable: executable.path, reason: error.localizedDescription)
        }
        return (process, out, err)
    }

    /// Runs `executable` to its end. Blocks the calling thread until then: call it from a thread that may block
    /// (docs/threads.md), never from a task. stderr is read on a thread of its own — not a dispatch queue, whose
    /// workers Swift's tasks share on Linux.
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, inheritingInput: Bool = false,
        limits: Limits = Limits()
    ) throws(SubprocessError) -> Output {
        var executable = executable
        var arguments = arguments
        if let bytes = limits.addressSpace {
            // prlimit would report a missing tool only as its own exit status 1: say which, as `launch` does.
            guard FileManager.default.isExecutableFile(atPath: executable.path) else {
                throw SubprocessError(executable: executable.path, reason: "no executable file there")
            }
            arguments = ["--as=\(bytes)", "--", executable.path] + arguments
            executable = prlimit
        }
        let (process, out, err) = try launch(
            executable, arguments, environment: environment, inheritingInput: inheritingInput)
        let deadline = limits.time.map { Deadline(process.processIdentifier, after: $0) }
        let errors = PendingRead(err)
        let stdout = (try? out.fileHandleForReading.readToEnd()) ?? Data()
        process.waitUntilExit()
        let timedOut = deadline?.finish() ?? false
        return Output(
            status: process.terminationStatus, stdout: stdout, stderr: errors.wait(),
            signaled: process.terminationReason == .uncaughtSignal, timedOut: timedOut)
    }
}

/// Kills a child with SIGKILL unless ``finish()`` comes first, on a thread of its own (blocking, as above).
private final class Deadline: Sendable {
    private let finished = DispatchSemaphore(value: 0)
    /// Whether the child has ended (then nothing may be killed: its PID may be reused), and whether it was killed.
    private let state = Mutex((ended: false, killed: false))

    init(_ pid: Int32, after limit: Duration) {
        let (seconds, attoseconds) = limit.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        Thread { [self] in
            guard finished.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .timedOut else { return }
            state.withLock {
                guard !$0.ended else { return }
                $0.killed = true
                kill(pid, SIGKILL)
            }
        }.start()
    }

    /// Stops the timer once the child has ended; returns whether the timer killed it.
    func finish() -> Bool {
        let killed = state.withLock {
            $0.ended = true
            return $0.killed
        }
        finished.signal()
        return killed
    }
}

/// A pipe read to its end on a thread of its own.
private final class PendingRead: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let data = Mutex(Data())

    init(_ pipe: Pipe) {
        Thread { [self] in
            let bytes = (try? pipe.fileHandleForReading.readToEnd()) ?? Data()
            data.withLock { $0 = bytes }
            done.signal()
        }.start()
    }

    func wait() -> Data {
        done.wait()
        return data.withLock { $0 }
    }
}
