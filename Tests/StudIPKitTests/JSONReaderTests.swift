import Foundation
import StudIPModel
import StudIPWire
import Testing

/// The JSON reader against `JSONSerialization` on real server bodies, and on the corners RFC 8259 defines.
@Suite("JSON reader")
struct JSONReaderTests {
    static func read(_ text: String) throws(StudIPError) -> JSONValue {
        try JSONValue.parse(Data(text.utf8), what: "test")
    }

    /// What `JSONSerialization` makes of a body, in the reader's terms.
    static func reference(_ value: Any) -> JSONValue {
        switch value {
        case let text as String: .string(text)
        case let object as [String: Any]: .object(JSONObject(object.mapValues(reference)))
        case let list as [Any]: .array(list.map(reference))
        case let number as NSNumber:
            String(cString: number.objCType) == "c" ? .bool(number.boolValue) : .number(number.doubleValue)
        default: .null
        }
    }

    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Fixtures/studip-5.0.7")

    @Test("every JSON body captured from Stud.IP 5.0.7 reads as JSONSerialization reads it")
    func capturedBodies() throws {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.fixtures.path)
            .filter { $0.hasSuffix(".json") }
        #expect(names.count > 100)
        for name in names {
            let data = try Data(contentsOf: Self.fixtures.appending(path: name))
            let expected = Self.reference(try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]))
            #expect(try JSONValue.parse(data, what: name) == expected, "\(name)")
        }
    }

    @Test("string escapes, surrogate pairs and raw UTF-8 keep their exact bytes")
    func strings() throws {
        let escaped = try Self.read(#"["a\"b\\c\/d\b\f\n\r\t\u00e9\u20AC\ud83d\ude00", "Übung – Blatt 3", "e\u0301"]"#)
        let strings = try #require(escaped.array).compactMap(\.string)
        #expect(Array(strings[0].utf8) == Array("a\"b\\c/d\u{8}\u{C}\n\r\té€😀".utf8))
        #expect(Array(strings[1].utf8) == Array("Übung – Blatt 3".utf8))
        #expect(Array(strings[2].utf8) == [0x65, 0xCC, 0x81], "NFD stays NFD: names on disk depend on it")
    }

    @Test("lone surrogates and invalid UTF-8 become U+FFFD instead of failing the whole listing")
    func repairs() throws {
        #expect(try Self.read(#""\ud800x""#).string == "\u{FFFD}x")
        #expect(try Self.read(#""\udc00""#).string == "\u{FFFD}")
        #expect(try Self.read(#""\ud800\u0041""#).string == "\u{FFFD}A")
        let invalid = Data([UInt8(ascii: "\""), 0x61, 0xFF, 0x62, UInt8(ascii: "\"")])
        #expect(try JSONValue.parse(invalid, what: "test").string == "a\u{FFFD}b")
        #expect(
            try JSONValue.parse(Data([0xEF, 0xBB, 0xBF] + Array("[1]".utf8)), what: "test") == .array([.number(1)]))
    }

    @Test("numbers: integers exactly, fractions and exponents as Double parses them")
    func numbers() throws {
        let value = try Self.read(
            "[0, -0, 7, -12, 1.5, 1e3, 2.5E-2, -1.25e+2, 123456789012345, 12345678901234567890, 0.1]")
        let expected: [Double] = [
            0, 0, 7, -12, 1.5, 1000, 0.025, -125, 123_456_789_012_345, 1.234_567_890_123_456_8e19, 0.1,
        ]
        #expect(value == .array(expected.map(JSONValue.number)))
        #expect(try Self.read("57584").int == 57_584, "a bare number is a document too")
    }

    @Test("whitespace, literals and empty containers")
    func structure() throws {
        let value = try Self.read(" \n\t{ \"a\" : [ ] , \"b\" : { } , \"c\" : [true,false,null] }\r\n ")
        #expect(
            value == .object(["a": .array([]), "b": .object([:]), "c": .array([.bool(true), .bool(false), .null])]))
    }

    @Test("objects keep their members in document order; a duplicate name's last value wins, as in a dictionary")
    func members() throws {
        let value = try Self.read(#"{"b": 1, "a": {"x": 1}, "c": 3, "a": {"x": 2}, "b": null}"#)
        guard case .object(let object) = value else {
            Issue.record("not an object: \(value)")
            return
        }
        #expect(object.pairs.map(\.key) == ["b", "a", "c", "a", "b"], "as read, duplicates included")
        #expect(value["a"]?["x"]?.int == 2)
        #expect(value["b"]?.isNull == true)
        #expect(object.map(\.key) == ["b", "a", "c"], "one member per name, in order of first appearance")
        #expect(object.map(\.value) == [.null, .object(["x": .number(2)]), .number(3)])
        #expect(
            value == .object(["c": .number(3), "a": .object(["x": .number(2)]), "b": .null]),
            "order is no part of equality")
        #expect(value != .object(["c": .number(3), "a": .object(["x": .number(1)]), "b": .null]))
        let keyed = try Self.read(#"{"collection": {"/b": {"id": "b1"}, "/a": {"id": "a"}, "/b": {"id": "b2"}}}"#)
        #expect(keyed["collection"]?.elements?.compactMap { $0["id"]?.string } == ["a", "b2"])
    }

    @Test("containers nested in containers close where their brackets do")
    func nesting() throws {
        let value = try Self.read(#"{"a": {"b": [1, {"c": [2, []]}, {}], "d": 3}, "e": [[], [4, [5]]], "f": {}}"#)
        let expected: JSONValue = .object([
            "a": .object([
                "b": .array([.number(1), .object(["c": .array([.number(2), .array([])])]), .object([:])]),
                "d": .number(3),
            ]),
            "e": .array([.array([]), .array([.number(4), .array([.number(5)])])]), "f": .object([:]),
        ])
        #expect(value == expected)
        guard case .object(let outer) = value, case .object(let inner)? = value["a"] else {
            Issue.record("not objects: \(value)")
            return
        }
        #expect(outer.pairs.map(\.key) == ["a", "e", "f"])
        #expect(inner.pairs.map(\.key) == ["b", "d"])
        let limit = JSONReader.maximumDepth
        let objects = String(repeating: #"{"a":"#, count: limit - 1) + "[]" + String(repeating: "}", count: limit - 1)
        #expect(throws: Never.self) { try Self.read(objects) }
        #expect(throws: StudIPError.self) { try Self.read("[" + objects + "]") }
    }

    @Test("escapes between plain runs, and where a bad string breaks")
    func escapeRuns() throws {
        let value = try Self.read(
            #"["\/jsonapi.php\/v1\/file-refs\/0a1b", "M\u00fcller, Thomas", "tab\there\"", "\n"]"#)
        #expect(
            value
                == .array([
                    .string("/jsonapi.php/v1/file-refs/0a1b"), .string("Müller, Thomas"), .string("tab\there\""),
                    .string("\n"),
                ]))
        for (text, offset) in [
            ("\"a\u{1}b\"", 2), (#""a\nb"# + "\u{1}\"", 6), (#""abc"#, 4), (#""a\"#, 3), (#""a\q""#, 4),
        ] {
            do {
                let read = try Self.read(text)
                Issue.record("\(text.debugDescription) read as \(read)")
            } catch {
                guard case .malformedResponse(_, let detail) = error else {
                    Issue.record("unexpected \(error)")
                    continue
                }
                #expect(detail.contains("at byte \(offset) "), "\(text.debugDescription): \(detail)")
            }
        }
    }

    @Test(
        "anything that is not JSON is a typed error naming the item and the byte",
        arguments: [
            "", "   ", "<html>", "{", "[1,]", "[1 2]", #"{"a" 1}"#, #"{"a":1,}"#, #"{a:1}"#, "tru", "nul", "True",
            #""abc"#, "\"a\u{1}b\"", #""\x""#, #""\u12""#, #""\u12G4""#, "01", "-", "1.", ".5", "1e", "+1", "1 2",
            "[1] x", "NaN",
        ])
    func malformed(text: String) {
        do {
            let value = try Self.read(text)
            Issue.record("\(text.debugDescription) read as \(value)")
        } catch {
            guard case .malformedResponse(let what, let detail) = error else {
                Issue.record("unexpected \(error)")
                return
            }
            #expect(what == "test")
            #expect(detail.contains("at byte"), "\(detail)")
        }
    }

    @Test("nesting is bounded: a hostile body fails instead of exhausting the stack")
    func depth() throws {
        let limit = JSONReader.maximumDepth
        let deepest = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
        #expect(throws: Never.self) { try Self.read(deepest) }
        #expect(throws: StudIPError.self) {
            try Self.read(String(repeating: "[", count: limit + 1) + String(repeating: "]", count: limit + 1))
        }
        #expect(throws: StudIPError.self) { try Self.read(String(repeating: "{\"a\":", count: 1_000_000)) }
    }
}
