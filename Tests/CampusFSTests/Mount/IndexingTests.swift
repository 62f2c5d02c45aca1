import Foundation
import MetadataStore
import TestSupport
import Testing

@testable import StudIPSimulator

/// Issue 16: the daemon extracts the text of what it downloads into the search index, in the background; the text
/// outlives the cached bytes, follows new versions and deletions, and `campusfs index` shows and rebuilds it.
@Suite(.serialized)
struct IndexingTests {
    typealias Setup = DaemonTests.Setup
    static let course = DaemonTests.course
    static let slides = DaemonTests.slides
    static let diagram = course + "/Übungsblätter/diagramm.png"

    /// `campusfs index --json` once the store holds `documents` extractions (text or failure) and nothing waits.
    /// The store is polled in this process, not through a command per poll: a test that fails should fail, and a
    /// few hundred children in a row are what Foundation's `Process` is least reliable with.
    static func settledIndex(_ setup: Setup, documents: Int) async throws -> [String: Int] {
        let store = try MetadataStore(path: setup.cli.database().path)
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let statistics = try store.indexStatistics()
            if statistics.documents + statistics.failed >= documents { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        var index: [String: Int] = [:]
        for _ in 0..<20 {
            let result = try await setup.campusfs(["index", "--json"], timeout: 20)
            #expect(result.status == 0, "\(result.stderr)")
            index = (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Int]) ?? [:]
            if index["waiting"] == 0 { break }
            try await Task.sleep(for: .milliseconds(500))
        }
        return index
    }

    /// The daemon's store, opened beside it (WAL).
    static func search(_ setup: Setup, _ query: String) throws -> [SearchHit] {
        try MetadataStore(path: setup.cli.database().path).search(query)
    }

    /// Page texts of the slides as poppler reads the server's bytes, and a word that occurs on one page only.
    static func wordOnOnePage(_ setup: Setup, documentID: String) async throws -> (word: String, page: Int) {
        let pdf = try temporaryDirectory("campusfs-indexing") + "/slides.pdf"
        let text = try await shell(
            "curl -sf -o \(quoted(pdf)) \(setup.sim.controlURL)/documents/\(documentID)/content && "
                + "pdftotext -enc UTF-8 \(quoted(pdf)) -")
        try #require(text.status == 0, "\(text.stderr)")
        let pages = text.stdout.split(separator: "\u{C}", omittingEmptySubsequences: false).map { page in
            Set(page.split { !$0.isLetter }.map { $0.lowercased() }.filter { $0.count >= 5 })
        }
        for (index, words) in pages.enumerated() {
            let others = pages.enumerated().filter { $0.offset != index }.reduce(into: Set<String>()) {
                $0.formUnion($1.element)
            }
            if let word = words.subtracting(others).sorted().first { return (word, index + 1) }
        }
        Issue.record("no word occurs on one page only: \(pages)")
        throw MountHarness.Failure.noSuchDocument
    }

    @Test func downloadedTextIsFoundByPageAfterEvictionUntilANewVersionOrADeletion() async throws {
        try await DaemonTests.with { setup in
            let control = setup.sim.controlURL
            let mounted = try await setup.mount()
            try #require(mounted.status == 0, "\(mounted.stderr)")
            let added = try await shell(
                """
                curl -sf -X POST -d '{"folder_id": "\(try setup.document(DaemonTests.readme).folderID)", \
                "name": "Skript.txt", "text": "Der B-Baum ist balanciert.\\nRot-Schwarz-Bäume auch.\\n"}' \
                \(control)/documents > /dev/null
                """)
            try #require(added.status == 0, "\(added.stderr)")
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            let script = Self.course + "/Skript.txt"
            let read = try await shell("cat \(setup.path(Self.slides)) \(setup.path(script)) > /dev/null")
            #expect(read.status == 0, "\(read.stderr)")
            var index = try await Self.settledIndex(setup, documents: 2)
            #expect(index["documents"] == 2 && index["failed"] == 0, "\(index)")
            #expect((index["textBytes"] ?? 0) > 0 && (index["indexBytes"] ?? 0) > 0, "\(index)")

            let slides = try setup.document(Self.slides)
            let (word, page) = try await Self.wordOnOnePage(setup, documentID: slides.id)
            let hit = try #require(try Self.search(setup, word).first { $0.documentID == slides.id }, "\(word)")
            #expect(hit.contentMatched && hit.part == page && hit.partKind == .page, "\(hit)")
            #expect(try Self.search(setup, "balanciert").map(\.path) == [script])

            // Evicted: still found.
            let clean = try await setup.campusfs(["cache", "clean"])
            #expect(clean.status == 0, "\(clean.stderr)")
            #expect(try await setup.status()["cachedDocuments"] as? Int == 0)
            #expect(try Self.search(setup, word).contains { $0.documentID == slides.id })
            #expect(try Self.search(setup, "schwarz").map(\.path) == [script])

            // A new version replaces the text once it is downloaded.
            let scriptID = try setup.document(script).id
            let changed = try await shell(
                """
                curl -sf -X PATCH -d '{"text": "Ein AVL-Baum ist höhenbalanciert.\\n"}' \
                \(control)/documents/\(scriptID) > /dev/null
                """)
            #expect(changed.status == 0)
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            #expect(try await shell("cat \(setup.path(script))").stdout == "Ein AVL-Baum ist höhenbalanciert.\n")
            index = try await Self.settledIndex(setup, documents: 2)
            #expect(try Self.search(setup, "avl").map(\.path) == [script], "\(index)")
            #expect(try Self.search(setup, "schwarz").isEmpty, "the old version's text is gone")

            // Deleted on Stud.IP: gone from the results at the refresh that sees it.
            let deleted = try await shell("curl -sf -X DELETE \(control)/documents/\(scriptID)")
            #expect(deleted.status == 0)
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            #expect(try Self.search(setup, "avl").isEmpty)
        }
    }

