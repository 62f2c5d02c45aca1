import CSpawn
import Foundation
import Glibc
import Synchronization

/// Why a child process could not be started.
public struct SubprocessError: Error, Sendable, Hashable, CustomStringConvertible {
    public let executable: String
    public let reason: String

    public var description: String { "cannot start \(executable): \(reason)" }
}

/// Child processes (the password command, pdftotext; the tests' tools), started one way and read one
/// way: stdout and stderr at the same time, since reading one after the other deadlocks once the child fills the
/// other pipe (64 KiB) and waits for it to drain.
///
/// Started with `posix_spawn` rather than Foundation's `Process`: on Linux, `Process.run()` looks for the highest
/// open descriptor by copying each `/proc/self/fd` entry's full 256-byte name out of `readdir`'s buffer, which
/// reads past the buffer's end — a SIGSEGV once a process has about 1,300 descriptors open (the test process does
/// when its suites run in parallel; a daemon with many open files could). Here the child closes every descriptor
/// from 3 up in one action (`posix_spawn_file_actions_addclosefrom_np`), starts with no blocked and no ignored
/// signals (the daemon ignores SIGPIPE; a child must not inherit that), and stays in the caller's process group,
/// so a password command can ask on the terminal and Ctrl-C reaches it.
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

    /// Where the child's stdin comes from.
    public enum Input: Sendable {
        /// `/dev/null`: the child cannot wait for input nobody gives.
        case null
        /// The caller's stdin (a password command that asks on the terminal).
        case inherited
        /// A pipe the caller writes to (``Child/stdin``).
        case pipe
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

    /// Starts `executable` with its stdout and stderr in two pipes; the caller reads both at once (as
    /// ``run(_:_:environment:input:limits:)`` does) and waits or kills. `environment` nil passes this process's.
    public static func launch(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, input: Input = .null
    ) throws(SubprocessError) -> Child {
        let path = executable.path
        func failure(_ code: Int32) -> SubprocessError {
            SubprocessError(executable: path, reason: String(cString: strerror(code)))
        }
        // Every descriptor made here: the child's ends are closed once it has them (or on failure), the
        // parent's are handed to FileHandles at the end (or closed on failure).
        var opened: [Int32] = []
        var parentEnds: [Int32] = []
        defer { for descriptor in opened where !parentEnds.contains(descriptor) { close(descriptor) } }
        func makePipe() throws(SubprocessError) -> (read: Int32, write: Int32) {
            var descriptors: [Int32] = [-1, -1]
            guard pipe2(&descriptors, O_CLOEXEC) == 0 else { throw failure(errno) }
            opened += descriptors
            return (descriptors[0], descriptors[1])
        }
        let output = try makePipe()
        let errors = try makePipe()
        let given = input == .pipe ? try makePipe() : nil

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        switch input {
        case .null: posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0)
        case .inherited: break
        case .pipe: given.map { _ = posix_spawn_file_actions_adddup2(&actions, $0.read, STDIN_FILENO) }
        }
        posix_spawn_file_actions_adddup2(&actions, output.write, STDOUT_FILENO)
        posix_spawn_file_actions_adddup2(&actions, errors.write, STDERR_FILENO)
        posix_spawn_file_actions_addclosefrom_np(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var pid: pid_t = 0
        let variables = environment.map { $0.map { "\($0)=\($1)" } }
        let code = withCStrings([path] + arguments) { argv in
            guard let variables else { return posix_spawn(&pid, path, &actions, &attributes, argv, environ) }
            return withCStrings(variables) { envp in posix_spawn(&pid, path, &actions, &attributes, argv, envp) }
        }
        guard code == 0 else { throw failure(code) }
        parentEnds = [output.read, errors.read] + (given.map { [$0.write] } ?? [])
        return Child(
            pid: pid, stdin: given.map { FileHandle(fileDescriptor: $0.write, closeOnDealloc: true) },
            stdout: FileHandle(fileDescriptor: output.read, closeOnDealloc: true),
            stderr: FileHandle(fileDescriptor: errors.read, closeOnDealloc: true))
    }

    /// Runs `executable` to its end. Blocks the calling thread until then: call it from a thread that may block
    /// (docs/threads.md), never from a task. stderr is read on a thread of its own — not a dispatch queue, whose
    /// workers Swift's tasks share on Linux.
    public static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, input: Input = .null,
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
        let child = try launch(executable, arguments, environment: environment, input: input)
        let deadline = limits.time.map { Deadline(child, after: $0) }
        let errors = PendingRead(child.stderr)
        let stdout = (try? child.stdout.readToEnd()) ?? Data()
        child.waitUntilEnded()
        let timedOut = deadline?.finish() ?? false
        let ending = child.reap()
        return Output(
            status: ending.status, stdout: stdout, stderr: errors.wait(), signaled: ending.signaled,
            timedOut: timedOut)
    }

    /// Calls `body` with `strings` as a NULL-terminated array of C strings, as `argv` and `envp` are.
    private static func withCStrings<R>(
        _ strings: [String], _ body: (UnsafePointer<UnsafeMutablePointer<CChar>?>) -> R
    ) -> R {
        let pointers = UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>.allocate(capacity: strings.count + 1)
        for (index, string) in strings.enumerated() { pointers[index] = strdup(string) }
        pointers[strings.count] = nil
        defer {
            for index in strings.indices { free(pointers[index]) }
            pointers.deallocate()
        }
        return body(pointers)
    }
}

