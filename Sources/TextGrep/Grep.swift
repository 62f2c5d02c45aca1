import Glibc
import StudIPModel

/// grep's flags that change what is selected and printed.
public struct GrepOptions: Sendable, Hashable {
    /// What is printed: lines (with context), a count per document, names of documents with or without a selected
    /// line, or nothing.
    public enum Output: Sendable, Hashable {
        case lines, count, filesWithMatches, filesWithoutMatch, quiet
    }

    public var ignoreCase = false
    public var wordRegexp = false
    public var fixedStrings = false
    public var extendedRegexp = false
    public var invertMatch = false
    public var lineNumbers = false
    /// Lines of context; nil when not asked for (then no `--` separators either, as in grep).
    public var before: Int?
    public var after: Int?
    public var output = Output.lines
    public var color = false
    public var withFileName = true

    public init() {}
}

/// One document's stored text: what `campusfs grep` searches.
public struct GrepDocument: Sendable {
    /// What the output calls it: the path as the user named it (``GrepOptions/withFileName``).
    public var label: String
    public var partKind: TextPartKind?
    /// Each part's UTF-8 bytes (the search index's stored text), searched in place.
    public var parts: [(number: Int?, text: [UInt8])]

    public init(label: String, partKind: TextPartKind?, parts: [(number: Int?, text: [UInt8])]) {
        self.label = label
        self.partKind = partKind
        self.parts = parts
    }
}

/// What searching one document printed and selected: its bytes wait in a ``GrepHit`` until ``Grep/print(_:)``
/// writes them, in document order, whichever thread searched it.
public struct GrepHit: Sendable {
    /// The document's output; without the `--` its first group needs after an earlier document's lines, which only
    /// ``Grep/print(_:)`` knows about.
    public var output: [UInt8]
    /// How many lines it selected.
    public var selected: Int
    /// Whether it printed a line (so context groups after it start with `--`).
    var printedLine: Bool
}

/// Searches documents and prints their ``GrepHit``s as GNU grep does (`path:page 3:12:line`, `-` for context
/// lines, `--` between groups, GNU's default colours) through `write`, in the order given.
public final class Grep {
    public let options: GrepOptions
    /// This thread's searcher, for ``search(_:)``.
    private let searcher: GrepSearcher
    private let write: ([UInt8]) -> Void
    /// Whether any line was selected so far: grep's exit status.
    public private(set) var selectedAny = false
    /// Whether a line has been printed, so the next group not adjacent to it starts with `--`.
    private var printedLine = false

    public init(pattern: String, options: GrepOptions, write: @escaping ([UInt8]) -> Void) throws(GrepError) {
        self.options = options
        searcher = try GrepSearcher(pattern: pattern, options: options)
        self.write = write
    }

    /// True once nothing further can change the output or the exit status (`-q` after a selected line).
    public var isFinished: Bool { options.output == .quiet && selectedAny }

    /// Prints a document's hit after the ones printed before it.
    public func print(_ hit: GrepHit) {
        if hit.selected > 0 { selectedAny = true }
        if hit.printedLine, printedLine, options.before != nil || options.after != nil {
            write(Array(searcher.colored("--", .separator).utf8) + [UInt8(ascii: "\n")])
        }
        if hit.printedLine { printedLine = true }
        if !hit.output.isEmpty { write(hit.output) }
    }

    /// Searches one document and prints what its flags say; returns how many lines it selected.
    @discardableResult
    public func search(_ document: GrepDocument) -> Int {
        let hit = searcher.search(label: document.label, partKind: document.partKind) { (visit) -> Void in
            for part in document.parts {
                let goOn = part.text.withUnsafeBufferPointer { visit(part.number, $0) }
                if !goOn { return }
            }
        }
        print(hit)
        return hit.selected
    }

}

/// Searches one document at a time into a ``GrepHit``; one per thread: glibc serialises the `regexec` calls on
/// one compiled pattern.
public final class GrepSearcher {
    public let options: GrepOptions
    private let matcher: GrepMatcher
    /// The current document's output, as bytes: no String per printed line (docs/search.md, "grep").
    private var output: [UInt8] = []
    /// Whether the current document printed a line, so its next group not adjacent to it starts with `--`.
    private var printedLine = false
    /// The current document's coloured label, made on its first printed line.
    private var labelBytes: [UInt8]?

    public init(pattern: String, options: GrepOptions) throws(GrepError) {
        self.options = options
        matcher = try GrepMatcher(pattern: pattern, options: options)
    }

    /// Searches one document whose parts `parts` hands to its `visit` closure one by one, in order, each valid
    /// only during that call (the store's row, not a copy); `visit` returns false once the document is settled.
    public func search<Failure: Error>(
        label: String, partKind: TextPartKind?,
        parts: (_ visit: (_ number: Int?, _ text: UnsafeBufferPointer<UInt8>) -> Bool) throws(Failure) -> Void
    ) throws(Failure) -> GrepHit {
        var selected = 0
        // Only lines and counts need every page; for the rest one selected line settles the document.
        let firstSettles = options.output != .lines && options.output != .count
        try parts { number, text in
            selected += searchPart(text, label: label, partKind: partKind, number: number)
            return !(selected > 0 && firstSettles)
        }
        return finish(label, selected: selected)
    }

