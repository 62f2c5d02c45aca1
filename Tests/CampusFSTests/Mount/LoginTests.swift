import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// A password that stops working on a profile that synced before: `mount` still mounts the cached tree but says on
/// stderr what is wrong and what to do, opens fail with EACCES without sending the refused password again, and a new
/// password — `campusfs login` or the password command's new answer — reaches the running daemon.
@Suite(.serialized)
struct LoginTests {
    typealias Setup = DaemonTests.Setup

    /// The slides read through the mount equal the server's bytes.
    static func slidesMatchTheServer(_ setup: Setup) async throws -> Bool {
        let slides = try setup.document(DaemonTests.slides)
        let compared = try await shell(
            "sha256sum < \(setup.path(DaemonTests.slides)); "
                + "curl -sf \(setup.sim.controlURL)/documents/\(slides.id)/content | sha256sum", timeout: 30)
        return compared.lines.count == 2 && compared.lines[0] == compared.lines[1]
    }

    func login(_ setup: Setup) async throws -> CLI.Result {
        try await setup.campusfs(["login", "--server", setup.sim.baseURL, "--username", "test_autor"], timeout: 30)
    }

    @Test func aRefusedLoginIsReportedByMountAndFixedByLoginWithoutARemount() async throws {
        try await DaemonTests.with { setup in
            let unmounted = try await login(setup)
            #expect(unmounted.status == 0, "\(unmounted.stderr)")
            #expect(unmounted.stdout.contains("Logged in as "), "\(unmounted.stdout)")

            #expect(try await setup.mount().status == 0)
            #expect(try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30).status == 0)
            // The stored password would be found again once the given one is refused.
            #expect(try await setup.campusfs(["logout"]).status == 0)

            setup.cli.environment["CAMPUSFS_PASSWORD"] = "changed-since"
            let mounted = try await setup.mount()
            #expect(mounted.status == 0, "the cached tree mounts: \(mounted.stderr)")
            #expect(mounted.stderr.contains("refused the login of test_autor"), "\(mounted.stderr)")
            #expect(mounted.stderr.contains("campusfs login --profile default"), "\(mounted.stderr)")
            #expect(!mounted.stderr.contains("changed-since"), "the password never appears in messages")
            #expect(try await setup.status()["server"] as? String == "login needed")

            let before = setup.sim.requestCount
            for _ in 0..<3 { #expect(try await MountHarness.openResult(setup.path(DaemonTests.slides)) == "EACCES") }
            #expect(setup.sim.requestCount == before, "a refused password is not sent again for every open")

            let refused = try await login(setup)
            #expect(refused.status == 2, "still the wrong password: \(refused.stderr)")
            #expect(refused.stderr.contains("keeps serving what is cached"), "\(refused.stderr)")

            setup.cli.environment["CAMPUSFS_PASSWORD"] = "testing"
            let accepted = try await login(setup)
            #expect(accepted.status == 0, "\(accepted.stderr)")
            #expect(accepted.stdout.contains("uses it now"), "\(accepted.stdout)")
            #expect(try await Self.slidesMatchTheServer(setup))
            #expect(try await setup.status()["server"] as? String == "online")
        }
    }

    @Test func aPasswordCommandsNewAnswerReachesTheRunningMount() async throws {
        try await DaemonTests.with { setup in
            let secret = FileManager.default.temporaryDirectory.appendingPathComponent("campusfs-pw-\(UUID())")
            defer { try? FileManager.default.removeItem(at: secret) }
            try "testing\n".write(to: secret, atomically: true, encoding: .utf8)
            setup.cli.environment["CAMPUSFS_PASSWORD"] = nil
            let command = ["--password-command", "cat \(secret.path)"]
            #expect(try await setup.mount(command).status == 0)
            #expect(try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30).status == 0)

            try "changed-since\n".write(to: secret, atomically: true, encoding: .utf8)
            let mounted = try await setup.mount(command)
            #expect(mounted.status == 0)
            #expect(mounted.stderr.contains("or fix password_command"), "\(mounted.stderr)")
            #expect(try await MountHarness.openResult(setup.path(DaemonTests.slides)) == "EACCES")

            // Opens ask the command again at most every 30 s (a keyring must not be asked at every open); a
            // refresh asks at once.
            try "testing\n".write(to: secret, atomically: true, encoding: .utf8)
            #expect(try await MountHarness.openResult(setup.path(DaemonTests.slides)) == "EACCES")
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            #expect(try await Self.slidesMatchTheServer(setup), "the command's new answer is used after the refresh")
            #expect(try await setup.status()["server"] as? String == "online")
        }
    }
}
