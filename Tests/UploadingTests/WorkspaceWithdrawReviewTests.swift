import Foundation
import Glibc
import MetadataStore
import StudIPModel
import Testing

@testable import StudIPSimulator
@testable import Uploading

/// The cases a review of taking entries back found (docs/writing.md, "Renaming or deleting a file in the
/// outbox"): an attempt that may be on Stud.IP stays so, and a failed draft without an entry is an ordinary draft.
@Suite struct WorkspaceWithdrawReviewTests {
    typealias H = OutboxHarness
    static let answer = WorkspaceWithdrawTests.answer

    /// `serverIsBack()` (the link came back) while the sender claims a waiting row: it must not write back the row
    /// as it read it, over the `sending` mark, while the bytes are on the wire; else a rename takes the entry back
    /// and Stud.IP ends with the file under both names. The daemon calls it once a reconnect; here it runs in a
    /// loop through the claim, so that an unguarded read-then-write lands in the window.
    @Test func theServerComingBackNeverUndoesTheSendingMark() async throws {
        try await WorkspaceBench.with(reporting: true) { bench in
            let general = try bench.general
            let (_, entry) = try await WorkspaceTests.queued("Alt.txt", in: bench)
            bench.sim.inject(Fault(action: .status(429), pathContains: "file-refs", method: "POST", remaining: 1))
            try await bench.outbox.running {
                _ = try await bench.outbox.wait(for: entry.id) { $0.state == .waiting && $0.attempts == 1 }
            }
            bench.sim.clearFaults()
            bench.sim.inject(
                Fault(action: .stall(milliseconds: 4000), pathContains: "file-refs", method: "POST", remaining: 1))
            try await bench.outbox.running {
                let outbox = bench.outbox
                let looper = Task {
                    while !Task.isCancelled { await outbox.serverIsBack() }
                }
                try await Task.sleep(for: .milliseconds(1500))
                looper.cancel()
                await looper.value
                let row = try #require(try bench.store.outboxRow(id: entry.id))
                #expect(row.state == OutboxState.sending.rawValue, "the upload is on the wire")
                #expect(
                    Self.answer { () throws(WorkspaceError) in
                        try bench.workspace.rename(
                            parent: general, name: "Alt.txt", to: general, "Neu.txt", noReplace: false)
                    } == EBUSY)
                try await WorkspaceWithdrawTests.until { try await bench.outbox.entries().isEmpty }
            }
            #expect(WorkspaceWithdrawTests.stored(bench).keys.sorted() == ["Alt.txt"], "one document, one name")
        }
    }

    /// A new version Stud.IP stored (201, held 1 s on the wire), whose read-back GETs then fail with 503: the
    /// attempt arrived, so the row keeps mayHaveArrived (it is not taken back) and the next attempt finds the
    /// version stored instead of uploading a "(yours)" copy beside it.
    @Test func aNewVersionStoredWhoseReadBackFailedStillMayHaveArrived() async throws {
        let harness = try H()
        let settlements = Settlements()
        try await H.withWriter { sim, writer in
            let uploaded = try #require(
                try await writer.upload(
                    file: try harness.draft("original", H.bytes(1500)), toFolder: H.generalFolder,
                    name: "Bericht.txt", termsID: nil, progress: nil
                ).document)
            let store = try harness.openStore()
            let outbox = Outbox(
                store: store, dataDirectory: harness.data, writer: writer, onSettled: settlements.handler)
            let mine = H.bytes(1700, seed: 3)
            sim.inject(
                Fault(action: .stall(milliseconds: 1000), pathContains: "/content", method: "POST", remaining: 1))
            let id = try await outbox.enqueue(
                .newVersion(documentID: uploaded.id, name: "Bericht.txt", base: uploaded.version),
                bytes: try harness.draft("draft", mine), draftID: 5)
            try await outbox.running {
                _ = try await outbox.wait(for: id, toBe: .sending)
                sim.inject(Fault(action: .status(503), pathContains: "file-refs/\(uploaded.id)", method: "GET"))
                _ = try await outbox.wait(for: id, toBe: .waiting)
            }
            let onServer = sim.university.fileRefs(in: H.generalFolder).first { $0.id == uploaded.id }
            #expect(onServer?.content == .bytes(Data(mine)), "Stud.IP stored the new version")
            let row = try #require(try store.outboxRow(id: id))
            #expect(OutboxProgress(row.progress).mayHaveArrived, "the new version arrived")
            #expect(!Outbox.isWithdrawable(row))

            sim.clearFaults()
            await outbox.serverIsBack()
            let outcome = try await outbox.running { try await settlements.outcome(of: id) }
            guard case .done = outcome else {
                Issue.record("not found stored: \(outcome)")
                return
            }
            #expect(sim.university.fileRefs(in: H.generalFolder).count == 1, "no (yours) copy")
        }
    }

    /// An upload answered 500 (legacy REST stores and then answers 500) is `EBUSY`; after `campusfs outbox retry`
    /// and an attempt Stud.IP answers 503 it still is: the first attempt may be on Stud.IP under the old name.
    @Test func aMaybeArrivedUploadRetriedThenRefusedStaysBusy() async throws {
        try await WorkspaceBench.with(reporting: true) { bench in
            let general = try bench.general
            let (_, entry) = try await WorkspaceTests.queued("Alt.txt", in: bench)
            bench.sim.inject(Fault(action: .status(500), pathContains: "file-refs", method: "POST", remaining: 1))
            try await bench.outbox.running {
                _ = try await bench.outbox.wait(for: entry.id) { $0.state == .waiting && $0.attempts == 1 }
            }
            let first = Self.answer { () throws(WorkspaceError) in
                try bench.workspace.rename(parent: general, name: "Alt.txt", to: general, "Neu.txt", noReplace: false)
            }
            #expect(first == EBUSY)
            bench.sim.inject(Fault(action: .status(503), pathContains: "file-refs", method: "POST"))
            try await bench.outbox.retry(entry.id)
            try await bench.outbox.running {
                _ = try await bench.outbox.wait(for: entry.id) { $0.state == .waiting && $0.attempts == 2 }
            }
            let second = Self.answer { () throws(WorkspaceError) in
                try bench.workspace.rename(parent: general, name: "Alt.txt", to: general, "Neu.txt", noReplace: false)
            }
            #expect(second == EBUSY, "the 500 attempt may be on Stud.IP as Alt.txt")
            #expect(try await bench.outbox.entries().map(\.id) == [entry.id])
        }
    }

    /// A refusal whose outcome the workspace looked its draft up for just before a rename took the entry back
    /// (the interleaving driven by hand: the outcome applied to the record read before the rename): the renamed
    /// draft stays being edited under its new name, and settles again.
    @Test func aRefusalThatComesAfterTheDraftWasTakenBackLeavesItEditing() async throws {
        try await WorkspaceBench.with(reporting: true) { bench in
            let general = try bench.general
            let (draft, entry) = try await WorkspaceTests.queued("Alt.txt", in: bench)
            let id = try #require(draft.id)
            let looked = try #require(bench.workspace.draft(inode: Workspace.inode(ofDraft: id)))
            #expect(looked.outboxID == entry.id)
            try bench.workspace.rename(parent: general, name: "Alt.txt", to: general, "Neu.txt", noReplace: false)
            try await bench.workspace.settledDraft(looked, .failed(reason: "refused"), of: entry.id)
            let now = try #require(bench.workspace.draft(inode: Workspace.inode(ofDraft: id)))
            #expect(now.state == .editing && now.name == "Neu.txt" && now.detail == nil)
            #expect(try bench.store.drafts().map(\.state) == [.editing], "stored")
            await bench.settle(after: .seconds(3))
            #expect(
                try await bench.operations() == [.upload(folder: .folder(H.generalFolder), name: "Neu.txt", terms: nil)]
            )
        }
    }

    /// A row written before the sticky bit existed: attempted, it counts as possibly on Stud.IP; never attempted,
    /// it may be taken back.
    @Test(arguments: [0, 1])
    func aRowFromBeforeTheStickyBitIsTakenBackOnlyIfNeverAttempted(attempts: Int) throws {
        let operation = try OutboxCoding.encode(
            OutboxOperation.upload(folder: .folder(H.generalFolder), name: "Alt.txt", terms: nil))
        var old = OutboxProgress()
        old.before = []
        let row = OutboxRow(
            id: 1, operation: operation, draftID: 1, state: OutboxState.waiting.rawValue, attempts: attempts,
            byteCount: 3, bytesSource: nil, progress: old.text, created: Date())
        #expect(row.progress?.contains("requestLeft") == false)
        #expect(Outbox.isWithdrawable(row) == (attempts == 0))
    }

    /// A local folder whose outbox entry the user discarded: failed, with no entry. `rmdir` of it works.
    @Test func aDiscardedLocalFolderCanBeRemoved() async throws {
        try await WorkspaceBench.with(reporting: true) { bench in
            let group = try bench.folder(OutboxHarness.groupFolder)
            let folder = try bench.workspace.makeFolder(parent: group, name: "Gruppe 9")
            let id = try #require(folder.id)
            await bench.settle(after: .seconds(3))
            let entry = try #require(try await bench.outbox.entries().first)
            try await bench.outbox.discard(entry.id)
            #expect(bench.workspace.draft(inode: Workspace.inode(ofDraft: id))?.state == .failed)
            #expect(try await bench.outbox.entries().isEmpty)
            let rmdir = Self.answer { () throws(WorkspaceError) in
                try bench.workspace.removeFolder(parent: group, name: "Gruppe 9")
            }
            #expect(rmdir == nil)
            #expect(bench.workspace.item(parent: group, name: "Gruppe 9") == nil)
        }
    }

    /// A write into a draft failed (ENOSPC) while the program still holds it open; the program unlinks it.
    @Test func aDraftWhoseWriteFailedCanBeUnlinkedWhileOpen() async throws {
        try await WorkspaceBench.with { bench in
            let general = try bench.general
            let draft = try bench.workspace.create(parent: general, name: "Teil.bin")
            let id = try #require(draft.id)
            bench.workspace.writeFailed(id, errno: ENOSPC)
            let rm = Self.answer { () throws(WorkspaceError) in
                try bench.workspace.remove(parent: general, name: "Teil.bin")
            }
            #expect(rm == nil)
            #expect(bench.workspace.item(parent: general, name: "Teil.bin") == nil)
            bench.workspace.closed(id)
        }
    }
}
