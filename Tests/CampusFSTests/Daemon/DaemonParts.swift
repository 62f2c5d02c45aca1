import CampusFS
import ContentCache
import ContentIndexing
import Foundation
import Logging
import MetadataStore
import Refreshing
import StudIPKit
import Synchronization
import TestSupport
import Testing

@testable import Daemon
@testable import StudIPSimulator

/// The daemon's parts over a ``Campus`` (a simulator and a store refreshed from it) and its in-process filesystem,
/// without a socket, a mount or a process: the refresh coordinator with recorded effects in place of the kernel's
/// invalidations, the server link, and what the control handler and the status reporter need.
struct DaemonParts: Sendable {
    let campus: Campus
    let fs: CampusFileSystem
    let link: ServerLink
    let refreshes: RefreshCoordinator
    let effects: RecordedEffects
    let indexer: ContentIndexer
    /// What the coordinator says when `status` changed, on its way to the reporter (``reporter(service:)``).
    let changes: (updates: AsyncStream<Void>, continuation: AsyncStream<Void>.Continuation)
    static let mountpoint = "/mnt/campusfs-test"

    var store: MetadataStore { campus.store }
    var sim: Simulator { campus.sim }

    static func with(
        _ dataset: Dataset = .fixtures507, user: String = "test_autor", password: String = "testing",
        settings: RefreshSettings = RefreshSettings(), _ body: (DaemonParts) async throws -> Void
    ) async throws {
        try await Campus.with(dataset, user: user) { campus in
            try await campus.withFileSystem { fs in
                let link = ServerLink(
                    configuration: ClientConfiguration(
                        baseURL: campus.sim.baseURL, credentials: .basic(username: user, password: password)))
                let changes = StatusReporter.changeStream()
                let effects = RecordedEffects(changes: changes.continuation)
                let refreshes = RefreshCoordinator(
                    store: campus.store, cache: fs.cache, connection: link, settings: settings,
                    effects: effects.effects, logger: Logger(label: "test.refreshes"))
                let parts = DaemonParts(
                    campus: campus, fs: fs, link: link, refreshes: refreshes, effects: effects,
                    indexer: ContentIndexer(store: campus.store), changes: changes)
                do {
                    try await body(parts)
                } catch {
                    refreshes.stop()
                    await link.shutdown()
                    throw error
                }
                refreshes.stop()
                await link.shutdown()
            }
        }
    }

    /// The status reporter over these parts, telling `service` (a datagram socket of the test's) if given, with
    /// `uploads`' outbox when given.
    func reporter(service: ServiceManager? = nil, uploads: UploadDesk? = nil) -> StatusReporter {
        StatusReporter(
            identity: StatusReporter.Identity(
                profile: "test", mountpoint: Self.mountpoint, serverURL: sim.baseURL,
                loginCommand: "campusfs login --profile test"),
            store: store, link: link, cache: fs.cache, indexer: indexer, refreshes: refreshes, service: service,
            notifier: nil, uploads: uploads, changes: changes, logger: Logger(label: "test.status"))
    }

    /// The control handler over these parts; `unmount` stands in for ending the mount.
    func handler(uploads: UploadDesk? = nil, unmount: @escaping @Sendable () -> Void = {}) -> ControlHandler {
        ControlHandler(
            store: store, link: link, cache: fs.cache, indexer: indexer, refreshes: refreshes,
            reporter: reporter(uploads: uploads), uploads: uploads, tokenStorage: nil, unmount: unmount,
            logger: Logger(label: "test.control"))
    }

    /// Asks the simulator's control API (`/__sim/…`, documented in its ControlAPI.swift) to change something, as
    /// the mount tests do; fails the test unless it answers 2xx.
    func change(_ method: String, _ path: String, _ json: String = "") async throws {
        let body = json.isEmpty ? "" : " -d \(quoted(json))"
        let result = try await shell("curl -sf -X \(method)\(body) \(quoted(sim.controlURL + path)) >/dev/null")
        #expect(result.status == 0, "\(method) \(path): \(result.stderr)")
    }

    /// Adds a text document named `name` to the folder `folderID` on the server.
    func addDocument(_ name: String, folder folderID: String, text: String = "neu\n") async throws {
        try await change(
            "POST", "/documents", #"{"folder_id": "\#(folderID)", "name": "\#(name)", "text": "\#(text)"}"#)
    }

    /// The course folder at `path`'s Stud.IP course id.
    func courseID(_ path: String) throws -> String {
        try #require(try store.courseIDs(below: path)?.first)
    }
}

/// What a coordinator's refreshes told the kernel and the desktop, in order, and how often `status` changed.
final class RecordedEffects: Sendable {
    enum Call: Sendable, Equatable {
        case invalidate(RefreshSummary)
        case announce(RefreshSummary)
    }

    private let recorded = Mutex<[Call]>([])
    private let changes = Atomic<Int>(0)
    private let settlings = Atomic<Int>(0)
    /// Told each change too, as the daemon's status reporter is.
    private let continuation: AsyncStream<Void>.Continuation

    init(changes continuation: AsyncStream<Void>.Continuation) {
        self.continuation = continuation
    }

    var calls: [Call] { recorded.withLock { $0 } }
    var invalidated: [RefreshSummary] {
        calls.compactMap { if case .invalidate(let summary) = $0 { summary } else { nil } }
    }
    var statusChanges: Int { changes.load(ordering: .relaxed) }
    /// Refreshes and fills that ended (``RefreshEffects/settled``).
    var settled: Int { settlings.load(ordering: .relaxed) }

    var effects: RefreshEffects {
        RefreshEffects(
            invalidate: { [self] summary in recorded.withLock { $0.append(.invalidate(summary)) } },
            announce: { [self] summary in recorded.withLock { $0.append(.announce(summary)) } },
            statusChanged: { [self] in
                changes.add(1, ordering: .relaxed)
                continuation.yield()
            },
            settled: { [self] in settlings.add(1, ordering: .relaxed) })
    }
}

/// Names appended from several tasks, in the order they came.
final class Events: Sendable {
    private let names = Mutex<[String]>([])
    var all: [String] { names.withLock { $0 } }
    func append(_ name: String) { names.withLock { $0.append(name) } }
}

/// Whether `condition` holds within `limit`, asked every 20 ms.
func eventually(within limit: Duration = .seconds(10), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}
