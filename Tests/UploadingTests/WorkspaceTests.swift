import Foundation
import Glibc
import MetadataStore
import NamingRules
import StudIPModel
import Synchronization
import Testing

@testable import StudIPSimulator
@testable import Uploading

/// Editors' temporary and lock names, name by name (docs/writing.md, "Local first: drafts"), and final names that
/// look like them but are not.
@Suite struct WorkspaceTemporaryNameTests {
    @Test(arguments: [
        ".~lock.Blatt 3.odt#", "4913", "5036", ".notes.txt.swp", ".notes.txt.swo", ".notes.txt.swx", "notes.txt~",
        ".goutputstream-W3SOZ3", "~$Bericht.docx", "lu1068txa8x.tmp", "Bericht.TMP", ".#notes.txt", "#notes.txt#",
        ".notes.txt.EApgcB", "sedYtctsX", ".hidden",
    ])
    func temporary(_ name: String) {
        #expect(TemporaryName.isTemporary(name))
    }

    @Test(arguments: [
        "notes.txt", "Blatt 3.odt", "4914", "4913.txt", "2024", "sediments", "sed.txt", "#1 Lösung.pdf", "~notes.txt",
        "temp.pdf", "notes.swp.pdf",
    ])
    func final(_ name: String) {
        #expect(!TemporaryName.isTemporary(name))
    }
}

/// What a program is told when the workspace cannot do what it asked.
@Suite struct WorkspaceErrorTests {
    /// A full disk under the store (`DiskFullTests` shows SQLite's "full" becomes `.diskFull`) refuses a new file
    /// before a byte lands: `cp` says "No space left on device", not "Input/output error".
    @Test func aFullDiskUnderTheStoreIsAFullDisk() {
        #expect(
            WorkspaceError.store(.diskFull(path: "/d/campusfs.sqlite", operation: "saving a draft")).errorNumber
                == ENOSPC)
        #expect(WorkspaceError.store(.database(path: "/d", operation: "x", detail: "corrupt")).errorNumber == EIO)
    }
}

/// Reconciliation of the editors' patterns into outbox operations (docs/writing.md, "Local first: drafts"), against
/// a store refreshed from the simulator and a real outbox that does not send.
@Suite struct WorkspaceTests {
    static let bytes = Array("handed in by test_autor\n".utf8)

    /// What Stud.IP made of an upload of ``bytes`` named `name` into the general folder, as the outbox reports it.
    static func made(_ name: String, id: String, fileID: String) -> RemoteDocument {
        RemoteDocument(
            id: id, folderID: OutboxHarness.generalFolder, name: name, mimeType: "text/plain",
            size: Int64(bytes.count), created: Date(), changed: Date(), fileID: fileID)
    }

    /// A new file `name` in the general folder, written, closed and settled: its draft and its outbox entry.
    static func queued(_ name: String, in bench: WorkspaceBench) async throws -> (DraftRecord, OutboxEntry) {
        let draft = try bench.workspace.create(parent: try bench.general, name: name)
        try bench.write(draft, bytes)
        await bench.settle(after: .seconds(3))
        return (draft, try #require(try await bench.outbox.entries().last))
    }

    @Test func aClosedNewFileIsOneUploadOnceSettledAndNotBefore() async throws {
        try await WorkspaceBench.with { bench in
            let draft = try bench.workspace.create(parent: try bench.general, name: "Lösung 3.txt")
            let id = try #require(draft.id)
            await bench.settle(after: .seconds(10))
            #expect(try await bench.operations().isEmpty, "an open draft does not settle")
            try bench.write(draft, Self.bytes)
            await bench.settle(after: .seconds(1))
            #expect(try await bench.operations().isEmpty, "1 s after the close is before the settle time")
            await bench.settle(after: .seconds(1.5))
            let entries = try await bench.outbox.entries()
            #expect(
                entries.map(\.operation) == [
                    .upload(folder: .folder(OutboxHarness.generalFolder), name: "Lösung 3.txt", terms: nil)
                ])
            #expect(bench.harness.outboxBytes(of: try #require(entries.first?.id)) == Self.bytes)
            #expect(bench.workspace.draft(inode: Workspace.inode(ofDraft: id))?.state == .queued)
            await bench.settle(after: .seconds(10))
            #expect(try await bench.operations().count == 1, "queued once")
            // The tree still shows the draft, with its bytes.
            guard case .draft(let shown) = bench.workspace.item(parent: try bench.general, name: "Lösung 3.txt") else {
                Issue.record("the queued draft is not shown")
                return
            }
            #expect(
                FileManager.default.contents(atPath: bench.workspace.path(ofDraft: try #require(shown.id)))
                    == Data(Self.bytes))
        }
    }

    @Test func temporaryAndLockFilesAreNeverQueued() async throws {
        try await WorkspaceBench.with { bench in
            for name in [".~lock.notes.odt#", "4913", ".notes.txt.swp", "notes.txt~", "lu1068txa8x.tmp", "sedYtctsX"] {
                try bench.write(try bench.workspace.create(parent: try bench.general, name: name), Self.bytes)
            }
            await bench.settle(after: .seconds(60))
            #expect(try await bench.operations().isEmpty)
        }
    }

    /// gedit, LibreOffice, rsync, sed -i: a temporary file written and renamed over the document.
    @Test func anAtomicSaveIsOneNewVersionOfTheSameDocument() async throws {
        try await WorkspaceBench.with { bench in
            let (node, info) = try await bench.ownDocument("notes.txt", Array("old notes\n".utf8))
            let general = try bench.general
            let temporary = try bench.workspace.create(parent: general, name: "lu1068txa8x.tmp")
            try bench.write(temporary, Self.bytes)
            await bench.settle(after: .seconds(5))
            try bench.workspace.rename(
                parent: general, name: "lu1068txa8x.tmp", to: general, "notes.txt", noReplace: false)
            await bench.settle(after: .seconds(3))
            #expect(
                try await bench.operations() == [
                    .newVersion(
                        documentID: info.id, name: "notes.txt", base: info.version,
                        folderID: OutboxHarness.generalFolder)
                ])
            #expect(bench.workspace.hides(node), "the draft shows in the document's place")
        }
    }

