import Foundation
import StudIPModel
import Testing
import TextGrep

@testable import MetadataStore

/// `campusfs grep`'s use of the index: the words ``IndexWords`` takes from a pattern pick, through
/// ``MetadataStore/candidateDocuments(containingAll:)``, every document the engine selects a line of (a superset:
/// case, umlauts, `ue` spellings), and ``MetadataStore/grepScope(below:)`` lists what a PATH covers.
@Suite struct GrepCandidateTests {
    /// One document per line, in a course folder.
    static let lines = [
        "Übung 1: Bäume und B-Bäume", "Der B-Tree (auch B-Baum) ist ein Suchbaum.", "UEBUNG zwei", "ubung drei",
        "Straße und Strasse", "foo_bar foo-bar", "Kapitel 3.14 und 3,14", "x²Info und ÜBUNGSBLATT",
        "Rekursion: siehe Rekursion", "Einführung in die Informatik", "E-Mail an prüfung@uni.example",
        "C++ und C# und .NET", "die Übungen", "Deﬁnition eines Baums", "\u{F0B7}Info und Fußnote½Info",
    ]

    static let patterns: [([String], String)] = [
        ([], "Übung"), (["-i"], "übung"), (["-i"], "UEBUNG"), (["-w"], "Übung"), (["-w"], "bung"), ([], "B-B"),
        ([], " Baum"), (["-i"], "b-tree"), (["-F"], "3.14"), ([], "3.14"), (["-E"], "^Ü"), ([], "^ubung"),
        ([], "\\<Info"), ([], "\\bInfo"), (["-w"], "Info"), (["-iw"], "straße"), (["-E"], "Bäume|Rekursion"),
        ([], "foo_bar"), ([], "_bar"), ([], "siehe Rek"), (["-E"], "B-(Tree|Baum)"), ([], "Re*kursion"),
        (["-E"], "Rek+ursion"), ([], "@uni"), ([], "prüfung@uni"), (["-i"], "PRÜFUNG"), ([], "C++"), (["-F"], "C#"),
        ([], ".NET"), (["-w"], "NET"), ([], "Übungen"), (["-i"], "DIE übung"), ([], "ein"), (["-w", "-F"], "B-Bäume"),
        ([], "Definition"), (["-i"], "uebung"), ([], "[Üü]bung"), ([], "\\(Re\\)kursion"), (["-E"], "B-Ba?um"),
        (["-i"], " übung"), ([], "^UEBUNG"), (["-i"], "^übung"), (["-i"], "^ÜBUNG"), ([], "und Strasse"),
        (["-i"], "und STRAßE"), ([], " Fußnote"), ([], "½Info"), ([], "-Bäume"), ([], " eines Baum"),
        (["-F"], "3.14 und"), (["-E"], "^(Der|Die) B-Tree"), (["-i"], "UND ÜBUNGSBLATT"), ([], " ÜBUNGSBL"),
    ]

    @Test func candidatesContainEveryDocumentTheEngineSelects() throws {
        let documents = Self.lines.indices.map { document("d\($0)", in: "f", "doc\($0).txt") }
        let store = try MetadataStore.withCourse(
            content(info101, folders: [folder("f", in: root(info101), "Folien")], documents: documents))
        for (index, line) in Self.lines.enumerated() {
            try store.indexContent(
                documentID: "d\(index)", version: DocumentVersion(fileID: "file-d\(index)", size: 1000),
                extractor: 1, partKind: nil, parts: [(nil, line + "\n")])
        }
        var narrowed = 0
        for (flags, pattern) in Self.patterns {
            var options = GrepOptions()
            options.ignoreCase = flags.contains { $0.contains("i") }
            options.wordRegexp = flags.contains { $0.contains("w") }
            options.fixedStrings = flags.contains("-F")
            options.extendedRegexp = flags.contains("-E")
            let grep = try Grep(pattern: pattern, options: options) { _ in }
            let selected = Set(
                Self.lines.indices.filter {
                    grep.search(GrepDocument(label: "", partKind: nil, parts: [(nil, Array(Self.lines[$0].utf8))])) > 0
                }.map { "d\($0)" })
            let words = IndexWords.required(pattern: pattern, options: options)
            guard !words.isEmpty else { continue }
            narrowed += 1
            let candidates = Set(try store.candidateDocuments(containingAll: words).map(\.documentID))
            #expect(
                selected.isSubset(of: candidates),
                "\(flags) \(pattern): words \(words) miss \(selected.subtracting(candidates))")
        }
        #expect(narrowed >= 25, "most of these patterns have a word the index can use")
    }

    @Test(arguments: [
        ([], "Übung", []), ([], "foo", []), (["-w"], "foo", []), (["-w"], "x foo", ["foo"]),
        ([], "^foo bar", ["foo", "bar"]),
        ([], "x foo.bar", ["foo"]), ([], "x fo*bar", ["f"]), (["-E"], "x fo+bar", ["fo"]), (["-E"], "a|b c", []),
        ([], "a\\|b c", []), ([], "\\(x\\) foo", ["foo"]), (["-E"], "(x) foo", ["foo"]), ([], "[ ]foo", []),
        ([], "\\<foo\\> bar", ["bar"]), ([], "\\bfoo", []), (["-F"], "a.b* [c]", ["b", "c"]), (["-v"], "^foo", []),
        ([], "x –foo", []), ([], "x \\.foo", ["foo"]), ([], "x foo\nbar", []), (["-i"], "^Straße", ["Straße"]),
    ])
    func wordsOfPatterns(flags: [String], pattern: String, words: [String]) {
        var options = GrepOptions()
        options.ignoreCase = flags.contains("-i")
        options.wordRegexp = flags.contains("-w")
        options.fixedStrings = flags.contains("-F")
        options.extendedRegexp = flags.contains("-E")
        options.invertMatch = flags.contains("-v")
        #expect(IndexWords.required(pattern: pattern, options: options) == words)
    }

    @Test func scopeListsDocumentsBelowAPathWithTheirTextState() throws {
        var locked = document("e", in: "g", "e.pdf")
        locked.isDownloadable = false
        let store = try MetadataStore.withCourse(
            content(
                info101,
                folders: [folder("f", in: root(info101), "Folien"), folder("g", in: "f", "Alt")],
                documents: [
                    document("a", in: "f", "a.pdf"), document("b", in: "g", "b.txt"),
                    document("c", in: "g", "c.png"), document("d", in: root(info101), "d.txt"), locked,
                ]))
        try store.indexContent(
            documentID: "a", version: DocumentVersion(fileID: "file-a", size: 1000), extractor: 1, partKind: .page,
            parts: [(1, "eins")])
        try store.recordExtractionFailure(
            documentID: "c", version: DocumentVersion(fileID: "file-c", size: 1000), extractor: 1, reason: "an image")
        let folien = try store.resolve(path: "WS 2026-27/INF-101 Foo/Folien").inode
        let scope = try store.grepScope(below: folien)
        #expect(scope.map(\.relativePath) == ["Alt/b.txt", "Alt/c.png", "Alt/e.pdf", "a.pdf"])
        #expect(scope.map(\.text) == [.missing, .failed, .locked, .stored])
        #expect(scope.map(\.partKind) == [nil, nil, nil, .page])
        let single = try store.grepScope(below: try store.resolve(path: "WS 2026-27/INF-101 Foo/Folien/a.pdf").inode)
        #expect(single.map(\.relativePath) == [""])
        #expect(try store.grepScope(below: Node.rootInode).count == 5)
    }
}
