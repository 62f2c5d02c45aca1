import ContentCache
import ContentIndexing
import Foundation
import StudIPModel
import StudIPSimulator
import TestSupport
import Testing
import TextExtraction

@testable import MetadataStore

/// Issue 29: the index records which extractor version produced a document's text or failure, so that a better
/// extractor extracts again; a failure that depended on the machine (a time-out at nice 10 under load) is tried
/// again later, a bounded number of times, and is not final.
@Suite struct ExtractorVersionTests {
    let version = DocumentVersion(fileID: "file-a", size: 1000)

    /// A store with one PDF in the tree, and a real PDF with text for its cached copy.
    func storeAndCopy() throws -> (MetadataStore, CommittedCopy) {
        let store = try MetadataStore.withCourse(
            content(
                info101, folders: [folder("f", in: root(info101), "Folien")],
                documents: [
                    document("a", in: "f", "Folien.pdf")
                ]))
        let file = URL(fileURLWithPath: store.path).deletingLastPathComponent().appendingPathComponent("blob")
        let size = 20_000
        try Data(ContentGenerator.bytes(kind: .pdf, seed: 7, size: size, offset: 0, length: size)).write(to: file)
        let copy = CommittedCopy(
            documentID: "a", version: CacheDocument(id: "a", version: version).version, path: file.path)
        return (store, copy)
    }

    func indexed(_ outcome: ContentIndexer.Outcome) -> Bool {
        if case .indexed(let parts) = outcome { parts > 0 } else { false }
    }

    func subject(_ store: MetadataStore) throws -> IndexingSubject {
        try #require(try store.indexingSubject(documentID: "a"))
    }

    @Test func anOlderExtractorsTextIsExtractedAgain() throws {
        let (store, copy) = try storeAndCopy()
        let current = TextExtractor.version(name: "Folien.pdf", mimeType: "application/pdf")
        try store.indexContent(
            documentID: "a", version: version, extractor: current - 1, partKind: .page, parts: [(1, "older text")])
        #expect(ContentIndexer.needsExtraction(try subject(store)), "queued again at start")

        #expect(try indexed(ContentIndexer.index(copy, store: store)))
        let record = try #require(try store.extraction(documentID: "a"))
        #expect(record.extractor == current && record.failure == nil)
        #expect(try store.storedText(documentID: "a").first?.text.contains(ContentGenerator.title(seed: 7)) == true)
        #expect(!ContentIndexer.needsExtraction(try subject(store)))
        #expect(try ContentIndexer.index(copy, store: store) == .alreadyIndexed)
    }

    @Test func aFinalFailureOfTheCurrentExtractorIsNotRetried() throws {
        let (store, _) = try storeAndCopy()
        let current = TextExtractor.version(name: "Folien.pdf", mimeType: "application/pdf")
        try store.recordExtractionFailure(
            documentID: "a", version: version, extractor: current, reason: ExtractionError.noTextLayer.description)
        #expect(!ContentIndexer.needsExtraction(try subject(store)))
        try store.recordExtractionFailure(
            documentID: "a", version: version, extractor: current - 1,
            reason: ExtractionError.noTextLayer.description)
        #expect(ContentIndexer.needsExtraction(try subject(store)), "a newer extractor may find the text")
    }

    /// An indexer (`attempts` 3, waits of `delay` × tries) whose every try times out, as under heavy load: the copy
    /// is a FIFO nobody writes to, so pdftotext blocks opening it until the limit kills it (a 1 ms limit alone did
    /// not always fire first: once pdftotext finished before the timer's thread ran); returned once `failures` tries
    /// failed.
    func timingOut(
        delay: Duration, failures: Int
    ) async throws -> (store: MetadataStore, indexer: ContentIndexer, log: LogCapture) {
        let (store, copy) = try storeAndCopy()
        try #require(rename(copy.path, copy.path + ".pdf") == 0 && mkfifo(copy.path, 0o600) == 0)
        var limits = TextExtractor.Limits()
        limits.time = .milliseconds(1)
        let log = LogCapture()
        let indexer = ContentIndexer(
            store: store, limits: limits, retries: .init(attempts: 3, delay: delay), logger: log.logger)
        indexer.enqueue(copy)
        let deadline = ContinuousClock.now + .seconds(30)
        while log.count(containing: "no text indexed") < failures, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        return (store, indexer, log)
    }

    /// The indexer tries `attempts` times in all, later each time, and then records the failure as final: no later
    /// start queues it again, but a new extractor version would.
    @Test func aTimeOutIsTriedAgainLaterAndIsFinalAfterItsTries() async throws {
        let (store, _, log) = try await timingOut(delay: .milliseconds(20), failures: 3)
        // Twice the longest wait between tries: a fourth try would have come.
        try await Task.sleep(for: .milliseconds(200))
        #expect(log.count(containing: "no text indexed") == 3, "\(log.text)")
        #expect(log.count(containing: #""retry": in"#) == 2 && log.count(containing: #""retry": no"#) == 1)

        let record = try #require(try store.extraction(documentID: "a"))
        #expect(record.failure == ExtractionError.timedOut(.milliseconds(1)).description && !record.retryable)
        #expect(!ContentIndexer.needsExtraction(try subject(store)), "3 tries in all: the next start leaves it")
    }

