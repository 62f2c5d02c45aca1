import CampusFS
import ControlProtocol
import FUSEKit
import FUSEKitTesting
import Foundation
import MetadataStore
import Refreshing
import Synchronization
import Testing

@testable import StudIPSimulator

/// The daemon's refreshes in-process (``RefreshCoordinator``): one at a time, a deadline, progress, the background
/// refreshes of stale listings, what `status` remembers, what the kernel is told, the poller, collection.
@Suite struct RefreshCoordinatorTests {
    static let course = DaemonTests.course
    static let other = "WS 2026-27/BS-202 Betriebssysteme & Dateisysteme"

    /// A refresh asked for while one runs waits for it: the second, which has no stalled request, ends last.
    @Test func refreshesRunOneAtATime() async throws {
        try await DaemonParts.with { parts in
            parts.sim.faults.add(Fault(action: .stall(milliseconds: 1500), remaining: 1))
            let ended = Events()
            let first = Task {
                _ = await parts.refreshes.refresh()
                ended.append("first")
            }
            #expect(await eventually { parts.sim.faults.active().isEmpty }, "the first refresh reached the server")
            let second = Task {
                _ = await parts.refreshes.refresh()
                ended.append("second")
            }
            await first.value
            await second.value
            #expect(ended.all == ["first", "second"])
            #expect(parts.effects.invalidated.count == 2)
        }
    }

    /// `refresh_timeout`: a refresh still running at its deadline is stopped and reported as too slow, not as
    /// cancelled; `status` shows it.
    @Test func aRefreshPastItsDeadlineTookTooLong() async throws {
        try await DaemonParts.with(settings: RefreshSettings(timeout: .seconds(1))) { parts in
            // Connecting is not part of the deadline: the server link has its own time-outs.
            _ = try await parts.link.connected()
            parts.sim.faults.add(Fault(action: .stall(milliseconds: 4000)))
            let started = ContinuousClock.now
            let result = await parts.refreshes.refresh()
            let took = ContinuousClock.now - started
            guard case .failure(.tookTooLong(let limit)) = result else {
                Issue.record("expected tookTooLong, got \(result)")
                return
            }
            #expect(limit == .seconds(1))
            #expect(took < .seconds(3.5), "stopped at the deadline, not after the stalled request (\(took))")
            guard case .tookTooLong = parts.refreshes.last.error else {
                Issue.record("status does not show the deadline: \(String(describing: parts.refreshes.last.error))")
                return
            }
            #expect(parts.effects.invalidated.isEmpty)
        }
    }

    /// `status` shows how many courses a running refresh has read of how many; nothing once it ended.
    @Test func progressShowsWhileARefreshRuns() async throws {
        try await DaemonParts.with { parts in
            let placed = try parts.store.placedCourses().count
            #expect(placed > 1)
            parts.sim.faults.add(Fault(action: .stall(milliseconds: 100)))
            let refresh = Task { await parts.refreshes.refresh() }
            var midway: RefreshProgress?
            let deadline = ContinuousClock.now + .seconds(30)
            while midway == nil, ContinuousClock.now < deadline {
                if let progress = parts.refreshes.progress, progress.total == placed, progress.done < placed {
                    midway = progress
                }
                try await Task.sleep(for: .milliseconds(10))
            }
            parts.sim.faults.clear()
            _ = await refresh.value
            #expect(midway != nil, "no progress of the \(placed) courses seen while the refresh ran")
            #expect(parts.refreshes.progress == nil)
        }
    }

    /// Stale-while-revalidate: many looks into one old listing start one refresh of that course; another course
    /// gets its own; once the refresh ended, the next look asks again.
    @Test func aBackgroundRefreshIsAskedOncePerCourse() async throws {
        try await DaemonParts.with { parts in
            let here = try parts.courseID(Self.course)
            let there = try parts.courseID(Self.other)
            for _ in 0..<5 { parts.refreshes.refreshInBackground(here) }
            parts.refreshes.refreshInBackground(there)
            #expect(await eventually { parts.effects.invalidated.count >= 2 })
            // Refreshes run one at a time in the order asked for: once this one ended, every one the looks above
            // started has ended too, however slowly they ran.
            _ = await parts.refreshes.refresh()
            #expect(parts.effects.invalidated.count == 3, "one refresh per course, and the one waited for")

            parts.refreshes.refreshInBackground(here)
            #expect(await eventually { parts.effects.invalidated.count == 4 }, "a look after it ended asks again")
        }
    }

