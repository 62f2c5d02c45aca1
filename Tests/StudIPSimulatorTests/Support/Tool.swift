import Foundation
import TestSupport

/// Command-line tools the content tests run (pdftotext, python3, gcc, javac) through ``runTool(_:_:)``.
enum Tool {
    static func installed(_ path: String) -> Bool {
        FileManager.default.isExecutableFile(atPath: path)
    }

    /// A fresh directory under the temporary directory, removed by the caller.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("campusfs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// What pdftotext reads from `bytes`; records nothing, the caller checks status and errors.
    static func pdftotext(_ bytes: [UInt8]) async throws -> CommandResult {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let url = directory.appendingPathComponent("document.pdf")
        try Data(bytes).write(to: url)
        return try await runTool("/usr/bin/pdftotext", [url.path, "-"])
    }
}