    /// vim with its defaults: rename the document away, write it anew, delete the backup.
    @Test func vimsRenameAwayDanceIsOneNewVersion() async throws {
        try await WorkspaceBench.with { bench in
            let (_, info) = try await bench.ownDocument("notes.txt", Array("old notes\n".utf8))
            let general = try bench.general
            try bench.workspace.rename(parent: general, name: "notes.txt", to: general, "notes.txt~", noReplace: false)
            let written = try bench.workspace.create(parent: general, name: "notes.txt")
            try bench.write(written, Self.bytes)
            try bench.workspace.remove(parent: general, name: "notes.txt~")
            await bench.settle(after: .seconds(3))
            await bench.settle(after: .seconds(3))
            #expect(
                try await bench.operations() == [
                    .newVersion(
                        documentID: info.id, name: "notes.txt", base: info.version,
                        folderID: OutboxHarness.generalFolder)
                ])
            #expect(try bench.store.documentChanges().isEmpty, "the rename away was absorbed")
        }
    }

    /// `rm notes.txt` and a new `notes.txt` before the deletion settled: one new version, the document kept.
    @Test func aDeleteAndANewFileOfTheSameNameIsOneNewVersion() async throws {
        try await WorkspaceBench.with { bench in
            let (_, info) = try await bench.ownDocument("notes.txt", Array("old notes\n".utf8))
            let general = try bench.general
            try bench.workspace.remove(parent: general, name: "notes.txt")
            try bench.write(try bench.workspace.create(parent: general, name: "notes.txt"), Self.bytes)
            await bench.settle(after: .seconds(3))
            await bench.settle(after: .seconds(3))
            #expect(
                try await bench.operations() == [
                    .newVersion(
                        documentID: info.id, name: "notes.txt", base: info.version,
                        folderID: OutboxHarness.generalFolder)
                ])
        }
    }

    /// LibreOffice opens a document for writing and closes it unwritten before and after saving: no new version.
    @Test func aDocumentOpenedForWritingAndClosedUnwrittenIsNoOperation() async throws {
        try await WorkspaceBench.with { bench in
            let (node, _) = try await bench.ownDocument("notes.odt", Array("old\n".utf8))
            let copy = try bench.harness.draft("cached", Array("old\n".utf8))
            let draft = try bench.workspace.openForWriting(node, content: copy)
            bench.workspace.closed(try #require(draft.id))
            await bench.settle(after: .seconds(5))
            #expect(try await bench.operations().isEmpty)
            #expect(bench.workspace.isEmpty, "the unchanged draft is dropped")
        }
    }

    @Test func aRenameIsOneRenameAndADeleteOneDelete() async throws {
        try await WorkspaceBench.with { bench in
            let (_, renamed) = try await bench.ownDocument("a.txt", Array("a\n".utf8))
            let (deletedNode, deleted) = try await bench.ownDocument("b.txt", Array("b\n".utf8))
            let general = try bench.general
            try bench.workspace.rename(parent: general, name: "a.txt", to: general, "a-final.txt", noReplace: false)
            try bench.workspace.remove(parent: general, name: "b.txt")
            #expect(bench.workspace.hides(deletedNode))
            await bench.settle(after: .seconds(3))
            let operations = try await bench.operations()
            #expect(operations.count == 2)
            #expect(
                Set(operations) == [
                    .rename(documentID: renamed.id, name: "a-final.txt"), .delete(documentID: deleted.id),
                ])
        }
    }

    /// JSON:API cannot move: `mv` between folders gets `EXDEV` (and then copies and deletes).
    @Test func aMoveBetweenFoldersIsRefusedWithoutTheLegacyAPI() async throws {
        try await WorkspaceBench.with { bench in
            _ = try await bench.ownDocument("a.txt", Array("a\n".utf8))
            // The course's directory: its root folder, where test_autor may write.
            let root = try #require(
                try bench.store.walk().first {
                    $0.node.item == .course && $0.node.studipID == "a07535cf2f8a72df33c12ddfa4b53dde"
                }
            ).node.inode
            #expect(
                throws: WorkspaceError.refused(
                    errno: EXDEV, rule: "this Stud.IP API cannot move documents between folders (JSON:API)")
            ) {
                try bench.workspace.rename(
                    parent: try bench.general, name: "a.txt", to: root, "a.txt", noReplace: false)
            }
        }
    }

    @Test func permissionsComeFromTheStore() async throws {
        try await WorkspaceBench.with { bench in
            let dateFolder = try bench.folder(OutboxHarness.dateFolder)
            func refusal(_ body: () throws(WorkspaceError) -> Void) -> Int32? {
                do throws(WorkspaceError) {
                    try body()
                    return nil
                } catch {
                    return error.errorNumber
                }
            }
            #expect(
                refusal { () throws(WorkspaceError) in _ = try bench.workspace.create(parent: dateFolder, name: "x.txt")
                } == EACCES)
            #expect(
                refusal { () throws(WorkspaceError) in
                    _ = try bench.workspace.create(parent: Node.rootInode, name: "x.txt")
                } == EROFS)
            #expect(
                refusal { () throws(WorkspaceError) in
                    _ = try bench.workspace.makeFolder(parent: dateFolder, name: "Neu")
                } == EACCES)
            let general = try bench.general
            #expect(
                refusal { () throws(WorkspaceError) in _ = try bench.workspace.create(parent: general, name: "x.txt") }
                    == nil)
        }
    }

    /// Drafts are the user's data: a new workspace over the same store and directory (a restart, also after
    /// `kill -9`: every row was synced before it returned) shows them with their bytes and settles them.
    @Test func aDraftSurvivesANewWorkspace() async throws {
        try await WorkspaceBench.with { bench in
            let general = try bench.general
            let draft = try bench.workspace.create(parent: general, name: "Abgabe.txt")
            try bench.write(draft, Self.bytes)
            let restarted = try await bench.reopened()
            guard case .draft(let shown) = restarted.workspace.item(parent: general, name: "Abgabe.txt") else {
                Issue.record("the draft is gone after a restart")
                return
            }
            #expect(shown.id == draft.id)
            let path = restarted.workspace.path(ofDraft: try #require(shown.id))
            #expect(FileManager.default.contents(atPath: path) == Data(Self.bytes))
            await restarted.settle(after: .seconds(3))
            #expect(
                try await restarted.operations() == [
                    .upload(folder: .folder(OutboxHarness.generalFolder), name: "Abgabe.txt", terms: nil)
                ])
        }
    }

    /// Confirmed: the draft stays shown while its course is refreshed (the tree never shows neither), and is
    /// dropped after; a second save made while the first was in the outbox waited for it and becomes a new version
    /// of the document the first made, not a second document.
    @Test func aConfirmedDraftStaysUntilItsCourseWasRefreshedAndItsFollowerBecomesANewVersion() async throws {
        try await WorkspaceBench.with { bench in
            let general = try bench.general
            let first = try bench.workspace.create(parent: general, name: "Bericht.txt")
            try bench.write(first, Self.bytes)
            await bench.settle(after: .seconds(3))
            let entry = try #require(try await bench.outbox.entries().first)
            // Saved again while the first upload is in the outbox.
            guard case .draft(let queued) = bench.workspace.item(parent: general, name: "Bericht.txt") else {
                Issue.record("the queued draft is not shown")
                return
            }
            let second = try bench.workspace.openForWriting(queued, truncating: true)
            #expect(second.follows == first.id)
            try bench.write(second, Array("second\n".utf8))
            await bench.settle(after: .seconds(3))
            #expect(try await bench.operations().count == 1, "the second waits for the first's outcome")

            let shownDuringRefresh = Mutex<Bool?>(nil)
            bench.workspace.refreshCourses { _ in
                let shown = bench.workspace.items(in: general).contains { $0.name == "Bericht.txt" }
                shownDuringRefresh.withLock { $0 = shown }
                return true
            }
            let made = Self.made("Bericht.txt", id: "made-by-stud-ip", fileID: "file-1")
            await bench.workspace.settled(entry, .done(made))
            #expect(shownDuringRefresh.withLock { $0 } == true, "shown while the course was refreshed")
            let firstID = try #require(first.id)
            #expect(bench.workspace.draft(inode: Workspace.inode(ofDraft: firstID)) == nil)
            await bench.settle(after: .seconds(3))
            let operations = try await bench.operations()
            #expect(
                operations.last
                    == .newVersion(
                        documentID: "made-by-stud-ip", name: "Bericht.txt",
                        base: DocumentVersion(fileID: "file-1", size: Int64(Self.bytes.count)),
                        folderID: OutboxHarness.generalFolder))
        }
    }

    /// A conflict: the user's bytes are on Stud.IP as "(yours)" beside the lecturer's version, so the course is
    /// refreshed and the draft goes — the tree shows both, never the user's bytes over the lecturer's name.
    @Test func aConflictShowsBothOnceTheCourseWasRefreshed() async throws {
        try await WorkspaceBench.with { bench in
            _ = try await bench.ownDocument("notes.txt", Array("old notes\n".utf8))
            let general = try bench.general
            try bench.write(try bench.workspace.create(parent: general, name: "notes.txt~"), Self.bytes)
            try bench.workspace.rename(parent: general, name: "notes.txt~", to: general, "notes.txt", noReplace: false)
            await bench.settle(after: .seconds(3))
            let entry = try #require(try await bench.outbox.entries().first)
            let refreshed = Mutex<[String]>([])
            bench.workspace.refreshCourses { id in
                refreshed.withLock { $0.append(id) }
                return true
            }
            await bench.workspace.settled(
                entry, .conflict(keptAs: "notes (yours).txt", document: nil, documentWas: .changed))
            #expect(refreshed.withLock { $0 } == ["a07535cf2f8a72df33c12ddfa4b53dde"])
            if case .draft(let kept) = bench.workspace.item(parent: general, name: "notes.txt") {
                Issue.record("the draft still hides the lecturer's version: \(kept)")
            }
            #expect(try bench.store.drafts().isEmpty)
        }
    }

    /// Saving over one's own document that the lecturer replaced meanwhile through JSON:API at the same size (file
    /// id and size stay): the draft carries the content ETag the cache held for the version it was made from, so the
    /// outbox sees the replacement and keeps the user's bytes beside the lecturer's, never over them.
    @Test func aSaveOverADocumentReplacedAtTheSameSizeIsKeptBesideIt() async throws {
        try await WorkspaceBench.with { bench in
            let (node, info) = try await bench.ownDocument("notes.txt", Array("old notes\n".utf8))
            // What the content cache holds for the version the user read.
            let cached = try #require(try await bench.writer.contentETag(documentID: info.id))
            bench.workspace.contentETags { id, version in id == info.id && version == info.version ? cached : nil }
            let draft = try bench.workspace.openForWriting(node, content: nil)
            #expect(draft.baseETag == cached)
            try bench.write(draft, Self.bytes)
            await bench.settle(after: .seconds(3))
            #expect(
                try await bench.operations() == [
                    .newVersion(
                        documentID: info.id, name: "notes.txt", base: info.version,
                        folderID: OutboxHarness.generalFolder, baseETag: cached)
                ])
            let lecturers = Array("new notes\n".utf8)
            try bench.sim.replaceThroughJSONAPI(info.id, with: lecturers)
            try await Self.keptBeside(lecturers, in: bench)
        }
    }

    /// Once the outbox is empty, Stud.IP holds `notes.txt` with the lecturer's bytes and the user's ``bytes``
    /// beside it as "notes (yours).txt".
    static func keptBeside(_ lecturers: [UInt8], in bench: WorkspaceBench) async throws {
        try await bench.outbox.running {
            for _ in 0..<500 where try await !bench.outbox.entries().isEmpty {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let stored = bench.sim.university.fileRefs(in: OutboxHarness.generalFolder).filter {
            $0.name.hasPrefix("notes")
        }
        #expect(
            Set(stored.map { "\($0.name) \($0.content)" }) == [
                "notes.txt \(StudIPSimulator.Content.bytes(Data(lecturers)))",
                "notes (yours).txt \(StudIPSimulator.Content.bytes(Data(Self.bytes)))",
            ])
    }

    /// The same, over a document never read through the mount (the cache knows no `ETag`: an `O_TRUNC` save): online,
    /// the draft asks Stud.IP for its base's content `ETag` (one HEAD) and keeps it, so the replacement is seen and
    /// both are kept. Offline nothing is asked.
    @Test(arguments: [true, false])
    func aSaveOverADocumentNeverReadLearnsItsBaseETag(online: Bool) async throws {
        let configuration = Workspace.Configuration(isOnline: { online })
        try await WorkspaceBench.with(configuration: configuration) { bench in
            let (node, info) = try await bench.ownDocument("notes.txt", Array("old notes\n".utf8))
            let current = try #require(try await bench.writer.contentETag(documentID: info.id))
            let heads = { bench.sim.statistics.snapshot().routes["jsonapi HEAD file-refs/{id}/content"] ?? 0 }
            let before = heads()
            let draft = try bench.workspace.openForWriting(node, content: nil)
            #expect(draft.baseETag == nil, "the open does not wait for the network")
            let id = try #require(draft.id)
            var learned: String?
            for _ in 0..<(online ? 500 : 25) {
                learned = bench.workspace.draft(inode: Workspace.inode(ofDraft: id))?.baseETag
                if learned != nil { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            guard online else {
                #expect(learned == nil && heads() == before, "asked offline")
                return
            }
            #expect(learned == current && heads() == before + 1)
            #expect(try bench.store.drafts().first?.baseETag == current, "stored")
            try bench.write(draft, Self.bytes)
            let lecturers = Array("new notes\n".utf8)
            try bench.sim.replaceThroughJSONAPI(info.id, with: lecturers)
            await bench.settle(after: .seconds(3))
            try await Self.keptBeside(lecturers, in: bench)
        }
    }

    /// A refused upload edited again: the new save replaces the refused entry, so that `campusfs outbox retry`
    /// cannot send the old bytes beside the new ones — at once, and after a restart that came first.
    @Test func aRefusedDraftEditedAgainReplacesItsEntry() async throws {
        try await WorkspaceBench.with { bench in
            let general = try bench.general
            let draft = try bench.workspace.create(parent: general, name: "Abgabe.txt")
            try bench.write(draft, Self.bytes)
            await bench.settle(after: .seconds(3))
            let refused = try await refuse(try #require(try await bench.outbox.entries().first), in: bench)
            guard case .draft(let failed) = bench.workspace.item(parent: general, name: "Abgabe.txt") else {
                Issue.record("the refused draft is not shown")
                return
            }
            try bench.write(try bench.workspace.openForWriting(failed, truncating: true), Array("fixed\n".utf8))
            #expect(
                bench.harness.outboxBytes(of: refused) == nil || bench.harness.outboxBytes(of: refused) == Self.bytes,
                "the edit went into the refused entry's bytes")
            await bench.settle(after: .seconds(3))
            var ids: [Int64] = []
            for _ in 0..<100 {
                ids = try await bench.outbox.entries().map(\.id)
                if !ids.contains(refused) { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(ids.count == 1 && !ids.contains(refused), "\(ids)")

            // Refused again, edited again, and the daemon killed before the old entry went: the start drops it.
            let second = try await refuse(try #require(try await bench.outbox.entries().first), in: bench)
            var edited = try #require(try bench.store.drafts().first)
            edited.state = .editing
            edited.outboxID = nil
            try bench.store.saveDraft(edited)
            let restarted = try await bench.reopened()
            #expect(try await !restarted.outbox.entries().map(\.id).contains(second))
            await restarted.settle(after: .seconds(3))
            #expect(try await restarted.operations().count == 1, "the edited draft is queued again")
        }
    }

    /// A draft whose bytes are being handed to the outbox: an open gets a new draft that waits for it, a rename or a
    /// delete `EBUSY`, so the bytes sent are the ones that were closed and the name they go under is the one shown.
    @Test func aDraftOnItsWayToTheOutboxIsNeitherWrittenNorRenamed() async throws {
        try await WorkspaceBench.with { bench in
            let general = try bench.general
            let draft = try bench.workspace.create(parent: general, name: "Protokoll.txt")
            try bench.write(draft, Self.bytes)
            let id = try #require(draft.id)
            bench.workspace.state.withLock { _ = $0.settling.insert(id) }
            let busy = WorkspaceError.refused(
                errno: EBUSY, rule: "Protokoll.txt is in the outbox (`campusfs outbox` discards it)")
            #expect(throws: busy) {
                try bench.workspace.rename(
                    parent: general, name: "Protokoll.txt", to: general, "P.txt", noReplace: false)
            }
            #expect(throws: busy) { try bench.workspace.remove(parent: general, name: "Protokoll.txt") }
            let next = try bench.workspace.openForWriting(draft, truncating: true)
            #expect(next.id != id)
            #expect(next.follows == id)
            #expect(bench.workspace.draft(inode: Workspace.inode(ofDraft: id)) != nil, "kept")
        }
    }

    /// A refused upload the user retried and Stud.IP took: the draft goes once the course was refreshed (it would
    /// hide Stud.IP's document and go up again at the next open).
    @Test func aRefusedDraftRetriedAndConfirmedGoes() async throws {
        try await WorkspaceBench.with { bench in
            let general = try bench.general
            try bench.write(try bench.workspace.create(parent: general, name: "Abgabe.txt"), Self.bytes)
            await bench.settle(after: .seconds(3))
            let entry = try #require(try await bench.outbox.entries().first)
            _ = try await refuse(entry, in: bench)
            let made = Self.made("Abgabe.txt", id: "made", fileID: "f")
            await bench.workspace.settled(entry, .done(made))
            #expect(bench.workspace.item(parent: general, name: "Abgabe.txt") == nil)
            #expect(try bench.store.drafts().isEmpty)
        }
    }

    /// Confirmed without a document outside a homework folder (the read-back after the 201 failed): not a
    /// hand-in kept for good, but dropped once the refreshed course shows the document.
    @Test func aConfirmationWithoutADocumentIsAHandInOnlyInAHomeworkFolder() async throws {
        try await WorkspaceBench.with { bench in
            let general = try bench.general
            try bench.write(try bench.workspace.create(parent: general, name: "Notizen.txt"), Self.bytes)
            await bench.settle(after: .seconds(3))
            await bench.workspace.settled(try #require(try await bench.outbox.entries().first), .done(nil))
            #expect(try bench.store.drafts().isEmpty)
        }
    }

    /// A save made while the course is refreshed after the first one's confirmation still becomes a new version of
    /// the document the first made.
    @Test func aSaveMadeWhileTheCourseIsRefreshedIsANewVersion() async throws {
        try await WorkspaceBench.with { bench in
            let general = try bench.general
            try bench.write(try bench.workspace.create(parent: general, name: "Bericht.txt"), Self.bytes)
            await bench.settle(after: .seconds(3))
            let entry = try #require(try await bench.outbox.entries().first)
            bench.workspace.refreshCourses { _ in
                guard case .draft(let queued) = bench.workspace.item(parent: general, name: "Bericht.txt"),
                    let second = try? bench.workspace.openForWriting(queued, truncating: true)
                else {
                    Issue.record("no queued draft to save over")
                    return true
                }
                #expect(throws: Never.self) { try bench.write(second, Array("second\n".utf8)) }
                return true
            }
            let made = Self.made("Bericht.txt", id: "made-by-stud-ip", fileID: "file-1")
            _ = try bench.store.deleteOutboxRow(id: entry.id)
            await bench.workspace.settled(entry, .done(made))
            await bench.settle(after: .seconds(3))
            let operations = try await bench.operations()
            #expect(operations.count == 1)
            guard case .newVersion(let id, _, _, _, _) = operations.last else {
                Issue.record("the second save became \(String(describing: operations.last))")
                return
            }
            #expect(id == "made-by-stud-ip")
        }
    }

    /// Confirmed while its course cannot be refreshed (offline right after the 201, a timeout under load): the draft
    /// stays, now naming what Stud.IP made, so an atomic save over it is a new version of that document and not a
    /// second upload; a later refresh that works drops it. (It used to go whether the refresh worked or not: the
    /// name then showed the store's older version, and the next save conflicted with one's own upload.)
    @Test func aConfirmedDraftStaysUntilARefreshOfItsCourseWorked() async throws {
        try await WorkspaceBench.with { bench in
            let general = try bench.general
            let (first, entry) = try await Self.queued("Bericht.txt", in: bench)
            let online = Mutex(false)
            let refreshes = Mutex(0)
            bench.workspace.refreshCourses { _ in
                refreshes.withLock { $0 += 1 }
                return online.withLock { $0 }
            }
            let made = Self.made("Bericht.txt", id: "made-by-stud-ip", fileID: "file-1")
            await bench.workspace.settled(entry, .done(made))
            let version = DocumentVersion(fileID: "file-1", size: Int64(Self.bytes.count))
            guard case .draft(let kept) = bench.workspace.item(parent: general, name: "Bericht.txt") else {
                Issue.record("the confirmed draft went although its course was not refreshed")
                return
            }
            #expect(kept.id == first.id && kept.documentID == "made-by-stud-ip" && kept.baseVersion == version)

            let temporary = try bench.workspace.create(parent: general, name: ".goutputstream-Q2ZV3")
            try bench.write(temporary, Array("second\n".utf8))
            try bench.workspace.rename(
                parent: general, name: ".goutputstream-Q2ZV3", to: general, "Bericht.txt", noReplace: false)
            await bench.settle(after: .seconds(3))
            #expect(
                try await bench.operations().last
                    == .newVersion(
                        documentID: "made-by-stud-ip", name: "Bericht.txt", base: version,
                        folderID: OutboxHarness.generalFolder))

            online.withLock { $0 = true }
            await bench.workspace.showConfirmedDrafts()
            #expect(refreshes.withLock { $0 } == 1, "not again before its time")
            bench.clock.advance(by: .seconds(15))
            await bench.workspace.showConfirmedDrafts()
            #expect(refreshes.withLock { $0 } == 2)
            #expect(bench.workspace.draft(inode: Workspace.inode(ofDraft: try #require(first.id))) == nil)
        }
    }

    /// An open of a confirmed draft while its course is refreshed gets a new draft with its bytes, a new version of
    /// what Stud.IP made that waits for nothing; one that comes after the draft went finds it gone with `ESTALE`,
    /// on which the kernel looks the name up again and finds the store's document (not `EIO`).
    @Test func anOpenOfAConfirmedDraftStartsFromWhatStudIPMade() async throws {
        try await WorkspaceBench.with { bench in
            let general = try bench.general
            let (_, entry) = try await Self.queued("Bericht.txt", in: bench)
            guard case .draft(let queued) = bench.workspace.item(parent: general, name: "Bericht.txt") else {
                Issue.record("the queued draft is not shown")
                return
            }
            let opened = Mutex<DraftRecord?>(nil)
            bench.workspace.refreshCourses { _ in
                let next = try? bench.workspace.openForWriting(queued, truncating: false)
                opened.withLock { $0 = next }
                if let id = next?.id { bench.workspace.closed(id) }
                return true
            }
            let made = Self.made("Bericht.txt", id: "made-by-stud-ip", fileID: "file-1")
            await bench.workspace.settled(entry, .done(made))
            let next = try #require(opened.withLock { $0 })
            #expect(next.follows == nil && next.documentID == "made-by-stud-ip")
            #expect(
                FileManager.default.contents(atPath: bench.workspace.path(ofDraft: try #require(next.id)))
                    == Data(Self.bytes))
            #expect(bench.workspace.draft(inode: Workspace.inode(ofDraft: try #require(queued.id))) == nil)
            #expect(throws: WorkspaceError.refused(errno: ESTALE, rule: "Bericht.txt was replaced")) {
                try bench.workspace.openForWriting(queued, truncating: false)
            }
        }
    }

    /// Killed after Stud.IP confirmed a draft and before its course's refresh: the next start keeps it shown and
    /// drops it after the first refresh that works, instead of showing it over the document for good.
    @Test func aDraftConfirmedBeforeAKillGoesAfterTheNextStartsRefresh() async throws {
        try await WorkspaceBench.with { bench in
            let general = try bench.general
            let (_, entry) = try await Self.queued("Bericht.txt", in: bench)
            _ = try bench.store.deleteOutboxRow(id: entry.id)
            let restarted = try await bench.reopened()
            #expect(restarted.workspace.item(parent: general, name: "Bericht.txt") != nil)
            restarted.workspace.refreshCourses { _ in true }
            await restarted.workspace.showConfirmedDrafts()
            #expect(restarted.workspace.item(parent: general, name: "Bericht.txt") == nil)
            #expect(try bench.store.drafts().isEmpty)
        }
    }

    /// A folder made locally, confirmed, and not yet shown by a refresh (offline right after): a file copied into
    /// it goes into the folder Stud.IP made, by its id, not by the outbox entry that made it, which is gone once it
    /// reported (the outbox waited for that entry for good, and every later entry behind it).
    @Test func aFileIntoAConfirmedFolderNamesTheFolderStudIPMade() async throws {
        try await WorkspaceBench.with { bench in
            let group = try bench.folder(OutboxHarness.groupFolder)
            let folder = try bench.workspace.makeFolder(parent: group, name: "Gruppe 3")
            await bench.settle(after: .seconds(3))
            let entry = try #require(try await bench.outbox.entries().first)
            bench.workspace.refreshCourses { _ in false }
            let made = RemoteFolder(
                id: "made-folder", parentID: OutboxHarness.groupFolder, name: "Gruppe 3", created: Date(),
                changed: Date())
            await bench.workspace.settled(entry, .madeFolder(made))
            _ = try bench.store.deleteOutboxRow(id: entry.id)
            let inside = Workspace.inode(ofDraft: try #require(folder.id))
            try bench.write(try bench.workspace.create(parent: inside, name: "Protokoll.txt"), Self.bytes)
            await bench.settle(after: .seconds(3))
            #expect(
                try await bench.operations() == [
                    .upload(folder: .folder("made-folder"), name: "Protokoll.txt", terms: nil)
                ])
        }
    }

    /// `cp` into the mount when the data directory's disk is full: a write fails, `cp` says so and closes the file
    /// half written. That file is never sent (the soak saw one go up, seed 6061); copied again, it is sent whole.
    @Test func aDraftWhoseWriteFailedIsNotSentUntilSavedAgain() async throws {
        try await WorkspaceBench.with { bench in
            let general = try bench.general
            let draft = try bench.workspace.create(parent: general, name: "Bericht.txt")
            try bench.write(draft, Array(Self.bytes.prefix(5)))
            bench.workspace.writeFailed(try #require(draft.id), errno: ENOSPC)
            await bench.settle(after: .seconds(60))
            #expect(try await bench.operations().isEmpty, "a half-written file went to the outbox")
            guard case .draft(let failed) = bench.workspace.item(parent: general, name: "Bericht.txt") else {
                Issue.record("the half-written file is not shown")
                return
            }
            #expect(failed.state == .failed && failed.detail?.contains("No space left on device") == true)
            #expect(try bench.store.drafts().first?.state == .failed, "kept across a restart")

            try bench.write(try bench.workspace.openForWriting(failed, truncating: true), Self.bytes)
            await bench.settle(after: .seconds(3))
            let entries = try await bench.outbox.entries()
            #expect(
                entries.map(\.operation) == [
                    .upload(folder: .folder(OutboxHarness.generalFolder), name: "Bericht.txt", terms: nil)
                ])
            #expect(bench.harness.outboxBytes(of: try #require(entries.first?.id)) == Self.bytes)
        }
    }

    /// `cp` into the mount (or a save over one's document) cut short by the daemon's death: the draft was still open
    /// for writing when the workspace stopped, so its bytes may be torn. The next start holds it back (failed, with
    /// why; `campusfs status` counts it), never sends it, until it is saved again; a draft closed before the death
    /// is sent as ever.
    @Test(arguments: [false, true])
    func aDraftTornByTheDaemonsDeathIsHeldBackAtTheNextStart(overADocument: Bool) async throws {
        try await WorkspaceBench.with { bench in
            let general = try bench.general
            var document: DocumentInfo?
            let draft: DraftRecord
            if overADocument {
                let (node, info) = try await bench.ownDocument("Bericht.txt", Array("old notes\n".utf8))
                document = info
                // Opened without O_TRUNC, the bytes copied in: unchanged until the first write marks it.
                let copy = try bench.harness.draft("copy", Array("old notes\n".utf8))
                draft = try bench.workspace.openForWriting(node, content: copy)
            } else {
                draft = try bench.workspace.create(parent: general, name: "Bericht.txt")
            }
            let id = try #require(draft.id)
            try bench.write(try bench.workspace.create(parent: general, name: "Fertig.txt"), Self.bytes)
            // Half written and never closed: the daemon dies here.
            try bench.workspace.touched(id)
            let descriptor = open(bench.workspace.path(ofDraft: id), O_WRONLY | O_TRUNC)
            #expect(Self.bytes.prefix(5).withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, 5) } == 5)
            close(descriptor)

            let restarted = try await bench.reopened()
            await restarted.settle(after: .seconds(60))
            #expect(
                try await restarted.operations() == [
                    .upload(folder: .folder(OutboxHarness.generalFolder), name: "Fertig.txt", terms: nil)
                ], "the torn draft was sent, or the closed one not")
            guard case .draft(let held) = restarted.workspace.item(parent: general, name: "Bericht.txt") else {
                Issue.record("the torn draft is not shown")
                return
            }
            #expect(held.state == .failed && held.detail?.contains("stopped while it was being written") == true)
            #expect(Workspace.isHeldBack(held, entries: try await restarted.outbox.entries()))
            #expect(try restarted.store.drafts().first { $0.id == id }?.state == .failed, "kept across a restart")

            // Saved again: sent whole, as what it was (a new version of the document, or a new document).
            try restarted.write(try restarted.workspace.openForWriting(held, truncating: true), Self.bytes)
            await restarted.settle(after: .seconds(3))
            let entries = try await restarted.outbox.entries()
            let expected: OutboxOperation =
                if let document {
                    .newVersion(
                        documentID: document.id, name: "Bericht.txt", base: document.version,
                        folderID: OutboxHarness.generalFolder)
                } else {
                    .upload(folder: .folder(OutboxHarness.generalFolder), name: "Bericht.txt", terms: nil)
                }
            #expect(entries.last?.operation == expected)
            #expect(bench.harness.outboxBytes(of: try #require(entries.last?.id)) == Self.bytes)
        }
    }

    /// A quick server: the outbox reports the outcome before settling recorded which entry the draft went to. The
    /// outcome waits for that instead of finding no draft (which left the draft queued for good, and a save after
    /// it waiting for it forever).
    @Test func anOutcomeBeforeSettlingRecordedItsEntryIsNotLost() async throws {
        try await WorkspaceBench.with { bench in
            let general = try bench.general
            try bench.write(try bench.workspace.create(parent: general, name: "Schnell.txt"), Self.bytes)
            await bench.settle(after: .seconds(3))
            let entry = try #require(try await bench.outbox.entries().first)
            let queued = try #require(try bench.store.drafts().first)
            let id = try #require(queued.id)
            // Back to the moment between the enqueue and the record of its entry.
            var unrecorded = queued
            unrecorded.state = .editing
            unrecorded.outboxID = nil
            try bench.workspace.save(unrecorded)
            bench.workspace.state.withLock { _ = $0.settling.insert(id) }
            let recording = Task {
                try await Task.sleep(for: .milliseconds(100))
                try bench.workspace.save(queued)
                bench.workspace.state.withLock { _ = $0.settling.remove(id) }
            }
            let made = Self.made("Schnell.txt", id: "made", fileID: "f")
            await bench.workspace.settled(entry, .done(made))
            try await recording.value
            #expect(try bench.store.drafts().isEmpty, "the confirmed draft went after the refresh")
        }
    }

    /// Marks `entry` refused in the outbox and tells the workspace, as the sender does.
    private func refuse(_ entry: OutboxEntry, in bench: WorkspaceBench) async throws -> Int64 {
        var row = try #require(try bench.store.outboxRow(id: entry.id))
        row.state = OutboxState.failed.rawValue
        row.reason = "refused"
        _ = try bench.store.updateOutboxRows([row])
        await bench.workspace.settled(entry, .failed(reason: "refused"))
        return entry.id
    }

    /// A homework hand-in cannot be read back: done without a document keeps the copy, read-only, `handed-in`.
    @Test func aHandInStaysAsHandedIn() async throws {
        try await WorkspaceBench.with { bench in
            let homework = try bench.folder(OutboxHarness.homeworkFolder)
            let draft = try bench.workspace.create(parent: homework, name: "Blatt 1.pdf")
            try bench.write(draft, Self.bytes)
            await bench.settle(after: .seconds(3))
            let entry = try #require(try await bench.outbox.entries().first)
            await bench.workspace.settled(entry, .done(nil))
            let id = try #require(draft.id)
            let kept = try #require(bench.workspace.draft(inode: Workspace.inode(ofDraft: id)))
            #expect(kept.state == .handedIn)
            #expect(throws: WorkspaceError.self) { try bench.workspace.openForWriting(kept, truncating: true) }
            #expect(try bench.store.drafts().first?.state == .handedIn, "stored")
        }
    }

    /// A restart between queuing a change and recording that (kill -9): the operation found in the outbox marks
    /// the change queued, and it is not queued twice.
    @Test func aChangeFoundInTheOutboxAfterARestartIsNotQueuedAgain() async throws {
        try await WorkspaceBench.with { bench in
            let (_, info) = try await bench.ownDocument("a.txt", Array("a\n".utf8))
            let general = try bench.general
            try bench.workspace.rename(parent: general, name: "a.txt", to: general, "b.txt", noReplace: false)
            // As if the workspace died right after the outbox took the operation.
            try await bench.outbox.enqueue(.rename(documentID: info.id, name: "b.txt"), bytes: nil, draftID: nil)
            let restarted = try await bench.reopened()
            await restarted.settle(after: .seconds(3))
            #expect(try await restarted.operations() == [.rename(documentID: info.id, name: "b.txt")])
        }
    }

    /// A folder made locally is queued before the files copied into it, which name it by its outbox entry.
    @Test func aFolderAndTheFilesCopiedIntoItAreQueuedInOrder() async throws {
        try await WorkspaceBench.with { bench in
            let group = try bench.folder(OutboxHarness.groupFolder)
            let folder = try bench.workspace.makeFolder(parent: group, name: "Gruppe 4")
            let inside = try bench.workspace.create(
                parent: Workspace.inode(ofDraft: try #require(folder.id)), name: "a.txt")
            try bench.write(inside, Self.bytes)
            await bench.settle(after: .seconds(3))
            let entries = try await bench.outbox.entries()
            #expect(entries.count == 2)
            guard entries.count == 2 else { return }
            #expect(entries[0].operation == .makeFolder(parent: .folder(OutboxHarness.groupFolder), name: "Gruppe 4"))
            #expect(entries[1].operation == .upload(folder: .madeBy(entry: entries[0].id), name: "a.txt", terms: nil))
        }
    }
}
