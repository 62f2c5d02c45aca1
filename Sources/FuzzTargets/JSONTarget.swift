import Foundation
import StudIPWire

/// ``JSONReader`` never crashes, and accepts exactly what `JSONSerialization` accepts, except where the reader
/// is lenient by design (its doc comment) or Foundation differs from RFC 8259:
/// - invalid UTF-8 (the reader substitutes U+FFFD; Foundation rejects),
/// - a lone surrogate escape such as `"\uD800"` (the reader substitutes U+FFFD),
/// - a NUL among the first four bytes or a UTF-16/32 byte order mark: Foundation guesses UTF-16 or UTF-32
///   from them, the reader reads UTF-8 only (as Stud.IP sends),
/// - numbers beyond `Double`'s range (the reader reads ±infinity),
/// - more than ``JSONReader/maximumDepth`` brackets (each has its own depth limit),
/// - a trailing comma (`[1,]`, `{"a": 1,}`), which Foundation on Linux accepts (found by this target).
/// Top-level scalars are compared with `.fragmentsAllowed`, as the reader accepts them.
enum JSONTarget {
    /// Larger inputs are only read, not compared: `JSONSerialization` is slow, and size finds no new branches.
    static let comparedBytes = 64 << 10

    static func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        let parsed = Result { () throws(JSONReader.SyntaxError) in try JSONReader.parse(bytes) }
        guard bytes.count <= comparedBytes, isComparable(bytes) else { return }
        let reference =
            (try? JSONSerialization.jsonObject(with: Data(buffer: bytes), options: .fragmentsAllowed)) != nil
        switch parsed {
        case .success(let value):
            if !reference && (hasLoneSurrogateEscape(bytes) || !allFinite(value)) { return }
            precondition(reference, "JSONReader accepts what JSONSerialization rejects")
        case .failure(let error):
            if reference, (try? withoutTrailingCommas(bytes).withUnsafeBufferPointer(JSONReader.parse)) != nil {
                return
            }
            precondition(!reference, "JSONReader rejects what JSONSerialization accepts: \(error)")
        }
    }

    private static func isComparable(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard String(validating: bytes, as: UTF8.self) != nil, !bytes.prefix(4).contains(0) else { return false }
        let brackets = bytes.count { $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "{") }
        return brackets < JSONReader.maximumDepth
    }

    /// `\uD800`–`\uDFFF`, paired or not: pairs read the same in both, so this only excuses lone ones.
    private static func hasLoneSurrogateEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.indices.dropLast(3).contains { index in
            bytes[index] == UInt8(ascii: "\\") && bytes[index + 1] == UInt8(ascii: "u")
                && (bytes[index + 2] | 0x20) == UInt8(ascii: "d") && (bytes[index + 3] | 0x20) >= UInt8(ascii: "8")
        }
    }

    /// The input without commas that only whitespace separates from a closing bracket, outside strings.
    private static func withoutTrailingCommas(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8] {
        var output: [UInt8] = []
        var inString = false
        var escaped = false
        var pendingComma: Int?
        for byte in bytes {
            if inString {
                inString = escaped || byte != UInt8(ascii: "\"")
                escaped = !escaped && byte == UInt8(ascii: "\\")
            } else if byte == UInt8(ascii: "]") || byte == UInt8(ascii: "}") {
                if let comma = pendingComma { output.remove(at: comma) }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            }
            if byte == UInt8(ascii: ",") && !inString {
                pendingComma = output.count
            } else if ![UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t")].contains(byte) {
                pendingComma = nil
            }
            output.append(byte)
        }
        return output
    }

    private static func allFinite(_ value: JSONValue) -> Bool {
        switch value {
        case .number(let number): number.isFinite
        case .array(let elements): elements.allSatisfy(allFinite)
        case .object(let members): members.pairs.allSatisfy { allFinite($0.value) }
        case .null, .bool, .string: true
        }
    }
}
