import Foundation
import SystemSupport
import TestSupport
import Testing

/// Runs the built `campusfs` executable the way a user's shell does, isolated by its own XDG directories.
struct CLI: Sendable {
    static let binary = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build/debug/campusfs")

    struct Result: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String

        var lines: [String] {
            stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        }
    }

    /// A fresh home: every XDG directory below one temporary directory.
    let home: URL
    var environment: [String: String]

    init(password: String? = "testing") throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("campusfs-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        environment = [
            "HOME": home.path,
            "XDG_CONFIG_HOME": home.appendingPathComponent("config").path,
            "XDG_DATA_HOME": home.appendingPathComponent("data").path,
            "XDG_CACHE_HOME": home.appendingPathComponent("cache").path,
            "XDG_STATE_HOME": home.appendingPathComponent("state").path,
            "XDG_RUNTIME_DIR": home.appendingPathComponent("run").path,
            "PATH": "/usr/bin:/bin",
            "TZ": "Europe/Berlin",
        ]
        if let password { environment["CAMPUSFS_PASSWORD"] = password }
    }

    func removeHome() {
        try? FileManager.default.removeItem(at: home)
    }

    func database(profile: String = "default") -> URL {
        home.appendingPathComponent("data/campusfs/\(profile)/campusfs.sqlite")
    }

    /// Starts `campusfs` with `arguments`; the caller waits or kills.
    func launch(_ arguments: [String]) throws -> (Process, Pipe, Pipe) {
        let child = try Subprocess.launch(Self.binary, arguments, environment: environment)
        return (child.process, child.stdout, child.stderr)
    }

    /// Runs `campusfs` to completion; a run longer than `timeout` is killed and recorded as a test issue.
    func run(_ arguments: [String], timeout: Double = 120) async throws -> Result {
        let (process, out, err) = try launch(arguments)
        async let output = readToEnd(out)
        async let errors = readToEnd(err)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            Issue.record("campusfs \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
        }
        process.waitUntilExit()
        return Result(
            status: process.terminationStatus, stdout: String(decoding: await output, as: UTF8.self),
            stderr: String(decoding: await errors, as: UTF8.self))
    }

    /// What `campusfs` wrote to its terminal: all of it, or with `answering` what came after the prompt.
    struct TerminalResult: Sendable {
        var status: Int?
        var output: String
    }

    /// Runs `campusfs` on a real pseudo-terminal (Python's pty module). With `answering`, waits for that prompt,
    /// types `input` and a newline, and returns only what followed the prompt.
    func runInTerminal(
        _ arguments: [String], answering prompt: String? = nil, with input: String = "", timeout: Int = 120
    ) async throws -> TerminalResult {
        let driver = """
            import json, os, pty, select, sys
            binary, arguments, environment = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
            prompt, answer = sys.argv[4].encode(), sys.argv[5].encode()
            pid, fd = pty.fork()
            if pid == 0:
                os.execve(binary, [binary] + arguments, environment)
            seen = b""
            def read(until=None):
                global seen
                while until is None or until not in seen:
                    ready, _, _ = select.select([fd], [], [], 60)
                    if not ready:
                        sys.exit("timed out; seen: %r" % seen)
                    try:
                        chunk = os.read(fd, 1024)
                    except OSError:
                        return
                    if not chunk:
                        return
                    seen += chunk
            start = 0
            if prompt:
                read(prompt)
                start = len(seen)
                os.write(fd, answer + b"\\n")
            read()
            _, status = os.waitpid(pid, 0)
            print(json.dumps({"status": os.waitstatus_to_exitcode(status), "output": seen[start:].decode()}))
            """
        func json(_ value: Any) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: value), as: UTF8.self)
        }
        let command = [
            "python3", "-c", driver, Self.binary.path, try json(arguments), try json(environment),
            prompt ?? "", input,
        ].map(quoted).joined(separator: " ")
        let result = try await shell(command, timeout: timeout)
        let answer = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any]
        return TerminalResult(
            status: answer?["status"] as? Int, output: answer?["output"] as? String ?? result.stderr)
    }
}
