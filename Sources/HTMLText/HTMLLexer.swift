/// A cursor over an HTML document's bytes with the lexing both of CampusFS's HTML scanners need — the client's
/// login-page scanner (StudIPWire) and the announcement renderer (CourseFiles): names, attributes, comments and
/// searches. Tolerant of any bytes (a `<` that starts nothing, an attribute without a value, no closing quote) and
/// linear in their length; a scanner decides what the tags mean.
public struct HTMLLexer {
    public let bytes: [UInt8]
    public var position = 0
    /// Checked at every `<` of a page: not made from a string each time.
    private static let commentOpener = Array("<!--".utf8)

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// A tag or attribute name (letters, digits, `-`, `_`, `:`) lowercased; empty when none starts here.
    public mutating func readName() -> String {
        let start = position
        while position < bytes.count, Self.isNameByte(bytes[position]) { position += 1 }
        return String(decoding: bytes[start..<position], as: UTF8.self).lowercased()
    }

    /// Attributes up to the tag's `>`; names lowercased, values entity-decoded, the first of a repeated name wins.
    public mutating func readAttributes() -> [String: String] {
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

    /// Past the next `byte`, or to the end when there is none.
    public mutating func skipPast(_ byte: UInt8) {
        position = (bytes[min(position, bytes.count)...].firstIndex(of: byte) ?? bytes.count - 1) + 1
    }

    /// Past a comment that starts here (`<!--`), to the end when it is not closed; false when none starts here.
    public mutating func skipComment() -> Bool {
        guard matches(Self.commentOpener, at: position) else { return false }
        position = find("-->", from: position + 4).map { $0 + 3 } ?? bytes.count
        return true
    }

    /// The first index of `text` (ASCII letters in any case) at or after `start`; linear for the short patterns
    /// scanners look for (`-->`, `</script`).
    public func find(_ text: String, from start: Int) -> Int? {
        let pattern = Array(text.utf8)
        guard let first = pattern.first, start >= 0, bytes.count - start >= pattern.count else { return nil }
        var index = start
        while index <= bytes.count - pattern.count {
            if Self.lower(bytes[index]) == Self.lower(first), matches(pattern, at: index) { return index }
            index += 1
        }
        return nil
    }

    /// Whether `pattern` (ASCII letters in any case) starts at `index`: a compare in place, never a search, so that
    /// a page of many `<` stays linear.
    private func matches(_ pattern: [UInt8], at index: Int) -> Bool {
        index >= 0 && bytes.count - index >= pattern.count
            && pattern.indices.allSatisfy { Self.lower(bytes[index + $0]) == Self.lower(pattern[$0]) }
    }

    public static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lower(byte))
    }

    public static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0C || byte == 0x0D
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

    private mutating func skipSpaces() {
        while position < bytes.count, Self.isSpace(bytes[position]) { position += 1 }
    }

    private static func lower(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 32 : byte
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        isLetter(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":")
    }
}
