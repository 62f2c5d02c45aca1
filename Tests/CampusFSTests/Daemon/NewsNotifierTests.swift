import Desktop
import Foundation
import Glibc
import Logging
import MetadataStore
import Refreshing
import SystemSupport
import Testing

@testable import Daemon
@testable import StudIPSimulator

/// The daemon's desktop notifications in-process (``NewsNotifier``, issue 19): fed what real refreshes against the
/// simulator found, posting to a real notification server on a session bus of the test's own
/// (``NotificationServer``), without a mount or a daemon process.
@Suite struct NewsNotifierTests {
    static let course = DaemonTests.course
    static let other = RefreshCoordinatorTests.other

    /// The daemon's parts, a notification server that also answers as the session's file manager, and a notifier
    /// posting to it with `minimumInterval`; closes the notifier and stops the server afterwards.
    static func with(
        minimumInterval: Duration = .seconds(60),
        _ body: (DaemonParts, NotificationServer, NewsNotifier) async throws -> Void
    ) async throws {
        let server = try await NotificationServer.start(fileManager: true)
        defer { server.stop() }
        try await DaemonParts.with { parts in
            let bus = try await BlockingPool.shared.run { () throws(NotificationError) in
                try NotificationBus(address: server.address)
            }
            let notifier = NewsNotifier(
                bus: bus, store: parts.store, mountpoint: DaemonParts.mountpoint,
                loginCommand: "campusfs login --profile test", minimumInterval: minimumInterval,
                logger: Logger(label: "test.notifier"))
            do {
                try await body(parts, server, notifier)
            } catch {
                await BlockingPool.shared.run { notifier.close() }
                throw error
            }
            await BlockingPool.shared.run { notifier.close() }
        }
    }

    /// What a refresh of every course found, after `change` changed the server.
    static func refresh(_ parts: DaemonParts, after change: () async throws -> Void = {}) async throws
        -> RefreshSummary
    {
        try await change()
        guard case .success(let report) = await parts.refreshes.refresh() else {
            throw Failure(description: "the refresh failed: \(String(describing: parts.refreshes.last.error))")
        }
        return report.summary
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Adds text documents named `names` beside the document at `path` on the server.
    static func add(_ names: [String], besides path: String, _ parts: DaemonParts) async throws {
        let folder = try #require(try parts.campus.document(path)).folderID
        for name in names { try await parts.addDocument(name, folder: folder) }
    }

    /// The file URI the file manager is asked to show for `relative` below the mount point.
    static func uri(_ relative: String) -> String {
        URL(fileURLWithPath: DaemonParts.mountpoint + "/" + relative).absoluteString
    }

    /// One notification per refresh, its courses one line each, names escaped, an action per course that opens
    /// its folder; a refresh that found nothing sends nothing. What two later refreshes find within the interval
    /// waits and comes in one notification once the interval since the one before has passed.
    @Test func oneNotificationPerRefreshGroupedPerCourseAndRateLimited() async throws {
        let interval = 4.0
        try await Self.with(minimumInterval: .seconds(interval)) { parts, server, notifier in
            // Real refreshes, one after the other, what each found kept for feeding the notifier below.
            let nothing = try await Self.refresh(parts)
            let both = try await Self.refresh(parts) {
                try await Self.add(
                    ["Vorlesung 07.pdf", "Vorlesung 06.pdf", "Q&A <Entwurf>.txt"], besides: DaemonTests.readme, parts)
                try await Self.add(["Skript.pdf"], besides: Self.other + "/README.txt", parts)
            }
            let second = try await Self.refresh(parts) {
                try await Self.add(["Blatt 5.pdf", "Blatt 4.pdf"], besides: DaemonTests.readme, parts)
            }
            let third = try await Self.refresh(parts) {
                try await Self.add(["Blatt 6.pdf"], besides: DaemonTests.readme, parts)
            }
            #expect(nothing.added.isEmpty && nothing.changed.isEmpty)

            await notifier.refreshed(nothing)
            await notifier.refreshed(both)
            let first = await server.notifications(count: 1, timeout: 10)
            try #require(first.count == 1, "one notification for the refresh that found something: \(first)")
            // Both within the interval (feeding them takes milliseconds): they wait, and go out together once it
            // has passed.
            await notifier.refreshed(second)
            await notifier.refreshed(third)

            #expect(first[0]["app"] as? String == "CampusFS")
            #expect(first[0]["summary"] as? String == "New on Stud.IP in 2 courses")
            #expect(
                first[0]["body"] as? String
                    == "BS-202: 1 new document — Skript.pdf\n"
                    + "INF-101: 3 new documents — Q&amp;A &lt;Entwurf&gt;.txt, Vorlesung 06.pdf, Vorlesung 07.pdf")
            #expect(
                first[0]["actions"] as? [String] == [
                    "default", "Open Stud.IP folder", "course-0", "Open BS-202", "course-1", "Open INF-101",
                ])
            let id = try #require(first[0]["id"] as? Int)
            server.invoke(id: id, key: "course-1")
            #expect(await eventually { server.shownFolders == [Self.uri(Self.course)] }, "\(server.shownFolders)")

            _ = await server.notifications(count: 2, timeout: interval + 10)
            try await Task.sleep(for: .milliseconds(500))
            let later = server.notifications
            try #require(later.count == 2, "the two refreshes within the interval make one notification: \(later)")
            let apart = try #require(later[1]["at"] as? Double) - (try #require(first[0]["at"] as? Double))
            #expect(apart >= interval, "posted \(apart) s after the one before, within the interval of \(interval) s")
            #expect(later[1]["summary"] as? String == "INF-101: 3 new documents")
            #expect(later[1]["body"] as? String == "Blatt 4.pdf, Blatt 5.pdf, Blatt 6.pdf")
            #expect(later[1]["actions"] as? [String] == ["default", "Open folder"])
            server.invoke(id: try #require(later[1]["id"] as? Int), key: "default")
            #expect(await eventually { server.shownFolders.count == 2 })
            #expect(server.shownFolders == [Self.uri(Self.course), Self.uri(Self.course)])
        }
    }

