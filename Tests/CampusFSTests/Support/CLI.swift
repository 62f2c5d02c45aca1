import Foundation
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
        let process = Process()
        process.executableURL = Self.binary
        process.arguments = arguments
        process.environment = environment
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return (process, out, err)
    }

    /// Runs `campusfs` to completion; a run longer than `timeout` is killed and recorded as a test issue.
    func run(_ arguments: [String], timeout: Double = 120) async throws -> Result {
        let (process, out, err) = try launch(arguments)
        async let output = Self.readToEnd(out)
        async let errors = Self.readToEnd(err)
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

    /// Reads a pipe on a thread of its own. Not on a dispatch queue: on Linux Swift's tasks run on the same
    /// dispatch worker threads as `DispatchQueue.global()`, and a dozen children talking to in-process simulators
    /// would block every one of them, leaving no thread for the simulators to answer on (measured: a 30 s stall).
    static func readToEnd(_ pipe: Pipe) async -> Data {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: pipe.fileHandleForReading.readDataToEndOfFile()) }.start()
        }
    }
}