    /// A failed refresh is remembered for `status` and moves the server link to "login needed"; the next refresh
    /// that works clears it and records what it found. Each ends settled: the daemon hands back what it freed.
    @Test func aFailureIsRecordedAndTheNextRefreshClearsIt() async throws {
        try await DaemonParts.with { parts in
            parts.sim.faults.add(Fault(action: .status(401)))
            let changesBefore = parts.effects.statusChanges
            guard case .failure(.studIP(let error)) = await parts.refreshes.refresh() else {
                Issue.record("a refused login must fail the refresh")
                return
            }
            #expect(error.isLoginFailure, "\(error)")
            #expect(parts.refreshes.last.error != nil)
            #expect(parts.refreshes.last.at == nil)
            #expect(await parts.link.state == .loginNeeded)
            #expect(parts.effects.statusChanges > changesBefore)
            #expect(parts.effects.calls.isEmpty, "a failed refresh tells the kernel nothing")
            #expect(parts.effects.settled == 1)

            parts.sim.faults.clear()
            let readme = try #require(try parts.campus.document(DaemonTests.readme))
            try await parts.addDocument("Neu.txt", folder: readme.folderID)
            guard case .success = await parts.refreshes.refresh() else {
                Issue.record("the refresh after the fault failed")
                return
            }
            let last = parts.refreshes.last
            #expect(last.error == nil)
            #expect(last.at != nil)
            #expect(last.found?.added == 1)
            #expect(await parts.link.state == .online)
            #expect(parts.effects.settled == 2)
        }
    }

    /// The kernel is told exactly what the refresh changed, once, before the desktop hears of it.
    @Test func theKernelHearsExactlyTheSummaryBeforeTheDesktop() async throws {
        try await DaemonParts.with { parts in
            let readme = try #require(try parts.campus.document(DaemonTests.readme))
            try await parts.addDocument("Neu.txt", folder: readme.folderID)
            guard case .success(let report) = await parts.refreshes.refresh() else {
                Issue.record("the refresh failed")
                return
            }
            #expect(report.summary.added.map(\.path) == [Self.course + "/Neu.txt"])
            #expect(parts.effects.calls == [.invalidate(report.summary), .announce(report.summary)])
        }
    }

    /// `campusfs refresh PATH`'s courses: only they are read; the other courses' news waits for a full refresh.
    @Test func aRefreshOfSomeCoursesLeavesTheOthersAlone() async throws {
        try await DaemonParts.with { parts in
            let here = try #require(try parts.campus.document(DaemonTests.readme))
            let there = try #require(try parts.campus.document(Self.other + "/README.txt"))
            try await parts.addDocument("Hier.txt", folder: here.folderID)
            try await parts.addDocument("Dort.txt", folder: there.folderID)
            guard case .success(let one) = await parts.refreshes.refresh(courseIDs: [try parts.courseID(Self.course)])
            else {
                Issue.record("the course's refresh failed")
                return
            }
            #expect(one.summary.added.map(\.path) == [Self.course + "/Hier.txt"])
            #expect(try parts.store.resolve(path: Self.course + "/Hier.txt").name == "Hier.txt")
            #expect(throws: StoreError.self) { try parts.store.resolve(path: Self.other + "/Dort.txt") }
            guard case .success(let all) = await parts.refreshes.refresh() else {
                Issue.record("the full refresh failed")
                return
            }
            #expect(all.summary.added.map(\.path) == [Self.other + "/Dort.txt"])
        }
    }

    /// The poller refreshes every interval on its own, not before the first interval ended, and stops when told;
    /// what it brings is highlighted as new.
    @Test func thePollerRefreshesEveryIntervalUntilStopped() async throws {
        try await DaemonParts.with { parts in
            let readme = try #require(try parts.campus.document(DaemonTests.readme))
            try await parts.addDocument("Abgefragt.txt", folder: readme.folderID)
            let started = ContinuousClock.now
            parts.refreshes.startPoller(every: .seconds(1))
            #expect(await eventually { !parts.effects.invalidated.isEmpty })
            #expect(ContinuousClock.now - started >= .seconds(1), "not before the first interval ended")
            #expect(parts.effects.invalidated.first?.added.map(\.path) == [Self.course + "/Abgefragt.txt"])
            #expect(
                await eventually(within: .seconds(60)) { parts.effects.invalidated.count >= 2 },
                "and again one interval later")
            parts.refreshes.stop()
            let polled = parts.effects.invalidated.count
            try await Task.sleep(for: .milliseconds(1300))
            #expect(parts.effects.invalidated.count == polled, "no refresh after stop()")

            let inode = Inode(try parts.store.resolve(path: Self.course + "/Abgefragt.txt").inode)
            let highlight = try await FileSystemOperationsTests.answer(size: 64) {
                parts.fs.getExtendedAttribute(inode, name: "user.campusfs.highlight", reply: $0)
            }
            #expect(try highlight.bytes == Array("new".utf8))
        }
    }

    /// With no grace left, a full refresh forgets what Stud.IP removed; a refresh of some courses does not collect.
    @Test func aFullRefreshCollectsWhatIsPastTheGracePeriod() async throws {
        try await DaemonParts.with(settings: RefreshSettings(removalGrace: .zero)) { parts in
            let gone = try #require(try parts.campus.document(Self.course + "/Übungsblätter/diagramm.png"))
            try await parts.change("DELETE", "/documents/\(gone.id)")
            _ = await parts.refreshes.refresh(courseIDs: [try parts.courseID(Self.course)])
            let future = Date().addingTimeInterval(60)
            #expect(try parts.store.departed(before: future).map(\.studipID) == [gone.id])
            _ = await parts.refreshes.refresh()
            #expect(try parts.store.departed(before: future).isEmpty)
        }
    }
}
