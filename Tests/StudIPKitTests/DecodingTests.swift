import Foundation
import StudIPModel
import StudIPWire
import Synchronization
import Testing

@testable import StudIPKit

/// The lenient reading of what real servers send (API.md §2.4, §2.9, §3.6), without a server.
@Suite("Decoding, paging and retry delays")
struct DecodingTests {
    static func json(_ text: String) throws -> JSONValue {
        try JSONValue.parse(Data(text.utf8), what: "test")
    }

    @Test("numbers as ints or numeric strings (Stud.IP ≤ 4.2)")
    func numbers() throws {
        let value = try Self.json(#"{"a": 57584, "b": "57584", "c": " 12 ", "d": 1.5, "e": "x", "f": null}"#)
        #expect(value["a"]?.int == 57_584)
        #expect(value["b"]?.int == 57_584)
        #expect(value["c"]?.int == 12)
        #expect(value["d"]?.int == nil)
        #expect(value["e"]?.int == nil)
        #expect(value["f"]?.int == nil)
        #expect(value["missing"]?.int == nil)
        #expect(value["a"]?.string == "57584", "ids sent as numbers read as strings")
    }

    @Test("booleans as true/false, 0/1 or \"0\"/\"1\"")
    func booleans() throws {
        let value = try Self.json(#"{"a": true, "b": 0, "c": "1", "d": "", "e": "yes"}"#)
        #expect(value["a"]?.bool == true)
        #expect(value["b"]?.bool == false)
        #expect(value["c"]?.bool == true)
        #expect(value["d"]?.bool == false)
        #expect(value["e"]?.bool == nil)
    }

    @Test("collections keyed by href or as lists; an empty keyed collection arrives as []")
    func collections() throws {
        let keyed = try Self.json(#"{"collection": {"/api.php/b": {"id": "b"}, "/api.php/a": {"id": "a"}}}"#)
        #expect(keyed["collection"]?.elements?.compactMap { $0["id"]?.string } == ["a", "b"])
        let list = try Self.json(#"{"collection": [{"id": "x"}]}"#)
        #expect(list["collection"]?.elements?.count == 1)
        let empty = try Self.json(#"{"collection": []}"#)
        #expect(empty["collection"]?.elements?.isEmpty == true)
        #expect(try Self.json(#"{"collection": "nope"}"#)["collection"]?.elements == nil)
    }

    @Test("dates: ISO 8601 with offset, fractions; unix ints and numeric strings")
    func dates() throws {
        let value = try Self.json(
            #"{"a": "2024-10-15T15:46:40+02:00", "b": "2024-10-15T13:46:40Z", "c": "2024-10-15T15:46:40.250+02:00","#
                + #" "d": 1728999999, "e": "1499862074", "f": "gestern"}"#)
        let expected = Date(timeIntervalSince1970: 1_729_000_000)
        #expect(StudIPDate.iso8601(value["a"]) == expected)
        #expect(StudIPDate.iso8601(value["b"]) == expected)
        #expect(StudIPDate.iso8601(value["c"]) == expected.addingTimeInterval(0.25))
        #expect(StudIPDate.unix(value["d"]) == Date(timeIntervalSince1970: 1_728_999_999))
        #expect(StudIPDate.unix(value["e"]) == Date(timeIntervalSince1970: 1_499_862_074))
        #expect(StudIPDate.iso8601(value["f"]) == nil)
        #expect(StudIPDate.unix(value["f"]) == nil)
    }

    @Test("dates of Stud.IP's shape read by hand as Foundation reads them; other shapes left to Foundation")
    func handReadDates() throws {
        func foundation(_ text: String) -> TimeInterval? {
            (try? Date(text, strategy: .iso8601))?.timeIntervalSince1970
        }
        var generator = SystemRandomNumberGenerator()
        let offsets = [
            "Z", "+00:00", "-00:00", "+02:00", "+01:00", "-05:00", "+05:30", "+05:45", "-09:30", "+14:00", "-12:00",
        ]
        var checked = 0
        for year in stride(from: 1900, through: 2199, by: 1) {
            for month in 1...12 {
                let day = Int.random(in: 1...28, using: &generator)
                let clock = (
                    Int.random(in: 0...23, using: &generator), Int.random(in: 0...59, using: &generator),
                    Int.random(in: 0...59, using: &generator)
                )
                let offset = try #require(offsets.randomElement(using: &generator))
                let text =
                    String(format: "%04d-%02d-%02dT%02d:%02d:%02d", year, month, day, clock.0, clock.1, clock.2)
                    + offset
                let hand = StudIPDate.commonISO8601(text)
                #expect(hand != nil && hand == foundation(text), "\(text)")
                checked += 1
            }
        }
        for text in [
            "2024-02-29T23:59:59+02:00", "2000-02-29T00:00:00Z", "1970-01-01T00:00:00Z", "2199-12-31T23:59:59-12:00",
            "1900-01-01T00:00:00+14:00", "2024-12-31T23:59:59Z",
        ] {
            #expect(
                StudIPDate.commonISO8601(text) != nil && StudIPDate.commonISO8601(text) == foundation(text), "\(text)")
        }
        #expect(checked == 3_600)
        for text in [
            "2023-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2024-04-31T00:00:00Z", "2024-10-15T24:00:00Z",
            "2024-10-15T12:60:00Z",
            "2024-10-15T12:00:60Z", "2024-10-15T15:46:40.250+02:00", "1899-12-31T00:00:00Z", "2200-01-01T00:00:00Z",
            "2024-10-15 15:46:40Z", "2024-10-15T15:46:40+0200", "2024-10-15T15:46:40+15:00", "2024-13-01T00:00:00Z",
            "2024-00-10T00:00:00Z", "2024-10-00T00:00:00Z", "2024-1a-15T15:46:40Z", "2024-10-15t15:46:40z",
        ] {
            #expect(StudIPDate.commonISO8601(text) == nil, "\(text)")
            #expect(
                StudIPDate.iso8601(.string(text))?.timeIntervalSince1970 == foundation(text)
                    ?? (try? Date(text, strategy: Date.ISO8601FormatStyle(includingFractionalSeconds: true)))?
                    .timeIntervalSince1970, "\(text)")
        }
    }

    @Test("the <!--HTML--> marker: blanks around and inside it, nothing after it taken, anything else kept")
    func htmlMarker() {
        #expect(CourseItemText.withoutHTMLMarker("<!--HTML--><p>x</p>") == "<p>x</p>")
        #expect(CourseItemText.withoutHTMLMarker("\r\n <!--\tHTML\n--> \n<p>x") == " \n<p>x")
        #expect(CourseItemText.withoutHTMLMarker("<!-- HTML -->") == "")
        for kept in ["<!--html--><p>x", "x<!--HTML-->", "<!--HTML--", "<!--HTM-->", "<!- -HTML-->", ""] {
            #expect(CourseItemText.withoutHTMLMarker(kept) == kept, "\(kept.debugDescription)")
        }
    }

    @Test("malformed JSON is a typed error that names the item")
    func malformed() {
        #expect(throws: StudIPError.self) { try JSONValue.parse(Data("<html>".utf8), what: "folder X") }
        do {
            _ = try JSONValue.parse(Data(#"{"data": ["#.utf8), what: "folder X")
        } catch {
            guard case .malformedResponse(let what, _) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(what == "folder X")
        }
    }

    @Test("course numbers lose trailing blanks only")
    func trimming() {
        #expect("14302               ".trimmingTrailingWhitespace == "14302")
        #expect(" A 1 ".trimmingTrailingWhitespace == " A 1")
        #expect("".trimmingTrailingWhitespace == "")
    }

    static func elements(_ range: Range<Int>) -> [JSONValue] { range.map { .object(["id": .string("\($0)")]) } }

    @Test("paging ends on the total, not on links; also when the server ignores the limit")
    func pagingTotals() async throws {
        let calls = Counter()
        let all = try await Paging.collect(limit: 30, what: "t", idKey: "id") {
            (offset) async throws(StudIPError) -> Page in
            calls.increment()
            return Page(elements: Self.elements(offset..<min(offset + 30, 31)), total: 31)
        }
        #expect(all.count == 31)
        #expect(calls.value == 2)

        let greedy = Counter()
        let everything = try await Paging.collect(limit: 10, what: "t", idKey: "id") {
            (_) async throws(StudIPError) -> Page in
            greedy.increment()
            return Page(elements: Self.elements(0..<25), total: 25)
        }
        #expect(everything.count == 25)
        #expect(greedy.value == 1)

        let untotalled = try await Paging.collect(limit: 10, what: "t", idKey: "id") {
            (offset) async throws(StudIPError) -> Page in
            Page(elements: Self.elements(offset..<min(offset + 10, 15)), total: nil)
        }
        #expect(untotalled.count == 15)
    }

    @Test("a server repeating its page is reported, not looped over")
    func pagingRepeats() async {
        let calls = Counter()
        await #expect(throws: StudIPError.self) {
            try await Paging.collect(limit: 2, what: "t", idKey: "id") {
                (_) async throws(StudIPError) -> Page in
                calls.increment()
                return Page(elements: Self.elements(0..<2), total: 10)
            }
        }
        #expect(calls.value == 2)
    }

    /// Memory bounded by the pages in flight (docs/performance.md): each page is decoded, and its JSON can go,
    /// before the next page is asked for; an element a later page repeats is decoded once.
    @Test("each page is decoded before the next is fetched, its repeated elements left out")
    func pagingDecodesPageByPage() async throws {
        let log = Mutex<[String]>([])
        let all = try await Paging.collect(limit: 30, what: "t", idKey: "id") {
            (offset) async throws(StudIPError) -> Page in
            log.withLock { $0.append("fetch \(offset)") }
            // The second page repeats the first's last element, and the total counts it.
            let start = offset == 0 ? 0 : offset - 1
            return Page(elements: Self.elements(start..<min(start + 30, 61)), total: 61)
        } decode: { elements in
            log.withLock { $0.append("decode \(elements.count)") }
            return elements.compactMap { $0["id"]?.string }
        }
        #expect(log.withLock { $0 } == ["fetch 0", "decode 30", "fetch 30", "decode 29", "fetch 60", "decode 2"])
        #expect(all == (0..<61).map(String.init))
    }

    @Test("backoff grows exponentially, is jittered, and is capped")
    func retryDelays() {
        let policy = RetryPolicy(attempts: 6, baseDelay: .milliseconds(100), maxDelay: .milliseconds(500))
        for _ in 0..<50 {
            let first = policy.delay(beforeRetry: 1)
            #expect(first >= .milliseconds(50) && first <= .milliseconds(100))
            let second = policy.delay(beforeRetry: 2)
            #expect(second >= .milliseconds(100) && second <= .milliseconds(200))
            #expect(policy.delay(beforeRetry: 10) <= .milliseconds(500))
        }
        let samples = Set((0..<20).map { _ in policy.delay(beforeRetry: 3) })
        #expect(samples.count > 1, "jitter")
        #expect(RetryPolicy(attempts: 0).attempts == 1)
    }

    @Test("installation URLs: credentials and trailing slashes dropped, ids and brackets encoded")
    func installationURLs() throws {
        let installation = try Installation("https://user:secret@host.example/studip/")
        #expect(installation.baseURL == "https://host.example/studip")
        #expect(
            installation.jsonAPI(["folders", "a/b"], query: [("page[limit]", "1000")])
                == "https://host.example/studip/jsonapi.php/v1/folders/a%2Fb?page%5Blimit%5D=1000")
        #expect(throws: StudIPError.self) { try Installation("ftp://host") }
        #expect(throws: StudIPError.self) { try Installation("not a url") }
    }

    /// Byte by byte, what Foundation's percent-encoding with RFC 3986's unreserved set gives, for text that needs
    /// no encoding (returned as it is), every ASCII character, and non-ASCII names.
    @Test func percentEncodingIsFoundations() {
        let unreserved = CharacterSet(
            charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        let ascii = String(decoding: (1...127).map { UInt8($0) }, as: UTF8.self)
        for text in [
            "", "8ee5dd9e8f7cd5d9146fb4f93216aacf", "dispatch.php", ascii, "Übung 1/Lösung (v2).pdf", "a😀b", "%41",
        ] {
            #expect(
                Installation.encode(text) == text.addingPercentEncoding(withAllowedCharacters: unreserved), "\(text)")
        }
    }
}

final class Counter: Sendable {
    private let count = Mutex(0)
    var value: Int { count.withLock { $0 } }
    func increment() { count.withLock { $0 += 1 } }
}