    /// The tries are counted over runs: a document that timed out twice before this start is tried once more here
    /// (`attempts` 3), and its text arrives when that try works; one that fails a third time is final.
    @Test func aNewRunGoesOnCountingTheTries() throws {
        let (store, copy) = try storeAndCopy()
        let current = TextExtractor.version(name: "Folien.pdf", mimeType: "application/pdf")
        let timeOut = ExtractionError.timedOut(.seconds(30)).description
        for _ in 1...2 {
            try store.recordExtractionFailure(
                documentID: "a", version: version, extractor: current, reason: timeOut, retryable: true,
                maximumTries: 3)
        }
        #expect(ContentIndexer.needsExtraction(try subject(store)), "2 of 3 tries: the start queues it")
        let third = try store.recordExtractionFailure(
            documentID: "a", version: version, extractor: current, reason: timeOut, retryable: true, maximumTries: 3)
        #expect(third == nil)
        #expect(!ContentIndexer.needsExtraction(try subject(store)), "the third failure is final")

        // Another version starts counting afresh, and a try that works stores the text.
        try store.recordExtractionFailure(
            documentID: "a", version: version, extractor: current - 1, reason: timeOut, retryable: true,
            maximumTries: 3)
        #expect(try store.extraction(documentID: "a")?.retryable == true)
        #expect(try indexed(ContentIndexer.index(copy, store: store, maximumTries: 3)))
        #expect(try store.extraction(documentID: "a")?.failure == nil)
    }

    /// `stop()` (the daemon's shutdown) ends the waits for retries: nothing is tried after it.
    @Test func stoppingEndsTheRetriesWaiting() async throws {
        let (_, indexer, log) = try await timingOut(delay: .milliseconds(300), failures: 1)
        indexer.stop()
        // Twice the wait for the retry: it would have come.
        try await Task.sleep(for: .milliseconds(600))
        #expect(log.count(containing: "no text indexed") == 1, "\(log.text)")
    }

    /// Migration v8 on a store from before it: the text stays, marked as the first extractor's; a time-out
    /// recorded as final then becomes retryable, other failures stay final.
    @Test func theMigrationKeepsTheTextAndMakesOldTimeOutsRetryable() throws {
        let store = try MetadataStore.withCourse(
            content(
                info101, folders: [folder("f", in: root(info101), "Folien")],
                documents: [
                    document("a", in: "f", "a.pdf"), document("b", in: "f", "b.pdf"), document("c", in: "f", "c.png"),
                    document("d", in: "f", "d.pdf"),
                ]))
        let old = ExtractionError.timedOut(.seconds(30)).description
        // How a missing pdftotext was recorded before v8: as a broken file.
        let noTool = ExtractionError.broken("No such file or directory (Scripts/bootstrap installs poppler-utils)")
        try store.recordExtractionFailure(
            documentID: "d", version: DocumentVersion(fileID: "file-d", size: 1000), extractor: 1,
            reason: noTool.description)
        try store.indexContent(
            documentID: "a", version: DocumentVersion(fileID: "file-a", size: 1000), extractor: 1, partKind: .page,
            parts: [(1, "Heapsort")])
        try store.recordExtractionFailure(
            documentID: "b", version: DocumentVersion(fileID: "file-b", size: 1000), extractor: 1, reason: old)
        try store.recordExtractionFailure(
            documentID: "c", version: DocumentVersion(fileID: "file-c", size: 1000), extractor: 1, reason: "an image")
        // Back to schema v7: what an upgrade finds.
        try store.pool.write { db in
            try db.execute(
                sql: """
                    ALTER TABLE search_extraction DROP COLUMN extractor;
                    ALTER TABLE search_extraction DROP COLUMN retryable;
                    ALTER TABLE search_extraction DROP COLUMN tries;
                    DELETE FROM grdb_migrations WHERE identifier = 'v8: extractor versions';
                    """)
        }
        let reopened = try MetadataStore(path: store.path)
        #expect(try reopened.storedText(documentID: "a").map(\.text) == ["Heapsort"])
        #expect(try reopened.extraction(documentID: "a")?.extractor == 1)
        let timedOut = try #require(try reopened.extraction(documentID: "b"))
        #expect(timedOut.failure == old && timedOut.retryable && timedOut.extractor == 1)
        #expect(try reopened.extraction(documentID: "c")?.retryable == false)
        #expect(try reopened.extraction(documentID: "d")?.retryable == true, "a missing pdftotext is retryable")
        #expect(try reopened.search("heapsort").map(\.documentID) == ["a"])
    }
}
