import ControlProtocol
import Foundation
import Logging
import MetadataStore
import StudIPKit
import StudIPModel
import Synchronization
import Uploading

/// The daemon's side of the outbox (docs/writing.md, "The outbox") beyond sending: the control socket's outbox
/// requests (`campusfs outbox`, `campusfs upload`), the counts `status` shows, and what became of each entry — kept
/// for a while, so that `campusfs upload` learns how its entry ended after it left the outbox.
public final class UploadDesk: Sendable {
    /// Told how each entry ended, after the desk noted it: the workspace, the desktop, the status line.
    public typealias SettledHandler = @Sendable (OutboxEntry, OutboxOutcome, OutboxSettlement) async -> Void

    public let outbox: Outbox
    private let writer: LinkedWriter
    private let store: MetadataStore
    private let ledger: Ledger
    private let logger: Logger
    static let keptSettlements = 200

    /// How entries ended, by id (the newest ``keptSettlements``), and who hears of them: shared with the outbox's
    /// `onSettled`, which exists before the desk.
    private final class Ledger: Sendable {
        let recent = Mutex<[(id: Int64, settlement: OutboxSettlement)]>([])
        let handler = Mutex<SettledHandler?>(nil)

        func settled(_ entry: OutboxEntry, _ outcome: OutboxOutcome) async {
            let settlement = OutboxSettlement(entry: entry, outcome: outcome)
            recent.withLock { recent in
                recent.append((entry.id, settlement))
                let excess = recent.count - UploadDesk.keptSettlements
                if excess > 0 { recent.removeFirst(excess) }
            }
            await handler.withLock { $0 }?(entry, outcome, settlement)
        }
    }

    /// The profile's outbox over `store`, its bytes below `dataDirectory`, sent through `writer`.
    init(store: MetadataStore, dataDirectory: URL, writer: LinkedWriter, logger: Logger) {
        let ledger = Ledger()
        self.ledger = ledger
        self.store = store
        self.writer = writer
        outbox = Outbox(store: store, dataDirectory: dataDirectory, writer: writer, logger: logger) {
            await ledger.settled($0, $1)
        }
        self.logger = logger
    }

    /// The outbox (sending through the server link, with the profile's terms of use) and the workspace over it
    /// (docs/writing.md): the daemon's, and `campusfs upload`'s without a daemon. Moves are offered while the
    /// link's connection speaks legacy REST (JSON:API has none), asked at each move: `api = auto` learns it only
    /// once connected. A draft over a document asks for its base's content `ETag` only while the link is online.
    public static func open(
        _ settings: UploadSettings, store: MetadataStore, link: ServerLink, logger: Logger
    ) async throws(WorkspaceError) -> (desk: UploadDesk, workspace: Workspace) {
        let desk = UploadDesk(
            store: store, dataDirectory: URL(fileURLWithPath: settings.dataDirectory),
            writer: LinkedWriter(link: link, terms: settings.terms), logger: logger)
        let workspace = try await Workspace(
            store: store, outbox: desk.outbox, dataDirectory: settings.dataDirectory,
            configuration: Workspace.Configuration(
                terms: settings.terms, movesDocuments: { link.movesDocuments },
                isOnline: { await link.state == .online }),
            logger: logger)
        return (desk, workspace)
    }

    /// Who hears of each entry that ended; set before the outbox runs.
    public func whenSettled(_ body: @escaping SettledHandler) {
        ledger.handler.withLock { $0 = body }
    }

    /// Pending and failed entries for `status`, and the drafts held back without an entry (a write into one failed,
    /// or the daemon stopped while it was written: `Workspace.isHeldBack`), which need the user as a refused entry
    /// does; nil when the store cannot be read (the log says why).
    func counts() async -> UploadCounts? {
        let entries: [OutboxEntry]
        do throws(OutboxError) {
            entries = try await outbox.entries()
        } catch {
            logger.warning("cannot read the outbox: \(error)")
            return nil
        }
        var counts = UploadCounts(entries)
        do throws(StoreError) {
            let drafts = try await store.run { store throws(StoreError) in try store.drafts() }
            let heldBack = drafts.filter { Workspace.isHeldBack($0, entries: entries) }
            counts.failed += heldBack.count
            counts.failures = Array(
                (counts.failures + heldBack.map { "\($0.name): \($0.detail ?? "held back")" })
                    .prefix(UploadCounts.failuresShown))
        } catch {
            logger.warning("cannot read the drafts: \(error)")
        }
        return counts
    }

    /// The answer to an outbox request of the control socket (``ControlHandler`` passes only those).
    public func handle(_ request: ControlRequest) async -> ControlResponse {
        do throws(OutboxError) {
            switch request {
            case .outbox:
                return ControlResponse(outbox: try await items())
            case .retryOutbox(let id):
                try await OutboxItem.retry(id, in: outbox)
                return ControlResponse(outbox: try await items())
            case .discardOutbox(let id):
                try await outbox.discard(id)
                return .ok
            case .upload(let order):
                let id = try await outbox.enqueue(
                    .upload(folder: .folder(order.folderID), name: order.name, terms: order.terms),
                    bytes: order.file, draftID: nil)
                return ControlResponse(queued: id)
            case .outboxEntry(let id):
                if let item = try await items().first(where: { $0.id == id }) {
                    return ControlResponse(outbox: [item])
                }
                let settled = ledger.recent.withLock { $0.last { $0.id == id }?.settlement }
                guard let settled else { throw .noSuchEntry(id) }
                return ControlResponse(settled: settled)
            default:
                return .failure("not a request about the outbox", exitCode: 4)
            }
        } catch {
            if case .noSuchEntry = error { return .failure(error.description, exitCode: 1) }
            return .failure(error.description, exitCode: 4)
        }
    }

