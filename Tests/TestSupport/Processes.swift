import Foundation
import SystemSupport

/// What a finished child process printed, and how it ended.
public struct CommandResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String

    public var lines: [String] { stdout.split(separator: "\n").map(String.init) }
}

/// Runs `command` with `sh -c` under `timeout` in a child process, on a thread of its own: the serving process must
/// never touch its own mount, and a blocked thread of Swift's cooperative pool (or of the dispatch workers it
/// shares on Linux) would starve the in-process servers and reply tasks of every test running in parallel.
public func shell(_ command: String, timeout: Int = 30) async throws -> CommandResult {
    try await onThread { try blockingShell(command, timeout: timeout) }
}

/// ``shell(_:timeout:)`` for cleanup paths that cannot suspend.
public func blockingShell(_ command: String, timeout: Int = 30) throws -> CommandResult {
    try runToEnd("/usr/bin/timeout", ["-k", "1", String(timeout), "/bin/sh", "-c", command])
}

/// Runs the tool at `path` to completion (pdftotext, python3, gcc, javac) on a thread of its own.
public func runTool(_ path: String, _ arguments: [String]) async throws -> CommandResult {
    try await onThread { try runToEnd(path, arguments) }
}

/// Reads a pipe (a child's stdout) to its end on a thread of its own. Not on a dispatch queue: on Linux Swift's tasks run on the same
/// dispatch worker threads as `DispatchQueue.global()`, and a dozen children talking to in-process simulators
/// would block every one of them, leaving no thread for the simulators to answer on (measured: a 30 s stall).
public func readToEnd(_ handle: FileHandle) async -> Data {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: (try? handle.readToEnd()) ?? Data()) }.start()
    }
}

/// Quotes `text` for `sh`.
public func quoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

private func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}

/// Runs a child with stdin from /dev/null to its end (``Subprocess/run(_:_:environment:input:limits:)``).
private func runToEnd(_ path: String, _ arguments: [String]) throws -> CommandResult {
    let output = try Subprocess.run(URL(fileURLWithPath: path), arguments)
    return CommandResult(
        status: output.status, stdout: String(decoding: output.stdout, as: UTF8.self),
        stderr: String(decoding: output.stderr, as: UTF8.self))
}
