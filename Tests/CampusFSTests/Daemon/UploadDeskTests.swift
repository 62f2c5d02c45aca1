import ControlProtocol
import Desktop
import Foundation
import Logging
import MetadataStore
import Refreshing
import StudIPKit
import StudIPModel
import Synchronization
import SystemSupport
import TestSupport
import Testing
import Uploading

@testable import Daemon
@testable import StudIPSimulator
@testable import campusfs

/// The daemon's outbox parts in-process (issue 32, docs/writing.md, "The outbox"): the control socket's outbox
/// messages on the wire, the counts of `status` and the service's status line, the server coming back, and the
/// desktop notifications — over the daemon's parts (``DaemonParts``) and the simulator's `fixtures-5.0.7-writes`.
@Suite struct UploadDeskTests {
    static let general = "ca002fbae136b07e4df29e0136e3bd32"

    /// The daemon's parts with an outbox and a workspace over them (data directory of its own), as the daemon
    /// opens them; what the outbox settled is recorded, after `settled` heard it.
    static func with(
        settled: UploadDesk.SettledHandler? = nil,
        _ body: (DaemonParts, UploadDesk, Outcomes) async throws -> Void
    ) async throws {
        try await DaemonParts.with(.fixtures507Writes) { parts in
            let data = try temporaryDirectory("campusfs-uploads")
            defer { try? FileManager.default.removeItem(atPath: data) }
            let (desk, workspace) = try await UploadDesk.open(
                UploadSettings(dataDirectory: data), store: parts.store, link: parts.link,
                logger: Logger(label: "test.outbox"))
            let outcomes = Outcomes()
            desk.whenSettled { entry, outcome, settlement in
                await workspace.settled(entry, outcome)
                outcomes.append(entry.id, outcome)
                await settled?(entry, outcome, settlement)
            }
            let sending = Task { await desk.outbox.run() }
            defer { sending.cancel() }
            try await body(parts, desk, outcomes)
            sending.cancel()
            await sending.value
        }
    }

    final class Outcomes: Sendable {
        private let all = Mutex<[(Int64, OutboxOutcome)]>([])
        func append(_ id: Int64, _ outcome: OutboxOutcome) { all.withLock { $0.append((id, outcome)) } }
        func of(_ id: Int64) -> OutboxOutcome? { all.withLock { $0.last { $0.0 == id }?.1 } }
    }

    /// Queues an upload of `text` as `name` into `folder` through the control handler, as `campusfs upload` does.
    static func upload(
        _ name: String, _ text: String, into folder: String = general, _ handler: ControlHandler
    ) async throws -> Int64 {
        let file = try temporaryDirectory("campusfs-staged") + "/" + name
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        let response = await handler.handle(.upload(UploadOrder(file: file, folderID: folder, name: name, terms: nil)))
        return try #require(response.queued, "\(response)")
    }

    /// Every new request and answer survives the wire: encoded as the socket sends it, decoded as the other end
    /// reads it.
    @Test func outboxMessagesRoundTripOnTheWire() throws {
        let created = Date(timeIntervalSince1970: 1_795_853_872)
        let requests: [ControlRequest] = [
            .outbox, .retryOutbox(id: nil), .retryOutbox(id: 7), .discardOutbox(id: 7), .outboxEntry(id: 3),
            .upload(UploadOrder(file: "/d/staging/x", folderID: Self.general, name: "Blatt 3.pdf", terms: "FREE")),
        ]
        for request in requests {
            #expect(try ControlCoding.decode(ControlRequest.self, from: request.encoded()) == request)
        }
        let item = OutboxItem(
            id: 7, kind: .newVersion, name: "Blatt 3.pdf", place: "SS 2022/Kurs", state: "waiting", reason: "503",
            attempts: 2, nextAttempt: created, bytes: 12, created: created)
        let responses = [
            ControlResponse(outbox: [item]), ControlResponse(queued: 7),
            ControlResponse(settled: OutboxSettlement(id: 7, result: .conflict, name: "Blatt 3 (yours).pdf")),
            ControlResponse(
                status: DaemonStatus(
                    profile: "p", mountpoint: "/m", pid: 1, serverURL: "http://s", server: .online, serverDetail: nil,
                    api: nil, lastRefresh: nil, lastRefreshError: nil, cacheBytes: 0, cacheLimit: 1, cachedDocuments: 0,
                    downloadsInFlight: 0, uploads: UploadCounts(pending: 2, failed: 1, failures: ["x.exe: refused"]))),
        ]
        for response in responses {
            #expect(try ControlCoding.decode(ControlResponse.self, from: response.encoded()) == response)
        }
        let wire = String(decoding: ControlRequest.retryOutbox(id: 7).encoded(), as: UTF8.self)
        #expect(wire == #"{"retryOutbox":{"id":7}}"#)
    }