    /// The entries as `campusfs outbox` lists them, settled ones left out (they are on their way out); an entry
    /// of a draft (a file saved in the mount) says where in the tree, as the draft's folder.
    private func items() async throws(OutboxError) -> [OutboxItem] {
        let entries = try await outbox.entries().filter { $0.state != .settled }
        let folders = (try? await store.run { store throws(StoreError) in try Self.draftFolders(store) }) ?? [:]
        return entries.map { entry in
            var item = OutboxItem(entry)
            if let draft = entry.draftID, let folder = folders[draft] { item.place = folder }
            if entry.state == .sending { item.sentBytes = transfer(of: entry).flatMap(writer.progress)?.sent }
            return item
        }
    }

    /// The writer's name for an entry's upload under way.
    private func transfer(of entry: OutboxEntry) -> LinkedWriter.Transfer? {
        switch entry.operation {
        case .upload(.folder(let folder), let name, _): .upload(folderID: folder, name: name)
        case .newVersion(let document, _, _, _, _): .newVersion(documentID: document)
        default: nil
        }
    }

    /// Each draft's folder in the tree, by draft id: its parent node's path, or a folder draft's below it.
    private static func draftFolders(_ store: MetadataStore) throws(StoreError) -> [Int64: String] {
        let drafts = Dictionary(try store.drafts().compactMap { draft in draft.id.map { ($0, draft) } }) { $1 }
        func folder(of draft: DraftRecord, depth: Int = 0) throws(StoreError) -> String? {
            let parentDraft = draft.parent - Workspace.inodeBase
            if parentDraft > 0, depth < 64, let parent = drafts[parentDraft] {
                return try folder(of: parent, depth: depth + 1).map { $0 + "/" + parent.name }
            }
            return try store.path(of: draft.parent)
        }
        var folders: [Int64: String] = [:]
        for (id, draft) in drafts { folders[id] = try folder(of: draft) }
        return folders
    }
}

extension OutboxItem {
    /// `campusfs outbox retry [ID]`: one entry, or every one that failed, is unconfirmed or waits.
    public static func retry(_ id: Int64?, in outbox: Outbox) async throws(OutboxError) {
        if let id { return try await outbox.retry(id) }
        for entry in try await outbox.entries() where [.failed, .unconfirmed, .waiting].contains(entry.state) {
            try await outbox.retry(entry.id)
        }
    }

    /// An entry as listed: its kind, the name it sends, and where (Stud.IP's ids: the store knows documents and
    /// folders by node, the outbox by Stud.IP id).
    public init(_ entry: OutboxEntry) {
        let (kind, name, place): (Kind, String, String) =
            switch entry.operation {
            case .upload(let folder, let name, _): (.upload, name, folder.description)
            case .newVersion(let document, let name, _, _, _): (.newVersion, name, "document \(document)")
            case .rename(let document, let name): (.rename, name, "document \(document)")
            case .move(let document, let folder): (.move, "document \(document)", folder.description)
            case .delete(let document): (.delete, "document \(document)", "document \(document)")
            case .makeFolder(let parent, let name): (.makeFolder, name, parent.description)
            }
        self.init(
            id: entry.id, kind: kind, name: name, place: place, state: entry.state.rawValue, reason: entry.reason,
            attempts: entry.attempts, nextAttempt: entry.notBefore, bytes: entry.byteCount, created: entry.created)
    }
}

extension UploadCounts {
    /// How many failed entries `status` names.
    static let failuresShown = 3

    /// Counts of `entries`: settled ones are done.
    public init(_ entries: [OutboxEntry]) {
        let failed = entries.filter { $0.state == .failed || $0.state == .unconfirmed }
        self.init(
            pending: entries.count { [.queued, .sending, .waiting].contains($0.state) }, failed: failed.count,
            failures: failed.prefix(Self.failuresShown).map { entry in
                OutboxItem(entry).name + ": " + (entry.reason ?? entry.state.rawValue)
            })
    }
}

extension OutboxSettlement {
    /// How `entry` ended, as `campusfs upload` and the notifications say it.
    public init(entry: OutboxEntry, outcome: OutboxOutcome) {
        switch outcome {
        case .done(let document): self.init(id: entry.id, result: .done, name: document?.name)
        case .madeFolder(let folder): self.init(id: entry.id, result: .done, name: folder.name)
        case .failed(let reason): self.init(id: entry.id, result: .failed, reason: reason)
        case .conflict(let keptAs, _, let cause):
            self.init(
                id: entry.id, result: .conflict, name: keptAs,
                reason: cause == .changed ? "the document changed on Stud.IP meanwhile" : "the document is gone")
        case .unconfirmed(let reason): self.init(id: entry.id, result: .unconfirmed, reason: reason)
        case .discarded: self.init(id: entry.id, result: .discarded)
        }
    }
}
