import Daemon
import Foundation
import Refreshing
import StudIPKit
import TestSupport
import Testing

@testable import campusfs

/// What `campusfs mount` hands its daemon from the profile's settings, and how `campusfs refresh PATH` names the
/// courses to refresh: the ends of the refresh settings the in-process tests of `RefreshCoordinator` start from.
@Suite struct DaemonConfigurationTests {
    /// The poller's interval, the refresh deadline and the removal grace reach the daemon and its refreshes.
    @Test func theProfilesRefreshSettingsReachTheDaemon() throws {
        let home = try temporaryDirectory("campusfs-config")
        defer { try? FileManager.default.removeItem(atPath: home) }
        let paths = Paths(environment: ["HOME": home])
        try FileManager.default.createDirectory(at: paths.config, withIntermediateDirectories: true)
        try Data(
            """
            [profiles.uni]
            url = "http://127.0.0.1:9"
            username = "jdoe"
            refresh_interval = "1m"
            refresh_timeout = "2m"
            removal_grace = "3d"
            """.utf8
        ).write(to: paths.config.appendingPathComponent("config.toml"))
        let profile = try ProfileOptions.parse(["--profile", "uni"]).resolve(paths: paths)
        let configuration = DaemonRunner.configuration(
            profile, mountpoint: "/mnt/uni", credentials: .basic(username: "jdoe", password: "x"), offline: false)
        #expect(configuration.refreshInterval == .seconds(60))
        let settings = configuration.refreshSettings
        #expect(settings.timeout == .seconds(120))
        #expect(settings.removalGrace == .seconds(3 * 86_400))
        #expect(configuration.loginCommand == "campusfs login --profile uni")
    }

    /// `campusfs refresh ~/Uni/WS…/INF-101…` names the course below the mountpoint; a path outside it is taken
    /// as a path in the tree already.
    @Test func aPathInsideTheMountIsAPathInTheTree() {
        let mountpoint = "/home/jdoe/Uni"
        #expect(
            MountedProfiles.treePath(mountpoint + "/WS 2026-27/INF-101", mountpoint: mountpoint)
                == "/WS 2026-27/INF-101")
        #expect(MountedProfiles.treePath(mountpoint, mountpoint: mountpoint) == "")
        #expect(MountedProfiles.treePath("WS 2026-27/INF-101", mountpoint: mountpoint) == "WS 2026-27/INF-101")
        #expect(MountedProfiles.treePath("/home/jdoe/Uni2/x", mountpoint: mountpoint) == "/home/jdoe/Uni2/x")
    }
}