    /// `status` and the status line count what waits and what failed, with the failure's reason; a mount whose
    /// profile does not upload answers outbox requests with how to turn uploads on.
    @Test func statusCountsPendingAndFailedUploads() async throws {
        try await Self.with { parts, desk, outcomes in
            let handler = parts.handler(uploads: desk)
            let reporter = parts.reporter(uploads: desk)
            // Sent as soon as it is queued: a server error holds them back (an upload's POST is sent once, then the
            // entry waits for its backoff).
            parts.sim.faults.add(Fault(action: .status(503), method: "POST"))
            let program = try await Self.upload("Setup.exe", "MZ", handler)
            let notes = try await Self.upload("Notizen.txt", "Stichpunkte\n", handler)
            #expect(
                await eventually {
                    (try? await desk.outbox.entries().filter { $0.state == .waiting }.count) == 2
                })
            #expect(await reporter.status().uploads?.pending == 2)
            let waiting = await reporter.statusLine()
            #expect(waiting.hasSuffix("; 2 uploads pending"), "\(waiting)")
            parts.sim.faults.clear()

            // The link noticed the server gone and sees it again: waiting entries go now, not after the backoff.
            await reporter.observeTheServer()
            await parts.link.record(.unreachable(server: parts.sim.baseURL, detail: "test"))
            #expect(await parts.link.state == .offline)
            _ = await parts.refreshes.refresh()
            #expect(
                await eventually(within: .seconds(8)) { outcomes.of(notes) != nil && outcomes.of(program) != nil },
                "sent within the first backoff of 10 s once the server was back")

            let status = try #require(await reporter.status().uploads)
            #expect(status.pending == 0 && status.failed == 1, "\(status)")
            #expect(status.failures.count == 1 && status.failures[0].hasPrefix("Setup.exe: "), "\(status)")
            #expect(status.failures.first?.contains("does not accept .exe files") == true, "\(status)")
            let line = await reporter.statusLine()
            #expect(line.hasPrefix("Online"), "\(line)")
            #expect(line.contains("; 1 upload failed: Setup.exe: "), "\(line)")

            let done = await handler.handle(.outboxEntry(id: notes))
            #expect(done.settled == OutboxSettlement(id: notes, result: .done, name: "Notizen.txt"), "\(done)")
            let listed = await handler.handle(.outbox).outbox ?? []
            #expect(listed.map(\.name) == ["Setup.exe"] && listed.first?.state == "failed", "\(listed)")

