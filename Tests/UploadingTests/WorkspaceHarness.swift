import Foundation
import Glibc
import MetadataStore
import Refreshing
import StudIPKit
import StudIPModel
import Synchronization
import TestSupport
import Testing

@testable import StudIPSimulator
@testable import Uploading

/// A clock the tests move by hand, so that settling is tested without sleeping.
final class ManualClock: Sendable {
    private let instant = Mutex(ContinuousClock.now)

    var now: @Sendable () -> ContinuousClock.Instant { { self.instant.withLock { $0 } } }

    func advance(by duration: Duration) {
        instant.withLock { $0 += duration }
    }
}

/// A workspace over a store refreshed as `test_autor` from the writes capture's dataset, its outbox not sending (so
/// the tests see exactly which operations were queued), and a clock the test drives.
struct WorkspaceBench: Sendable {
    let sim: Simulator
    let harness: OutboxHarness
    let store: MetadataStore
    let outbox: Outbox
    let workspace: Workspace
    let clock: ManualClock
    let writer: any DocumentWriter
    let source: any DocumentSource
    let reporting: Bool

    /// The folder "Allgemeiner Dateiordner", writable for test_autor.
    var general: Int64 { get throws { try folder(OutboxHarness.generalFolder) } }

    /// `reporting`: the outbox tells the workspace its outcomes, as the daemon wires them (the tests that run it).
    static func with(
        configuration: Workspace.Configuration = Workspace.Configuration(), reporting: Bool = false,
        _ body: (WorkspaceBench) async throws -> Void
    ) async throws {
        try await withSimulator(.fixtures507Writes) { sim in
            try await withSource(OutboxHarness.configuration(sim)) { source in
                let harness = try OutboxHarness()
                let store = try harness.openStore()
                _ = try await Refresher(source: source, store: store, options: TreeOptions()).refresh()
                let writer = try #require(source.writer)
                let clock = ManualClock()
                let (outbox, workspace) = try await opened(
                    store, harness, writer, configuration: configuration, reporting: reporting, clock: clock)
                // The course refreshes the daemon makes, as if they worked (tests that need more set their own).
                workspace.refreshCourses { _ in true }
                try await body(
                    WorkspaceBench(
                        sim: sim, harness: harness, store: store, outbox: outbox, workspace: workspace, clock: clock,
                        writer: writer, source: source, reporting: reporting))
            }
        }
    }

    /// Where the outbox's handler finds the workspace made after it.
    private final class Reported: Sendable {
        let workspace = Mutex<Workspace?>(nil)
    }

    private static func opened(
        _ store: MetadataStore, _ harness: OutboxHarness, _ writer: any DocumentWriter,
        configuration: Workspace.Configuration, reporting: Bool, clock: ManualClock
    ) async throws -> (Outbox, Workspace) {
        let reported = Reported()
        let outbox = Outbox(store: store, dataDirectory: harness.data, writer: writer) { entry, outcome in
            guard reporting, let workspace = reported.workspace.withLock({ $0 }) else { return }
            await workspace.settled(entry, outcome)
        }
        let workspace = try await Workspace(
            store: store, outbox: outbox, dataDirectory: harness.data.path, configuration: configuration,
            now: clock.now)
        reported.workspace.withLock { $0 = workspace }
        return (outbox, workspace)
    }

    /// The same data directory and store opened again, as after a restart (`kill -9` included: every write was
    /// synced before it returned).
    func reopened() async throws -> WorkspaceBench {
        let store = try harness.openStore()
        let (outbox, workspace) = try await Self.opened(
            store, harness, writer, configuration: Workspace.Configuration(), reporting: reporting, clock: clock)
        return WorkspaceBench(
            sim: sim, harness: harness, store: store, outbox: outbox, workspace: workspace, clock: clock,
            writer: writer, source: source, reporting: reporting)
    }

    /// The inode of the Stud.IP folder `id`.
    func folder(_ id: String) throws -> Int64 {
        try #require(try store.walk().first { $0.node.studipID == id && $0.node.item == .folder }).node.inode
    }

    /// A document of test_autor's own in the general folder, uploaded through the API and refreshed into the store.
    func ownDocument(_ name: String, _ bytes: [UInt8]) async throws -> (node: Node, info: DocumentInfo) {
        let file = try harness.draft("upload-\(name)", bytes)
        _ = try await writer.upload(
            file: file, toFolder: OutboxHarness.generalFolder, name: name, termsID: nil, progress: nil)
        _ = try await Refresher(source: source, store: store, options: TreeOptions()).refresh()
        let node = try #require(try store.lookup(parent: try general, name: name))
        return (node, try #require(try store.document(inode: node.inode)))
    }

    /// Writes `bytes` into a draft as a process would through the mount: written and closed, in the open that
    /// `create` or `openForWriting` claimed.
    func write(_ draft: DraftRecord, _ bytes: [UInt8]) throws {
        let id = try #require(draft.id)
        let descriptor = open(workspace.path(ofDraft: id), O_WRONLY | O_TRUNC)
        #expect(descriptor >= 0)
        #expect(bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) } == bytes.count)
        close(descriptor)
        try workspace.touched(id)
        workspace.closed(id)
    }

    /// Moves the clock on and settles what is due.
    func settle(after duration: Duration) async {
        clock.advance(by: duration)
        await workspace.settle()
    }

    func operations() async throws -> [OutboxOperation] {
        try await outbox.entries().map(\.operation)
    }
}