    /// A document the index shows has no line that matches (without `-v`): only `-c` and `-L` print it.
    public func unmatched(label: String) -> GrepHit {
        finish(label, selected: 0)
    }

    private func finish(_ label: String, selected: Int) -> GrepHit {
        switch options.output {
        case .count:
            append(
                options.withFileName
                    ? colored(label, .fileName) + colored(":", .separator) + "\(selected)\n" : "\(selected)\n")
        case .filesWithMatches where selected > 0, .filesWithoutMatch where selected == 0:
            append(colored(label, .fileName) + "\n")
        default:
            break
        }
        defer {
            output = []
            printedLine = false
            labelBytes = nil
        }
        return GrepHit(output: output, selected: selected, printedLine: printedLine)
    }

    private func append(_ text: String) {
        output.append(contentsOf: text.utf8)
    }

    private func partLabel(_ kind: TextPartKind?, _ number: Int?) -> String? {
        guard let kind, let number else { return nil }
        return "\(kind.rawValue) \(number)"
    }

    /// The lines of one page or part: selection, context and output.
    private func searchPart(_ text: UnsafeBufferPointer<UInt8>, label: String, partKind: TextPartKind?, number: Int?)
        -> Int
    {
        // Most pages of a scan have no match: settled before any splitting into lines, or a label for them
        // (`page 3` for each of `large`'s 18,060 pages was 0.6 ms of a scan, docs/search.md).
        if !options.invertMatch && matcher.nextMatchingLine(in: text, from: 0) == nil { return 0 }
        let part = partLabel(partKind, number)
        var lines: [Range<Int>] = []
        var start = 0
        while start < text.count, let base = text.baseAddress,
            let newline = memchr(base + start, Int32(UInt8(ascii: "\n")), text.count - start)
        {
            let index = base.distance(to: newline.assumingMemoryBound(to: UInt8.self))
            lines.append(start..<index)
            start = index + 1
        }
        // As in a file: text after the last newline is a line, an empty one after it is not.
        if start < text.count { lines.append(start..<text.count) }
        let printsLines = options.output == .lines
        let before = options.before ?? 0
        let after = options.after ?? 0
        var selected = 0
        var lastPrinted: Int?
        var afterLeft = 0
        let matching = matcher.matchingLines(in: text, lines: lines)
        for (index, range) in lines.enumerated() {
            let line = UnsafeBufferPointer(rebasing: text[range])
            guard matching[index] != options.invertMatch else {
                if printsLines, afterLeft > 0 {
                    printLine(line, number: index + 1, label: label, part: part, selected: false)
                    lastPrinted = index
                    afterLeft -= 1
                }
                continue
            }
            selected += 1
            guard printsLines else {
                if options.output != .count { return selected }
                continue
            }
            let first = max(lastPrinted.map { $0 + 1 } ?? 0, index - before)
            if printedLine, options.before != nil || options.after != nil, lastPrinted.map({ $0 + 1 }) != first {
                append(colored("--", .separator) + "\n")
            }
            for contextIndex in first..<index {
                let context = lines[contextIndex]
                printLine(
                    UnsafeBufferPointer(rebasing: text[context]), number: contextIndex + 1, label: label, part: part,
                    selected: false)
            }
            printLine(line, number: index + 1, label: label, part: part, selected: true)
            lastPrinted = index
            afterLeft = after
        }
        return selected
    }

    private func printLine(
        _ line: UnsafeBufferPointer<UInt8>, number: Int, label: String, part: String?, selected: Bool
    ) {
        printedLine = true
        let separator = colored(selected ? ":" : "-", .separator)
        if options.withFileName {
            let labelBytes = labelBytes ?? Array(colored(label, .fileName).utf8)
            self.labelBytes = labelBytes
            output.append(contentsOf: labelBytes)
            append(separator)
        }
        if let part { append(colored(part, .lineNumber) + separator) }
        if options.lineNumbers { append(colored(String(number), .lineNumber) + separator) }
        var position = 0
        if options.color {
            for match in matcher.allMatches(in: line) {
                output.append(contentsOf: UnsafeBufferPointer(rebasing: line[position..<match.lowerBound]))
                append(colored(String(decoding: UnsafeBufferPointer(rebasing: line[match]), as: UTF8.self), .match))
                position = match.upperBound
            }
        }
        output.append(contentsOf: UnsafeBufferPointer(rebasing: line[position...]))
        output.append(UInt8(ascii: "\n"))
    }

    /// GNU grep's default `GREP_COLORS`: `fn=35`, `ln=32`, `se=36`, `ms=01;31`.
    enum Color: String {
        case fileName = "35"
        case lineNumber = "32"
        case separator = "36"
        case match = "01;31"
    }

    func colored(_ text: String, _ color: Color) -> String {
        options.color ? "\u{1B}[\(color.rawValue)m\u{1B}[K\(text)\u{1B}[m\u{1B}[K" : text
    }
}
