import Foundation

/// An announcement's HTML body as Markdown that also reads well as plain text (`cat`, `grep`).
///
/// Paragraphs and `<div>`s become blocks separated by blank lines, `<br>` a hard line break (two trailing
/// spaces), lists (nested, ordered ones numbered from `start`) `-`/`1.` items indented under their parent,
/// headings `##`… (one level below the announcement's own title), tables pipe tables padded to their columns,
/// `<pre>` fenced code, `<blockquote>` `>` lines, links `[text](url)` (`<url>` when the text is the address),
/// `<strong>`/`<b>` `**…**`, `<em>`/`<i>` `*…*`. Text is whitespace-collapsed, entities decoded (a no-break space
/// becomes a space), control characters dropped, and Markdown's metacharacters escaped where they would
/// otherwise mean something. Everything else (spans, fonts, unknown tags) keeps its text; scripts and styles are
/// dropped.
///
/// Total and bounded: any input converts without a crash, reading at most ``maxInputBytes`` of it, in time
/// linear in that (inline markup at most ``maxInlineDepth`` deep, lists ``maxListDepth``).
package enum HTMLMarkdown {
    /// Announcements are a few kilobytes; beyond a megabyte is not an announcement anyone reads whole.
    package static let maxInputBytes = 1 << 20
    package static let maxInlineDepth = 32
    package static let maxListDepth = 16
    package static let maxTableColumns = 32

    /// `html` as Markdown, ending in one newline, or empty when it has no text.
    package static func convert(_ html: String, headingOffset: Int = 1) -> String {
        var tokenizer = HTMLTokenizer(Array(html.utf8.prefix(maxInputBytes)))
        var writer = MarkdownWriter(headingOffset: headingOffset)
        while let token = tokenizer.next() { writer.handle(token) }
        return writer.finish()
    }

    /// Plain text (a title, a name) as one line of Markdown text: whitespace collapsed, controls dropped,
    /// metacharacters escaped.
    package static func inline(_ text: String) -> String {
        var writer = MarkdownWriter(headingOffset: 0)
        writer.appendText(text)
        return writer.currentLine
    }
}

/// Builds the Markdown: blocks go to `output` as they end; inline text collects in `inline` until then.
private struct MarkdownWriter {
    enum InlineKind: Equatable {
        case strong, emphasis, strike, code
        case link(String)
    }

    struct InlineFrame {
        var kind: InlineKind
        /// Where the element's text starts in `inline`.
        var start: Int
    }

    struct ListFrame {
        var ordered: Bool
        var next: Int
        /// The current item's marker (`- `, `12. `): its width indents the item's further lines.
        var marker = ""
        /// The item has started but none of its lines is written yet.
        var markerPending = false
    }

    struct Table {
        var rows: [[String]] = []
        var row: [String] = []
        var inCell = false
        /// Tables inside a cell: their structure is flattened into the cell's text.
        var nested = 0
    }

    enum BlockKind { case block, listItem }

    let headingOffset: Int
    var output = ""
    var lastBlock: BlockKind?
    var inline: [Unicode.Scalar] = []
    var frames: [InlineFrame] = []
    var lists: [ListFrame] = []
    /// Lists beyond ``HTMLMarkdown/maxListDepth``: their items continue the deepest list kept.
    var ignoredLists = 0
    var quoteDepth = 0
    var heading: Int?
    var preDepth = 0
    var table: Table?

    init(headingOffset: Int) {
        self.headingOffset = headingOffset
    }

    static let blockTags: Set<String> = [
        "p", "div", "section", "article", "header", "footer", "main", "nav", "aside", "center", "address",
        "figure", "figcaption", "dl", "dt", "dd", "details", "summary", "form", "fieldset", "caption", "body",
        "html",
    ]

    mutating func handle(_ token: HTMLTokenizer.Token) {
        switch token {
        case .text(let text): appendText(text)
        case .open(let name, let attributes): open(name, attributes)
        case .close(let name): close(name)
        }
    }

