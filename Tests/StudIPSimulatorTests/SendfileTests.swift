import AsyncHTTPClient
import Foundation
import NIOCore
import TestSupport
import Testing

@testable import StudIPSimulator

/// `sendfile.php`, the web download that answers byte ranges: the step-9 exchanges of the 5.0.7 capture
/// (`Tests/Fixtures/studip-5.0.7-writes/w9_sendfile_*`) replayed, and the switch and counters tests steer it by.
@Suite("sendfile.php: single ranges, 416, the login page without a session, ranges off, counters")
struct SendfileTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Fixtures/studip-5.0.7-writes")
    /// "Vorlesungsskript komplett.pdf" (1,500,000 B) and "Folien Vorlesung 1.pdf" (30000 B) of step 9, and the
    /// demo document hosted elsewhere; all in the demo course "Test Lehrveranstaltung" (root folder below).
    static let documents: [(id: String, name: String, size: Int)] = [
        ("ec49f60ddc4a9f965b3b61fffcbaafd8", "Vorlesungsskript komplett.pdf", 1_500_000),
        ("81ebd361f38e18c40512598decf94291", "Folien Vorlesung 1.pdf", 30000),
    ]
    static let linkID = "f62768f0cbd0bcdc4912ce5e4f84eb14"
    static let courseRootFolder = "1ae8aaa54c89ba47fccd8b50e4337ea6"
    static let dozent = "205f3efb7997a0fc9755da2b535038da"

    /// Every `w9_sendfile_*` exchange but the homework submission's: its 403 is Stud.IP's whole HTML page, and the
    /// submission is not among ``documents``.
    static func names() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasPrefix("w9_sendfile_") && $0.hasSuffix(".meta.json")
                && !$0.hasPrefix("w9_sendfile_homework_own_file")
        }.map { String($0.dropLast(".meta.json".count)) }.sorted()
    }

    /// The documents' bytes as far as the captures hold them (every 206 body at its `Content-Range` start), zeros
    /// elsewhere; captures that overlap must agree. A one-byte range's body is not where its `Content-Range` says
    /// (5.0.7 sends the first byte), so it is left out here and compared with the first byte in the replay.
    static func capturedBytes(_ fixtures: [Fixture]) throws -> [String: Data] {
        var bytes = Dictionary(
            uniqueKeysWithValues: documents.map { ($0.id, [UInt8?](repeating: nil, count: $0.size)) })
        for fixture in fixtures where fixture.status == 206 {
            guard let body = fixture.body, let range = fixture.header("Content-Range"),
                let id = documents.first(where: { fixture.url.contains($0.id) })?.id,
                let match = range.firstMatch(of: /bytes ([0-9]+)-([0-9]+)/), let start = Int(match.1),
                Int(match.2) != start
            else { continue }
            for (index, byte) in body.enumerated() {
                #expect(bytes[id]?[start + index].map { $0 == byte } ?? true, "\(fixture.name) disagrees at \(index)")
                bytes[id]?[start + index] = byte
            }
        }
        return bytes.mapValues { Data($0.map { $0 ?? 0 }) }
    }

    /// Adds the step-9 documents to the demo installation with the captured bytes.
    static func addDocuments(_ sim: Simulator, bytes: [String: Data]) throws {
        try sim.store.mutate { university in
            for (index, document) in documents.enumerated() {
                let data = bytes[document.id] ?? Data(count: document.size)
                university.add(
                    FileRef(
                        id: document.id, fileID: "e9000000000000000000000000000\(index)00", folderID: courseRootFolder,
                        name: document.name, userID: dozent, mimeType: "application/pdf", size: data.count,
                        mkdate: 1_795_853_953, chdate: 1_795_853_953, content: .bytes(data)))
            }
            university.add(
                FileRef(
                    id: linkID, fileID: "e9000000000000000000000000000900", folderID: courseRootFolder,
                    name: "mappe_studip-el.pdf", userID: dozent, mimeType: "application/pdf", size: 0,
                    mkdate: 1_795_853_953, chdate: 1_795_853_953,
                    content: .external(url: "https://www.studip.de/download/mappe_studip-el.pdf")))
        }
    }

    /// Byte equality as a plain Bool: `#expect(a == b)` on megabytes of `Data` makes a failure's diff run for ages.
    static func same(_ actual: Data, _ expected: Data) -> Bool { actual == expected }

    /// Whether `html` is Stud.IP's login page: a form named `login` with the name and password fields.
    static func isLoginPage(_ html: String) -> Bool {
        Browser.forms(in: html).contains { form in
            html.contains(#"name="login""#) && form.value("loginname") != nil && form.value("password") != nil
        }
    }

    @Test func replaysTheCapturedExchanges() async throws {
        let fixtures = try Self.names().map { try Fixture.named($0, in: Self.directory) }
        #expect(fixtures.count == 23)
        let bytes = try Self.capturedBytes(fixtures)
        try await withSimulator(.fixtures507) { sim async throws in
            try Self.addDocuments(sim, bytes: bytes)
            let session = try await LoginSurfaceTests.formLogin(sim)
            // The captured logout ended the session it was sent with; expiring the sessions does that here.
            let afterLogout = "w9_sendfile_after_logout_cookie"
            for fixture in fixtures.sorted(by: { ($0.name == afterLogout ? 1 : 0) < ($1.name == afterLogout ? 1 : 0) })
            {
                if fixture.name == afterLogout {
                    _ = try await HTTP.control(.POST, "\(sim.controlURL)/sessions/expire")
                }
                try await Self.replay(fixture, sim: sim, session: session)
            }
        }
    }

    private static func replay(_ fixture: Fixture, sim: Simulator, session: String) async throws {
        let meta = try #require(
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: directory.appending(path: "\(fixture.name).meta.json"))) as? [String: Any])
        var request = HTTPClientRequest(url: sim.baseURL + fixture.url)
        request.method = fixture.method == "HEAD" ? .HEAD : .GET
        for (name, value) in fixture.requestHeaders {
            request.headers.add(
                name: name, value: value.replacingOccurrences(of: "<session of the web login>", with: session))
        }
        if fixture.user?.contains("Basic auth") == true {
            request.headers.add(name: "Authorization", value: HTTP.basic("test_autor").1)
        }
        let response = try await HTTP.client.execute(request, timeout: .seconds(30))
        let name = fixture.name
        #expect(Int(response.status.code) == fixture.status, "\(name): status \(response.status.code)")
        for header in ["Content-Range", "Accept-Ranges", "Content-Disposition", "Location"] {
            #expect(response.headers.first(name: header) == fixture.header(header), "\(name): \(header)")
        }
        if let length = fixture.header("Content-Length") {
            #expect(response.headers.first(name: "Content-Length") == length, "\(name): Content-Length")
        }
        #expect(response.headers.first(name: "ETag") == nil, "\(name): sendfile sends no ETag")
        let typeClass = { (value: String?) in value?.split(separator: ";").first?.lowercased() }
        #expect(typeClass(response.headers.first(name: "Content-Type")) == typeClass(fixture.header("Content-Type")))

        if meta["incomplete_body"] != nil {
            // 5.0.7 announced the suffix's length and closed the connection after the whole file.
            await #expect(throws: (any Error).self, "\(name): the body ends short") {
                _ = try await response.body.collect(upTo: 1 << 30)
            }
            return
        }
        let body = Data(buffer: try await response.body.collect(upTo: 1 << 30))
        if typeClass(fixture.header("Content-Type")) == "text/html", fixture.status == 200 {
            #expect(fixture.body.map { isLoginPage(String(decoding: $0, as: UTF8.self)) } ?? true)
            if fixture.method == "GET" { #expect(isLoginPage(String(decoding: body, as: UTF8.self)), "\(name)") }
        } else if let expected = fixture.body {
            #expect(Self.same(body, expected), "\(name): body differs")
        } else {
            #expect(body.count == meta["body_size"] as? Int, "\(name): \(body.count) body bytes")
        }
    }

    /// Logs in through the form on a scenario installation and returns the session cookie's header.
    static func session(_ sim: Simulator) async throws -> (String, String) {
        ("Cookie", "Seminar_Session=\(try await LoginSurfaceTests.formLogin(sim))")
    }

    static func sendfile(_ sim: Simulator, _ id: String = Scenario.bigID) -> String {
        "\(sim.baseURL)/sendfile.php?type=0&file_id=\(id)&file_name=big.bin"
    }

    @Test func aRangesBytesAreTheContentRoutesBytes() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let cookie = try await Self.session(sim)
            let whole = try await HTTP.get(
                "\(sim.baseURL)/jsonapi.php/v1/file-refs/\(Scenario.bigID)/content", headers: [HTTP.basic("test_autor")]
            ).body
            #expect(whole.count == 2 << 20)
            for (range, part) in [
                ("bytes=1000-4999", 1000..<5000), ("bytes=-4096", whole.count - 4096..<whole.count),
                ("bytes=\(whole.count - 10)-\(whole.count + 100)", whole.count - 10..<whole.count),
            ] {
                let answer = try await HTTP.get(Self.sendfile(sim), headers: [cookie, ("Range", range)])
                #expect(answer.status == 206, "\(range)")
                #expect(
                    answer.header("Content-Range") == "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(whole.count)")
                #expect(Self.same(answer.body, whole.subdata(in: part)), "\(range)")
            }
            let basic = try await HTTP.get(
                Self.sendfile(sim), headers: [HTTP.basic("test_autor"), ("Range", "bytes=0-9")])
            #expect(basic.status == 200 && Self.isLoginPage(basic.text), "Basic alone gets the login page")
        }
    }

    @Test func severalRangesOrAStartPastTheEndAre416() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let cookie = try await Self.session(sim)
            for range in ["bytes=0-9,20-29", "bytes=\(2 << 20)-"] {
                let answer = try await HTTP.get(Self.sendfile(sim), headers: [cookie, ("Range", range)])
                #expect(answer.status == 416, "\(range)")
                #expect(answer.header("Content-Range") == "bytes 0-\((2 << 20) - 1)/\(2 << 20)")
                #expect(answer.body.isEmpty)
            }
        }
    }

    @Test func rangesSwitchedOffAnswer200WithTheWholeDocument() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let cookie = try await Self.session(sim)
            let settings = try await HTTP.control(.PUT, "\(sim.controlURL)/settings", #"{"sendfile_ranges": false}"#)
            #expect((try settings.json() as? [String: Any])?["sendfile_ranges"] as? Bool == false)
            let expected = try await HTTP.get("\(sim.controlURL)/documents/\(Scenario.bigID)/content").body
            for range in ["bytes=0-99", "bytes=0-9,20-29"] {
                let answer = try await HTTP.get(Self.sendfile(sim), headers: [cookie, ("Range", range)])
                #expect(answer.status == 200, "\(range)")
                #expect(answer.header("Content-Range") == nil && answer.header("Accept-Ranges") == nil)
                #expect(Self.same(answer.body, expected), "\(range): the whole document")
            }
        }
    }

    @Test func countsRangeAnswersAndTheBytesTheySent() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let cookie = try await Self.session(sim)
            _ = try await HTTP.get(Self.sendfile(sim), headers: [cookie, ("Range", "bytes=0-99")])
            _ = try await HTTP.get(Self.sendfile(sim), headers: [cookie, ("Range", "bytes=-4096")])
            _ = try await HTTP.get(Self.sendfile(sim), headers: [cookie, ("Range", "bytes=0-9,20-29")])
            _ = try await HTTP.get(Self.sendfile(sim), headers: [cookie])
            let stats = try #require(try await HTTP.get("\(sim.controlURL)/stats").json() as? [String: Any])
            let routes = try #require(stats["routes"] as? [String: Int])
            let sent = try #require(stats["bytes_sent"] as? [String: Int])
            #expect(routes["web GET sendfile.php range"] == 2, "\(routes)")
            #expect(routes["web GET sendfile.php"] == 2, "the 416 and the whole document")
            #expect(sent["web GET sendfile.php range"] == 100 + 4096, "\(sent)")
            #expect(sent["web GET sendfile.php"] == 2 << 20)
        }
    }
}
