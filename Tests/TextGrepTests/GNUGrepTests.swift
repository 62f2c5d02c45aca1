import Foundation
import StudIPModel
import TestSupport
import Testing

@testable import TextGrep

/// The engine against GNU grep (`/bin/grep`, C.UTF-8) on the same text: for every flag, the same output bytes and
/// the same exit status.
@Suite struct GNUGrepTests {
    static let text = """
        Einführung in die Informatik
        Übung 1: Bäume und B-Bäume
        Der B-Tree (auch B-Baum) ist ein Suchbaum.
        ÜBUNG 2 – Rekursion
        straße und STRASSE
        foo_bar foo-bar foobar
        Kapitel 3.14 und 3,14 a.b*[c]^$\\d

        über Übungsblätter
        Ende der Übung.

        """

    /// Flags and pattern, as typed after `grep`.
    static let cases: [([String], String)] = [
        ([], "Übung"), (["-i"], "übung"), (["-i"], "ÜBUNG"), (["-w"], "Übung"), (["-w"], "bung"), (["-w"], "foo"),
        (["-iw"], "über"), (["-w"], "B"), (["-w"], "Bäume"), (["-w"], "ume"), (["-w", "-E"], "B-[A-Za-zä]+"),
        (["-w"], "foo.bar"), (["-F"], "3.14"), ([], "3.14"), (["-F"], "a.b*[c]^$\\d"), (["-iF"], "B-BÄUME"),
        (["-E"], "B-(Tree|Baum)"), (["-E"], "Bäume|Rekursion"), ([], "B-B\\(ä\\)ume"), ([], "Rekursion\\|straße"),
        ([], "Rekursion\nstraße"), (["-E"], "^Ü"), ([], "^$"), ([], "."), ([], "x*"), (["-i"], "STRASSE"),
        ([], "\\<bar"), ([], "\\bInfo"), (["-E"], "[[:upper:]]{4,}"), ([], "U\u{308}bung"), (["-n"], "und"),
        (["-v"], "und"), (["-c"], "und"), (["-cv"], "e"), (["-c"], "^$"), (["-l"], "Baum"), (["-L"], "Baum"),
        (["-L"], "nichtda"), (["-l"], "nichtda"), (["-q"], "Baum"), (["-q"], "nichtda"), (["-c"], "nichtda"),
        (["-H"], "Baum"), (["-Hn"], "Baum"), (["-hn"], "Baum"), (["-n", "-C1"], "Rekursion"), (["-A1"], "Übung"),
        (["-B2", "-n"], "ber"), (["-C0"], "und"), (["-n", "-C1", "-H"], "B-"), (["-A1", "-v"], "[aeiou]"),
        (["-B1"], "^$"), (["--color=always"], "B-B"), (["--color=always", "-n", "-H"], "und"),
        (["--color=always", "-i"], "übung"), (["--color=always", "-C1", "-n", "-H"], "Rekursion"),
        (["--color=always", "-c", "-H"], "und"), (["--color=always", "-l"], "und"), (["--color=always"], "x*"),
        (["--color=always", "-w"], "foo"), (["--color=always", "-v"], "und"),
        (["-w", "-E"], "foo(-ba)?"), (["--color=always", "-w", "-E"], "foo(-ba)?"),
    ]

