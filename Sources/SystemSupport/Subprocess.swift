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
        public var status: Int32
        public var stdout: Data
        public var stderr: Data
    }

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
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, inheritingInput: Bool = false
    ) throws(SubprocessError) -> Output {
        let (process, out, err) = try launch(
            executable, arguments, environment: environment, inheritingInput: inheritingInput)
        let errors = PendingRead(err)
        let stdout = (try? out.fileHandleForReading.readToEnd()) ?? Data()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: stdout, stderr: errors.wait())
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
