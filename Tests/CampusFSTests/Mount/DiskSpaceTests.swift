import Foundation
import TestSupport
import Testing

/// Issue 14.9: a cache whose disk has less free space than CampusFS keeps free evicts every other document with each
/// download; `status` and the log say so (the cache on a real 16 MiB tmpfs, below the 1 GiB kept free).
@Suite(.serialized)
struct DiskSpaceTests {
    @Test func aDiskTooFullForTheCacheIsNamedInStatusAndTheLog() async throws {
        try await DaemonTests.with { setup in
            let cache = setup.cli.home.appendingPathComponent("small-cache").path
            try FileManager.default.createDirectory(atPath: cache, withIntermediateDirectories: true)
            #expect(
                try await shell("mount -t tmpfs -o size=16m tmpfs \(quoted(cache))").status
                    == 0)
            setup.cli.environment["XDG_CACHE_HOME"] = cache
            var daemon: Int?
            do {
                #expect(try await setup.mount().status == 0)
                daemon = try await setup.status()["pid"] as? Int
                try await check(setup)
            } catch {
                _ = try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30)
                _ = try await shell("umount -l \(quoted(cache))")
                throw error
            }
            try await unmount(setup, daemon: daemon, thenTheTmpfsAt: cache)
        }
    }

    private func check(_ setup: DaemonTests.Setup) async throws {
        #expect(try await shell("cat \(setup.path(DaemonTests.readme)) >/dev/null").status == 0)

        let shortage = try await setup.status()["cacheDiskShortage"] as? [String: Any]
        #expect(shortage?["keptFree"] as? Int == 1 << 30, "\(String(describing: shortage))")
        let text = try await setup.campusfs(["status"], timeout: 20)
        #expect(text.stdout.contains("less than the 1 GB kept free, so each download evicts"), "\(text.stdout)")
        let log = try String(
            contentsOf: setup.cli.home.appendingPathComponent("state/campusfs/default.log"), encoding: .utf8)
        #expect(log.contains("each download now evicts the other cached documents"), "\(log)")
    }

    /// Issue 14.4: with the metadata store's disk full, `setfattr` fails with ENOSPC ("No space left on device"),
    /// not EIO, cached documents still read, and tagging works again once there is space (a real 2 MiB tmpfs).
    @Test func aFullDataDiskRefusesTagsWithENOSPCAndRecovers() async throws {
        try await DaemonTests.with { setup in
            let data = setup.cli.home.appendingPathComponent("small-data").path
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
            #expect(
                try await shell("mount -t tmpfs -o size=2m tmpfs \(quoted(data))").status == 0
            )
            setup.cli.environment["XDG_DATA_HOME"] = data
            let filler = quoted(data + "/filler")
            var daemon: Int?
            do {
                #expect(try await setup.mount().status == 0)
                daemon = try await setup.status()["pid"] as? Int
                let readme = setup.path(DaemonTests.readme)
                let before = try await shell("cat \(readme)")
                _ = try await shell("dd if=/dev/zero of=\(filler) bs=4k 2>/dev/null")
                let tags = (0..<400).map { "tag-\($0)-\(String(repeating: "x", count: 100))" }.joined(separator: ",")
                let full = try await shell("setfattr -n user.xdg.tags -v \(tags) \(readme) 2>&1")
                #expect(full.status != 0)
                #expect(full.stdout.contains("No space left on device"), "\(full.stdout)")
                #expect(try await shell("cat \(readme)").stdout == before.stdout)
                _ = try await shell("rm -f \(filler)")
                #expect(try await shell("setfattr -n user.xdg.tags -v exam \(readme)").status == 0)
            } catch {
                _ = try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30)
                _ = try await shell("umount -l \(quoted(data))")
                throw error
            }
            try await unmount(setup, daemon: daemon, thenTheTmpfsAt: data)
        }
    }

    /// `campusfs unmount` returns once the mount is gone, but the daemon may still hold its store or cache on the
    /// tmpfs while it shuts down (`umount` then fails with EBUSY): the tmpfs is unmounted once the daemon has exited.
    /// A zombie leader whose other threads still exit holds their files and mappings for a moment longer, so
    /// `umount` is tried again for a while; a daemon that never lets go still fails the test.
    private func unmount(_ setup: DaemonTests.Setup, daemon: Int?, thenTheTmpfsAt tmpfs: String) async throws {
        _ = try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30)
        #expect(daemon != nil, "status named no daemon PID")
        var exited = false
        for _ in 0..<300 {
            guard let pid = daemon else { break }
            // Gone, or a zombie (reaped by nobody here: its parent was the `campusfs mount` that returned).
            let state = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
            exited = state.map { $0.split(separator: ")").last?.dropFirst().first == "Z" } ?? true
            if exited { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(exited, "the daemon \(daemon ?? 0) did not exit within 30 s of `campusfs unmount`")
        var unmounted = try await shell("umount \(quoted(tmpfs)) 2>&1")
        for _ in 0..<100 where unmounted.status != 0 {
            try await Task.sleep(for: .milliseconds(100))
            unmounted = try await shell("umount \(quoted(tmpfs)) 2>&1")
        }
        #expect(unmounted.status == 0, "\(unmounted.stdout)")
    }
}
