import Foundation
import Testing

/// Issue 14.1: without `XDG_RUNTIME_DIR` the control sockets live in a directory of this user's alone. Another user
/// (`nobody`, for real, through `setpriv`) who creates the directory first in a shared `/tmp` cannot stand in for
/// the daemon: every command refuses the directory and says why.
@Suite(.serialized)
struct RuntimeDirectoryTests {
    /// A shared temporary directory like `/tmp` (mode 1777), as `TMPDIR`, and no `XDG_RUNTIME_DIR`.
    static func sharedTemporaryDirectory(_ setup: inout DaemonTests.Setup) throws -> String {
        let shared = setup.cli.home.appendingPathComponent("tmp").path
        try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
        chmod(setup.cli.home.path, 0o755)
        chmod(shared, 0o1777)
        setup.cli.environment["XDG_RUNTIME_DIR"] = nil
        setup.cli.environment["TMPDIR"] = shared
        return shared
    }

    @Test func withoutXDGRuntimeDirTheSocketsGoToAPerUserDirectory() async throws {
        try await DaemonTests.with { setup in
            let shared = try Self.sharedTemporaryDirectory(&setup)
            #expect(try await setup.mount().status == 0)
            let runtime = "\(shared)/campusfs-\(getuid())"
            #expect(FileManager.default.fileExists(atPath: runtime + "/default.sock"))
            let mode = try FileManager.default.attributesOfItem(atPath: runtime)[.posixPermissions] as? Int
            #expect(mode == 0o700)
            #expect(try await setup.status()["mounted"] as? Bool == true)
        }
    }

    @Test func aRuntimeDirectoryAnotherUserMadeIsRefused() async throws {
        try await DaemonTests.with { setup in
            let shared = try Self.sharedTemporaryDirectory(&setup)
            let runtime = "\(shared)/campusfs-\(getuid())"
            let planted = try await MountHarness.shell(
                "setpriv --reuid=65534 --regid=65534 --clear-groups mkdir -m 777 \(MountHarness.quoted(runtime))")
            #expect(planted.status == 0, "\(planted.stderr)")

            let mount = try await setup.mount()
            #expect(mount.status == 4)
            #expect(
                mount.stderr.contains(
                    "\(runtime) belongs to another user (uid 65534), so its sockets cannot be trusted"),
                "\(mount.stderr)")
            #expect(!MountHarness.isMounted(setup.mountpoint))
            let status = try await setup.campusfs(["status"], timeout: 20)
            #expect(status.status == 4, "not \"not mounted\": \(status.stdout)")

            rmdir(runtime)
            try FileManager.default.createDirectory(
                atPath: runtime, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o777])
            chmod(runtime, 0o777)
            let open = try await setup.campusfs(["status"], timeout: 20)
            #expect(open.status == 4)
            #expect(open.stderr.contains("is open to other users (mode 777)"), "\(open.stderr)")
            rmdir(runtime)
        }
    }
}