    @Test func cachedDocumentsAreIndexedAtStartFailuresAreNotRetriedAndRebuildWorks() async throws {
        try await DaemonTests.with { setup in
            try #require(try await setup.mount().status == 0)
            let read = try await shell("cat \(setup.path(Self.slides)) \(setup.path(Self.diagram)) > /dev/null")
            #expect(read.status == 0, "\(read.stderr)")
            var index = try await Self.settledIndex(setup, documents: 2)
            #expect(index["documents"] == 1 && index["failed"] == 1, "the image has no text: \(index)")
            let failures = try await setup.campusfs(["index", "--failed"])
            #expect(failures.lines.last == Self.diagram + ": diagramm.png: a format whose text is not indexed")
            let failedAt = try await setup.sqlite("SELECT indexed_at FROM search_extraction WHERE failure IS NOT NULL")

            // A cache from before indexing existed: the daemon's start indexes it; the failure is not retried.
            #expect(try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30).status == 0)
            let unmounted = try await Self.settledIndex(setup, documents: 2)
            #expect(unmounted == index, "the same figures from the store and the cache directory")
            try await Self.dropTextOfTheSlides(setup)
            let pending = try await setup.campusfs(["index", "--json"])
            #expect(pending.stdout.contains("\"waiting\":1"), "\(pending.stdout)")
            try #require(try await setup.mount().status == 0)
            index = try await Self.settledIndex(setup, documents: 2)
            #expect(index["documents"] == 1 && index["failed"] == 1, "\(index)")
            #expect(
                try await setup.sqlite("SELECT indexed_at FROM search_extraction WHERE failure IS NOT NULL")
                    == failedAt, "a failed version is not extracted again")

            // --rebuild, mounted (through the daemon) and not, waits and ends where it started.
            let rebuilt = try await setup.campusfs(["index", "--rebuild", "--json"])
            #expect(rebuilt.status == 0, "\(rebuilt.stderr)")
            #expect(rebuilt.stdout.contains("\"documents\":1") && rebuilt.stdout.contains("\"waiting\":0"))
            #expect(
                try await setup.sqlite("SELECT indexed_at FROM search_extraction WHERE failure IS NOT NULL") != failedAt
            )
            #expect(try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30).status == 0)
            try await Self.dropTextOfTheSlides(setup)
            let offline = try await setup.campusfs(["index", "--rebuild"])
            #expect(offline.status == 0, "\(offline.stderr)")
            #expect(offline.stdout.hasPrefix("1 documents searchable, 1 without text"), "\(offline.stdout)")
            let slides = try setup.document(Self.slides)
            let (word, page) = try await Self.wordOnOnePage(setup, documentID: slides.id)
            let hit = try #require(try Self.search(setup, word).first { $0.documentID == slides.id })
            #expect(hit.contentMatched && hit.part == page, "\(hit)")
        }
    }

    /// Deletes the slides' text behind the store's back: what a cache filled before indexing existed looks like.
    static func dropTextOfTheSlides(_ setup: Setup) async throws {
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute("PRAGMA foreign_keys = ON")
            db.execute("DELETE FROM search_extraction WHERE failure IS NULL")
            db.commit()
            """
        let dropped = try await shell("python3 -c \(quoted(script)) \(quoted(setup.cli.database().path))")
        #expect(dropped.status == 0, "\(dropped.stderr)")
    }
}
