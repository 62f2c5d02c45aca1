import Foundation

/// A JSON document with ordered object keys.
///
/// Stud.IP emits keys in a fixed order (PHP arrays are ordered) and clients in the wild depend on shapes, so
/// the simulator builds responses as values of this type rather than through `Codable`, whose key order is
/// unspecified. ``encoded(escapingSlashes:)`` reproduces PHP's `json_encode` with default flags: `\/` and
/// `\uXXXX` for non-ASCII, as real servers send it.
public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int)
    case string(String)
    case array([JSON])
    case object([(String, JSON)])

    public static func == (lhs: JSON, rhs: JSON) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.int(let a), .int(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(encoded())
    }

    /// The value for `key` when this is an object.
    public subscript(key: String) -> JSON? {
        guard case .object(let pairs) = self else { return nil }
        return pairs.first { $0.0 == key }?.1
    }

    /// `.string` or `.null` for an optional.
    public static func optional(_ value: String?) -> JSON {
        value.map(JSON.string) ?? .null
    }

    /// Parses JSON text, keeping key order (used for `data_content` columns and request bodies).
    public static func parse(_ text: String) -> JSON? {
        var parser = Parser(bytes: Array(text.utf8))
        guard let value = try? parser.value(), parser.atEnd else { return nil }
        return value
    }

    public func encoded(escapingSlashes: Bool = true) -> String {
        var out = ""
        write(into: &out, escapingSlashes: escapingSlashes)
        return out
    }

    private func write(into out: inout String, escapingSlashes: Bool) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .int(let value): out += String(value)
        case .string(let value): Self.writeString(value, into: &out, escapingSlashes: escapingSlashes)
        case .array(let items):
            out += "["
            for (index, item) in items.enumerated() {
                if index > 0 { out += "," }
                item.write(into: &out, escapingSlashes: escapingSlashes)
            }
            out += "]"
        case .object(let pairs):
            out += "{"
            for (index, (key, value)) in pairs.enumerated() {
                if index > 0 { out += "," }
                Self.writeString(key, into: &out, escapingSlashes: escapingSlashes)
                out += ":"
                value.write(into: &out, escapingSlashes: escapingSlashes)
            }
            out += "}"
        }
    }

    private static func writeString(_ value: String, into out: inout String, escapingSlashes: Bool) {
        out += "\""
        for unit in value.utf16 {
            switch unit {
            case 0x22: out += "\\\""
            case 0x5C: out += "\\\\"
            case 0x2F: out += escapingSlashes ? "\\/" : "/"
            case 0x08: out += "\\b"
            case 0x0C: out += "\\f"
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default:
                let hex = String(unit, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        out += "\""
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) { self = .object(elements) }
    public init(nilLiteral: ()) { self = .null }
}

/// A small recursive-descent parser that keeps object key order. Numbers with a fraction are kept as text.
private struct Parser {
    let bytes: [UInt8]
    var index = 0

    struct Failure: Error {}

    var atEnd: Bool {
        mutating get {
            skipWhitespace()
            return index == bytes.count
        }
    }

    mutating func value() throws -> JSON {
        skipWhitespace()
        guard index < bytes.count else { throw Failure() }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"):
            try literal("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        default: return try number()
        }
    }

    mutating func skipWhitespace() {
        while index < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[index]) { index += 1 }
    }

    mutating func literal(_ word: String) throws {
        let expected = Array(word.utf8)
        guard bytes.count - index >= expected.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw Failure()
        }
        index += expected.count
    }

    mutating func number() throws -> JSON {
        let start = index
        while index < bytes.count, "+-0123456789.eE".utf8.contains(bytes[index]) { index += 1 }
        guard let text = String(bytes: bytes[start..<index], encoding: .utf8), !text.isEmpty else { throw Failure() }
        if let int = Int(text) { return .int(int) }
        guard Double(text) != nil else { throw Failure() }
        return .string(text)
    }

    mutating func object() throws -> JSON {
        index += 1
        var pairs: [(String, JSON)] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(pairs)
        }
        while true {
            skipWhitespace()
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw Failure() }
            index += 1
            pairs.append((key, try value()))
            skipWhitespace()
            guard index < bytes.count else { throw Failure() }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(pairs)
            } else {
                throw Failure()
            }
        }
    }

    mutating func array() throws -> JSON {
        index += 1
        var items: [JSON] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            items.append(try value())
            skipWhitespace()
            guard index < bytes.count else { throw Failure() }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            } else {
                throw Failure()
            }
        }
    }

    mutating func string() throws -> String {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Failure() }
        index += 1
        var units: [UInt16] = []
        var raw: [UInt8] = []
        func flushRaw() {
            units.append(contentsOf: String(decoding: raw, as: UTF8.self).utf16)
            raw.removeAll()
        }
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                flushRaw()
                return String(decoding: units, as: UTF16.self)
            case UInt8(ascii: "\\"):
                flushRaw()
                guard index < bytes.count else { throw Failure() }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "n"): units.append(0x0A)
                case UInt8(ascii: "t"): units.append(0x09)
                case UInt8(ascii: "r"): units.append(0x0D)
                case UInt8(ascii: "b"): units.append(0x08)
                case UInt8(ascii: "f"): units.append(0x0C)
                case UInt8(ascii: "u"):
                    guard bytes.count - index >= 4,
                        let text = String(bytes: bytes[index..<index + 4], encoding: .ascii),
                        let unit = UInt16(text, radix: 16)
                    else { throw Failure() }
                    units.append(unit)
                    index += 4
                default: units.append(UInt16(escape))
                }
            default:
                raw.append(byte)
            }
        }
        throw Failure()
    }
}
