import ContentCache
import ContentIndexing
import Foundation
import StudIPModel
import Synchronization
import Testing

@testable import MetadataStore

/// Root's indexing RSS (docs/performance.md): the daemon hands back what extracting freed once a batch of
/// extractions has run dry, not after every document.
@Suite struct IndexBatchTests {
    /// Three text documents queued at once end one batch, after the third is stored. The first copy is a FIFO the
    /// test writes only after all three are queued, so the worker cannot run dry between two of them.
    @Test func aBatchEndsOnceAfterItsLastDocument() async throws {
        let ids = ["a", "b", "c"]
        let store = try MetadataStore.withCourse(
            content(
                info101, folders: [folder("f", in: root(info101), "Texte")],
                documents: ids.map { document($0, in: "f", "\($0).txt", mime: "text/plain") }))
        let directory = URL(fileURLWithPath: store.path).deletingLastPathComponent()
        let copies = ids.map { id in
            CommittedCopy(
                documentID: id,
                version: CacheDocument(id: id, version: DocumentVersion(fileID: "file-\(id)", size: 1000)).version,
                path: directory.appendingPathComponent("blob-\(id)").path)
        }
        try #require(mkfifo(copies[0].path, 0o600) == 0)
        for copy in copies.dropFirst() {
            try Data("Text von \(copy.documentID)\n".utf8).write(to: URL(fileURLWithPath: copy.path))
        }

        let stored = Mutex<[Int]>([])
        let indexer = ContentIndexer(store: store) {
            stored.withLock { $0.append((try? store.indexStatistics().documents) ?? -1) }
        }
        for copy in copies { indexer.enqueue(copy) }
        // The worker waits in open(2) of the FIFO until a writer comes; a writer that comes first is told ENXIO.
        var writer: Int32 = -1
        let deadline = ContinuousClock.now + .seconds(30)
        while writer < 0, ContinuousClock.now < deadline {
            writer = open(copies[0].path, O_WRONLY | O_NONBLOCK)
            if writer < 0 { try await Task.sleep(for: .milliseconds(5)) }
        }
        try #require(writer >= 0, "the indexer never opened the first copy")
        let text = Array("Text von a\n".utf8)
        #expect(write(writer, text, text.count) == text.count)
        close(writer)
        while indexer.waiting > 0 || stored.withLock({ $0.isEmpty }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(stored.withLock { $0 } == [3], "the store's documents each time a batch ended")
    }
}
