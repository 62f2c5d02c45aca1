import Foundation
import SystemSupport
import TestSupport
import Testing

/// `studip-sim` as users and scripts run it: a subprocess that prints its URL and stops on a signal.
@Suite("studip-sim executable")
struct ExecutableTests {
    static let binary = builtProductsDirectory.appendingPathComponent("studip-sim")

    /// Starts the simulator and returns it with the first `lines` lines it printed, read on a thread of its own: on Linux
    /// Swift's tasks run on the same dispatch worker threads as `DispatchQueue.global()`, so a read blocking one
    /// of those would starve the other tests' in-process servers.
    private func launch(_ arguments: [String], lines: Int = 1) async throws -> (Child, [String]) {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try launchBlocking(arguments, lines: lines) }) }.start()
        }
    }

    private func launchBlocking(_ arguments: [String], lines: Int) throws -> (Child, [String]) {
        let child = try Subprocess.launch(Self.binary, arguments)
        Task { _ = await readToEnd(child.stderr) }  // its log, read so that it never fills the pipe
        var printed: [String] = []
        for _ in 0..<lines {
            var line = Data()
            while let byte = try child.stdout.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
                line.append(byte)
            }
            printed.append(String(decoding: line, as: UTF8.self))
        }
        return (child, printed)
    }

    /// Waits up to `seconds` for the process to exit; kills it (and fails) if it does not.
    private func waitForExit(_ child: Child, seconds: Double = 10) async throws -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while !child.hasEnded, Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        if !child.hasEnded {
            child.kill(SIGKILL)
            Issue.record("studip-sim did not exit within \(seconds) s")
            while !child.hasEnded { try await Task.sleep(for: .milliseconds(50)) }
        }
        return child.reap().status
    }

    @Test(arguments: [SIGTERM, SIGINT])
    func printsItsURLServesAndStopsOnSignal(signal: Int32) async throws {
        let (child, printed) = try await launch(["--dataset", "small", "--port", "0", "--flavour", "6.x"])
        let baseURL = printed[0]
        #expect(baseURL.hasPrefix("http://127.0.0.1:"))

        let semesters = try await HTTP.get("\(baseURL)/jsonapi.php/v1/semesters", headers: [HTTP.jsonAPIAccept])
        #expect(semesters.status == 200)
        let legacy = try await HTTP.get("\(baseURL)/api.php/semesters")
        #expect(legacy.status == 404, "6.x has no legacy REST API")
        let stats = try #require(try await HTTP.get("\(baseURL)/__sim/stats").json() as? [String: Any])
        #expect(stats["total"] as? Int == 2)

        child.kill(signal)
        #expect(try await waitForExit(child) == 0)
    }

    @Test func singleSignOnPrintsTheIdentityProvidersURLSecond() async throws {
        let (child, printed) = try await launch(["--dataset", "small", "--sso", "consent"], lines: 2)
        let (baseURL, identityProvider) = (printed[0], printed[1])
        #expect(identityProvider.hasPrefix("http://127.0.0.1:"))
        #expect(identityProvider != baseURL)
        let login = try? await HTTP.get("\(baseURL)/index.php?again=yes")
        #expect(login?.text.contains("sso=shib") == true)
        let stale = try? await HTTP.get("\(identityProvider)/idp/profile/SAML2/Redirect/SSO?execution=e1s1")
        #expect(stale?.status == 400, "the IdP answers, and without its session the request is stale")
        #expect(stale?.text.contains("Stale Request") == true)
        child.kill(SIGTERM)
        #expect(try await waitForExit(child) == 0)
    }

    @Test func refusesUnknownDatasetsWithAHelpfulMessage() async throws {
        let child = try Subprocess.launch(Self.binary, ["--dataset", "nope"])
        // Read while the child runs: a child that fills the pipe would never exit.
        async let errorBytes = readToEnd(child.stderr)
        let status = try await waitForExit(child)
        let message = String(decoding: await errorBytes, as: UTF8.self)
        #expect(status != 0)
        #expect(message.contains("unknown dataset \"nope\""))
        #expect(message.contains("fixtures-5.0.7"))
    }
}
