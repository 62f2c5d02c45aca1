import Foundation
import HTMLText

/// The tags and text of an HTML fragment, as a browser would see them for what announcements use.
///
/// A tolerant scanner, not a parser: Stud.IP's WYSIWYG editor writes well-formed HTML, but old news, pasted
/// Word markup and hand-written bodies are not, and any bytes must scan without a crash in time linear in their
/// length. Comments (the `<!--HTML-->` marker among them), doctypes and processing instructions are skipped;
/// scripts, styles and the like are dropped with their content.
struct HTMLTokenizer {
    enum Token: Equatable {
        case text(String)
        /// A start tag: its name lowercased, attributes with names lowercased and values entity-decoded.
        case open(String, [String: String])
        case close(String)
    }

    /// Elements whose content is not text to show.
    static let dropped: Set<String> = ["script", "style", "noscript", "template", "head", "title", "textarea"]

    private var lexer: HTMLLexer

    init(_ bytes: [UInt8]) {
        lexer = HTMLLexer(bytes)
    }

    mutating func next() -> Token? {
        let bytes = lexer.bytes
        while lexer.position < bytes.count {
            let position = lexer.position
            guard bytes[position] == UInt8(ascii: "<") else { return .text(readText()) }
            let following = position + 1 < bytes.count ? bytes[position + 1] : 0
            if HTMLLexer.isLetter(following) {
                lexer.position += 1
                let name = lexer.readName()
                let attributes = lexer.readAttributes()
                if Self.dropped.contains(name) {
                    skipElement(name)
                    continue
                }
                return .open(name, attributes)
            } else if following == UInt8(ascii: "/") {
                lexer.position += 2
                guard lexer.position < bytes.count, HTMLLexer.isLetter(bytes[lexer.position]) else {
                    lexer.skipPast(UInt8(ascii: ">"))  // `</ …>` without a name: a bogus comment, as browsers read it
                    continue
                }
                let name = lexer.readName()
                lexer.skipPast(UInt8(ascii: ">"))
                return .close(name)
            } else if lexer.skipComment() {
                continue
            } else if following == UInt8(ascii: "!") || following == UInt8(ascii: "?") {
                lexer.skipPast(UInt8(ascii: ">"))
            } else {
                // A `<` that starts no tag is text.
                lexer.position += 1
                return .text("<" + readText())
            }
        }
        return nil
    }

    private mutating func readText() -> String {
        let start = lexer.position
        let end = lexer.bytes[start...].firstIndex(of: UInt8(ascii: "<")) ?? lexer.bytes.count
        lexer.position = end
        return HTMLEntities.decode(String(decoding: lexer.bytes[start..<end], as: UTF8.self))
    }

    /// Past the closing tag of a dropped element, or to the end when it has none.
    private mutating func skipElement(_ name: String) {
        guard let end = lexer.find("</" + name, from: lexer.position) else {
            lexer.position = lexer.bytes.count
            return
        }
        lexer.position = end
        lexer.skipPast(UInt8(ascii: ">"))
    }
}
