import Foundation
import StudIPModel
import Testing

@testable import MetadataStore

/// Issue 16: the search index in the store (FTS5): metadata of every document, extracted text of downloaded ones.
@Suite struct SearchTests {
    let course = "WS 2026-27/INF-101 Foo"
    let algo201 = makeCourse("c-201", "MAT-201", "Algebra", [ss26])

    func store(_ documents: [RemoteDocument], folders: [RemoteFolder]? = nil) throws -> MetadataStore {
        try MetadataStore.withCourse(
            content(info101, folders: folders ?? [folder("f", in: root(info101), "Folien")], documents: documents))
    }

    func ids(_ store: MetadataStore, _ query: String, _ filters: SearchFilters = SearchFilters()) throws -> [String] {
        try store.search(query, filters: filters).map(\.documentID)
    }

    func version(_ id: String, _ fileID: String = "") -> DocumentVersion {
        DocumentVersion(fileID: fileID.isEmpty ? "file-\(id)" : fileID, size: 1000)
    }

    @Test func umlautsAreFoundInEverySpelling() throws {
        let store = try store([
            document("a", in: "f", "Übung 3.pdf"), document("b", in: "f", "Uebung 4.pdf"),
            document("c", in: "f", "Straße.pdf"), document("d", in: "f", "Klausur.pdf"),
        ])
        #expect(try ids(store, "ubung") == ["a"])
        #expect(try Set(ids(store, "uebung")) == ["a", "b"])
        #expect(try Set(ids(store, "Übung")) == ["a", "b"])
        #expect(try Set(ids(store, "UEBUNG")) == ["a", "b"])
        #expect(try ids(store, "strasse") == ["c"])
        #expect(try ids(store, "Straße") == ["c"])
        try store.indexContent(
            documentID: "d", version: version("d"), extractor: 1, partKind: .page, parts: [(1, "Aufgabe zur Prüfung")])
        #expect(try ids(store, "pruefung") == ["d"])
        #expect(try ids(store, "prufung") == ["d"])
    }

    @Test func prefixesPhrasesAndOperators() throws {
        let store = try store([
            document("a", in: "f", "Algorithmen.pdf"), document("b", in: "f", "Graphen.pdf"),
            document("c", in: "f", "Notizen.txt"),
        ])
        try store.indexContent(
            documentID: "b", version: version("b"), extractor: 1, partKind: .page,
            parts: [(1, "Intro"), (2, "a binary search tree is ordered")])
        try store.indexContent(
            documentID: "c", version: version("c"), extractor: 1, partKind: nil, parts: [(nil, "search a binary tree")])
        #expect(try ids(store, "algo*") == ["a"])
        #expect(try ids(store, "algo") == [])
        #expect(try ids(store, "\"binary search tree\"") == ["b"])
        #expect(try Set(ids(store, "binary search tree")) == ["b", "c"])
        #expect(try ids(store, "binary NOT ordered") == ["c"])
        #expect(try Set(ids(store, "algorithmen OR graphen")) == ["a", "b"])
        #expect(try ids(store, "algorithmen AND graphen") == [])
    }

    @Test func hostileQueriesNeverReachSQLiteAsSyntax() throws {
        let store = try store([document("a", in: "f", "Übung 3.pdf")])
        let hostile = [
            "title:übung", "NEAR(übung 3)", "übung OR OR", "übung AND", "OR übung",
            ")(übung", "übung*)", "'; DROP TABLE node; --", "^übung", "übung + 3 - x", "{übung}", "übung:*",
            "\"\"\"übung\"", "übung NOT NOT 3",
        ]
        for query in hostile {
            #expect(throws: Never.self, "\(query)") { _ = try store.search(query) }
        }
        #expect(try ids(store, "title:übung") == [], "the colon is part of the word, not a column filter")
        #expect(try ids(store, "OR übung") == ["a"])
        for query in ["", "  ", "\"", "\"\"", "***", "NOT übung", "( ) -", "\"übung", "übung\"", "\"a\" \"b"] {
            let error = #expect(throws: StoreError.self, "\(query)") { try store.search(query) }
            guard case .invalidQuery = error else {
                Issue.record("\(query): \(String(describing: error))")
                continue
            }
        }
    }

