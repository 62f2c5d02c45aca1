import Foundation
import TestSupport
import Testing

/// CampusFS among other users, who are real here (`nobody`, through `setpriv`).
///
/// Issue 14.1: without `XDG_RUNTIME_DIR` the control sockets live in a directory of this user's alone; another user
/// who creates the directory first in a shared `/tmp` cannot stand in for the daemon: every command refuses the
/// directory and says why. Issue 14.9: a mount that fails for a normal user says why, not only in the log.
@Suite(.serialized)
struct OtherUserTests {
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
            let planted = try await shell(
                "setpriv --reuid=65534 --regid=65534 --clear-groups mkdir -m 777 \(quoted(runtime))")
            #expect(planted.status == 0, "\(planted.stderr)")

            let mount = try await setup.mount()
            #expect(mount.status == 4)
            #expect(
                mount.stderr.contains(
                    "\(runtime) belongs to another user (uid 65534), so its sockets cannot be trusted"),
                "\(mount.stderr)")
            #expect(!isMounted(setup.mountpoint))
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

    /// Whether users other than root may not open /dev/fuse here (Scripts/bootstrap opens it, as on Debian).
    static var fuseDeviceIsPrivate: Bool {
        var info = stat()
        return stat("/dev/fuse", &info) == 0 && info.st_mode & 0o006 == 0
    }

    /// On a machine without udev /dev/fuse is root's alone (mode 0600), and libfuse refuses a normal user before
    /// fusermount3: the mount says so. Such a device is made here in a mount namespace of the test's own (a tmpfs
    /// holding a 0600 node, bound over /dev/fuse), so the machine's device stays as it is for every other test.
    @Test func aMountRefusedToANormalUserSaysWhy() async throws {
        try await DaemonTests.with { setup in
            // The user's own home, with a copy of the binary: the build directory may be private to root.
            let home = setup.cli.home.path
            let binary = home + "/campusfs"
            try FileManager.default.copyItem(atPath: CLI.binary.path, toPath: binary)
            let mountpoint = home + "/Uni"
            let device = home + "/device"
            for directory in [mountpoint, device] {
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            }
            let owned = try await shell("chown -R 65534:65534 \(quoted(home))")
            #expect(owned.status == 0, "\(owned.stderr)")
            let environment = setup.cli.environment.map { "\($0.key)=\($0.value)" }.map(quoted)
                .joined(separator: " ")
            let privateDevice = """
                mount -t tmpfs -o mode=755 campusfs-test \(quoted(device)) \
                  && mknod -m 600 \(quoted(device + "/fuse")) c 10 229 \
                  && mount --bind \(quoted(device + "/fuse")) /dev/fuse \
                  || exit 9
                setpriv --reuid=65534 --regid=65534 --clear-groups env -i \(environment) \(quoted(binary)) \
                  mount \(quoted(mountpoint)) --server \(setup.sim.baseURL) --username test_autor
                status=$?
                # Should it ever mount, it is unmounted here, in the namespace it lives in, and its daemon ends.
                umount -l \(quoted(mountpoint)) 2>/dev/null
                exit $status
                """
            let mount = try await shell(
                "unshare --mount --propagation private sh -c \(quoted(privateDevice))", timeout: 60)
            #expect(mount.status == 1, "\(mount.stdout) \(mount.stderr)")
            #expect(
                mount.stderr.contains(
                    "cannot mount at \(mountpoint): fuse: failed to open /dev/fuse: Permission denied"),
                "\(mount.stderr)")
            #expect(!isMounted(mountpoint))
            #expect(!Self.fuseDeviceIsPrivate, "the machine's own /dev/fuse became private")
            _ = try await shell("chown -R 0:0 \(quoted(home))")
        }
    }

    /// A student is not root: on a read-only document (mode 0444) the kernel's `default_permissions` check would
    /// refuse their tags, rating and highlight (`setxattr` of `user.*` asks for write permission), which root
    /// alone passes — and every other test here runs as root. Mounted by an ordinary user, their attributes are
    /// written, while the tree stays read-only to them: EROFS for writes, `test -w` false, `test -r` true.
    @Test
    func anOrdinaryUserTagsRatesAndHighlightsReadOnlyDocuments() async throws {
        try await DaemonTests.with { setup in
            let mountpoint = setup.cli.home.path + "/Uni"
            try FileManager.default.createDirectory(atPath: mountpoint, withIntermediateDirectories: true)
            try await setup.cli.runAsOrdinaryUser(65534)
            let mount = try await setup.cli.run(
                ["mount", mountpoint, "--server", setup.sim.baseURL, "--username", "test_autor"], timeout: 60)
            try #require(mount.status == 0, "\(mount.stdout) \(mount.stderr)")
            let document = quoted(mountpoint + "/" + DaemonTests.readme)
            let folder = quoted(mountpoint + "/" + DaemonTests.course + "/Übungsblätter")
            let script = """
                stat -c %a \(document) \(folder)
                setfattr -n user.xdg.tags -v exam,week1 \(document) && echo tagged
                setfattr -n user.baloo.rating -v 8 \(document) && echo rated
                setfattr -n user.campusfs.highlight -v flagged \(document) && echo flagged
                setfattr -n user.xdg.tags -v sheets \(folder) && echo folder tagged
                getfattr --only-values -n user.xdg.tags \(document); echo
                getfattr --only-values -n user.baloo.rating \(document); echo
                test -r \(document) && echo readable
                test -w \(document) || echo not writable
                test -x \(folder) && echo searchable
                echo x 2>&1 > \(document) | sed 's/.*: //'
                touch \(quoted(mountpoint + "/" + DaemonTests.course + "/new.txt")) 2>&1 | sed 's/.*: //'
                """
            let result = try await shell(setup.cli.asUser(script), timeout: 60)
            #expect(
                result.lines == [
                    "644", "755", "tagged", "rated", "flagged", "folder tagged", "exam,week1", "8", "readable",
                    "not writable", "searchable", "Read-only file system", "Read-only file system",
                ], "\(result.stderr)")
            let unmount = try await setup.cli.run(["unmount", mountpoint], timeout: 30)
            #expect(unmount.status == 0, "\(unmount.stderr)")
            if isMounted(mountpoint) { _ = try await shell("fusermount3 -u -z \(quoted(mountpoint))") }
        }
    }
}
