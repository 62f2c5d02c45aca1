import Foundation

/// A command-line tool run to completion (pdftotext, python3, gcc, javac), on a thread of its own: blocking
/// reads must not occupy the cooperative pool the tests' in-process servers need.
enum Tool {
    struct Result: Sendable {
        var status: Int32
        var output: String
        var errors: String
    }

    static func installed(_ path: String) -> Bool {
        FileManager.default.isExecutableFile(atPath: path)
    }

    static func run(_ path: String, _ arguments: [String]) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Swift.Result {
                        let process = Process()
                        process.executableURL = URL(fileURLWithPath: path)
                        process.arguments = arguments
                        let output = Pipe()
                        let errors = Pipe()
                        process.standardOutput = output
                        process.standardError = errors
                        try process.run()
                        // Errors go to a pipe read after the output: enough for the few lines these tools print.
                        let text = output.fileHandleForReading.readDataToEndOfFile()
                        let complaints = errors.fileHandleForReading.readDataToEndOfFile()
                        process.waitUntilExit()
                        return Result(
                            status: process.terminationStatus, output: String(decoding: text, as: UTF8.self),
                            errors: String(decoding: complaints, as: UTF8.self))
                    })
            }.start()
        }
    }

    /// A fresh directory under the temporary directory, removed by the caller.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("campusfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// What pdftotext reads from `bytes`; records nothing, the caller checks status and errors.
    static func pdftotext(_ bytes: [UInt8]) async throws -> Result {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("document.pdf")
        try Data(bytes).write(to: url)
        return try await run("/usr/bin/pdftotext", [url.path, "-"])
    }
}