    @Test func everyDocumentIsFoundByItsMetadata() throws {
        let store = try store(
            [document("a", in: "sub", "Blatt 1.pdf")],
            folders: [folder("f", in: root(info101), "Folien"), folder("sub", in: "f", "Woche Eins")])
        for query in ["blatt", "INF-101", "foo", "\"WS 2026/27\"", "woche", "owner", "\"desc a\""] {
            #expect(try ids(store, query) == ["a"], "\(query)")
        }
        let hit = try #require(try store.search("blatt").first)
        #expect(hit.path == course + "/Folien/Woche Eins/Blatt 1.pdf")
        #expect(hit.inode == (try store.inode(hit.path)))
        #expect(hit.snippet == "\(SearchHit.matchStart)Blatt\(SearchHit.matchEnd) 1.pdf")
        #expect(!hit.contentMatched && hit.part == nil)
    }

    @Test func theIndexFollowsRenamesTagsAndTheOverview() throws {
        let documents = [document("a", in: "f", "Blatt 1.pdf")]
        let store = try store(documents)
        _ = try store.applyCourse(
            content(info101, folders: [folder("f", in: root(info101), "Skripte")], documents: documents))
        #expect(try ids(store, "folien") == [])
        #expect(try ids(store, "skripte") == ["a"])

        try store.setTags(["Prüfungsrelevant"], inode: store.inode(course + "/Skripte/Blatt 1.pdf"))
        #expect(try ids(store, "pruefungsrelevant") == ["a"])

        var renamed = info101
        renamed.title = "Datenbanken"
        _ = try store.applyOverview(overview([renamed]))
        #expect(try ids(store, "datenbanken") == ["a"])
        #expect(try ids(store, "foo") == [])
    }

    @Test func filtersNarrowTheHits() throws {
        let store = try store([document("a", in: "f", "Skript Teil 1.pdf"), document("b", in: "f", "Skript 2.pdf")])
        _ = try store.applyOverview(overview([info101, algo201]))
        _ = try store.applyCourse(content(algo201, documents: [document("c", in: root(algo201), "Skript.pdf")]))
        try store.setTags(["wichtig"], inode: store.inode(course + "/Folien/Skript 2.pdf"))

        #expect(try Set(ids(store, "skript")) == ["a", "b", "c"])
        #expect(try Set(ids(store, "skript", SearchFilters(course: "inf-101"))) == ["a", "b"])
        #expect(try ids(store, "skript", SearchFilters(course: "Algebra")) == ["c"])
        #expect(try ids(store, "skript", SearchFilters(course: "c-201")) == ["c"])
        #expect(try ids(store, "skript", SearchFilters(semester: "SS 2026")) == ["c"])
        #expect(try Set(ids(store, "skript", SearchFilters(semester: "ws 2026-27"))) == ["a", "b"], "the folder name")
        #expect(try ids(store, "skript", SearchFilters(tag: "Wichtig")) == ["b"])
        #expect(try ids(store, "skript", SearchFilters(course: "MAT-201", tag: "wichtig")) == [])
        #expect(try ids(store, "skript", SearchFilters(onlyNew: true)) == ["c"], "a course added later: all new")
        _ = try store.applyCourse(
            content(
                info101, folders: [folder("f", in: root(info101), "Folien")],
                documents: [
                    document("a", in: "f", "Skript Teil 1.pdf"), document("b", in: "f", "Skript 2.pdf"),
                    document("d", in: "f", "Skript 3.pdf"),
                ]), now: now + day)
        #expect(try Set(ids(store, "skript", SearchFilters(onlyNew: true))) == ["c", "d"])
    }

    @Test func titleHitsRankAboveContentHits() throws {
        let store = try store([document("a", in: "f", "Folie 1.pdf"), document("b", in: "f", "Graphen.pdf")])
        try store.indexContent(
            documentID: "a", version: version("a"), extractor: 1, partKind: .slide,
            parts: [(1, "Einleitung"), (7, "Graphen, Graphen und noch mehr Graphen")])
        let hits = try store.search("graphen")
        try #require(hits.map(\.documentID) == ["b", "a"])
        #expect(!hits[0].contentMatched)
        #expect(hits[1].contentMatched && hits[1].part == 7 && hits[1].partKind == .slide)
        #expect(hits[1].snippet.contains("\(SearchHit.matchStart)Graphen\(SearchHit.matchEnd)"))
        #expect(hits[1].path == course + "/Folien/Folie 1.pdf")
    }

