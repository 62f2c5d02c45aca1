import Foundation
import Glibc
import MetadataStore
import StudIPModel
import Testing

@testable import StudIPSimulator
@testable import Uploading

/// A file whose bytes are in the outbox, renamed or deleted before Stud.IP has it: its entry is taken back where no
/// attempt of it can have arrived, and `EBUSY` stays where one may have (docs/writing.md, "Renaming or deleting a
/// file in the outbox"). The outbox runs against the simulator and reports to the workspace, as in the daemon.
@Suite struct WorkspaceWithdrawTests {
    static let bytes = WorkspaceTests.bytes
    static let folder = OutboxHarness.generalFolder

    /// What a program is told: nil for success, else the errno.
    static func answer(_ body: () throws(WorkspaceError) -> Void) -> Int32? {
        do {
            try body()
            return nil
        } catch {
            return error.errorNumber
        }
    }

    /// Waits up to 20 s for `condition`.
    static func until(_ condition: () async throws -> Bool) async throws {
        for _ in 0..<1000 {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("not reached within 20 s")
    }

    /// The documents Stud.IP holds in the general folder: name and bytes.
    static func stored(_ bench: WorkspaceBench) -> [String: Data?] {
        Dictionary(
            bench.sim.university.fileRefs(in: folder).map { ref in
                (ref.name, { if case .bytes(let data) = ref.content { data } else { nil } }())
            }, uniquingKeysWith: { first, _ in first })
    }

    /// The uploads of new documents the simulator was sent.
    static func uploads(_ bench: WorkspaceBench) -> Int {
        bench.sim.statistics.snapshot().routes["jsonapi POST folders/{id}/file-refs"] ?? 0
    }

    /// A 503 proves nothing: a proxy in front of Stud.IP may answer it after it forwarded the upload. The entry is
    /// not taken back (`EBUSY`), and the file goes up under the name it has.
    @Test func aFileAnswered503IsNotTakenBack() async throws {
        try await WorkspaceBench.with(reporting: true) { bench in
            let general = try bench.general
            let (_, entry) = try await WorkspaceTests.queued("Entwurf.txt", in: bench)
            bench.sim.inject(Fault(action: .status(503), pathContains: "file-refs", method: "POST"))
            try await bench.outbox.running {
                _ = try await bench.outbox.wait(for: entry.id) { $0.state == .waiting && $0.attempts == 1 }
            }
            bench.sim.clearFaults()
            #expect(
                Self.answer { () throws(WorkspaceError) in
                    try bench.workspace.rename(
                        parent: general, name: "Entwurf.txt", to: general, "Final.txt", noReplace: false)
                } == EBUSY)
            #expect(try await bench.outbox.entries().map(\.id) == [entry.id], "still in the outbox")
            try await bench.outbox.running {
                try await Self.until { try await bench.outbox.entries().isEmpty }
            }
            #expect(Self.stored(bench) == ["Entwurf.txt": Data(Self.bytes)])
        }
    }

