import Foundation
import Refreshing
import StudIPKit
import Testing

@testable import Daemon
@testable import StudIPSimulator

/// What the daemon says about itself (``StatusReporter``): the status line `systemctl status` shows for each
/// state of the server link, and READY=1, STATUS= and WATCHDOG=1 over a datagram socket of the test's own, as
/// systemd's notify socket is.
@Suite struct StatusReporterTests {
    @Test func theStatusLineFollowsTheServersState() async throws {
        try await DaemonParts.with { parts in
            let reporter = parts.reporter()
            #expect(
                await reporter.statusLine()
                    == "Mounted at \(DaemonParts.mountpoint); connecting to \(parts.sim.baseURL)")

            let readme = try #require(try parts.campus.document(DaemonTests.readme))
            try await parts.addDocument("Neu.txt", folder: readme.folderID)
            _ = await parts.refreshes.refresh()
            let online = await reporter.statusLine()
            let api = try #require(await parts.link.apiName)
            #expect(online.hasPrefix("Online (\(api)); last refresh "), "\(online)")
            #expect(online.hasSuffix(": 1 new, 0 changed, 0 removed"), "\(online)")

            parts.sim.faults.add(Fault(action: .stall(milliseconds: 200)))
            let running = Task { await parts.refreshes.refresh() }
            #expect(
                await eventually { await reporter.statusLine().contains("; refreshing: ") },
                "a running refresh shows its progress")
            _ = await running.value
            parts.sim.faults.clear()

            parts.sim.faults.add(Fault(action: .status(401)))
            _ = await parts.refreshes.refresh()
            let refused = await reporter.statusLine()
            #expect(refused.hasPrefix("Login needed: "), "\(refused)")
            #expect(refused.hasSuffix("; run campusfs login --profile test; serving the cached tree"), "\(refused)")
        }
    }

    @Test func anUnreachableServerIsOfflineServingTheCachedTree() async throws {
        try await DaemonParts.with { parts in
            // The same campus behind a server that is gone: a port nobody listens on.
            let link = ServerLink(
                configuration: ClientConfiguration(
                    baseURL: "http://127.0.0.1:9/", credentials: .basic(username: "test_autor", password: "testing")))
            let gone = DaemonParts(
                campus: parts.campus, fs: parts.fs, link: link,
                refreshes: RefreshCoordinator(
                    store: parts.store, cache: parts.fs.cache, connection: link, settings: RefreshSettings(),
                    effects: parts.effects.effects, logger: .init(label: "test.offline")),
                effects: parts.effects, indexer: parts.indexer, changes: parts.changes)
            guard case .failure(.studIP(.unreachable)) = await gone.refreshes.refresh() else {
                Issue.record("a refresh of a server that is gone must fail as unreachable")
                return
            }
            let line = await gone.reporter().statusLine()
            #expect(line.hasPrefix("Offline: "), "\(line)")
            #expect(line.hasSuffix("; serving the cached tree"), "\(line)")
            await link.shutdown()
        }
    }

    /// READY=1 with the status line first, a new STATUS= when a refresh changes the line, WATCHDOG=1 at the
    /// interval, and nothing after `stop()`.
    @Test func readyStatusAndWatchdogReachTheServiceManager() async throws {
        try await DaemonParts.with { parts in
            let manager = try NotifyListener()
            let service = try #require(ServiceManager(socket: manager.path, watchdogInterval: .milliseconds(200)))
            let reporter = parts.reporter(service: service)
            await reporter.ready()
            let ready = try #require(await manager.first(timeout: 10) { _ in true })
            #expect(
                ready == "READY=1\nSTATUS=Mounted at \(DaemonParts.mountpoint); connecting to \(parts.sim.baseURL)")

            _ = await parts.refreshes.refresh()
            let online = await manager.first(timeout: 10) { $0.hasPrefix("STATUS=Online (") }
            #expect(online?.hasSuffix(": 0 new, 0 changed, 0 removed") == true, "\(online ?? "no STATUS=Online")")
            let pings = await manager.collect(for: 1).filter { $0 == "WATCHDOG=1" }
            #expect(pings.count >= 3, "\(pings)")

            await reporter.stop()
            try await Task.sleep(for: .milliseconds(300))
            _ = await manager.collect(for: 0.1)
            let after = await manager.collect(for: 0.6)
            #expect(after.isEmpty, "said after stop(): \(after)")
        }
    }
}
