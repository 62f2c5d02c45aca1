import Foundation
import MetadataStore
import StudIPKit
import StudIPModel
import TestSupport
import Testing

@testable import StudIPSimulator
@testable import Uploading

/// The sender against the simulator through the real client: confirmation, exactly once, backoff, refusals,
/// conflicts, order, homework (docs/writing.md, "The outbox").
@Suite struct OutboxSendingTests {
    typealias H = OutboxHarness

    @Test func anUploadIsConfirmedThenItsBytesLeaveTheOutbox() async throws {
        let harness = try H()
        let settlements = Settlements()
        let bytes = H.bytes(1500)
        try await H.withWriter { sim, writer in
            let outbox = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer,
                onSettled: settlements.handler)
            let id = try await outbox.enqueue(
                .upload(folder: .folder(H.generalFolder), name: "Protokoll Sitzung 3.txt", terms: "SELFMADE_NONPUB"),
                bytes: try harness.draft("p.txt", bytes), draftID: 1)
            let outcome = try await outbox.running { try await settlements.outcome(of: id) }
            guard case .done(let document?) = outcome else {
                Issue.record("not done with a document: \(outcome)")
                return
            }
            #expect(document.name == "Protokoll Sitzung 3.txt")
            #expect(document.size == 1500)
            let stored = sim.university.fileRefs(in: H.generalFolder)
            #expect(stored.map(\.id) == [document.id])
            #expect(stored.first?.content == .bytes(Data(bytes)))
            #expect(stored.first?.termsOfUseID == "SELFMADE_NONPUB")
            #expect(try await outbox.entries().isEmpty)
            #expect(harness.outboxBytes(of: id) == nil)
        }
    }

    /// kill -9 while the upload is on the wire and Stud.IP stores it: the restarted outbox finds the document in
    /// the folder and does not send it again.
    @Test func anUploadInterruptedWhileSendingIsLookedForAndNotSentTwice() async throws {
        let harness = try H()
        let crashed = try H()
        try await H.withWriter { sim, writer in
            let settlements = Settlements()
            let outbox = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer,
                onSettled: settlements.handler)
            let id = try await outbox.enqueue(
                .upload(folder: .folder(H.generalFolder), name: "Abgabe.pdf", terms: nil),
                bytes: try harness.draft("a.pdf", H.bytes(4000)), draftID: nil)
            sim.inject(Fault(action: .stall(milliseconds: 1500), pathContains: "file-refs", method: "POST"))
            try await outbox.running {
                _ = try await outbox.wait(for: id, toBe: .sending)
                // What the disk holds at this moment is what a killed daemon leaves.
                try harness.copyData(to: crashed)
                _ = try await settlements.outcome(of: id)
            }
            #expect(sim.university.fileRefs(in: H.generalFolder).count == 1)

            let restarted = Settlements()
            let second = Outbox(
                store: try crashed.openStore(), dataDirectory: crashed.data, writer: writer,
                onSettled: restarted.handler)
            #expect(try await second.entries().map(\.state) == [.sending])
            let outcome = try await second.running { try await restarted.outcome(of: id) }
            let stored = sim.university.fileRefs(in: H.generalFolder)
            #expect(stored.count == 1)
            guard case .done(let document?) = outcome else {
                Issue.record("not done with a document: \(outcome)")
                return
            }
            #expect(document.id == stored.first?.id)
            #expect(try await second.entries().isEmpty)
        }
    }

    /// kill -9 while a new folder is on the wire and Stud.IP makes it, with an upload queued into it: the restarted
    /// outbox finds the folder among the parent's subfolders, makes no second one (`Team 1[1]`), and the upload
    /// goes into the folder that was made.
    @Test(arguments: [ClientConfiguration.API.jsonAPI, .legacyREST])
    func aFolderInterruptedWhileMakingIsLookedForAndNotMadeTwice(api: ClientConfiguration.API) async throws {
        let harness = try H()
        let crashed = try H()
        try await H.withWriter(api: api) { sim, writer in
            let settlements = Settlements()
            let outbox = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer,
                onSettled: settlements.handler)
            let folder = try await outbox.enqueue(
                .makeFolder(parent: .folder(H.groupFolder), name: "Team 1"), bytes: nil, draftID: nil)
            let upload = try await outbox.enqueue(
                .upload(folder: .madeBy(entry: folder), name: "Plan.txt", terms: nil),
                bytes: try harness.draft("plan", H.bytes(64)), draftID: nil)
            let (makes, uploads) = api == .jsonAPI ? ("\(H.groupFolder)/folders", "file-refs") : ("new_folder", "file/")
            sim.inject(Fault(action: .stall(milliseconds: 1500), pathContains: makes, method: "POST", remaining: 1))
            // The killed daemon's own upload would have been its last act; here it waits, so only the restarted
            // outbox sends it.
            sim.inject(Fault(action: .status(503), pathContains: uploads, method: "POST", remaining: 1))
            try await outbox.running {
                _ = try await outbox.wait(for: folder, toBe: .sending)
                try harness.copyData(to: crashed)
                _ = try await outbox.wait(for: upload, toBe: .waiting)
            }
            #expect(sim.university.subfolders(of: H.groupFolder).map(\.name) == ["Team 1"])

            let restarted = Settlements()
            let second = Outbox(
                store: try crashed.openStore(), dataDirectory: crashed.data, writer: writer,
                onSettled: restarted.handler)
            #expect(try await second.entries().map(\.state) == [.sending, .queued])
            let outcomes = try await second.running {
                [try await restarted.outcome(of: folder), try await restarted.outcome(of: upload)]
            }
            let made = sim.university.subfolders(of: H.groupFolder)
            #expect(made.map(\.name) == ["Team 1"])
            guard case .madeFolder(let found) = outcomes[0], case .done(let plan?) = outcomes[1] else {
                Issue.record("\(outcomes)")
                return
            }
            #expect(found.id == made.first?.id)
            #expect(plan.folderID == found.id)
            #expect(sim.university.fileRefs(in: found.id).map(\.name) == ["Plan.txt"])
            #expect(try await second.entries().isEmpty)
        }
    }

    /// kill -9 while a new version is on the wire and Stud.IP stores it: the restarted outbox sees the document at
    /// the size it sent (JSON:API keeps the file id, legacy REST makes a new one) and takes it for its own, neither
    /// sending it again nor keeping a "(yours)" copy.
    @Test(arguments: [ClientConfiguration.API.jsonAPI, .legacyREST])
    func aNewVersionInterruptedWhileSendingIsNotTakenForAConflict(api: ClientConfiguration.API) async throws {
        let harness = try H()
        let crashed = try H()
        try await H.withWriter(api: api) { sim, writer in
            // Legacy REST answers its upload with a 500: the listing has the document.
            _ = try await writer.upload(
                file: try harness.draft("v1", H.bytes(1000)), toFolder: H.generalFolder, name: "Skript.txt",
                termsID: nil, progress: nil)
            let base = try #require(try await writer.documents(inFolder: H.generalFolder).first)
            let settlements = Settlements()
            let outbox = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer,
                onSettled: settlements.handler)
            let id = try await outbox.enqueue(
                .newVersion(documentID: base.id, name: "Skript.txt", base: base.version),
                bytes: try harness.draft("v2", H.bytes(1300, seed: 4)), draftID: nil)
            sim.inject(Fault(action: .stall(milliseconds: 1500), pathContains: base.id, method: "POST"))
            try await outbox.running {
                _ = try await outbox.wait(for: id, toBe: .sending)
                try harness.copyData(to: crashed)
                _ = try await settlements.outcome(of: id)
            }

            let restarted = Settlements()
            let second = Outbox(
                store: try crashed.openStore(), dataDirectory: crashed.data, writer: writer,
                onSettled: restarted.handler)
            let outcome = try await second.running { try await restarted.outcome(of: id) }
            guard case .done(let document?) = outcome else {
                Issue.record("not done: \(outcome)")
                return
            }
            #expect(document.id == base.id)
            #expect(document.size == 1300)
            let stored = sim.university.fileRefs(in: H.generalFolder)
            #expect(stored.map(\.name) == ["Skript.txt"])
            #expect(stored.first?.content == .bytes(Data(H.bytes(1300, seed: 4))))
        }
    }

    /// The daemon and a daemon-less `campusfs upload` over the same data directory: only one of them sends, the
    /// other waits for it to end.
    @Test func twoSendersOverOneDataDirectorySendAnEntryOnce() async throws {
        let harness = try H()
        try await H.withWriter { sim, writer in
            let first = Settlements()
            let second = Settlements()
            let one = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer, onSettled: first.handler)
            let other = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer,
                onSettled: second.handler)
            let id = try await one.enqueue(
                .upload(folder: .folder(H.generalFolder), name: "Einmal.txt", terms: nil),
                bytes: try harness.draft("e", H.bytes(500)), draftID: nil)
            try await one.running {
                try await other.running {
                    let deadline = Date().addingTimeInterval(20)
                    while await first.all.isEmpty, await second.all.isEmpty, Date() < deadline {
                        try await Task.sleep(for: .milliseconds(20))
                    }
                    // Time for a second sender to have sent it too.
                    try await Task.sleep(for: .milliseconds(300))
                }
            }
            #expect(sim.university.fileRefs(in: H.generalFolder).map(\.name) == ["Einmal.txt"])
            let reported = await first.all + second.all
            #expect(reported.map(\.entry.id) == [id])
        }
    }

    /// Legacy REST stores an upload and answers 500: the listing confirms it, nothing is sent twice.
    @Test func legacyRESTsFiveHundredAfterStoringIsConfirmedByTheListing() async throws {
        let harness = try H()
        let settlements = Settlements()
        try await H.withWriter(api: .legacyREST) { sim, writer in
            let outbox = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer,
                onSettled: settlements.handler)
            let id = try await outbox.enqueue(
                .upload(folder: .folder(H.generalFolder), name: "REST Upload.txt", terms: nil),
                bytes: try harness.draft("r.txt", H.bytes(1111)), draftID: nil)
            let outcome = try await outbox.running { try await settlements.outcome(of: id) }
            let stored = sim.university.fileRefs(in: H.generalFolder)
            #expect(stored.map(\.name) == ["REST Upload.txt"])
            guard case .done(let document?) = outcome else {
                Issue.record("not done with a document: \(outcome)")
                return
            }
            #expect(document.id == stored.first?.id)
            #expect(document.size == 1111)
        }
    }

    /// Offline: the entry waits 10 s, then 20 s; when told the server is back it goes at once.
    @Test func anUploadWaitsWhileStudIPIsDownAndGoesWhenItIsBack() async throws {
        let harness = try H()
        let settlements = Settlements()
        try await H.withWriter { sim, writer in
            let outbox = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer,
                onSettled: settlements.handler)
            try await outbox.running {
                sim.inject(Fault(action: .status(503)))
                let id = try await outbox.enqueue(
                    .upload(folder: .folder(H.generalFolder), name: "Offline.txt", terms: nil),
                    bytes: try harness.draft("o.txt", H.bytes(300)), draftID: nil)
                let first = try await outbox.wait(for: id, toBe: .waiting)
                #expect(first.attempts == 1)
                let wait = try #require(first.notBefore).timeIntervalSinceNow
                #expect(wait > 8 && wait <= 10)
                #expect(first.reason?.contains("503") == true)

                await outbox.serverIsBack()
                // Within less than the backoff: only `serverIsBack` can have sent it again so soon.
                let again = try await outbox.wait(for: id, within: 5) { $0.state == .waiting && $0.attempts == 2 }
                let doubled = try #require(again.notBefore).timeIntervalSinceNow
                #expect(doubled > 18 && doubled <= 20)
                #expect(sim.university.fileRefs(in: H.generalFolder).isEmpty)

                sim.clearFaults()
                await outbox.serverIsBack()
                guard case .done(let document?) = try await settlements.outcome(of: id, within: 5) else {
                    Issue.record("not uploaded after the server came back")
                    return
                }
                #expect(sim.university.fileRefs(in: H.generalFolder).map(\.id) == [document.id])
            }
        }
    }
}

