/// Reads JSON (RFC 8259) straight from a response's bytes into ``JSONValue``.
///
/// Why not `JSONSerialization`: it builds Foundation objects (`Any`, `NSNumber`) that then have to be converted,
/// and parsing plus conversion were over a third of the daemon's CPU during a cold refresh
/// (docs/performance.md). Reading into the enum directly does one pass and one allocation per value.
///
/// Lenient where servers are sloppy and a client loses nothing by accepting: a UTF-8 byte order mark, invalid
/// UTF-8 and lone surrogates in strings (replaced by U+FFFD). Strict where a wrong answer would follow:
/// anything that is not JSON, trailing garbage, and nesting deeper than ``maximumDepth`` (a hostile body must
/// not exhaust the stack).
package struct JSONReader: ~Copyable {
    package struct SyntaxError: Error {
        package let offset: Int
        package let reason: String
    }

    package static let maximumDepth = 512

    private let bytes: UnsafeBufferPointer<UInt8>
    private let shape: JSONShape
    private var position = 0
    private var depth = 0
    /// The members and elements of the containers still open, innermost last: each container is copied out
    /// once, at its closing bracket, into an array of its exact size instead of growing its own.
    private var openMembers: [(key: String, value: JSONValue)] = []
    private var openElements: [JSONValue] = []

    /// Parses one complete document; `bytes` must stay valid for the call only.
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(SyntaxError) -> JSONValue {
        try parse(bytes, shape: .everything)
    }

    /// ``parse(_:)`` building only the parts `shape` names; the rest is read just as strictly (the same errors at
    /// the same offsets) and dropped.
    package static func parse(
        _ bytes: UnsafeBufferPointer<UInt8>, shape: JSONShape
    ) throws(SyntaxError) -> JSONValue {
        var reader = JSONReader(bytes: bytes, shape: shape)
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { reader.position = 3 }
        let value = try reader.value(JSONShape.root)
        reader.skipWhitespace()
        guard reader.position == bytes.count else { throw reader.error("unexpected data after the value") }
        return value
    }

    private init(bytes: UnsafeBufferPointer<UInt8>, shape: JSONShape) {
        self.bytes = bytes
        self.shape = shape
    }

    // MARK: - Values

    /// The value at `position`, built as the shape's node `node` says; ``JSONShape/skipped`` builds nothing and
    /// returns `.null`.
    private mutating func value(_ node: Int) throws(SyntaxError) -> JSONValue {
        skipWhitespace()
        guard let byte = peek() else { throw error("unexpected end of data") }
        let built = node != JSONShape.skipped
        switch byte {
        case UInt8(ascii: "{"): return try object(shape.objectNode(node))
        case UInt8(ascii: "["): return try array(shape.arrayNode(node))
        case UInt8(ascii: "\""):
            guard built else {
                try skipString()
                return .null
            }
            return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", built ? .bool(true) : .null)
        case UInt8(ascii: "f"): return try literal("false", built ? .bool(false) : .null)
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            let number = try number()
            return built ? .number(number) : .null
        default: throw error("unexpected character")
        }
    }

    private mutating func object(_ node: Int) throws(SyntaxError) -> JSONValue {
        try enter()
        let built = node != JSONShape.skipped
        skipWhitespace()
        if consume(UInt8(ascii: "}")) {
            depth -= 1
            return built ? .object(JSONObject(pairs: [])) : .null
        }
        let first = openMembers.count
        repeat {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw error("expected a member name") }
            var key = ""
            var memberNode = JSONShape.skipped
            if built {
                key = try string()
                memberNode = shape.member(key, of: node)
            } else {
                try skipString()
            }
            skipWhitespace()
            guard consume(UInt8(ascii: ":")) else { throw error("expected ':' after a member name") }
            let member = try value(memberNode)
            if memberNode != JSONShape.skipped { openMembers.append((key, member)) }
            skipWhitespace()
        } while consume(UInt8(ascii: ","))
        guard consume(UInt8(ascii: "}")) else { throw error("expected ',' or '}' in an object") }
        depth -= 1
        guard built else { return .null }
        let object = JSONObject(pairs: Array(openMembers[first...]))
        openMembers.removeSubrange(first...)
        return .object(object)
    }

    private mutating func array(_ node: Int) throws(SyntaxError) -> JSONValue {
        try enter()
        let built = node != JSONShape.skipped
        skipWhitespace()
        if consume(UInt8(ascii: "]")) {
            depth -= 1
            return built ? .array([]) : .null
        }
        let first = openElements.count
        let elementNode = shape.element(of: node)
        repeat {
            let element = try value(elementNode)
            if built { openElements.append(element) }
            skipWhitespace()
        } while consume(UInt8(ascii: ","))
        guard consume(UInt8(ascii: "]")) else { throw error("expected ',' or ']' in an array") }
        depth -= 1
        guard built else { return .null }
        let elements = Array(openElements[first...])
        openElements.removeSubrange(first...)
        return .array(elements)
    }

    /// Consumes the opening bracket.
    private mutating func enter() throws(SyntaxError) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw error("nested deeper than \(Self.maximumDepth) levels") }
        position += 1
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) throws(SyntaxError) -> JSONValue {
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
        guard position + expected.count <= bytes.count,
            expected.elementsEqual(bytes[position..<position + expected.count])
        else { throw error("unexpected character") }
        position += expected.count
        return value
    }

    // MARK: - Numbers

    /// Checks the grammar (`-? int frac? exp?`), then converts: small integers exactly by hand, the rest with
    /// the standard library's correctly rounded parser.
    private mutating func number() throws(SyntaxError) -> Double {
        let start = position
        _ = consume(UInt8(ascii: "-"))
        guard let first = peek(), isDigit(first) else { throw error("expected a digit") }
        var integer: Int64 = 0
        var digits = 0
        if first == UInt8(ascii: "0") {
            position += 1
        } else {
            while let byte = peek(), isDigit(byte) {
                if digits < 18 { integer = integer * 10 + Int64(byte - UInt8(ascii: "0")) }
                digits += 1
                position += 1
            }
        }
        var isInteger = true
        if consume(UInt8(ascii: ".")) {
            isInteger = false
            try digitRun()
        }
        if consume(UInt8(ascii: "e")) || consume(UInt8(ascii: "E")) {
            isInteger = false
            if !consume(UInt8(ascii: "+")) { _ = consume(UInt8(ascii: "-")) }
            try digitRun()
        }
        let negative = bytes[start] == UInt8(ascii: "-")
        if isInteger && digits <= 15 { return negative ? -Double(integer) : Double(integer) }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
        guard let parsed = Double(text) else { throw error("unreadable number") }
        return parsed
    }

    private mutating func digitRun() throws(SyntaxError) {
        guard let byte = peek(), isDigit(byte) else { throw error("expected a digit") }
        while let byte = peek(), isDigit(byte) { position += 1 }
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    // MARK: - Strings

    /// A string starting at its opening quote. Runs without escapes are decoded in one piece.
    private mutating func string() throws(SyntaxError) -> String {
        position += 1
        let start = position
        skipPlainRun()
        guard position < bytes.count else { throw error("unterminated string") }
        switch bytes[position] {
        case UInt8(ascii: "\""):
            position += 1
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position - 1]), as: UTF8.self)
        case UInt8(ascii: "\\"):
            var scalars: [UInt8] = []
            scalars.reserveCapacity(2 * (position - start) + 16)
            scalars.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<position]))
            try escapedRemainder(into: &scalars, keeping: true)
            return String(decoding: scalars, as: UTF8.self)
        default:
            throw error("control character in a string")
        }
    }

    /// ``string()`` without building the string: the same checks, the same errors.
    private mutating func skipString() throws(SyntaxError) {
        position += 1
        skipPlainRun()
        guard position < bytes.count else { throw error("unterminated string") }
        switch bytes[position] {
        case UInt8(ascii: "\""):
            position += 1
        case UInt8(ascii: "\\"):
            var nothing: [UInt8] = []
            try escapedRemainder(into: &nothing, keeping: false)
        default:
            throw error("control character in a string")
        }
    }

    /// Advances over the bytes that stand for themselves in a string, to its next quote, backslash or control
    /// character: the loop every string spends its time in, so it indexes the bytes directly.
    private mutating func skipPlainRun() {
        var index = position
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            index += 1
        }
        position = index
    }

    /// Continues a string at its first backslash, appending UTF-8 to `output` unless not `keeping` it, through the
    /// closing quote.
    private mutating func escapedRemainder(into output: inout [UInt8], keeping: Bool) throws(SyntaxError) {
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return
            case UInt8(ascii: "\\"):
                guard let escaped = peek() else { throw error("unterminated string") }
                position += 1
                guard keeping else {
                    try checkEscape(escaped)
                    break
                }
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escaped)
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "u"): output.append(contentsOf: String(try unicodeEscape()).utf8)
                default: throw error("unknown escape sequence")
                }
            default:
                throw error("control character in a string")
            }
            let run = position
            skipPlainRun()
            if keeping { output.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<position])) }
        }
        throw error("unterminated string")
    }

    /// An escape's letter after its backslash, checked as ``escapedRemainder(into:keeping:)`` reads it.
    private mutating func checkEscape(_ escaped: UInt8) throws(SyntaxError) {
        switch escaped {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            return
        case UInt8(ascii: "u"): _ = try unicodeEscape()
        default: throw error("unknown escape sequence")
        }
    }

    /// `\uXXXX` after its `u`, joining a surrogate pair written as two escapes.
    private mutating func unicodeEscape() throws(SyntaxError) -> Character {
        let unit = try hexQuad()
        if (0xD800..<0xDC00).contains(unit), bytes[position...].starts(with: [UInt8(ascii: "\\"), UInt8(ascii: "u")]) {
            let resume = position
            position += 2
            let low = try hexQuad()
            if (0xDC00..<0xE000).contains(low) {
                let scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                return Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")
            }
            position = resume
        }
        return Character(Unicode.Scalar(UInt32(unit)) ?? "\u{FFFD}")
    }

    private mutating func hexQuad() throws(SyntaxError) -> UInt16 {
        guard position + 4 <= bytes.count else { throw error("unterminated \\u escape") }
        var value: UInt16 = 0
        for byte in bytes[position..<position + 4] {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("bad \\u escape")
            }
            value = value << 4 | UInt16(digit)
        }
        position += 4
        return value
    }

    // MARK: - Bytes

    private func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

    private mutating func consume(_ byte: UInt8) -> Bool {
        guard peek() == byte else { return false }
        position += 1
        return true
    }

    private mutating func skipWhitespace() {
        while let byte = peek(),
            byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r")
                || byte == UInt8(ascii: "\t")
        {
            position += 1
        }
    }

    private func error(_ reason: String) -> SyntaxError { SyntaxError(offset: position, reason: reason) }
}