    @Test func aNewVersionReplacesTheOldText() throws {
        let store = try store([document("a", in: "f", "Folie 1.pdf")])
        try store.indexContent(
            documentID: "a", version: version("a", "v1"), extractor: 1, partKind: .page,
            parts: [(1, "Heapsort"), (2, "Mergesort")])
        try store.indexContent(
            documentID: "a", version: version("a", "v2"), extractor: 1, partKind: .page, parts: [(1, "Quicksort")])
        #expect(try ids(store, "heapsort OR mergesort") == [])
        #expect(try ids(store, "quicksort") == ["a"])
        #expect(try store.storedText(documentID: "a").map(\.text) == ["Quicksort"])
        #expect(try store.extraction(documentID: "a")?.version == version("a", "v2"))

        try store.recordExtractionFailure(
            documentID: "a", version: version("a", "v3"), extractor: 1, reason: "no text layer")
        #expect(try ids(store, "quicksort") == [])
        let record = try #require(try store.extraction(documentID: "a"))
        #expect(record.version == version("a", "v3") && record.failure == "no text layer")
    }

    @Test func aRemovedDocumentLeavesTheResultsAndItsTextGoesWhenForgotten() throws {
        let documents = [document("a", in: "f", "Folie 1.pdf"), document("b", in: "f", "Folie 2.pdf")]
        let store = try store(documents)
        try store.indexContent(
            documentID: "a", version: version("a"), extractor: 1, partKind: .page, parts: [(1, "Dijkstra")])
        _ = try store.applyCourse(
            content(info101, folders: [folder("f", in: root(info101), "Folien")], documents: [documents[1]]),
            now: now + day)
        #expect(try ids(store, "folie") == ["b"])
        #expect(try ids(store, "dijkstra") == [])
        #expect(try store.candidateDocuments(containingAll: ["dijkstra"]) == [])
        #expect(try store.storedText(documentID: "a").map(\.text) == ["Dijkstra"], "kept while departed")

        try store.forget(try store.departed(before: .distantFuture))
        #expect(try store.storedText(documentID: "a").isEmpty)
        #expect(try store.extraction(documentID: "a") == nil)
    }

    @Test func storedTextOutlivesRefreshesAndServesGrep() throws {
        let store = try store([document("a", in: "f", "Folie 1.pdf"), document("b", in: "f", "Folie 2.pdf")])
        try store.indexContent(
            documentID: "a", version: version("a"), extractor: 1, partKind: .page,
            parts: [(1, "Der B-Baum ist balanciert"), (2, "Rot-Schwarz")])
        try store.indexContent(
            documentID: "b", version: version("b"), extractor: 1, partKind: .page, parts: [(nil, "Baum und Wald")])
        // Another refresh of the same versions, as after the cache evicted the bytes: the text stays.
        _ = try store.applyCourse(
            content(
                info101, folders: [folder("f", in: root(info101), "Folien")],
                documents: [document("a", in: "f", "Folie 1.pdf"), document("b", in: "f", "Folie 2.pdf")]),
            now: now + day)

        let inode = try store.inode(course + "/Folien/Folie 1.pdf")
        #expect(
            try store.candidateDocuments(containingAll: ["baum", "balanc"])
                == [IndexedDocument(inode: inode, documentID: "a", version: version("a"), partKind: .page)])
        #expect(try Set(store.candidateDocuments(containingAll: ["Baum"]).map(\.documentID)) == ["a", "b"])
        #expect(try store.candidateDocuments(containingAll: ["baum", "schwarz"]) == [], "one page holds all words")
        #expect(try store.candidateDocuments(containingAll: []) == [])
        let text = try store.storedText(documentID: "a")
        #expect(text.map(\.number) == [1, 2] && text.map(\.text) == ["Der B-Baum ist balanciert", "Rot-Schwarz"])
    }

    @Test func theMigrationIndexesAStoreFromBeforeTheIndex() throws {
        let store = try store([document("a", in: "f", "Blatt 1.pdf")])
        // Back to schema v2 with the same tree: what an upgrade finds.
        try store.pool.write { db in
            try db.execute(
                sql: """
                    DROP TRIGGER search_document_gone; DROP TABLE search_document; DROP TABLE search_content;
                    DROP TABLE search_part; DROP TABLE search_extraction;
                    DELETE FROM grdb_migrations WHERE identifier = 'v3: search index';
                    """)
        }
        let reopened = try MetadataStore(path: store.path)
        #expect(try ids(reopened, "blatt") == ["a"])
    }
}

extension MetadataStore {
    /// The stored text of the document, in page or slide order (empty when none is stored), for assertions.
    func storedText(documentID: String) throws -> [(number: Int?, text: String)] {
        try readingStoredText { text in
            var parts: [(number: Int?, text: String)] = []
            try text.parts(of: documentID) { number, bytes in
                parts.append((number, String(decoding: bytes, as: UTF8.self)))
                return true
            }
            return parts
        }
    }
}
