import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// Issue 14.3: a refresh has an overall deadline (`refresh_timeout`), and `campusfs refresh` in a terminal shows how
/// far the daemon's refresh is.
@Suite(.serialized)
struct RefreshDeadlineTests {
    @Test func aRefreshLongerThanItsTimeoutIsStoppedAndSaysSo() async throws {
        try await DaemonTests.with { setup in
            try setup.configure(#"refresh_timeout = "2s""#)
            #expect(try await setup.mount().status == 0)
            _ = setup.sim.settings.update { $0.latencyMilliseconds = 1_500 }
            let refresh = try await setup.campusfs(["refresh"], timeout: 60)
            _ = setup.sim.settings.update { $0.latencyMilliseconds = 0 }
            #expect(refresh.status == 3, "\(refresh.stdout) \(refresh.stderr)")
            #expect(
                refresh.stderr.contains(
                    "the refresh was stopped after 2 s (refresh_timeout): Stud.IP answers too slowly"),
                "\(refresh.stderr)")
            #expect(try await setup.status()["server"] as? String == "online", "slow is not offline")
            let listing = try await shell("ls \(setup.path(DaemonTests.course))")
            #expect(listing.lines.contains("README.txt"), "the mount goes on serving: \(listing.stderr)")
        }
    }

    @Test func refreshInATerminalShowsHowFarItIs() async throws {
        try await DaemonTests.with { setup in
            #expect(try await setup.mount().status == 0)
            _ = setup.sim.settings.update { $0.latencyMilliseconds = 400 }
            let refresh = try await setup.cli.runInTerminal(["refresh"])
            _ = setup.sim.settings.update { $0.latencyMilliseconds = 0 }
            #expect(refresh.status == 0, "\(refresh.output)")
            let output = refresh.output
            #expect(output.contains("refreshing: "), "\(output)")
            #expect(output.contains(" of 5 courses"), "\(output)")
        }
    }
}
