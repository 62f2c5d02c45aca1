import Foundation
import MetadataStore
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
        let parts: [(number: Int?, text: String)] = [
            (1, "Titel\nB-Baum\nEnde\n"), (2, "Einleitung\nB-Baum hier\n"), (3, "nichts\n"),
        ]
        var options = GrepOptions()
        options.lineNumbers = true
        options.before = 1
        var output = ""
        let grep = try Grep(pattern: "B-Baum", options: options) { output += $0 }
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
        let slides = try Grep(pattern: "hier", options: GrepOptions()) { output += $0 }
        slides.search(GrepDocument(label: "a.pptx", partKind: .slide, parts: parts))
        slides.search(GrepDocument(label: "b.txt", partKind: nil, parts: [(nil, "hier\n")]))
        #expect(output == "a.pptx:slide 2:B-Baum hier\nb.txt:hier\n")
        #expect(slides.selectedAny)
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
        let grep = try Grep(pattern: pattern, options: options(flags)) { output += $0 }
        grep.search(GrepDocument(label: label, partKind: nil, parts: [(nil, text)]))
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
