import Foundation
import StudIPModel

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

    private let bytes: [UInt8]
    private var position = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    mutating func next() -> Token? {
        while position < bytes.count {
            guard bytes[position] == UInt8(ascii: "<") else { return .text(readText()) }
            let following = position + 1 < bytes.count ? bytes[position + 1] : 0
            if Self.isLetter(following) {
                position += 1
                let name = readName()
                let attributes = readAttributes()
                if Self.dropped.contains(name) {
                    skipElement(name)
                    continue
                }
                return .open(name, attributes)
            } else if following == UInt8(ascii: "/") {
                position += 2
                guard position < bytes.count, Self.isLetter(bytes[position]) else {
                    skipPast(UInt8(ascii: ">"))  // `</ …>` without a name: a bogus comment, as browsers read it
                    continue
                }
                let name = readName()
                skipPast(UInt8(ascii: ">"))
                return .close(name)
            } else if starts(with: "<!--") {
                position = find("-->", from: position + 4).map { $0 + 3 } ?? bytes.count
            } else if following == UInt8(ascii: "!") || following == UInt8(ascii: "?") {
                skipPast(UInt8(ascii: ">"))
            } else {
                // A `<` that starts no tag is text.
                position += 1
                return .text("<" + readText())
            }
        }
        return nil
    }

    private mutating func readText() -> String {
        let start = position
        while position < bytes.count, bytes[position] != UInt8(ascii: "<") { position += 1 }
        return HTMLEntities.decode(String(decoding: bytes[start..<position], as: UTF8.self))
    }

    private mutating func readName() -> String {
        let start = position
        while position < bytes.count, Self.isNameByte(bytes[position]) { position += 1 }
        return String(decoding: bytes[start..<position], as: UTF8.self).lowercased()
    }

    /// Attributes up to the tag's `>`; the first of a repeated name wins.
    private mutating func readAttributes() -> [String: String] {
        var attributes: [String: String] = [:]
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: ">") {
                position += 1
                return attributes
            }
            if Self.isSpace(byte) || byte == UInt8(ascii: "/") {
                position += 1
                continue
            }
            let start = position
            while position < bytes.count, !Self.isSpace(bytes[position]),
                ![UInt8(ascii: ">"), UInt8(ascii: "="), UInt8(ascii: "/")].contains(bytes[position])
            {
                position += 1
            }
            if position == start { position += 1 }  // a stray `=`: step over it
            let name = String(decoding: bytes[start..<position], as: UTF8.self).lowercased()
            skipSpaces()
            var value = ""
            if position < bytes.count, bytes[position] == UInt8(ascii: "=") {
                position += 1
                skipSpaces()
                value = HTMLEntities.decode(readValue())
            }
            if !name.isEmpty, attributes[name] == nil { attributes[name] = value }
        }
        return attributes
    }

    private mutating func readValue() -> String {
        guard position < bytes.count else { return "" }
        let quote = bytes[position]
        if quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'") {
            let start = position + 1
            let end = bytes[start...].firstIndex(of: quote) ?? bytes.count
            position = min(end + 1, bytes.count)
            return String(decoding: bytes[start..<end], as: UTF8.self)
        }
        let start = position
        while position < bytes.count, !Self.isSpace(bytes[position]), bytes[position] != UInt8(ascii: ">") {
            position += 1
        }
        return String(decoding: bytes[start..<position], as: UTF8.self)
    }

    /// Past the closing tag of a dropped element, or to the end when it has none.
    private mutating func skipElement(_ name: String) {
        guard let end = find("</" + name, from: position) else {
            position = bytes.count
            return
        }
        position = end
        skipPast(UInt8(ascii: ">"))
    }

    private mutating func skipSpaces() {
        while position < bytes.count, Self.isSpace(bytes[position]) { position += 1 }
    }

    private mutating func skipPast(_ byte: UInt8) {
        position = (bytes[min(position, bytes.count)...].firstIndex(of: byte) ?? bytes.count - 1) + 1
    }

    private func starts(with text: String) -> Bool {
        find(text, from: position) == position
    }

    /// The first index of `text` (ASCII letters in any case) at or after `start`; linear for the short patterns
    /// used here.
    private func find(_ text: String, from start: Int) -> Int? {
        let pattern = Array(text.utf8)
        guard let first = pattern.first, start >= 0, bytes.count - start >= pattern.count else { return nil }
        var index = start
        while index <= bytes.count - pattern.count {
            if Self.lower(bytes[index]) == first,
                pattern.indices.allSatisfy({ Self.lower(bytes[index + $0]) == pattern[$0] })
            {
                return index
            }
            index += 1
        }
        return nil
    }

    private static func lower(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lower(byte))
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ":")
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0C || byte == 0x0D
    }
}
