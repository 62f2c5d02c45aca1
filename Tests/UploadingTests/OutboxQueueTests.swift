import Foundation
import MetadataStore
import StudIPModel
import Testing

@testable import Uploading

/// The outbox's queue without sending: durable before `enqueue` returns, listed, retried, discarded, counted.
@Suite struct OutboxQueueTests {
    @Test func anEnqueuedOperationAndItsBytesSurviveTheOutboxAndTheStore() async throws {
        let harness = try OutboxHarness()
        let bytes = OutboxHarness.bytes(1500)
        let draft = try harness.draft("Protokoll.txt", bytes)
        let (upload, rename) = try await OutboxHarness.withWriter { _, writer in
            var store: MetadataStore? = try harness.openStore()
            var outbox: Outbox? = Outbox(
                store: try #require(store), dataDirectory: harness.data, writer: writer, onSettled: { _, _ in })
            let upload = try await #require(outbox).enqueue(
                .upload(folder: .folder(OutboxHarness.generalFolder), name: "Protokoll.txt", terms: nil),
                bytes: draft, draftID: 42)
            let rename = try await #require(outbox).enqueue(
                .rename(documentID: "d1", name: "neu.txt"), bytes: nil, draftID: nil)
            // Dropped without running: what `enqueue` returned must already be on disk.
            outbox = nil
            store = nil
            return (upload, rename)
        }
        #expect(!FileManager.default.fileExists(atPath: draft))
        #expect(harness.outboxBytes(of: upload) == bytes)
        let entries = try await OutboxHarness.withWriter { _, writer in
            let outbox = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer, onSettled: { _, _ in })
            return try await outbox.entries()
        }
        #expect(entries.map(\.id) == [upload, rename])
        #expect(
            entries.first?.operation
                == .upload(folder: .folder(OutboxHarness.generalFolder), name: "Protokoll.txt", terms: nil))
        #expect(entries.first?.draftID == 42)
        #expect(entries.first?.byteCount == 1500)
        #expect(entries.map(\.state) == [.queued, .queued])
        #expect(entries.last?.operation == .rename(documentID: "d1", name: "neu.txt"))
        #expect(entries.last?.byteCount == nil)
    }

    /// A crash after the row was committed and before the bytes were renamed into the outbox: the next start
    /// moves them in from where the row says they were.
    @Test func bytesLeftAtTheirSourceByACrashAreMovedInAtTheStart() async throws {
        let harness = try OutboxHarness()
        let bytes = OutboxHarness.bytes(700)
        let draft = try harness.draft("Blatt.pdf", bytes)
        let store = try harness.openStore()
        let operation = try OutboxCoding.encode(
            OutboxOperation.upload(folder: .folder(OutboxHarness.generalFolder), name: "Blatt.pdf", terms: nil))
        let id = try store.insertOutboxRow(
            OutboxRow(
                operation: operation, draftID: nil, state: "queued", byteCount: 700, bytesSource: draft,
                created: Date()))
        #expect(harness.outboxBytes(of: id) == nil)
        try await OutboxHarness.withWriter { _, writer in
            let outbox = Outbox(store: store, dataDirectory: harness.data, writer: writer, onSettled: { _, _ in })
            await outbox.recover()
        }
        #expect(harness.outboxBytes(of: id) == bytes)
        #expect(!FileManager.default.fileExists(atPath: draft))
    }

    /// Files in the outbox no row names at the start: a second link of a draft's bytes (a row taken back or
    /// discarded before a crash let its file go) is removed; the only copy of some bytes (rows lost with an older
    /// store put back) stays where it is.
    @Test func bytesNoEntryNamesAreRemovedOnlyWhereTheDraftHoldsThem() async throws {
        let harness = try OutboxHarness()
        try FileManager.default.createDirectory(at: harness.outboxDirectory, withIntermediateDirectories: true)
        let linked = OutboxHarness.bytes(300)
        let draft = try harness.draft("Blatt.pdf", linked)
        #expect(link(draft, harness.outboxDirectory.appendingPathComponent("7").path) == 0)
        let only = OutboxHarness.bytes(400, seed: 9)
        #expect(
            FileManager.default.createFile(
                atPath: harness.outboxDirectory.appendingPathComponent("8").path, contents: Data(only)))
        try await OutboxHarness.withWriter { _, writer in
            let outbox = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer, onSettled: { _, _ in })
            await outbox.recover()
        }
        #expect(harness.outboxBytes(of: 7) == nil, "a second link of the draft's bytes")
        #expect(FileManager.default.contents(atPath: draft) == Data(linked), "the draft keeps its bytes")
        // The only copy is moved out of the way of the next entry given its id (an older store restarts the ids).
        #expect(harness.outboxBytes(of: 8) == nil)
        let lost = harness.outboxDirectory.appendingPathComponent("lost")
        let kept = try FileManager.default.contentsOfDirectory(atPath: lost.path)
        #expect(kept.count == 1 && kept.first?.hasPrefix("8-") == true)
        #expect(
            kept.first.flatMap { FileManager.default.contents(atPath: lost.appendingPathComponent($0).path) }
                == Data(only))
    }

    /// `enqueue` and the start's recovery may both move an entry's bytes (the actor runs one while the other waits
    /// for the blocking pool): the second finds them in the outbox and the entry keeps its bytes.
    @Test func bytesMovedInTwiceStayTheEntrysBytes() async throws {
        let harness = try OutboxHarness()
        let bytes = OutboxHarness.bytes(300)
        let draft = try harness.draft("Zweimal.txt", bytes)
        let outboxBytes = OutboxBytes(directory: harness.data.appendingPathComponent("outbox"))
        try outboxBytes.prepare()
        try outboxBytes.takeOver(draft, as: 7)
        try outboxBytes.takeOver(draft, as: 7)
        #expect(harness.outboxBytes(of: 7) == bytes)
        #expect(throws: OutboxError.self) { try outboxBytes.takeOver(draft, as: 8) }
    }

    /// The sender does not take an entry whose bytes `enqueue` (here or in another process) has not moved in yet
    /// for one whose bytes are lost: it leaves it for the next round.
    @Test func anEntryWhoseBytesAreStillArrivingIsLeftForLater() async throws {
        let harness = try OutboxHarness()
        let draft = try harness.draft("Unterwegs.txt", OutboxHarness.bytes(200))
        let store = try harness.openStore()
        let operation = try OutboxCoding.encode(
            OutboxOperation.upload(folder: .folder(OutboxHarness.generalFolder), name: "Unterwegs.txt", terms: nil))
        let id = try store.insertOutboxRow(
            OutboxRow(
                operation: operation, draftID: nil, state: "queued", byteCount: 200, bytesSource: draft,
                created: Date()))
        try await OutboxHarness.withWriter { _, writer in
            let outbox = Outbox(store: store, dataDirectory: harness.data, writer: writer, onSettled: { _, _ in })
            let arriving = try await outbox.rowsToSend()
            #expect(arriving.rows.isEmpty && arriving.arriving)
            let bytes = OutboxBytes(directory: harness.data.appendingPathComponent("outbox"))
            try bytes.prepare()
            try bytes.takeOver(draft, as: id)
            let arrived = try await outbox.rowsToSend()
            #expect(arrived.rows.map(\.id) == [id] && !arrived.arriving)
        }
    }

    @Test func discardRemovesTheEntryAndItsBytesAndSaysSo() async throws {
        let harness = try OutboxHarness()
        let settlements = Settlements()
        try await OutboxHarness.withWriter { _, writer in
            let outbox = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer,
                onSettled: settlements.handler)
            let folder = try await outbox.enqueue(
                .makeFolder(parent: .folder(OutboxHarness.groupFolder), name: "Team"), bytes: nil, draftID: nil)
            let upload = try await outbox.enqueue(
                .upload(folder: .madeBy(entry: folder), name: "a.txt", terms: nil),
                bytes: try harness.draft("a.txt", [1, 2, 3]), draftID: 7)
            #expect(try await outbox.counts() == Outbox.Counts(pending: 2, failed: 0, unconfirmed: 0))

            try await outbox.discard(folder)
            let entries = try await outbox.entries()
            #expect(entries.map(\.id) == [upload])
            // The upload into the discarded folder cannot go anywhere: failed, its bytes kept.
            #expect(entries.first?.state == .failed)
            #expect(harness.outboxBytes(of: upload) == [1, 2, 3])
            #expect(try await outbox.counts() == Outbox.Counts(pending: 0, failed: 1, unconfirmed: 0))
            #expect(try await settlements.outcome(of: folder) == .discarded)
            #expect(try await settlements.outcome(of: upload) == .failed(reason: entries.first?.reason ?? "-"))

            try await outbox.discard(upload)
            #expect(try await outbox.entries().isEmpty)
            #expect(harness.outboxBytes(of: upload) == nil)
            await #expect(throws: OutboxError.noSuchEntry(upload)) { try await outbox.discard(upload) }
        }
    }

    /// The sender read the rows, then the user discarded an entry before it was sent: it is not sent.
    @Test func anEntryDiscardedAfterTheSenderReadItIsNotSent() async throws {
        let harness = try OutboxHarness()
        let settlements = Settlements()
        try await OutboxHarness.withWriter { sim, writer in
            let existing = try #require(
                try await writer.upload(
                    file: try harness.draft("x", [1, 2]), toFolder: OutboxHarness.generalFolder, name: "Bleibt.txt",
                    termsID: nil, progress: nil
                ).document)
            let outbox = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer,
                onSettled: settlements.handler)
            let id = try await outbox.enqueue(.delete(documentID: existing.id), bytes: nil, draftID: nil)
            let read = try await outbox.rows()
            try await outbox.discard(id)
            _ = await outbox.attempt(try #require(read.first))
            #expect(sim.university.fileRefs(in: OutboxHarness.generalFolder).map(\.id) == [existing.id])
            #expect(await settlements.all.map(\.outcome) == [.discarded])
            #expect(try await outbox.entries().isEmpty)
        }
    }

    /// The store's row says `sending` (the sender's claim, written before any byte leaves) while a sender holds the
    /// lock: a discard must not delete what is on its way, even when this outbox is not the one sending it.
    @Test func anEntryMarkedSendingIsNotDiscardedWhileASenderIsAlive() async throws {
        let harness = try OutboxHarness()
        let settlements = Settlements()
        try await OutboxHarness.withWriter { _, writer in
            let store = try harness.openStore()
            let outbox = Outbox(
                store: store, dataDirectory: harness.data, writer: writer, onSettled: settlements.handler)
            let id = try await outbox.enqueue(
                .upload(folder: .folder(OutboxHarness.generalFolder), name: "a.txt", terms: nil),
                bytes: try harness.draft("a.txt", [1, 2, 3]), draftID: 7)
            var row = try #require(try store.outboxRow(id: id))
            row.state = OutboxState.sending.rawValue
            try store.updateOutboxRows([row])
            let outboxDirectory = OutboxBytes(directory: harness.data.appendingPathComponent("outbox"))

            var sender: OutboxLock? = try #require(try OutboxLock.acquire(in: outboxDirectory))
            await #expect(throws: OutboxError.busy(id)) { try await outbox.discard(id) }
            #expect(try await outbox.entries().map(\.id) == [id])
            #expect(harness.outboxBytes(of: id) == [1, 2, 3])
            #expect(await settlements.all.isEmpty)

            // The sender died (its lock went with it): the row it left `sending` is discarded.
            #expect(sender != nil)
            sender = nil
            try await outbox.discard(id)
            #expect(try await outbox.entries().isEmpty)
            #expect(harness.outboxBytes(of: id) == nil)
            #expect(await settlements.all.map(\.outcome) == [.discarded])
        }
    }

    @Test func operationsAndBytesMustGoTogether() async throws {
        let harness = try OutboxHarness()
        try await OutboxHarness.withWriter { _, writer in
            let outbox = Outbox(
                store: try harness.openStore(), dataDirectory: harness.data, writer: writer, onSettled: { _, _ in })
            let upload = OutboxOperation.upload(folder: .folder("f"), name: "a.txt", terms: nil)
            await #expect(throws: OutboxError.bytesMismatch(upload)) {
                try await outbox.enqueue(upload, bytes: nil, draftID: nil)
            }
            let delete = OutboxOperation.delete(documentID: "d")
            await #expect(throws: OutboxError.bytesMismatch(delete)) {
                try await outbox.enqueue(delete, bytes: try harness.draft("x", [1]), draftID: nil)
            }
            // A file that is not there: nothing is queued.
            await #expect(throws: OutboxError.self) {
                try await outbox.enqueue(
                    upload, bytes: harness.data.appendingPathComponent("missing").path, draftID: nil)
            }
            #expect(try await outbox.entries().isEmpty)
        }
    }

    @Test func backoffDoublesFromTenSecondsToTenMinutes() {
        let backoff = Backoff()
        #expect(
            (1...8).map { backoff.delay(afterAttempts: $0) }
                == [10, 20, 40, 80, 160, 320, 600, 600].map(Duration.seconds))
    }
}
