import Foundation
import TestSupport
import Testing

/// The shared test helpers the mount tests rely on.
@Suite struct TestSupportTests {
    /// A child that writes more to stderr than a pipe holds (64 KiB) before it ends stdout: read one after the
    /// other, the runner waits for stdout's end while the child waits for stderr to drain, until `timeout` kills it.
    @Test func aChildFillingStderrFinishes() async throws {
        let result = try await shell("head -c 200000 /dev/zero | tr '\\0' x >&2; echo done", timeout: 10)
        #expect(result.status == 0)
        #expect(result.stdout == "done\n")
        #expect(result.stderr.utf8.count == 200_000)
    }
}
