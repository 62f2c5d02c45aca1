import Foundation
import Testing

@testable import StudIPSimulator

/// Captured exchanges of a real Stud.IP 5.0.7 (copied into `Tests/Fixtures`) and how to compare a replay with them.
struct Fixture: Sendable {
    let name: String
    let method: String
    let url: String
    let user: String?
    let status: Int
    let requestHeaders: [String: String]
    /// Response headers in order, duplicates kept.
    let headers: [(String, String)]
    let body: Data?
    let isJSONBody: Bool
    /// The JSON a POST or PATCH sent (`request_body`), when it was JSON.
    var requestJSON: JSON? = nil

    private static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Fixtures")
    /// The demo installation the `fixtures507` dataset is built from.
    static let directory = fixtures.appending(path: "studip-5.0.7")
    /// The same installation later: new versions, rename and move, restricted and URL files (README Parts 2–6).
    static let more = fixtures.appending(path: "studip-5.0.7-more")

    /// All 69 exchanges of ``directory`` in capture order.
    static func all() throws -> [Fixture] {
        let index = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appending(path: "index.json")))
        let entries = try #require(index as? [[String: Any]])
        return try entries.map { try named(try #require($0["name"] as? String)) }
    }

    /// One exchange: `<name>.meta.json` and the body file it names.
    static func named(_ name: String, in directory: URL = directory) throws -> Fixture {
        let meta = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appending(path: "\(name).meta.json")))
                as? [String: Any])
        let headers = (meta["headers"] as? [[String]] ?? []).compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
        var body: Data?
        var isJSON = false
        if let file = meta["body_file"] as? String {
            body = try Data(contentsOf: directory.appending(path: file))
            isJSON = file.hasSuffix(".json")
        }
        return Fixture(
            name: name, method: try #require(meta["method"] as? String), url: try #require(meta["url"] as? String),
            user: meta["user"] as? String, status: try #require(meta["status"] as? Int),
            requestHeaders: meta["request_headers"] as? [String: String] ?? [:], headers: headers, body: body,
            isJSONBody: isJSON,
            requestJSON: (meta["request_body"] as? [String: Any]).flatMap {
                try? JSONSerialization.data(withJSONObject: $0)
            }.flatMap { JSON.parse(String(decoding: $0, as: UTF8.self)) })
    }

    func header(_ name: String) -> String? {
        headers.last { $0.0.lowercased() == name.lowercased() }?.1
    }
}

/// Compares two JSON documents: same keys in the same order, same value types, same list lengths, same values —
/// except at paths the caller marks as volatile (compared by type only).
struct JSONComparison {
    /// Differences found, as `path: reason`.
    private(set) var differences: [String] = []
    /// Applied to actual strings before comparing (e.g. dropping the host of absolute URLs).
    let normalize: (String) -> String
    let volatile: (_ path: String) -> Bool
    /// Rewrites expected strings (capture host → simulator host, captured ids → simulator ids).
    let rewrite: (String) -> String

    mutating func compare(_ expected: JSON, _ actual: JSON, path: String = "") {
        switch (expected, actual) {
        case (.object(let lhs), .object(let rhs)):
            let lhsKeys = lhs.map(\.0)
            let rhsKeys = rhs.map(\.0)
            guard lhsKeys == rhsKeys else {
                differences.append("\(path): keys \(lhsKeys) != \(rhsKeys)")
                return
            }
            for ((key, left), (_, right)) in zip(lhs, rhs) { compare(left, right, path: path + "." + key) }
        case (.array(let lhs), .array(let rhs)):
            guard lhs.count == rhs.count else {
                differences.append("\(path): \(lhs.count) items != \(rhs.count)")
                return
            }
            for (index, (left, right)) in zip(lhs, rhs).enumerated() { compare(left, right, path: "\(path)[\(index)]") }
        case (.string(let lhs), .string(let rhs)):
            if !volatile(path), rewrite(lhs) != normalize(rhs) {
                differences.append("\(path): \"\(rewrite(lhs))\" != \"\(normalize(rhs))\"")
            }
        case (.int(let lhs), .int(let rhs)):
            if !volatile(path), lhs != rhs { differences.append("\(path): \(lhs) != \(rhs)") }
        case (.bool(let lhs), .bool(let rhs)):
            if lhs != rhs { differences.append("\(path): \(lhs) != \(rhs)") }
        case (.null, .null):
            break
        default:
            differences.append("\(path): \(expected.encoded()) has another type than \(actual.encoded())")
        }
    }
}

/// The shape of a header value: 32-hex ids become `<id>`, digit runs `<n>`.
func headerForm(_ value: String) -> String {
    value.replacing(/[0-9a-f]{32}/, with: "<id>").replacing(/[0-9]+/, with: "<n>")
}