    /// `mv Entwurf.txt Final.txt` while the copy waits in the outbox: never tried (offline), or tried and answered
    /// 429 (Stud.IP did not take it). One upload, under the new name; the old name never reaches Stud.IP.
    @Test(arguments: [nil, 429] as [Int?])
    func aQueuedFileRenamedIsUploadedOnceUnderItsNewName(triedWith status: Int?) async throws {
        try await WorkspaceBench.with(reporting: true) { bench in
            let general = try bench.general
            let (draft, entry) = try await WorkspaceTests.queued("Entwurf.txt", in: bench)
            let id = try #require(draft.id)
            if let status {
                bench.sim.inject(Fault(action: .status(status), pathContains: "file-refs", method: "POST"))
                try await bench.outbox.running {
                    _ = try await bench.outbox.wait(for: entry.id) { $0.state == .waiting && $0.attempts == 1 }
                }
                bench.sim.clearFaults()
            }
            try bench.workspace.rename(parent: general, name: "Entwurf.txt", to: general, "Final.txt", noReplace: false)
            #expect(try await bench.outbox.entries().isEmpty, "taken back")
            #expect(bench.harness.outboxBytes(of: entry.id) == nil)
            let renamed = try #require(bench.workspace.draft(inode: Workspace.inode(ofDraft: id)))
            #expect(renamed.state == .editing && renamed.name == "Final.txt")
            #expect(try bench.store.drafts().map(\.state) == [.editing], "stored")
            await bench.settle(after: .seconds(3))
            #expect(
                try await bench.operations() == [.upload(folder: .folder(Self.folder), name: "Final.txt", terms: nil)])
            try await bench.outbox.running {
                try await Self.until { try await bench.outbox.entries().isEmpty }
            }
            #expect(Self.stored(bench) == ["Final.txt": Data(Self.bytes)])
            #expect(Self.uploads(bench) == 1, "sent once")
        }
    }

    /// `rm` of a file copied in by mistake while it waits in the outbox: nothing reaches Stud.IP.
    @Test func aQueuedFileDeletedNeverReachesStudIP() async throws {
        try await WorkspaceBench.with(reporting: true) { bench in
            let general = try bench.general
            let (_, entry) = try await WorkspaceTests.queued("Irrtum.txt", in: bench)
            try bench.workspace.remove(parent: general, name: "Irrtum.txt")
            #expect(try await bench.outbox.entries().isEmpty)
            #expect(bench.harness.outboxBytes(of: entry.id) == nil)
            #expect(try bench.store.drafts().isEmpty)
            #expect(bench.workspace.item(parent: general, name: "Irrtum.txt") == nil)
            await bench.settle(after: .seconds(3))
            try await bench.outbox.running { try await Task.sleep(for: .milliseconds(500)) }
            #expect(Self.stored(bench).isEmpty)
            #expect(Self.uploads(bench) == 0)
        }
    }

    /// Stud.IP refuses `setup.exe`; the user renames it to `setup.zip`: the refused entry is taken back and the
    /// file goes up under the new name.
    @Test func aRefusedExeRenamedToZipIsUploaded() async throws {
        try await WorkspaceBench.with(reporting: true) { bench in
            let general = try bench.general
            let (draft, entry) = try await WorkspaceTests.queued("setup.exe", in: bench)
            let id = try #require(draft.id)
            try await bench.outbox.running {
                try await Self.until { bench.workspace.draft(inode: Workspace.inode(ofDraft: id))?.state == .failed }
            }
            #expect(try await bench.outbox.entries().map(\.state) == [.failed])
            try bench.workspace.rename(parent: general, name: "setup.exe", to: general, "setup.zip", noReplace: false)
            #expect(try await bench.outbox.entries().isEmpty, "the refused entry went with the rename")
            #expect(bench.harness.outboxBytes(of: entry.id) == nil)
            await bench.settle(after: .seconds(3))
            try await bench.outbox.running {
                try await Self.until { try await bench.outbox.entries().isEmpty }
            }
            #expect(Self.stored(bench) == ["setup.zip": Data(Self.bytes)])
        }
    }

    /// While the upload is on the wire (the simulator holds it), and after an attempt whose outcome is unknown (a
    /// 500: it may have been stored), the file answers `EBUSY` to rename and unlink and its entry stays.
    @Test func aFileBeingSentOrMaybeArrivedIsBusy() async throws {
        try await WorkspaceBench.with(reporting: true) { bench in
            let general = try bench.general
            let (_, sent) = try await WorkspaceTests.queued("Bericht.txt", in: bench)
            bench.sim.inject(
                Fault(action: .stall(milliseconds: 1500), pathContains: "file-refs", method: "POST", remaining: 1))
            try await bench.outbox.running {
                _ = try await bench.outbox.wait(for: sent.id, toBe: .sending)
                #expect(
                    Self.answer { () throws(WorkspaceError) in
                        try bench.workspace.rename(
                            parent: general, name: "Bericht.txt", to: general, "B.txt", noReplace: false)
                    } == EBUSY)
                #expect(
                    Self.answer { () throws(WorkspaceError) in
                        try bench.workspace.remove(parent: general, name: "Bericht.txt")
                    } == EBUSY)
                #expect(try await bench.outbox.entries().map(\.id) == [sent.id])
                try await Self.until { Self.stored(bench)["Bericht.txt"] != nil }
            }

            let (_, maybe) = try await WorkspaceTests.queued("Notizen.txt", in: bench)
            bench.sim.inject(Fault(action: .status(500), pathContains: "file-refs", method: "POST"))
            try await bench.outbox.running {
                _ = try await bench.outbox.wait(for: maybe.id, toBe: .waiting)
            }
            #expect(
                Self.answer { () throws(WorkspaceError) in
                    try bench.workspace.rename(
                        parent: general, name: "Notizen.txt", to: general, "N.txt", noReplace: false)
                } == EBUSY)
            #expect(
                Self.answer { () throws(WorkspaceError) in
                    try bench.workspace.remove(parent: general, name: "Notizen.txt")
                } == EBUSY)
            #expect(try await bench.outbox.entries().map(\.id) == [maybe.id])
            #expect(bench.harness.outboxBytes(of: maybe.id) == Self.bytes)
            #expect(bench.workspace.item(parent: general, name: "Notizen.txt") != nil)
        }
    }

    /// The daemon killed after the withdraw's transaction committed and before the outbox's bytes went and the
    /// rename ran: the start finds the file as a draft being edited with its own bytes and no entry, removes the
    /// bytes no entry names, and the file goes up once, under the name the user then gives it.
    @Test func aStartBetweenTheWithdrawAndTheRenameFindsADraftBeingEdited() async throws {
        try await WorkspaceBench.with(reporting: true) { bench in
            let general = try bench.general
            let (draft, entry) = try await WorkspaceTests.queued("Zwischen.txt", in: bench)
            let id = try #require(draft.id)
            var editing = try #require(try bench.store.drafts().first)
            editing.state = .editing
            editing.outboxID = nil
            #expect(try bench.store.withdrawOutboxRows(of: editing) { Outbox.isWithdrawable($0) } == [entry.id])
            #expect(bench.harness.outboxBytes(of: entry.id) == Self.bytes, "killed before the bytes went")

            let restarted = try await bench.reopened()
            #expect(try await restarted.outbox.entries().isEmpty)
            guard case .draft(let shown) = restarted.workspace.item(parent: general, name: "Zwischen.txt") else {
                Issue.record("the draft is not shown after the start")
                return
            }
            #expect(shown.state == .editing && shown.id == id)
            #expect(FileManager.default.contents(atPath: restarted.workspace.path(ofDraft: id)) == Data(Self.bytes))
            try restarted.workspace.rename(
                parent: general, name: "Zwischen.txt", to: general, "Endgültig.txt", noReplace: false)
            await restarted.settle(after: .seconds(3))
            try await restarted.outbox.running {
                try await Self.until { try await restarted.outbox.entries().isEmpty }
            }
            #expect(bench.harness.outboxBytes(of: entry.id) == nil, "the start removed the bytes no entry names")
            #expect(Self.stored(bench) == ["Endgültig.txt": Data(Self.bytes)])
            #expect(Self.uploads(bench) == 1)
        }
    }
}
