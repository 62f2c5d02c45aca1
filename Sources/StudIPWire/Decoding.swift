import Foundation
import StudIPModel

/// A parsed JSON value with lenient accessors, because real Stud.IP servers disagree on types: numbers arrive
/// as ints or numeric strings (≤ 4.2), empty keyed collections as `[]`, optional fields as null or not at all.
///
/// Accessors return nil instead of throwing; the sources decide which missing values make an item unusable.
package enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// Parses a response body (``JSONReader``); the error names what was being read and where it broke.
    package static func parse(_ data: Data, what: String) throws(StudIPError) -> JSONValue {
        let parsed = data.withUnsafeBytes { raw in
            Result { () throws(JSONReader.SyntaxError) in try JSONReader.parse(raw.bindMemory(to: UInt8.self)) }
        }
        switch parsed {
        case .success(let value):
            return value
        case .failure(let syntax):
            let preview = StudIPError.withoutCredentials(String(decoding: data.prefix(60), as: UTF8.self))
            throw .malformedResponse(
                what: what, detail: "not JSON: \(syntax.reason) at byte \(syntax.offset) (starts with \"\(preview)\")")
        }
    }

    package subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// A string; numbers are rendered without a fraction when they have none (ids sent as numbers).
    package var string: String? {
        switch self {
        case .string(let value): value
        case .number(let value): value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        default: nil
        }
    }

    /// A non-empty string, for ids.
    package var id: String? {
        string.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// An integer from a JSON number or a numeric string.
    package var int: Int64? {
        switch self {
        case .number(let value):
            value.rounded() == value && abs(value) < 9e15 ? Int64(value) : nil
        case .string(let value):
            Int64(value.trimmingCharacters(in: .whitespaces))
        default: nil
        }
    }

    /// A boolean from `true`/`false`, `0`/`1` or `"0"`/`"1"` (PHP renders booleans every way).
    package var bool: Bool? {
        switch self {
        case .bool(let value): value
        case .number(let value): value != 0
        case .string(let value): value == "1" ? true : value == "0" || value.isEmpty ? false : nil
        default: nil
        }
    }

    package var array: [JSONValue]? {
        if case .array(let values) = self { return values }
        return nil
    }

    /// The elements of a collection sent either as a list or as an object keyed by href (legacy REST); PHP
    /// sends an empty keyed collection as `[]`. Keyed elements come in key order of the document, which
    /// `JSONDecoder` does not keep, so callers that care sort them themselves.
    package var elements: [JSONValue]? {
        switch self {
        case .array(let values): values
        case .object(let object): object.keys.sorted().compactMap { object[$0] }
        default: nil
        }
    }

    package var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

/// Dates as both APIs send them.
package enum StudIPDate {
    /// The years 1 to 9999, the dates ISO 8601 writes with four digits; others are unreadable. A legacy
    /// `chdate` of `"9223372036854775807"` otherwise became a date whose seconds overflow the `Int` of a
    /// `timespec`, and `stat` trapped (found by Scripts/fuzz).
    package static let readable =
        Date(timeIntervalSince1970: -62_135_596_800)...Date(timeIntervalSince1970: 253_402_300_799)

    /// JSON:API: ISO 8601 with a numeric offset (`2024-10-15T15:46:40+02:00`), sometimes with fractions.
    package static func iso8601(_ value: JSONValue?) -> Date? {
        guard let text = value?.string else { return nil }
        let withFractions = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let date = (try? Date(text, strategy: .iso8601)) ?? (try? Date(text, strategy: withFractions))
        return date.flatMap { readable.contains($0) ? $0 : nil }
    }

    /// Creation and change dates where one may be missing: each stands in for the other; nil when both are.
    package static func pair(created: Date?, changed: Date?) -> (created: Date, changed: Date)? {
        guard let either = created ?? changed else { return nil }
        return (created ?? either, changed ?? either)
    }

    /// Legacy REST: unix seconds as an int, or a numeric string up to Stud.IP 4.2.
    package static func unix(_ value: JSONValue?) -> Date? {
        value?.int.map { Date(timeIntervalSince1970: TimeInterval($0)) }.flatMap { readable.contains($0) ? $0 : nil }
    }
}