    /// A refused login, as the server link sees it when a refresh is refused, is notified once per outage: again
    /// only after the server answered in between.
    @Test func aRefusedLoginIsNotifiedOncePerOutage() async throws {
        try await Self.with { parts, server, notifier in
            await parts.link.observe { state, problem, loggedOut in
                notifier.serverChanged(to: state, problem: problem, loggedOut: loggedOut)
            }
            let handling = Task { await notifier.handleServerChanges() }
            parts.sim.faults.add(Fault(action: .status(401)))
            for _ in 0..<2 {
                guard case .failure = await parts.refreshes.refresh() else {
                    Issue.record("a refused login must fail the refresh")
                    return
                }
            }
            #expect(await parts.link.state == .loginNeeded)
            let outage = await server.notifications(count: 2, timeout: 3)
            try #require(outage.count == 1, "one notification per outage: \(outage)")
            #expect(outage[0]["summary"] as? String == "Stud.IP login needed")
            let body = outage[0]["body"] as? String ?? ""
            #expect(body.hasSuffix("run campusfs login --profile test to log in again."), "\(body)")
            #expect(outage[0]["hints"] as? [String: String] == ["urgency": "2"])
            // Within the outage the network may drop and come back to the refused login: still the one notification.
            // A logout the person asked for is not notified.
            notifier.serverChanged(to: .offline, problem: "Stud.IP cannot be reached", loggedOut: false)
            notifier.serverChanged(to: .loginNeeded, problem: "login needed: refused", loggedOut: false)
            notifier.serverChanged(to: .online, problem: nil, loggedOut: false)
            notifier.serverChanged(to: .loginNeeded, problem: nil, loggedOut: true)
            let same = await server.notifications(count: 2, timeout: 2)
            #expect(same.count == 1, "one notification per outage, none for a logout: \(same)")

            parts.sim.faults.clear()
            guard case .success = await parts.refreshes.refresh() else {
                Issue.record("the refresh after the outage failed")
                return
            }
            parts.sim.faults.add(Fault(action: .status(401)))
            _ = await parts.refreshes.refresh()
            let again = await server.notifications(count: 2, timeout: 10)
            #expect(again.count == 2, "a second outage is notified again: \(again)")
            #expect(again.last?["summary"] as? String == "Stud.IP login needed")
            // Closing ends the handling of the link's changes.
            await BlockingPool.shared.run { notifier.close() }
            await handling.value
        }
    }
}
