import Foundation

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
        return HTMLEntityTable.decode(String(decoding: bytes[start..<position], as: UTF8.self))
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
                value = HTMLEntityTable.decode(readValue())
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

/// HTML character references: numeric ones and the named ones German and English announcements use.
///
/// Not StudIPWire's `HTMLEntities` (the login pages' few): that module is the client's wire format, which
/// modules outside the client do not import (docs/fuzzing.md), and announcements need typographic quotes,
/// the euro sign and more.
enum HTMLEntityTable {
    static let named: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{00A0}", "shy": "",
        "auml": "ä", "ouml": "ö", "uuml": "ü", "Auml": "Ä", "Ouml": "Ö", "Uuml": "Ü", "szlig": "ß",
        "eacute": "é", "egrave": "è", "ecirc": "ê", "Eacute": "É", "aacute": "á", "agrave": "à", "acirc": "â",
        "ccedil": "ç", "iacute": "í", "oacute": "ó", "uacute": "ú", "ntilde": "ñ", "oslash": "ø", "aring": "å",
        "ndash": "–", "mdash": "—", "hellip": "…", "bdquo": "„", "ldquo": "“", "rdquo": "”", "sbquo": "‚",
        "lsquo": "‘", "rsquo": "’", "laquo": "«", "raquo": "»", "lsaquo": "‹", "rsaquo": "›", "bull": "•",
        "middot": "·", "euro": "€", "copy": "©", "reg": "®", "trade": "™", "deg": "°", "sect": "§", "para": "¶",
        "times": "×", "divide": "÷", "plusmn": "±", "frac12": "½", "frac14": "¼", "frac34": "¾", "sup2": "²",
        "sup3": "³", "micro": "µ", "rarr": "→", "larr": "←", "harr": "↔", "rArr": "⇒", "ensp": "\u{2002}",
        "emsp": "\u{2003}", "thinsp": "\u{2009}", "zwnj": "", "zwj": "",
    ]

    /// `text` with its references replaced; an unknown or malformed one stays as it is.
    static func decode(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var result = ""
        var rest = Substring(text)
        while let ampersand = rest.firstIndex(of: "&") {
            result += rest[..<ampersand]
            let afterAmpersand = rest.index(after: ampersand)
            let candidate = rest[afterAmpersand...].prefix(33)
            if let semicolon = candidate.firstIndex(of: ";"), let decoded = reference(rest[afterAmpersand..<semicolon])
            {
                result += decoded
                rest = rest[rest.index(after: semicolon)...]
            } else {
                result += "&"
                rest = rest[afterAmpersand...]
            }
        }
        return result + rest
    }

    private static func reference(_ body: Substring) -> String? {
        if body.hasPrefix("#") {
            let digits = body.dropFirst()
            let number =
                digits.first == "x" || digits.first == "X"
                ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
            guard let number, number != 0, let scalar = Unicode.Scalar(number) else { return nil }
            return String(Character(scalar))
        }
        return named[String(body)]
    }
}
