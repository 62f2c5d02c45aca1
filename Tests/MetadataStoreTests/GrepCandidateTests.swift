import Foundation
import GRDB
import StudIPModel
import Testing
import TextGrep

@testable import MetadataStore

/// `campusfs grep`'s use of the index: the words ``IndexWords`` takes from a pattern pick, through
/// ``MetadataStore/candidateDocuments(containingAll:)``, every document the engine selects a line of (a superset:
/// case, umlauts, `ue` spellings), and ``MetadataStore/grepDocuments(below:)`` and ``MetadataStore/grepMissing(below:naming:)`` list what a
/// PATH covers.
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
        #expect(IndexWords.required(pattern: pattern, options: Self.options(flags)) == words)
    }

    @Test(arguments: [
        ([], "Wurzelknoten", ["Wurzelknoten"]), (["-w"], "Info", ["Info"]), (["-i"], "Principles", ["ples"]),
        (["-i"], "ÜBUNG", ["bung"]), (["-i"], "Straße", ["stra"]), (["-i"], "KELVIN", ["kelv"]), ([], "ab", []),
        (["-w"], "B", []), (["-v"], "Baum", []), (["-E"], "Baum|Wurzel", []), ([], "Baum\nWurzel", []),
        ([], "x fo*bar", ["x f", "bar"]), (["-E"], "Bin(ä|a)rbaum", ["Bin", "rbaum"]), (["-F"], "a.b*", ["a.b*"]),
        ([], "Übung Übung", ["Übung Übung"]), ([], "[0-9]+/[0-9]+$", []), (["-E"], "Satz [0-9]+", ["Satz "]),
    ])
    func substringsOfPatterns(flags: [String], pattern: String, substrings: [String]) {
        #expect(IndexWords.substrings(pattern: pattern, options: Self.options(flags)) == substrings)
    }

    /// The options grep's flags in `flags` set.
    static func options(_ flags: [String]) -> GrepOptions {
        var options = GrepOptions()
        options.ignoreCase = flags.contains("-i")
        options.wordRegexp = flags.contains("-w")
        options.fixedStrings = flags.contains("-F")
        options.extendedRegexp = flags.contains("-E")
        options.invertMatch = flags.contains("-v")
        return options
    }

    /// Migration v10 builds the index of substrings from the text stored before it, and the triggers keep it in
    /// step afterwards: a replaced version's text is no longer found, the new one is.
    @Test func migrationIndexesTheStoredTextAndTriggersKeepItInStep() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("substrings-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("campusfs.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try Schema.migrator.migrate(queue, upTo: "v9: no document etag")
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO search_extraction (document_id, file_id, size, indexed_at, part_kind, text_bytes)
                    VALUES ('d1', 'f1', 10, 0, 'page', 40);
                    INSERT INTO search_part (document_id, number, text)
                    VALUES ('d1', 1, 'Deckblatt'), ('d1', 2, 'Der Wurzelknoten eines Suchbaums');
                    """)
        }
        try queue.close()
        let store = try MetadataStore(path: path)
        let found = try store.candidateParts(containingAll: ["zelkno", "uchbau"])
        #expect(found.mapValues(\.count) == ["d1": 1])
        try store.indexContent(
            documentID: "d1", version: DocumentVersion(fileID: "f2", size: 20), extractor: 1, partKind: .page,
            parts: [(1, "Ein Blatt ohne Baum")])
        #expect(try store.candidateParts(containingAll: ["zelkno"]).isEmpty)
        #expect(try store.candidateParts(containingAll: ["ohne baum"]).mapValues(\.count) == ["d1": 1])
        try store.forgetExtractions()
        #expect(try store.candidateParts(containingAll: ["ohne baum"]).isEmpty)
    }

    /// Lines for the index of substrings, two pages each (the second never matches): substrings inside words,
    /// `-w` boundaries the word tokenizer does not see, overlapping matches, and characters grep's `-i` folds to
    /// ASCII letters (dotless `ı`, Kelvin sign, long `ſ`) or between non-ASCII letters.
    static let substringLines =
        Self.lines + [
            "Suchbäume und Binärbaum", "Unterabschnitt", "xINFOx und ıntegral", "\u{212A}elvin und ſtraße", "aaaa",
            "ababab", "Integrale", "ÆSOP æsop", "Übungsblätter ÜBUNGSBLÄTTER", "Info", "info:", "ınfo",
            "B-Baum-Variante",
        ]

    static let substringPatterns: [([String], String)] =
        patterns + [
            ([], "aum"), (["-i"], "BAUM"), (["-w"], "Baum"), (["-iw"], "info"), (["-i"], "info"), (["-i"], "INTEGRAL"),
            (["-i"], "kelvin"), (["-i"], "STRASSE"), (["-i"], "straße"), ([], "aaa"), (["-c"], "aaa"), ([], "abab"),
            (["-i"], "æsop"), (["-i"], "ÜBUNGSBLÄTTER"), (["-w"], "Unter"), ([], "terab"), (["-E"], "Bin(ä|a)rbaum"),
            ([], "ab"), (["-i"], "ıntegral"), (["-F"], "B-Baum-"), (["-w", "-E"], "B-Baum(-Variante)?"),
        ]

    /// The pages the index of substrings names hold every line the engine selects: for each pattern with a
    /// literal of 3 characters, the selected (document, page) pairs are among ``MetadataStore/candidateParts``.
    @Test func substringCandidatesContainEveryPageTheEngineSelects() throws {
        let lines = Self.substringLines
        let documents = lines.indices.map { document("d\($0)", in: "f", "doc\($0).pdf") }
        let store = try MetadataStore.withCourse(
            content(info101, folders: [folder("f", in: root(info101), "Folien")], documents: documents))
        for (index, line) in lines.enumerated() {
            try store.indexContent(
                documentID: "d\(index)", version: DocumentVersion(fileID: "file-d\(index)", size: 1000),
                extractor: 1, partKind: .page, parts: [(1, "Deckblatt\n"), (2, line + "\n")])
        }
        // Page ids by document, in page order.
        let pages = try store.read("") { db in
            try Dictionary(grouping: Row.fetchAll(db, sql: "SELECT document_id, id FROM search_part ORDER BY id")) {
                row -> String in row[0]
            }.mapValues { rows in rows.map { row -> Int64 in row[1] } }
        }
        var narrowed = 0
        for (flags, pattern) in Self.substringPatterns {
            var options = GrepOptions()
            options.ignoreCase = flags.contains { $0.contains("i") }
            options.wordRegexp = flags.contains { $0.contains("w") }
            options.fixedStrings = flags.contains { $0.contains("F") }
            options.extendedRegexp = flags.contains("-E")
            let grep = try Grep(pattern: pattern, options: options) { _ in }
            let selected = Set(
                lines.indices.filter {
                    grep.search(GrepDocument(label: "", partKind: nil, parts: [(nil, Array(lines[$0].utf8))])) > 0
                }.compactMap { pages["d\($0)"]?.last })
            let substrings = IndexWords.substrings(pattern: pattern, options: options)
            guard !substrings.isEmpty else { continue }
            narrowed += 1
            let candidates = Set(try store.candidateParts(containingAll: substrings).values.joined())
            #expect(
                selected.isSubset(of: candidates),
                "\(flags) \(pattern): substrings \(substrings) miss pages \(selected.subtracting(candidates))")
            #expect(candidates.count < lines.count, "\(flags) \(pattern): \(substrings) narrow")
            #expect(candidates.isDisjoint(with: pages.values.compactMap(\.first)), "no cover page holds \(substrings)")
        }
        #expect(narrowed >= 60, "most of these patterns have a literal of 3 characters")
    }

    /// For every ASCII letter and digit, each character of the Basic Multilingual Plane that the engine's `-i`
    /// matches to it (`x?y` lines) is found by the index of substrings too: its folding agrees with `REG_ICASE`
    /// there, but for `i` (the dotless `ı`), which ``IndexWords/substrings(pattern:options:)`` leaves out.
    @Test func theIndexFoldsWhatTheEnginesIgnoreCaseMatches() throws {
        let text = Array(
            (0x21...0xFFFF).compactMap(Unicode.Scalar.init).filter { $0 != "\n" }.map { "x\($0)y\n" }.joined().utf8)
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        let store = try MetadataStore.withCourse(
            content(
                info101, folders: [folder("f", in: root(info101), "Folien")],
                documents: letters.indices.map { document("l\($0)", in: "f", "l\($0).txt") }))
        var options = GrepOptions()
        options.ignoreCase = true
        options.withFileName = false
        for (index, letter) in letters.enumerated() {
            var matched: [String] = []
            let grep = try Grep(pattern: "x\(letter)y", options: options) {
                matched += String(decoding: $0, as: UTF8.self).split(separator: "\n").map(String.init)
            }
            grep.search(GrepDocument(label: "", partKind: nil, parts: [(nil, text)]))
            let substrings = IndexWords.substrings(pattern: "x\(letter)y", options: options)
            guard !substrings.isEmpty else {
                #expect("iI".contains(letter), "\(letter) needs no scan")
                continue
            }
            try store.indexContent(
                documentID: "l\(index)", version: DocumentVersion(fileID: "file-l\(index)", size: 1000),
                extractor: 1, partKind: .page, parts: matched.enumerated().map { ($0.offset + 1, $0.element) })
            let found = try store.candidateParts(containingAll: substrings)["l\(index)"]?.count
            #expect(found == matched.count, "\(letter): the engine matches \(matched)")
        }
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
                    document("h", in: "g", "h.txt"),
                ]))
        try store.indexContent(
            documentID: "a", version: DocumentVersion(fileID: "file-a", size: 1000), extractor: 1, partKind: .page,
            parts: [(1, "eins")])
        try store.indexContent(
            documentID: "b", version: DocumentVersion(fileID: "file-b", size: 1000), extractor: 1, partKind: nil,
            parts: [(nil, "zwei")])
        try store.recordExtractionFailure(
            documentID: "c", version: DocumentVersion(fileID: "file-c", size: 1000), extractor: 1, reason: "an image")
        let folien = try store.resolve(path: "WS 2026-27/INF-101 Foo/Folien").inode
        #expect(try store.grepDocuments(below: folien).map(\.relativePath) == ["Alt/b.txt", "a.pdf"])
        #expect(try store.grepDocuments(below: folien).map(\.partKind) == [nil, .page])
        let missing = try store.grepMissing(below: folien, naming: true)
        #expect(missing.names == ["h.txt"], "not c.png (failed), not e.pdf (locked)")
        #expect(missing.count == 1)
        // Only counted: the same number, no names.
        #expect(try store.grepMissing(below: folien) == GrepMissing(count: 1, names: []))
        let single = try store.resolve(path: "WS 2026-27/INF-101 Foo/Folien/a.pdf").inode
        #expect(try store.grepDocuments(below: single).map(\.relativePath) == [""])
        #expect(
            try store.grepDocuments(below: Node.rootInode).map(\.relativePath) == [
                "WS 2026-27/INF-101 Foo/Folien/Alt/b.txt", "WS 2026-27/INF-101 Foo/Folien/a.pdf",
            ])
        let root = try store.grepMissing(below: Node.rootInode, naming: true)
        #expect(Set(root.names) == ["d.txt", "h.txt"])
        #expect(root.count == 2)
        #expect(try store.grepMissing(below: Node.rootInode) == GrepMissing(count: 2, names: []))
        let alt = try store.resolve(path: "WS 2026-27/INF-101 Foo/Folien/Alt").inode
        #expect(try store.grepDocuments(below: alt).map(\.relativePath) == ["b.txt"], "a.pdf is not below Alt")
        #expect(try store.grepMissing(below: alt, naming: true).names == ["h.txt"])
    }

    /// ``StoredText/parts(of:only:_:)`` reads SQLite's row in place: each part's exact bytes (umlauts, CRLF, an
    /// empty part), its number or none, in order, only the ids asked for, and no further once `visit` says stop.
    @Test func storedTextHandsEachPartsBytesInPlace() throws {
        let store = try MetadataStore.withCourse(
            content(
                info101, folders: [folder("f", in: root(info101), "Folien")],
                documents: [document("a", in: "f", "a.pdf"), document("b", in: "f", "b.txt")]))
        let pages = ["Bäume\r\nzwei\n", "", "drei"]
        try store.indexContent(
            documentID: "a", version: DocumentVersion(fileID: "file-a", size: 1000), extractor: 1, partKind: .page,
            parts: [(1, pages[0]), (2, pages[1]), (3, pages[2])])
        try store.indexContent(
            documentID: "b", version: DocumentVersion(fileID: "file-b", size: 1000), extractor: 1, partKind: nil,
            parts: [(nil, "ohne Seiten")])
        func read(_ id: String, only: [Int64]? = nil, stopAfter: Int = .max) throws -> [String] {
            try store.readingStoredText { text in
                var seen: [String] = []
                try text.parts(of: id, only: only) { number, bytes in
                    seen.append(
                        "\(number.map(String.init) ?? "-"):\(Array(bytes) == [] ? "" : String(decoding: bytes, as: UTF8.self))"
                    )
                    return seen.count < stopAfter
                }
                return seen
            }
        }
        #expect(try read("a") == ["1:Bäume\r\nzwei\n", "2:", "3:drei"])
        #expect(try read("a", stopAfter: 2) == ["1:Bäume\r\nzwei\n", "2:"])
        #expect(try read("b") == ["-:ohne Seiten"])
        let ids = try store.read("ids") { db in
            try Int64.fetchAll(db, sql: "SELECT id FROM search_part WHERE document_id = 'a' ORDER BY id")
        }
        #expect(try read("a", only: [ids[2], ids[0]]) == ["3:drei", "1:Bäume\r\nzwei\n"])
        #expect(try read("a", only: []) == [])
    }

    /// grep's read-only connections keep a small page cache: it reads each page of text once, and SQLite's default
    /// of 2,000 KiB a connection was memory that every page of the scan faulted in first (docs/search.md, "grep").
    /// The migrating store's connections keep SQLite's default.
    @Test func readOnlyConnectionsKeepASmallPageCache() throws {
        let store = try MetadataStore.temporary()
        let reader = try #require(try MetadataStore.readOnly(path: store.path))
        let sizes = try [store, reader].map { store in
            try store.pool.read { db in try Int.fetchOne(db, sql: "PRAGMA cache_size") }
        }
        #expect(sizes == [-2000, -256])
    }
}