            let off = await parts.handler().handle(.outbox)
            #expect(off.exitCode == 1 && off.error?.contains("uploads are off for this profile") == true, "\(off)")
        }
    }

    /// While an upload is being sent, its entry says how much went out (`campusfs upload`'s progress line): here a
    /// server that takes its time to answer, after the bytes went out.
    @Test func anEntryBeingSentSaysHowMuchWentOut() async throws {
        try await Self.with { parts, desk, outcomes in
            let handler = parts.handler(uploads: desk)
            parts.sim.faults.add(Fault(action: .stall(milliseconds: 3000), method: "POST"))
            let id = try await Self.upload("Skript.txt", String(repeating: "Satz für Satz.\n", count: 4096), handler)
            var sending: OutboxItem?
            #expect(
                await eventually {
                    let items = await handler.handle(.outbox).outbox ?? []
                    sending = items.first { $0.id == id && ($0.sentBytes ?? 0) > 0 }
                    return sending != nil
                })
            let item = try #require(sending)
            #expect(item.state == "sending" && item.bytes == 65_536, "\(item)")
            let sent = try #require(item.sentBytes)
            #expect(sent > 0 && sent <= 65_536, "\(item)")
            #expect(
                UploadCommand.progressLine("Skript.txt", item).hasPrefix("Skript.txt: sending, "), "\(item)")
            parts.sim.faults.clear()
            #expect(await eventually { outcomes.of(id) != nil })
            let done = await handler.handle(.outbox).outbox ?? []
            #expect(done.isEmpty, "\(done)")
        }
    }

    /// `api = auto` on an installation without JSON:API speaks legacy REST, which moves: the workspace asks the link
    /// at each rename, so a document moves between folders once the link connected (before, `auto` might still
    /// become JSON:API, which cannot: `EXDEV`, and `mv` copies).
    @Test func withAPIAutoADocumentMovesOnceTheLinkSpeaksLegacyREST() async throws {
        try await DaemonParts.with(.fixtures507Writes) { parts in
            // An own document, uploaded and refreshed into the store over the test's own connection, not the link.
            let file = try temporaryDirectory("campusfs-staged") + "/m.txt"
            try Data("m\n".utf8).write(to: URL(fileURLWithPath: file))
            _ = try await #require(parts.campus.source.writer).upload(
                file: file, toFolder: Self.general, name: "m.txt", termsID: nil, progress: nil)
            _ = try await Refresher(source: parts.campus.source, store: parts.store, options: TreeOptions()).refresh()
            let data = try temporaryDirectory("campusfs-uploads")
            defer { try? FileManager.default.removeItem(atPath: data) }
            let (_, workspace) = try await UploadDesk.open(
                UploadSettings(dataDirectory: data), store: parts.store, link: parts.link,
                logger: Logger(label: "test.outbox"))
            let nodes = try parts.store.walk().map(\.node)
            let general = try #require(nodes.first { $0.item == .folder && $0.studipID == Self.general }).inode
            let course = try #require(nodes.first { $0.item == .course }).inode
            func move() -> Int32? {
                do throws(WorkspaceError) {
                    try workspace.rename(parent: general, name: "m.txt", to: course, "m.txt", noReplace: false)
                    return nil
                } catch {
                    return error.errorNumber
                }
            }
            #expect(move() == EXDEV)
            parts.sim.faults.add(Fault(action: .status(404), pathContains: "jsonapi.php"))
            #expect(try await parts.link.connected().apiName == "legacy REST")
            #expect(move() == nil)
        }
    }

    /// The service manager's status line counts an entry the mount's workspace queued (nobody tells the reporter):
    /// it looks at the outbox's counts every ``StatusReporter/outboxCheckInterval``.
    @Test func theServiceManagersLineCountsWhatTheWorkspaceQueued() async throws {
        try await Self.with { parts, desk, _ in
            let manager = try NotifyListener()
            let service = try #require(ServiceManager(socket: manager.path))
            let reporter = parts.reporter(service: service, uploads: desk)
            await reporter.ready()
            _ = await manager.first(timeout: 10) { $0.hasPrefix("READY=1") }
            parts.sim.faults.add(Fault(action: .status(503), method: "POST"))
            let file = try temporaryDirectory("campusfs-staged") + "/draft"
            try Data("Entwurf\n".utf8).write(to: URL(fileURLWithPath: file))
            _ = try await desk.outbox.enqueue(
                .upload(folder: .folder(Self.general), name: "Entwurf.txt", terms: nil), bytes: file, draftID: nil)
            let line = await manager.first(timeout: 10) { $0.contains("1 upload pending") }
            #expect(line?.hasPrefix("STATUS=") == true, "\(line ?? "no status line with the pending upload")")
            await reporter.stop()
        }
    }

    /// An upload's success, a refusal and a conflict each reach the desktop (a real notification server on a bus
    /// of the test's own), phrased for the person; a discard does not.
    @Test func uploadsSuccessFailureAndConflictAreNotified() async throws {
        let server = try await NotificationServer.start()
        defer { server.stop() }
        let bus = try await BlockingPool.shared.run { () throws(NotificationError) in
            try NotificationBus(address: server.address)
        }
        let notifier = Mutex<NewsNotifier?>(nil)
        let announce: UploadDesk.SettledHandler = { entry, _, settlement in
            await notifier.withLock { $0 }?.outboxSettled(OutboxItem(entry), settlement)
        }
        try await Self.with(settled: announce) { parts, desk, outcomes in
            notifier.withLock {
                $0 = NewsNotifier(
                    bus: bus, store: parts.store, mountpoint: DaemonParts.mountpoint, loginCommand: "campusfs login",
                    minimumInterval: .seconds(60), logger: Logger(label: "test.notifier"))
            }
            let handler = parts.handler(uploads: desk)
            let notes = try await Self.upload("Notizen.txt", "erste Fassung\n", handler)
            #expect(await eventually { outcomes.of(notes) != nil })
            guard case .done(let stored?) = outcomes.of(notes) else {
                Issue.record("not uploaded: \(String(describing: outcomes.of(notes)))")
                return
            }
            let program = try await Self.upload("Setup.exe", "MZ", handler)
            #expect(await eventually { outcomes.of(program) != nil })

            // A new version based on a version Stud.IP no longer has: the lecturer changed it meanwhile.
            let file = try temporaryDirectory("campusfs-staged") + "/v2"
            try Data("zweite Fassung\n".utf8).write(to: URL(fileURLWithPath: file))
            let version = try await desk.outbox.enqueue(
                .newVersion(
                    documentID: stored.id, name: "Notizen.txt", base: DocumentVersion(fileID: "older", size: 3),
                    folderID: Self.general),
                bytes: file, draftID: nil)
            #expect(await eventually { outcomes.of(version) != nil })

            let shown = await server.notifications(count: 3, timeout: 10)
            try #require(shown.count == 3, "\(shown)")
            #expect(shown[0]["summary"] as? String == "Uploaded Notizen.txt")
            #expect(shown[1]["summary"] as? String == "Upload failed: Setup.exe")
            let failure = shown[1]["body"] as? String ?? ""
            #expect(failure.contains("does not accept .exe files"), "\(failure)")
            #expect(failure.hasSuffix("campusfs outbox discard \(program) drops it."), "\(failure)")
            #expect((shown[1]["hints"] as? [String: String])?["urgency"] == "2", "critical: \(shown[1])")
            #expect(shown[2]["summary"] as? String == "Notizen.txt changed on Stud.IP")
            #expect((shown[2]["body"] as? String ?? "").contains("kept yours as Notizen (yours).txt"), "\(shown[2])")

            try await desk.outbox.discard(program)
            try await Task.sleep(for: .milliseconds(500))
            #expect(server.notifications.count == 3, "a discard is the person's own doing")
            await BlockingPool.shared.run { notifier.withLock { $0 }?.close() }
        }
    }
}