extension OutboxHarness {
    /// Copies the store's files and the outbox into `other`'s data directory, as they are on disk now.
    func copyData(to other: OutboxHarness) throws {
        let manager = FileManager.default
        for name in try manager.contentsOfDirectory(atPath: data.path) where name.hasPrefix("campusfs.sqlite") {
            try manager.copyItem(at: data.appendingPathComponent(name), to: other.data.appendingPathComponent(name))
        }
        try manager.copyItem(at: outboxDirectory, to: other.outboxDirectory)
    }
}

/// What Stud.IP refuses stays in the outbox with its reason; a conflicting or vanished document is not
/// overwritten; folders come before what goes into them; homework is confirmed by its 201 alone.
@Suite struct OutboxOutcomeTests {
    typealias H = OutboxHarness

    @Test func refusalsAreKeptAsFailedWithTheReason() async throws {
        let harness = try H()
        let settlements = Settlements()
        try await H.withWriter { sim, writer in
            let outbox = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer,
                onSettled: settlements.handler)
            // 64 MiB + 1: over a student's upload limit. Sparse, so the test writes no 64 MiB.
            let large = try harness.draft("large.bin", [])
            #expect(truncate(large, 64 << 20 + 1) == 0)
            let tooLarge = try await outbox.enqueue(
                .upload(folder: .folder(H.generalFolder), name: "Aufnahme.mp4", terms: nil), bytes: large,
                draftID: nil)
            let exe = try await outbox.enqueue(
                .upload(folder: .folder(H.generalFolder), name: "setup.exe", terms: nil),
                bytes: try harness.draft("setup.exe", H.bytes(100)), draftID: nil)
            let notWritable = try await outbox.enqueue(
                .upload(folder: .folder(H.dateFolder), name: "Notizen.txt", terms: nil),
                bytes: try harness.draft("n.txt", H.bytes(100)), draftID: nil)
            let outcomes = try await outbox.running {
                [
                    try await settlements.outcome(of: tooLarge), try await settlements.outcome(of: exe),
                    try await settlements.outcome(of: notWritable),
                ]
            }
            let entries = try await outbox.entries()
            #expect(entries.map(\.id) == [tooLarge, exe, notWritable])
            #expect(entries.map(\.state) == [.failed, .failed, .failed])
            #expect(outcomes == entries.map { .failed(reason: $0.reason ?? "-") })
            #expect(entries[0].reason?.contains("upload limit") == true, "\(entries[0].reason ?? "")")
            #expect(entries[1].reason?.contains(".exe") == true, "\(entries[1].reason ?? "")")
            #expect(entries[2].reason?.contains("does not let you") == true, "\(entries[2].reason ?? "")")
            // The bytes stay until the user retries or discards.
            #expect(harness.outboxBytes(of: exe) == H.bytes(100))
            #expect(harness.outboxBytes(of: notWritable) == H.bytes(100))
            #expect(try await outbox.counts() == Outbox.Counts(pending: 0, failed: 3, unconfirmed: 0))
            #expect(sim.university.fileRefs(in: H.generalFolder).isEmpty)
            #expect(sim.university.fileRefs(in: H.dateFolder).allSatisfy { $0.name != "Notizen.txt" })
        }
    }

    /// The lecturer replaced the student's document after the draft started: the lecturer's version stays, the
    /// student's bytes go up as "<name> (yours).<ext>" beside it.
    @Test func aNewVersionOfADocumentTheLecturerChangedIsKeptBesideIt() async throws {
        let harness = try H()
        let settlements = Settlements()
        try await H.withWriter { sim, writer in
            let original = try harness.draft("original", H.bytes(1500))
            let uploaded = try #require(
                try await writer.upload(
                    file: original, toFolder: H.generalFolder, name: "Bericht.txt", termsID: nil, progress: nil
                ).document)
            // The lecturer uploads a new version of it meanwhile.
            try await withSource(H.configuration(sim, user: "test_dozent")) { lecturer in
                let replacement = try harness.draft("replacement", H.bytes(2000, seed: 9))
                _ = try await #require(lecturer.writer).uploadNewVersion(
                    documentID: uploaded.id, file: replacement, name: "Bericht.txt", progress: nil)
            }
            let outbox = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer,
                onSettled: settlements.handler)
            let mine = H.bytes(1700, seed: 3)
            let id = try await outbox.enqueue(
                .newVersion(documentID: uploaded.id, name: "Bericht.txt", base: uploaded.version),
                bytes: try harness.draft("draft", mine), draftID: 5)
            let outcome = try await outbox.running { try await settlements.outcome(of: id) }
            guard case .conflict(let keptAs, let document?, .changed) = outcome else {
                Issue.record("no conflict: \(outcome)")
                return
            }
            #expect(keptAs == "Bericht (yours).txt")
            let stored = sim.university.fileRefs(in: H.generalFolder)
            #expect(stored.count == 2)
            let lecturers = try #require(stored.first { $0.id == uploaded.id })
            #expect(lecturers.name == "Bericht.txt")
            #expect(lecturers.content == .bytes(Data(H.bytes(2000, seed: 9))))
            let yours = try #require(stored.first { $0.id == document.id })
            #expect(yours.name == "Bericht (yours).txt")
            #expect(yours.content == .bytes(Data(mine)))
        }
    }

    /// The lecturer replaced the document through JSON:API at the same size (fixtures-5.0.7-more, Part 2, v3):
    /// file id and size stay, only the content's ETag changes. A draft that knew its base's ETag is kept beside
    /// the lecturer's version, not sent over it; one whose base ETag is still current is a new version.
    @Test(arguments: [true, false])
    func aSameSizeReplacementThroughJSONAPIIsAConflictWhenTheBaseETagIsKnown(replaced: Bool) async throws {
        let harness = try H()
        let settlements = Settlements()
        try await H.withWriter { sim, writer in
            let uploaded = try #require(
                try await writer.upload(
                    file: try harness.draft("original", H.bytes(1500)), toFolder: H.generalFolder,
                    name: "Bericht.txt", termsID: nil, progress: nil
                ).document)
            let etag = try #require(try await writer.contentETag(documentID: uploaded.id))
            if replaced {
                try sim.replaceThroughJSONAPI(uploaded.id, with: H.bytes(1500, seed: 9))
                #expect(try await writer.document(id: uploaded.id).version == uploaded.version, "file id, size kept")
            }
            let outbox = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer,
                onSettled: settlements.handler)
            let mine = H.bytes(1700, seed: 3)
            let id = try await outbox.enqueue(
                .newVersion(documentID: uploaded.id, name: "Bericht.txt", base: uploaded.version, baseETag: etag),
                bytes: try harness.draft("draft", mine), draftID: 5)
            let outcome = try await outbox.running { try await settlements.outcome(of: id) }
            let stored = sim.university.fileRefs(in: H.generalFolder)
            guard replaced else {
                guard case .done(let document?) = outcome else {
                    Issue.record("not a new version: \(outcome)")
                    return
                }
                #expect(document.id == uploaded.id)
                #expect(stored.map(\.id) == [uploaded.id])
                #expect(stored.first?.content == .bytes(Data(mine)))
                return
            }
            guard case .conflict("Bericht (yours).txt", let document?, .changed) = outcome else {
                Issue.record("no conflict: \(outcome)")
                return
            }
            #expect(stored.count == 2)
            #expect(stored.first { $0.id == uploaded.id }?.content == .bytes(Data(H.bytes(1500, seed: 9))))
            #expect(stored.first { $0.id == document.id }?.content == .bytes(Data(mine)))
        }
    }

    /// The document was deleted meanwhile: the bytes become a new document under its name, and the user is told.
    @Test func aNewVersionOfADeletedDocumentBecomesANewDocument() async throws {
        let harness = try H()
        let settlements = Settlements()
        try await H.withWriter { sim, writer in
            let uploaded = try #require(
                try await writer.upload(
                    file: try harness.draft("original", H.bytes(100)), toFolder: H.generalFolder, name: "Notiz.txt",
                    termsID: nil, progress: nil
                ).document)
            try await writer.delete(documentID: uploaded.id)
            let outbox = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer,
                onSettled: settlements.handler)
            let id = try await outbox.enqueue(
                .newVersion(
                    documentID: uploaded.id, name: "Notiz.txt", base: uploaded.version, folderID: H.generalFolder),
                bytes: try harness.draft("draft", H.bytes(120)), draftID: nil)
            let outcome = try await outbox.running { try await settlements.outcome(of: id) }
            guard case .conflict("Notiz.txt", let document?, .gone) = outcome else {
                Issue.record("not re-uploaded as gone: \(outcome)")
                return
            }
            #expect(sim.university.fileRefs(in: H.generalFolder).map(\.id) == [document.id])
            #expect(document.size == 120)
        }
    }

    /// `mkdir` and a copy into it, both queued before either was sent: the folder is made first and the upload
    /// goes into the folder Stud.IP made; operations on one document go in the order they were queued, also when
    /// the first has to wait.
    @Test func aFolderIsMadeBeforeTheUploadsIntoItAndADocumentsOperationsKeepTheirOrder() async throws {
        let harness = try H()
        let settlements = Settlements()
        try await H.withWriter { sim, writer in
            let outbox = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer,
                onSettled: settlements.handler)
            // Both the folder's and the rename's first attempts meet a 503 and wait; what needs them waits too.
            sim.inject(
                Fault(action: .status(503), pathContains: "\(H.groupFolder)/folders", method: "POST", remaining: 1))
            let folder = try await outbox.enqueue(
                .makeFolder(parent: .folder(H.groupFolder), name: "Team 1"), bytes: nil, draftID: nil)
            let upload = try await outbox.enqueue(
                .upload(folder: .madeBy(entry: folder), name: "Plan.txt", terms: nil),
                bytes: try harness.draft("plan", H.bytes(64)), draftID: nil)
            let existing = try #require(
                try await writer.upload(
                    file: try harness.draft("x", H.bytes(10)), toFolder: H.generalFolder, name: "Alt.txt",
                    termsID: nil, progress: nil
                ).document)
            // Renamed, then deleted: sent the other way round, the rename would find no document.
            sim.inject(Fault(action: .status(503), pathContains: existing.id, method: "PATCH", remaining: 1))
            let rename = try await outbox.enqueue(
                .rename(documentID: existing.id, name: "Neu.txt"), bytes: nil, draftID: nil)
            let delete = try await outbox.enqueue(.delete(documentID: existing.id), bytes: nil, draftID: nil)
            let outcomes = try await outbox.running {
                _ = try await outbox.wait(for: folder, toBe: .waiting)
                _ = try await outbox.wait(for: rename, toBe: .waiting)
                #expect(try await outbox.entries().map(\.state) == [.waiting, .queued, .waiting, .queued])
                await outbox.serverIsBack()
                return [
                    try await settlements.outcome(of: folder), try await settlements.outcome(of: upload),
                    try await settlements.outcome(of: rename, within: 5), try await settlements.outcome(of: delete),
                ]
            }
            guard case .madeFolder(let made) = outcomes[0], case .done(let plan?) = outcomes[1] else {
                Issue.record("\(outcomes)")
                return
            }
            #expect(made.name == "Team 1")
            #expect(plan.folderID == made.id)
            #expect(sim.university.fileRefs(in: made.id).map(\.name) == ["Plan.txt"])
            guard case .done(let renamed?) = outcomes[2] else {
                Issue.record("rename: \(outcomes[2])")
                return
            }
            #expect(renamed.name == "Neu.txt")
            #expect(outcomes[3] == .done(nil))
            #expect(sim.university.fileRefs(in: H.generalFolder).isEmpty)
            let order = await settlements.all.map(\.entry.id)
            #expect(order == [folder, upload, rename, delete])
        }
    }

    /// A homework submission cannot be read back: the 201 confirms it. Interrupted while sending, it cannot be
    /// looked for: unconfirmed, not sent again until retried.
    @Test func homeworkIsConfirmedByItsAnswerAndUnconfirmedAfterACrash() async throws {
        let harness = try H()
        let crashed = try H()
        try await H.withWriter { sim, writer in
            let settlements = Settlements()
            let outbox = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer,
                onSettled: settlements.handler)
            let id = try await outbox.enqueue(
                .upload(folder: .folder(H.homeworkFolder), name: "Abgabe Blatt 1.pdf", terms: nil),
                bytes: try harness.draft("abgabe", H.bytes(12345)), draftID: 3)
            sim.inject(Fault(action: .stall(milliseconds: 1500), pathContains: "file-refs", method: "POST"))
            let outcome = try await outbox.running {
                _ = try await outbox.wait(for: id, toBe: .sending)
                try harness.copyData(to: crashed)
                return try await settlements.outcome(of: id)
            }
            #expect(outcome == .done(nil))
            #expect(sim.university.fileRefs(in: H.homeworkFolder).map(\.name) == ["Abgabe Blatt 1.pdf"])

            let restarted = Settlements()
            let second = Outbox(
                store: try crashed.openStore(), dataDirectory: crashed.data, writer: writer,
                onSettled: restarted.handler)
            try await second.running {
                guard case .unconfirmed = try await restarted.outcome(of: id) else {
                    Issue.record("not unconfirmed: \(await restarted.all)")
                    return
                }
                #expect(try await second.counts() == Outbox.Counts(pending: 0, failed: 0, unconfirmed: 1))
                #expect(sim.university.fileRefs(in: H.homeworkFolder).count == 1)
                #expect(crashed.outboxBytes(of: id) == H.bytes(12345))

                // The user says: send it again.
                try await second.retry(id)
                #expect(try await restarted.outcome(of: id, number: 2) == .done(nil))
            }
            #expect(sim.university.fileRefs(in: H.homeworkFolder).count == 2)
        }
    }
}