    // MARK: Tags

    private mutating func open(_ name: String, _ attributes: [String: String]) {
        if table != nil, handleInTable(open: name) { return }
        if preDepth > 0 {
            if name == "br" { inline.append("\n") }
            if name == "pre" { preDepth += 1 }
            return
        }
        switch name {
        case "br": lineBreak()
        case "hr":
            endBlock()
            emit(["---"], kind: .block)
        case "h1", "h2", "h3", "h4", "h5", "h6":
            endBlock()
            heading = min(max(Int(name.dropFirst()).map { $0 + headingOffset } ?? 1, 1), 6)
        case "ul", "ol":
            endBlock()
            guard lists.count < HTMLMarkdown.maxListDepth else {
                ignoredLists += 1
                return
            }
            let start = attributes["start"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 1
            lists.append(ListFrame(ordered: name == "ol", next: min(max(start, 0), 999_999_999)))
        case "li":
            endBlock()
            guard var list = lists.popLast() else { return }
            list.marker = list.ordered ? "\(list.next). " : "- "
            list.next = min(list.next + 1, 999_999_999)
            list.markerPending = true
            lists.append(list)
        case "blockquote":
            endBlock()
            quoteDepth += 1
        case "pre":
            endBlock()
            preDepth = 1
        case "table":
            endBlock()
            table = Table()
        case "strong", "b": openInline(.strong)
        case "em", "i", "cite", "dfn": openInline(.emphasis)
        case "s", "del", "strike": openInline(.strike)
        case "code", "kbd", "samp", "tt": openInline(.code)
        case "a":
            let href = (attributes["href"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            openInline(.link(href))
        case "img":
            let source = Self.destination(attributes["src"] ?? "")
            guard !source.isEmpty, frames.count < HTMLMarkdown.maxInlineDepth else { return }
            inline += "![".unicodeScalars + Self.escaped(attributes["alt"] ?? "") + "](\(source))".unicodeScalars
        default:
            if Self.blockTags.contains(name) { endBlock() }
        }
    }

    private mutating func close(_ name: String) {
        if table != nil, handleInTable(close: name) { return }
        if preDepth > 0 {
            guard name == "pre" else { return }
            preDepth -= 1
            if preDepth == 0 { endPre() }
            return
        }
        switch name {
        case "h1", "h2", "h3", "h4", "h5", "h6":
            endBlock()
            heading = nil
        case "ul", "ol":
            endBlock()
            if ignoredLists > 0 {
                ignoredLists -= 1
            } else if !lists.isEmpty {
                lists.removeLast()
                if lists.isEmpty { lastBlock = .block }
            }
        case "li": endBlock()
        case "blockquote":
            endBlock()
            quoteDepth = max(quoteDepth - 1, 0)
        case "strong", "b": closeInline { $0 == .strong }
        case "em", "i", "cite", "dfn": closeInline { $0 == .emphasis }
        case "s", "del", "strike": closeInline { $0 == .strike }
        case "code", "kbd", "samp", "tt": closeInline { $0 == .code }
        case "a":
            closeInline {
                if case .link = $0 { true } else { false }
            }
        default:
            if Self.blockTags.contains(name) { endBlock() }
        }
    }

    /// Table structure; true when the tag was the table's. Block tags inside a cell only separate words.
    private mutating func handleInTable(open name: String) -> Bool {
        guard var current = table else { return false }
        defer { table = current }
        switch name {
        case "table":
            current.nested += 1
            spaceInCell()
        case "tr" where current.nested == 0:
            finishCell(&current)
            finishRow(&current)
        case "td", "th":
            if current.nested == 0 {
                finishCell(&current)
                current.inCell = true
            } else {
                spaceInCell()
            }
        case "br", "p", "div", "li", "ul", "ol", "tr", "hr", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre":
            spaceInCell()
        default: return false
        }
        return true
    }

    private mutating func handleInTable(close name: String) -> Bool {
        guard var current = table else { return false }
        switch name {
        case "table":
            if current.nested > 0 {
                current.nested -= 1
                table = current
                spaceInCell()
            } else {
                finishCell(&current)
                finishRow(&current)
                table = nil
                emitTable(current.rows)
            }
        case "tr" where current.nested == 0:
            finishCell(&current)
            finishRow(&current)
            table = current
        case "td", "th":
            if current.nested == 0 { finishCell(&current) } else { spaceInCell() }
            table = current
        case "p", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "pre":
            spaceInCell()
        default: return false
        }
        return true
    }

    private mutating func spaceInCell() {
        if let last = inline.last, last != " " { inline.append(" ") }
    }

    private mutating func finishCell(_ current: inout Table) {
        closeAllInline()
        if current.inCell {
            let text = String(String.UnicodeScalarView(inline)).replacing("\n", with: " ")
            current.row.append(text.trimmingCharacters(in: .whitespaces).replacing("|", with: "\\|"))
        }
        current.inCell = false
        inline.removeAll()
    }

    private mutating func finishRow(_ current: inout Table) {
        if !current.row.isEmpty { current.rows.append(current.row) }
        current.row = []
    }

    // MARK: Text

    /// Text outside `<pre>`: whitespace collapsed to single spaces, controls dropped, metacharacters escaped.
    mutating func appendText(_ text: String) {
        if let current = table, !current.inCell { return }  // whitespace between rows and cells
        if preDepth > 0 {
            inline += text.unicodeScalars.filter { $0 == "\n" || $0 == "\t" || !Self.isControl($0) }
            return
        }
        let inCode = frames.contains { $0.kind == .code }
        let scalars = Array(text.unicodeScalars)
        for (index, scalar) in scalars.enumerated() {
            if Self.isSpace(scalar) {
                if let last = inline.last, last != " ", last != "\n" { inline.append(" ") }
                continue
            }
            if Self.isControl(scalar) { continue }
            if !inCode,
                Self.needsEscape(
                    scalar, before: index > 0 ? scalars[index - 1] : inline.last,
                    after: index + 1 < scalars.count ? scalars[index + 1] : nil)
            {
                inline.append("\\")
            }
            inline.append(scalar)
        }
    }

    /// The inline text so far, one line (for ``HTMLMarkdown/inline(_:)``).
    var currentLine: String {
        String(String.UnicodeScalarView(inline)).trimmingCharacters(in: .whitespaces)
    }

    private mutating func lineBreak() {
        if heading != nil {
            spaceInCell()
            return
        }
        while inline.last == " " { inline.removeLast() }
        // Two breaks in a row: a new paragraph, as it looks in the browser.
        if inline.last == "\n" { endBlock() } else if !inline.isEmpty { inline.append("\n") }
    }

    private static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case " ", "\t", "\n", "\r", "\u{0C}", "\u{00A0}", "\u{2002}", "\u{2003}", "\u{2009}": true
        default: false
        }
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar == "\u{FEFF}"
    }

    /// Characters that would start emphasis, code, links or HTML; `_` only at a word's edge (inside a word it is
    /// literal in CommonMark, and `snake_case` stays readable).
    private static func needsEscape(_ scalar: Unicode.Scalar, before: Unicode.Scalar?, after: Unicode.Scalar?) -> Bool {
        switch scalar {
        case "\\", "*", "`", "[", "]", "<": return true
        case "_":
            let alphanumeric = { (neighbour: Unicode.Scalar?) in
                neighbour.map { $0.properties.isAlphabetic || $0.properties.numericType != nil } ?? false
            }
            return !(alphanumeric(before) && alphanumeric(after))
        default: return false
        }
    }

    static func escaped(_ text: String) -> String.UnicodeScalarView {
        var writer = MarkdownWriter(headingOffset: 0)
        writer.appendText(text)
        return String.UnicodeScalarView(writer.inline)
    }

    // MARK: Inline markup

    private mutating func openInline(_ kind: InlineKind) {
        guard frames.count < HTMLMarkdown.maxInlineDepth else { return }
        frames.append(InlineFrame(kind: kind, start: inline.count))
    }

    /// Closes the innermost open element `matches` accepts and those opened inside it; a stray end tag is ignored.
    private mutating func closeInline(_ matches: (InlineKind) -> Bool) {
        guard let index = frames.lastIndex(where: { matches($0.kind) }) else { return }
        while frames.count > index { apply(frames.removeLast()) }
    }

    private mutating func closeAllInline() {
        while let frame = frames.popLast() { apply(frame) }
    }

    /// Wraps the element's text in its markup, spaces at its edges moved outside (`** a**` is no emphasis).
    private mutating func apply(_ frame: InlineFrame) {
        let start = min(frame.start, inline.count)
        var inner = Array(inline[start...])
        inline.removeSubrange(start...)
        let leading = inner.prefix { $0 == " " || $0 == "\n" }
        inner.removeFirst(leading.count)
        let trailing = inner.reversed().prefix { $0 == " " || $0 == "\n" }
        inner.removeLast(trailing.count)
        inline += leading
        let text = String(String.UnicodeScalarView(inner))
        switch frame.kind {
        case .strong: if !inner.isEmpty { inline += "**\(text)**".unicodeScalars }
        case .emphasis: if !inner.isEmpty { inline += "*\(text)*".unicodeScalars }
        case .strike: if !inner.isEmpty { inline += "~~\(text)~~".unicodeScalars }
        case .code:
            let fence = text.contains("`") ? "``" : "`"
            let padding = text.hasPrefix("`") || text.hasSuffix("`") ? " " : ""
            if !inner.isEmpty { inline += (fence + padding + text + padding + fence).unicodeScalars }
        case .link(let href):
            let destination = Self.destination(href)
            if destination.isEmpty {
                inline += inner
            } else if text.isEmpty || text.replacing("\\", with: "") == href {
                inline += "<\(destination)>".unicodeScalars
            } else {
                inline += "[\(text)](\(destination))".unicodeScalars
            }
        }
        inline += trailing.reversed()
    }

    /// A link target Markdown keeps whole: spaces, brackets and controls percent-encoded; script links dropped.
    static func destination(_ href: String) -> String {
        let trimmed = href.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.lowercased().hasPrefix("javascript:"), !trimmed.lowercased().hasPrefix("data:") else {
            return ""
        }
        var result = ""
        for scalar in trimmed.unicodeScalars {
            switch scalar {
            case " ", "(", ")", "<", ">", "\\", "`", "\u{7F}":
                result += String(format: "%%%02X", scalar.value)
            default:
                if scalar.value < 0x20 {
                    result += String(format: "%%%02X", scalar.value)
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result
    }

    // MARK: Blocks

    /// Writes the collected inline text as a paragraph, heading or list item line.
    private mutating func endBlock() {
        closeAllInline()
        let text = String(String.UnicodeScalarView(inline))
        inline.removeAll()
        var lines = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !lines.isEmpty else { return }
        if let heading {
            emit([String(repeating: "#", count: heading) + " " + lines.joined(separator: " ")], kind: .block)
            return
        }
        lines = lines.map(Self.escapingLineStart)
        for index in lines.indices.dropLast() { lines[index] += "  " }
        emit(lines, kind: lists.isEmpty ? .block : .listItem)
    }

    private mutating func endPre() {
        var text = String(String.UnicodeScalarView(inline))
        inline.removeAll()
        if text.hasPrefix("\n") { text.removeFirst() }
        while text.last == "\n" || text.last == " " || text.last == "\t" { text.removeLast() }
        guard !text.isEmpty else { return }
        var fence = "```"
        while text.contains(fence) { fence += "`" }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        emit([fence] + lines + [fence], kind: lists.isEmpty ? .block : .listItem)
    }

    private mutating func emitTable(_ rows: [[String]]) {
        guard !rows.isEmpty else { return }
        let columns = min(rows.map(\.count).max() ?? 1, HTMLMarkdown.maxTableColumns)
        var cells = rows.map { row in
            // Cells beyond the limit join the last column rather than vanish.
            row.count > columns
                ? Array(row.prefix(columns - 1)) + [row.dropFirst(columns - 1).joined(separator: " ")] : row
        }
        // The header row sets the columns; shorter rows stay short (GFM fills them), so that a row of one cell
        // under a wide header costs one cell, not the header's width.
        cells[0] += Array(repeating: "", count: columns - cells[0].count)
        let widths = (0..<columns).map { column in
            min(max(cells.map { column < $0.count ? $0[column].count : 0 }.max() ?? 0, 3), 40)
        }
        func line(_ row: [String]) -> String {
            let padded = zip(row, widths).map { cell, width in
                cell + String(repeating: " ", count: max(width - cell.count, 0))
            }
            return ("| " + padded.joined(separator: " | ") + " |")
        }
        let separator = "| " + widths.map { String(repeating: "-", count: $0) }.joined(separator: " | ") + " |"
        emit([line(cells[0]), separator] + cells.dropFirst().map(line), kind: lists.isEmpty ? .block : .listItem)
    }

    /// Appends lines as one block: list items' markers and indentation, quotes' `>`, a blank line between
    /// blocks but not between the items of a list.
    private mutating func emit(_ lines: [String], kind: BlockKind) {
        var indent = ""
        var firstPrefix = ""
        if var list = lists.popLast() {
            indent = lists.map { String(repeating: " ", count: max($0.marker.count, 2)) }.joined()
            let width = max(list.marker.count, 2)
            firstPrefix = indent + (list.markerPending ? list.marker : String(repeating: " ", count: width))
            indent += String(repeating: " ", count: width)
            list.markerPending = false
            lists.append(list)
        }
        let quote = String(repeating: "> ", count: min(quoteDepth, 8))
        if !output.isEmpty {
            output += kind == .listItem && lastBlock == .listItem ? "\n" : "\n\n"
        }
        output += lines.enumerated().map { index, line in
            (quote + (index == 0 ? firstPrefix : indent) + line).trimmingSuffix()
                + (line.hasSuffix("  ") ? "  " : "")
        }.joined(separator: "\n")
        lastBlock = kind
    }

    /// A line's start that Markdown would read as a heading, quote, list item or rule, escaped.
    private static func escapingLineStart(_ line: String) -> String {
        guard let first = line.first else { return line }
        let rest = line.dropFirst()
        switch first {
        case "#", ">": return "\\" + line
        case "-", "+", "=":
            if rest.isEmpty || rest.first == " " || line.allSatisfy({ $0 == first || $0 == " " }) { return "\\" + line }
        case "0"..."9":
            let digits = line.prefix { $0.isASCII && $0.isNumber }
            let after = line.dropFirst(digits.count)
            if digits.count <= 9, let mark = after.first, mark == "." || mark == ")",
                after.dropFirst().first.map({ $0 == " " }) ?? true
            {
                return digits + "\\" + after
            }
        default: break
        }
        return line
    }

    mutating func finish() -> String {
        if preDepth > 0 {
            preDepth = 0
            endPre()
        }
        if var current = table {
            finishCell(&current)
            finishRow(&current)
            table = nil
            emitTable(current.rows)
        }
        endBlock()
        return output.isEmpty ? "" : output + "\n"
    }
}

extension String {
    fileprivate func trimmingSuffix() -> String {
        var result = self
        while result.last == " " { result.removeLast() }
        return result
    }
}