/// A started child. Its PID stays its own until ``reap()``: ``kill(_:)`` before then can never hit another
/// process that reused the number, which is why waiting (``waitUntilEnded()``, ``hasEnded``) does not reap.
public final class Child: Sendable {
    public let pid: pid_t
    /// The write end of the child's stdin, with ``Subprocess/Input/pipe``; closing it is the child's end of input.
    public let stdin: FileHandle?
    public let stdout: FileHandle
    public let stderr: FileHandle
    private let ending = Mutex<Ending?>(nil)

    /// How a child ended.
    public struct Ending: Sendable, Hashable {
        /// The exit status, or the signal's number when ``signaled``.
        public var status: Int32
        public var signaled: Bool
    }

    init(pid: pid_t, stdin: FileHandle?, stdout: FileHandle, stderr: FileHandle) {
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
    }

    /// Whether the child has ended (it may not be reaped yet). Does not block.
    public var hasEnded: Bool {
        if ending.withLock({ $0 != nil }) { return true }
        var info = siginfo_t()
        let result = try? systemCall("waitid") { waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) }
        return result == nil || info._sifields._sigchld.si_pid == pid
    }

    /// Blocks until the child has ended, leaving it unreaped.
    public func waitUntilEnded() {
        guard ending.withLock({ $0 == nil }) else { return }
        var info = siginfo_t()
        _ = try? systemCall("waitid") { waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) }
    }

    /// Blocks until the child has ended, then reaps it (once; later calls return the same).
    @discardableResult
    public func reap() -> Ending {
        waitUntilEnded()
        return ending.withLock { known in
            if let known { return known }
            var status: Int32 = 0
            _ = try? systemCall("waitpid") { waitpid(pid, &status, 0) }
            // WIFEXITED / WEXITSTATUS / WTERMSIG, which are macros Swift does not import.
            let signal = status & 0x7f
            let result = Ending(status: signal == 0 ? (status >> 8) & 0xff : signal, signaled: signal != 0)
            known = result
            return result
        }
    }

    /// Sends `signal` unless the child was already reaped.
    public func kill(_ signal: Int32) {
        ending.withLock { if $0 == nil { _ = Glibc.kill(pid, signal) } }
    }
}

/// Kills a child with SIGKILL unless ``finish()`` comes first, on a thread of its own (blocking, as above).
private final class Deadline: Sendable {
    private let finished = DispatchSemaphore(value: 0)
    private let killed = Mutex(false)

    init(_ child: Child, after limit: Duration) {
        let (seconds, attoseconds) = limit.components
        let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
        Thread { [self] in
            guard finished.wait(timeout: .now() + .nanoseconds(nanoseconds)) == .timedOut else { return }
            killed.withLock {
                guard !child.hasEnded else { return }
                $0 = true
                child.kill(SIGKILL)
            }
        }.start()
    }

    /// Stops the timer once the child has ended; returns whether the timer killed it.
    func finish() -> Bool {
        let result = killed.withLock { $0 }
        finished.signal()
        return result
    }
}

/// A descriptor read to its end on a thread of its own.
private final class PendingRead: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let data = Mutex(Data())

    init(_ handle: FileHandle) {
        Thread { [self] in
            let bytes = (try? handle.readToEnd()) ?? Data()
            data.withLock { $0 = bytes }
            done.signal()
        }.start()
    }

    func wait() -> Data {
        done.wait()
        return data.withLock { $0 }
    }
}
