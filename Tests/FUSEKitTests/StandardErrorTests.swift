import Foundation
import Glibc
import Testing

@testable import FUSEKit

struct StandardErrorTests {
    /// Sessions mounting at once (in-process tests do) capture standard error at once; afterwards descriptor 2
    /// must be the process's standard error again, not one of the captures' unlinked files. With overlapping
    /// captures each restoring what the other swapped in, a whole `swift test` run once logged no results.
    @Test func overlappingCapturesLeaveStandardErrorWhereItWas() async throws {
        let original = try identity(of: STDERR_FILENO)
        let saved = dup(STDERR_FILENO)
        try #require(saved >= 0)
        defer { close(saved) }

        let group = DispatchGroup()
        for _ in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                for _ in 0..<25 { _ = StandardError.capturing { usleep(500) } }
                group.leave()
            }
        }
        // Waits without holding one of the cooperative pool's two threads, which every other test needs.
        await withCheckedContinuation { done in group.notify(queue: .global()) { done.resume() } }

        // Another suite's mount may hold a capture for a moment; a lost standard error stays lost.
        let deadline = Date().addingTimeInterval(2)
        while try identity(of: STDERR_FILENO) != original, Date() < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let after = try identity(of: STDERR_FILENO)
        if after != original { dup2(saved, STDERR_FILENO) }  // So that the rest of the run's results are seen.
        #expect(after == original, "descriptor 2 no longer the process's standard error")
    }

    private func identity(of descriptor: Int32) throws -> [UInt] {
        var status = stat()
        try #require(fstat(descriptor, &status) == 0)
        return [UInt(status.st_dev), UInt(status.st_ino)]
    }
}
