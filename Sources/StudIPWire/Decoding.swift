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
    case object(JSONObject)

    /// Parses a response body (``JSONReader``), building what `shape` names; the error names what was being read
    /// and where it broke.
    package static func parse(_ data: Data, what: String, shape: JSONShape = .everything) throws(StudIPError)
        -> JSONValue
    {
        let parsed = data.withUnsafeBytes { raw in
            Result { () throws(JSONReader.SyntaxError) in
                try JSONReader.parse(raw.bindMemory(to: UInt8.self), shape: shape)
            }
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
        case .object(let object): object.members.sorted { $0.key < $1.key }.map(\.value)
        default: nil
        }
    }

    package var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

/// A JSON object's members as read, in document order. A list, not a hashed dictionary: JSON:API's objects hold
/// a handful of members each, a linear search finds one faster than hashing its name, and building and freeing
/// the dictionaries was a tenth of the daemon's CPU during a first fill (docs/performance.md, "Decoding").
///
/// Duplicate names read as `JSONSerialization` and a dictionary read them: the last value wins.
package struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// Every member as the document wrote it, duplicate names included.
    package private(set) var pairs: [(key: String, value: JSONValue)]

    package init(pairs: [(key: String, value: JSONValue)]) {
        self.pairs = pairs
    }

    package init(_ dictionary: [String: JSONValue]) {
        pairs = dictionary.map { ($0.key, $0.value) }
    }

    package init(dictionaryLiteral elements: (String, JSONValue)...) {
        pairs = elements.map { ($0, $1) }
    }

    /// The value of the last member named `key`.
    package subscript(key: String) -> JSONValue? {
        pairs.last(where: { $0.key == key })?.value
    }

    /// One member per name, in the order names first appear, each with its last value.
    package var members: [(key: String, value: JSONValue)] {
        var unique: [(key: String, value: JSONValue)] = []
        var index: [String: Int] = [:]
        for (key, value) in pairs {
            if let existing = index[key] {
                unique[existing].value = value
            } else {
                index[key] = unique.count
                unique.append((key, value))
            }
        }
        return unique
    }

    package func makeIterator() -> IndexingIterator<[(key: String, value: JSONValue)]> {
        members.makeIterator()
    }

    /// Equal when they hold the same names with the same last values, in any order, as dictionaries compare.
    package static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.dictionary == rhs.dictionary
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(dictionary)
    }

    private var dictionary: [String: JSONValue] {
        Dictionary(pairs.lazy.map { ($0.key, $0.value) }, uniquingKeysWith: { $1 })
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
        if let seconds = commonISO8601(text) { return Date(timeIntervalSince1970: seconds) }
        let withFractions = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        let date = (try? Date(text, strategy: .iso8601)) ?? (try? Date(text, strategy: withFractions))
        return date.flatMap { readable.contains($0) ? $0 : nil }
    }

    /// The shape Stud.IP sends, `YYYY-MM-DDTHH:MM:SS` with `Z` or `±HH:MM`, read by hand as seconds since 1970:
    /// Foundation's parser took a microsecond a date, two dates a document (docs/performance.md, "Decoding").
    /// nil for anything else (fractions, years outside 1900–2199, leap seconds, impossible days), which
    /// ``iso8601(_:)`` leaves to Foundation; a test holds the two to the same answers.
    package static func commonISO8601(_ text: String) -> TimeInterval? {
        var text = text
        return text.withUTF8 { bytes -> TimeInterval? in
            guard bytes.count == 20 || bytes.count == 25, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
                bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":")
            else { return nil }
            func number(_ start: Int, _ count: Int) -> Int? {
                var value = 0
                for byte in bytes[start..<start + count] {
                    guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                    value = value * 10 + Int(byte - UInt8(ascii: "0"))
                }
                return value
            }
            guard let year = number(0, 4), (1900...2199).contains(year), let month = number(5, 2),
                (1...12).contains(month), let day = number(8, 2), (1...daysIn(month: month, year: year)).contains(day),
                let hour = number(11, 2), hour < 24, let minute = number(14, 2), minute < 60,
                let second = number(17, 2), second < 60
            else { return nil }
            var offset = 0
            if bytes.count == 20 {
                guard bytes[19] == UInt8(ascii: "Z") else { return nil }
            } else {
                guard bytes[19] == UInt8(ascii: "+") || bytes[19] == UInt8(ascii: "-"), bytes[22] == UInt8(ascii: ":"),
                    let hours = number(20, 2), hours <= 14, let minutes = number(23, 2), minutes < 60
                else { return nil }
                offset = (hours * 60 + minutes) * 60 * (bytes[19] == UInt8(ascii: "-") ? -1 : 1)
            }
            let seconds = daysSince1970(year: year, month: month, day: day) * 86_400 + hour * 3_600 + minute * 60
            return TimeInterval(seconds + second - offset)
        }
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a date of the Gregorian calendar (years from March, so leap days come last).
    private static func daysSince1970(year: Int, month: Int, day: Int) -> Int {
        let marchYear = month <= 2 ? year - 1 : year
        let era = marchYear / 400
        let yearOfEra = marchYear - era * 400
        let dayOfYear = (153 * ((month + 9) % 12) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
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