    @Test(arguments: cases)
    func sameAsGNUGrep(flags: [String], pattern: String) async throws {
        let file = try Self.write(Self.text)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let gnu = try await Self.gnuGrep(flags, pattern, file)
        #expect(
            gnu.status == 1 || flags.contains("-q") || flags.contains("-L") || !gnu.output.isEmpty,
            "GNU grep ran: \(gnu)")
        let ours = try Self.engine(flags, pattern, text: Self.text, label: file)
        #expect(ours.output == gnu.output, "grep \(flags) '\(pattern)'")
        #expect(ours.status == gnu.status, "grep \(flags) '\(pattern)'")
    }

    /// Text for the required-literal prefilter: lines that hold the literal only in another case, with umlauts,
    /// inside a word, split across lines; and characters `REG_ICASE` folds to ASCII letters (Kelvin sign, long s,
    /// dotted and dotless i).
    static let prefilterText = """
        Der Wurzelknoten eines B-Baums
        WURZELKNOTEN und wurzelknoten
        Wurzel
        knoten
        Teilbaum ohne Wurzel-Knoten
        Grüße aus GRÜSSE und grüsse
        200 \u{212A}elvin und 3 \u{017F}tra\u{00DF}e, \u{0130}nformatik, \u{0131}nfo
        Seite 12/40
        Seite 3/4 von
        a.b A.B axb ax\u{301}b
        Baumschule Baum baum BAUM

        """

    static let prefilterCases: [([String], String)] = [
        ([], "Wurzelknoten"), (["-i"], "wurzelknoten"), (["-ci"], "WURZELKNOTEN"), (["-cv"], "Wurzel"),
        (["-vi"], "wurzel"), (["-w"], "Wurzel"), (["-iw"], "baum"), (["-cw"], "Baum"), (["-n", "-C1"], "knoten"),
        (["-i", "-A1", "-n"], "wurzel-knoten"), (["-i"], "grüße"), (["-i"], "GRÜSSE"), (["-i"], "kelvin"),
        (["-i"], "STRASSE"), (["-i"], "straße"), (["-i"], "INFORMATIK"), (["-i"], "info"),
        (["-E", "-c"], "[0-9]+/[0-9]+$"),
        (["-E", "-n"], "[0-9]+/[0-9]+ von"), (["-F"], "a.b"), (["-iF"], "a.b"), ([], "a.b"), ([], "ax*b"),
        ([], "a.\u{301}b"), (["-E"], "Baum+schule"), (["-c"], "Baum\\|Wurzel"), (["-L"], "Wurzelknoten"),
        (["-l"], "wurzelknoten"), (["-L", "-i"], "nichtda"), (["--color=always", "-i"], "baum"),
    ]

    /// The prefilter must never drop a line GNU grep selects, nor change counts, `-v`, `-L` or context.
    @Test(arguments: prefilterCases)
    func prefilterSelectsWhatGNUGrepSelects(flags: [String], pattern: String) async throws {
        let file = try Self.write(Self.prefilterText)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let gnu = try await Self.gnuGrep(flags, pattern, file)
        let ours = try Self.engine(flags, pattern, text: Self.prefilterText, label: file)
        #expect(ours.output == gnu.output, "grep \(flags) '\(pattern)'")
        #expect(ours.status == gnu.status, "grep \(flags) '\(pattern)'")
    }

    /// The literal a line must contain before `regexec` sees it: the longest certain run; with `-i` ASCII only and
    /// without `i`, `k`, `s`; none where a match need not contain one.
    @Test(
        arguments: [
            ([], "Wurzelknoten", "Wurzelknoten"), (["-i"], "WurzelKnoten", "wurzel"), (["-i"], "Übungsblatt", "blatt"),
            (["-E"], "[0-9]+/[0-9]+$", "/"), ([], "x fo*bar", "x f"), (["-E"], "Baum+schule", "schule"),
            (["-F"], "a.b*[c]", "a.b*[c]"), ([], "a\\.b", "a.b"), ([], "a.\u{301}b", "a"), (["-w"], "Baum", "Baum"),
            (["-v"], "Baum", "Baum"), (["-E"], "Baum|Wurzel", nil), ([], "Baum\nWurzel", nil), ([], ".*", nil),
            (["-i"], "ſ", nil), (["-E"], "(Baum)+", nil),
        ] as [([String], String, String?)])
    func requiredLiteral(flags: [String], pattern: String, literal: String?) {
        let required = RequiredLiteral(pattern: pattern, options: Self.options(flags))
        #expect(required.map { String(decoding: $0.bytes, as: UTF8.self) } == literal, "\(flags) '\(pattern)'")
    }

    /// Horspool's search finds what a naive search finds, at every start, with and without folding.
    @Test func literalSearchFindsEveryOccurrence() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abAB\n".utf8)
        for ignoreCase in [false, true] {
            var options = GrepOptions()
            options.ignoreCase = ignoreCase
            for _ in 0..<200 {
                let needle = String(
                    decoding: (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                        alphabet[Int.random(in: 0..<4, using: &generator)]
                    }, as: UTF8.self)
                let text = (0..<Int.random(in: 0...40, using: &generator)).map { _ in
                    alphabet[Int.random(in: 0..<alphabet.count, using: &generator)]
                }
                let required = try #require(RequiredLiteral(pattern: needle, options: options))
                let folded = ignoreCase ? Array(needle.lowercased().utf8) : Array(needle.utf8)
                let haystack = ignoreCase ? Array(String(decoding: text, as: UTF8.self).lowercased().utf8) : text
                for start in 0...text.count {
                    let expected = (start..<max(start, text.count - folded.count + 1)).first {
                        Array(haystack[$0..<($0 + folded.count)]) == folded
                    }
                    let found = text.withUnsafeBufferPointer { required.firstOccurrence(in: $0, from: start) }
                    #expect(found == expected, "'\(needle)' in \(text) from \(start)")
                }
            }
        }
    }

    @Test(arguments: [([], "a\\(b"), ([], "[abc"), (["-E"], "a(b"), (["-E"], "x{2,1}"), ([], "a\\{1")])
    func invalidPatternsAreErrorsLikeInGNUGrep(flags: [String], pattern: String) async throws {
        let file = try Self.write(Self.text)
        defer { try? FileManager.default.removeItem(atPath: file) }
        #expect(try await Self.gnuGrep(flags, pattern, file).status == 2)
        let error = #expect(throws: GrepError.self) { try Self.engine(flags, pattern, text: Self.text, label: file) }
        #expect(error?.description.hasPrefix("invalid pattern \"\(pattern)\": ") == true)
    }

    /// Pages: `path:page N:line`, -n counts within the page, context and `--` never run across pages.
    @Test func pagesSlidesAndSheetsLabelTheirLines() throws {
        let parts: [(number: Int?, text: [UInt8])] = [
            (1, Array("Titel\nB-Baum\nEnde\n".utf8)), (2, Array("Einleitung\nB-Baum hier\n".utf8)),
            (3, Array("nichts\n".utf8)),
        ]
        var options = GrepOptions()
        options.lineNumbers = true
        options.before = 1
        var output = ""
        let grep = try Grep(pattern: "B-Baum", options: options) { output += String(decoding: $0, as: UTF8.self) }
        #expect(grep.search(GrepDocument(label: "Kurs/Folien.pdf", partKind: .page, parts: parts)) == 2)
        #expect(
            output == """
                Kurs/Folien.pdf-page 1-1-Titel
                Kurs/Folien.pdf:page 1:2:B-Baum
                --
                Kurs/Folien.pdf-page 2-1-Einleitung
                Kurs/Folien.pdf:page 2:2:B-Baum hier

                """)
        output = ""
        let slides = try Grep(pattern: "hier", options: GrepOptions()) { output += String(decoding: $0, as: UTF8.self) }
        slides.search(GrepDocument(label: "a.pptx", partKind: .slide, parts: parts))
        slides.search(GrepDocument(label: "b.txt", partKind: nil, parts: [(nil, Array("hier\n".utf8))]))
        #expect(output == "a.pptx:slide 2:B-Baum hier\nb.txt:hier\n")
        #expect(slides.selectedAny)
    }

    /// Documents searched by searchers of their own (as `campusfs grep`'s threads do) and printed in order read as
    /// GNU grep's output over the same files: `--` between the groups of different documents, labels, counts.
    @Test(arguments: [
        ["-n", "-C1", "-H"], ["-A1", "-H"], ["-c", "-H"], ["-l"], ["-L"], ["-H", "--color=always", "-B1"],
    ])
    func documentsSearchedApartPrintAsOneGrep(flags: [String]) async throws {
        let texts = [Self.text, "nichts\n", Self.prefilterText, "Übung\nzwei\n"]
        let files = try texts.map { try Self.write($0) }
        defer { for file in files { try? FileManager.default.removeItem(atPath: file) } }
        let command =
            (["LC_ALL=C.UTF-8", "/bin/grep"] + flags + ["--", "Übung\\|Baum"] + files).map {
                $0.contains("\\") ? "'\($0)'" : $0
            }
            .joined(separator: " ")
        let gnu = try await shell(command)
        var output: [UInt8] = []
        let grep = try Grep(pattern: "Übung\\|Baum", options: Self.options(flags)) { output += $0 }
        // Each document on a searcher of its own, printed in order afterwards, as from two threads.
        let hits = try zip(files, texts).map { file, text in
            try GrepSearcher(pattern: "Übung\\|Baum", options: Self.options(flags)).search(
                label: file, partKind: nil
            ) { visit in _ = Array(text.utf8).withUnsafeBufferPointer { visit(nil, $0) } }
        }
        for hit in hits { grep.print(hit) }
        #expect(String(decoding: output, as: UTF8.self) == gnu.stdout, "grep \(flags)")
        #expect((grep.selectedAny ? 0 : 1) == gnu.status)
    }

    /// The engine's options for grep's flags (only those ``cases`` use).
    static func options(_ flags: [String]) -> GrepOptions {
        var options = GrepOptions()
        options.withFileName = false
        for flag in flags {
            if flag.hasPrefix("--color=") {
                options.color = flag == "--color=always"
                continue
            }
            let letters = Array(flag.dropFirst())
            for (index, letter) in letters.enumerated() {
                let number = Int(String(letters[(index + 1)...]))
                switch letter {
                case "i": options.ignoreCase = true
                case "w": options.wordRegexp = true
                case "F": options.fixedStrings = true
                case "E": options.extendedRegexp = true
                case "v": options.invertMatch = true
                case "n": options.lineNumbers = true
                case "c": options.output = .count
                case "l": options.output = .filesWithMatches
                case "L": options.output = .filesWithoutMatch
                case "q": options.output = .quiet
                case "H": options.withFileName = true
                case "h": options.withFileName = false
                case "A": options.after = number
                case "B": options.before = number
                case "C":
                    options.before = number
                    options.after = number
                default: Issue.record("no mapping for \(flag)")
                }
                if "ABC".contains(letter) { break }
            }
        }
        return options
    }

    static func engine(_ flags: [String], _ pattern: String, text: String, label: String) throws(GrepError)
        -> (output: String, status: Int32)
    {
        var output = ""
        let grep = try Grep(pattern: pattern, options: options(flags)) { output += String(decoding: $0, as: UTF8.self) }
        grep.search(GrepDocument(label: label, partKind: nil, parts: [(nil, Array(text.utf8))]))
        return (output, grep.selectedAny ? 0 : 1)
    }

    static func gnuGrep(_ flags: [String], _ pattern: String, _ file: String) async throws
        -> (output: String, status: Int32)
    {
        let command = (["LC_ALL=C.UTF-8", "/bin/grep"] + flags.map(quoted) + ["--", quoted(pattern), quoted(file)])
            .joined(separator: " ")
        let result = try await shell(command)
        return (result.stdout, result.status)
    }

    static func write(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("grep-\(UUID().uuidString).txt").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }
}
