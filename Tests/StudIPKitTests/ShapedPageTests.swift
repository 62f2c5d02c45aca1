import Foundation
import StudIPModel
import StudIPWire
import TestSupport
import Testing

@testable import StudIPKit
@testable import StudIPSimulator

/// The first fill reads its pages of folders and documents with ``JSONAPIFormat/folderPage`` and
/// ``JSONAPIFormat/documentPage``, which build only the members the decoders read (docs/performance.md, "Fourth
/// pass: decoding"). These tests hold the models decoded from such a tree to those decoded from the whole page,
/// field by field, over every captured body and over the pages of the simulator's hostile `small` dataset, and
/// hold malformed bodies to the same errors.
@Suite("Pages read with a shape decode as the whole page does")
struct ShapedPageTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Fixtures")
    static func format() throws -> JSONAPIFormat {
        JSONAPIFormat(installation: try Installation("https://studip.example/studip/"))
    }
    static let courseID = "29f7bd5e79910822b1be93be3c53a72c"

    /// Counts of what a comparison compared, so that a test can tell it compared something.
    struct Compared {
        var folders = 0
        var documents = 0
        var documentsWithModel = 0
        var foldersWithModel = 0
    }

    /// Compares one body read whole and read with each page shape: the page's elements, total and includes, and
    /// the models both decoders make of every element.
    static func compare(_ body: Data, name: String, into compared: inout Compared) throws {
        let whole = try JSONValue.parse(body, what: name)
        let format = try format()
        for (shape, decodesDocuments) in [(JSONAPIFormat.folderPage, false), (JSONAPIFormat.documentPage, true)] {
            let shaped = try JSONValue.parse(body, what: name, shape: shape)
            #expect(shaped["meta"]?["page"]?["total"] == whole["meta"]?["page"]?["total"], "\(name)")
            #expect(shaped["included"] == whole["included"], "\(name)")
            guard let elements = whole["data"]?.array else {
                #expect(shaped["data"] == whole["data"], "\(name)")
                continue
            }
            let shapedElements = try #require(shaped["data"]?.array, "\(name)")
            try #require(shapedElements.count == elements.count, "\(name)")
            for (element, shapedElement) in zip(elements, shapedElements) {
                #expect(shapedElement["id"] == element["id"], "\(name)")
                if decodesDocuments {
                    let expected = format.document(element, courseID: courseID)
                    let actual = format.document(shapedElement, courseID: courseID)
                    #expect(actual.id == expected.id, "\(name)")
                    #expect(actual.parentID == expected.parentID, "\(name)")
                    #expect(actual.document == expected.document, "\(name) \(expected.id ?? "?")")
                    compared.documents += 1
                    if expected.document != nil { compared.documentsWithModel += 1 }
                } else {
                    let expected = format.folder(element, courseID: courseID)
                    let actual = format.folder(shapedElement, courseID: courseID)
                    #expect(actual.id == expected.id, "\(name)")
                    #expect(actual.parentID == expected.parentID, "\(name)")
                    #expect(actual.isRootFolder == expected.isRootFolder, "\(name)")
                    #expect(actual.isReadable == expected.isReadable, "\(name)")
                    #expect(actual.documentCount == expected.documentCount, "\(name)")
                    #expect(actual.folder == expected.folder, "\(name) \(expected.id ?? "?")")
                    compared.folders += 1
                    if expected.folder != nil { compared.foldersWithModel += 1 }
                }
            }
        }
    }

    /// Every JSON body captured in Tests/Fixtures, whatever it holds: pages of folders and documents, single
    /// resources, other collections and errors (the page shapes meet objects where they expect arrays there).
    @Test func everyCapturedBodyDecodesTheSame() throws {
        var compared = Compared()
        var bodies = 0
        let files = try #require(FileManager.default.enumerator(at: Self.fixtures, includingPropertiesForKeys: nil))
        for case let file as URL in files
        where (file.pathExtension == "json" || file.pathExtension == "body") && !file.path.hasSuffix(".meta.json") {
            let body = try Data(contentsOf: file)
            guard (try? JSONValue.parse(body, what: "")) != nil else { continue }
            try Self.compare(body, name: file.lastPathComponent, into: &compared)
            bodies += 1
        }
        #expect(bodies > 100)
        // The captures hold pages of both kinds: jsonapi_course_folders.json alone has 7 folders.
        #expect(compared.foldersWithModel >= 20)
        #expect(compared.documentsWithModel >= 20)
    }

    /// Every page of folders and documents of every course of the hostile `small` dataset, as the simulator
    /// serves them to Stud.IP 5.0 (no document counts) and 5.5 (counts on folders).
    @Test(arguments: [Flavour.v50, .v55])
    func everySimulatedPageDecodesTheSame(flavour: Flavour) async throws {
        try await withSimulator(Dataset.generated(.small, seed: 1), flavour: flavour) { sim async throws in
            let courses = try await withSource(Harness.configuration(sim, api: .jsonAPI)) { source in
                try await source.overview().courses.map(\.id)
            }
            let installation = try Installation(sim.baseURL)
            let transport = HTTPTransport(configuration: Harness.configuration(sim), installation: installation)
            var compared = Compared()
            do {
                for course in courses {
                    for collection in ["folders", "file-refs"] {
                        var offset = 0
                        while true {
                            let url = installation.jsonAPI(
                                ["courses", course, collection],
                                query: [("page[offset]", "\(offset)"), ("page[limit]", "25")])
                            var request = HTTPRequest(url: url, what: url)
                            request.headers["Accept"] = JSONAPISource.mediaType
                            let response = try await transport.fetch(request)
                            guard response.status == 200 else { break }
                            try Self.compare(response.body, name: url, into: &compared)
                            let page = try JSONValue.parse(response.body, what: url)
                            offset += page["data"]?.array?.count ?? 0
                            guard let total = page["meta"]?["page"]?["total"]?.int, offset < total else { break }
                        }
                    }
                }
            } catch {
                await transport.shutdown()
                throw error
            }
            await transport.shutdown()
            #expect(compared.foldersWithModel >= 50 && compared.documentsWithModel >= 50)
        }
    }

    /// A page shape leaves members out only where it names an object: a value of another kind where the shape
    /// expects an object or an array is built whole, and an element's every read member survives whatever
    /// surrounds it (links, meta, unknown members before and after, duplicates: the last one wins).
    @Test func membersThatAreReadSurviveWhatSurroundsThem() throws {
        let body = Data(
            """
            {"links": {"first": "\\/a"}, "data": [
              {"type": "file-refs", "id": 17, "links": {"self": "\\/x"}, "meta": {"download-url": "\\/y"},
               "attributes": {"downloads": [1, {"a": null}], "name": "a\\u00e4\\/b", "filesize": "12",
                 "mkdate": "2024-10-15T15:46:40+02:00", "chdate": "2024-10-16T15:46:40Z", "name": "final",
                 "is-downloadable": "0", "is-writable": 1, "is-editable": true, "mime-type": null},
               "relationships": {"range": {"data": {"type": "courses", "id": "c"}},
                 "parent": {"data": {"type": "folders", "id": "f1"}, "links": {"related": "\\/z"}},
                 "owner": {"meta": {"name": "Dozent, Test"}, "data": {"id": "u"}},
                 "file": {"data": ["not", "an", "object"]}, "terms-of-use": "unexpected"}},
              "not an object", 3, null,
              {"id": "f2", "attributes": {"folder-type": "RootFolder", "mkdate": "2024-10-15T15:46:40+02:00",
                 "is-readable": false, "name": "Root", "unread": {"deep": [[[]]]}},
               "relationships": {"file-refs": {"meta": {"count": 4}, "links": {"related": "\\/r"}}}}
            ], "meta": {"page": {"offset": 0, "limit": 30, "total": "5"}}}
            """.utf8)
        var compared = Compared()
        try Self.compare(body, name: "surrounded", into: &compared)
        #expect(compared.documents == 5 && compared.folders == 5)
        #expect(compared.documentsWithModel == 2 && compared.foldersWithModel == 2)
        let shaped = try JSONValue.parse(body, what: "surrounded", shape: JSONAPIFormat.documentPage)
        let element = try #require(shaped["data"]?.array?.first)
        // What no decoder reads is not built.
        #expect(shaped["links"] == nil && element["links"] == nil && element["meta"] == nil)
        #expect(element["attributes"]?["downloads"] == nil && element["relationships"]?["range"] == nil)
        #expect(element["relationships"]?["parent"]?["links"] == nil)
        let document = try #require(Self.format().document(element, courseID: Self.courseID).document)
        #expect(document.name == "final" && document.size == 12 && !document.isDownloadable && document.isWritable)
        #expect(document.ownerName == "Dozent, Test" && document.fileID == "" && document.license == "")
    }

    /// A malformed body fails with the same error whether a shape builds its parts or drops them: the dropped
    /// parts are read as strictly as the rest.
    @Test func malformedBodiesFailTheSameWay() throws {
        let broken = [
            #"{"data": [{"links": {"self": "\/x}}]}"#,
            #"{"data": [{"links": {"self": "\q"}}]}"#,
            #"{"data": [{"links": {"self": "\u12G4"}}]}"#,
            #"{"data": [{"meta": [1, 2,]}]}"#,
            #"{"data": [{"meta": {"a" 1}}]}"#,
            #"{"data": [{"meta": {"a": 01}}]}"#,
            #"{"data": [{"meta": {"a": tru}}]}"#,
            #"{"data": [{"meta": {"a": -}}]}"#,
            #"{"data": [{"meta": {"a": 1.}}]}"#,
            "{\"data\": [{\"meta\": {\"a\": \"x\u{01}\"}}]}",
            #"{"data": [{"links": {"self": "\/x"}}]} x"#,
            #"{"data": [{"links": {"self": "\/x"}"#,
            #"{"data": [{"unread": "#,
            String(repeating: "[", count: JSONReader.maximumDepth + 1),
            #"{"data": [{"unread": "# + String(repeating: "[", count: JSONReader.maximumDepth),
        ]
        for text in broken {
            let body = Data(text.utf8)
            let expected = try #require(
                Self.failure { () throws(StudIPError) in _ = try JSONValue.parse(body, what: "p") })
            for shape in [JSONAPIFormat.folderPage, JSONAPIFormat.documentPage] {
                let actual = Self.failure { () throws(StudIPError) in
                    _ = try JSONValue.parse(body, what: "p", shape: shape)
                }
                #expect(actual == expected, "\(text.prefix(60))")
            }
        }
    }

    /// Captured pages cut short and with a byte replaced by each of a few that break JSON in different ways, at
    /// offsets spread over the whole page (prime strides, to keep the test fast): the same outcome, error text
    /// included, with and without a shape.
    @Test func damagedCapturesFailTheSameWay() throws {
        var damaged = 0
        for name in ["studip-5.0.7/jsonapi_course_file_refs.json", "studip-5.0.7/jsonapi_course_folders.json"] {
            let capture = try Array(Data(contentsOf: Self.fixtures.appending(path: name)))
            var bodies = stride(from: 0, to: capture.count, by: 23).map { Data(capture[..<$0]) }
            for offset in stride(from: 0, to: capture.count, by: 67) {
                for byte in [UInt8(ascii: "\\"), UInt8(ascii: "\""), UInt8(ascii: "}"), 0x01] {
                    var body = capture
                    body[offset] = byte
                    bodies.append(Data(body))
                }
            }
            for body in bodies {
                let expected = Self.failure { () throws(StudIPError) in _ = try JSONValue.parse(body, what: "p") }
                if expected != nil { damaged += 1 }
                for shape in [JSONAPIFormat.folderPage, JSONAPIFormat.documentPage] {
                    let actual = Self.failure { () throws(StudIPError) in
                        _ = try JSONValue.parse(body, what: "p", shape: shape)
                    }
                    #expect(actual == expected, "\(name): \(expected ?? "no error")")
                }
            }
        }
        #expect(damaged > 1_000)
    }

    static func failure(_ body: () throws(StudIPError) -> Void) -> String? {
        do {
            try body()
            return nil
        } catch {
            return error.description
        }
    }
}
