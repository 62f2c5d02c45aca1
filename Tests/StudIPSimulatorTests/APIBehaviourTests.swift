import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// Focused checks of both API handlers, called in-process on the fixtures dataset.
@Suite("JSON:API and legacy REST behaviour")
struct APIBehaviourTests {
    static let autor = "e7a0a84b161f3e8c09b4a0a2e8a58147"
    static let inf101 = "29f7bd5e79910822b1be93be3c53a72c"
    static let topFolder = "2857ad97a2ea169cfcd40e47f8a26b1c"
    static let uebungen = "4e107a3e74b5a1e14c92af681110bb03"
    static let umlautFile = "514fd500a2e4505f32aa939245044f6c"

    static func context(_ flavour: Flavour = .v50, university: University? = nil) throws -> SimContext {
        let snapshot = try university ?? FixturesDataset.load()
        return SimContext(
            university: snapshot, flavour: flavour, basePath: "", baseURL: "http://127.0.0.1:8080",
            externalBaseURL: "http://127.0.0.1:9",
            mutate: { change in
                var copy = snapshot
                try change(&copy)
                return copy
            })
    }

    static func jsonapi(
        _ path: String, query: [(name: String, value: String)] = [], accept: String? = "application/vnd.api+json",
        user: String? = "test_autor", flavour: Flavour = .v50, headers: [String: String] = [:], method: String = "GET"
    ) async throws -> SimResponse {
        let context = try context(flavour)
        var all = headers
        if let accept { all["accept"] = accept }
        let request = SimRequest(
            method: method, segments: path.split(separator: "/").map(String.init), query: query, headers: all,
            user: user.flatMap { context.university.user(named: $0) })
        return await JSONAPIHandler().handle(request, context: context)
    }

    static func rest(
        _ path: String, query: [(name: String, value: String)] = [], user: String? = "test_autor",
        headers: [String: String] = [:], method: String = "GET", university: University? = nil
    ) async throws -> SimResponse {
        let context = try context(.v50, university: university)
        let request = SimRequest(
            method: method, segments: path.split(separator: "/").map(String.init), query: query, headers: headers,
            user: user.flatMap { context.university.user(named: $0) })
        return await LegacyRESTHandler().handle(request, context: context)
    }

    static func json(_ response: SimResponse) throws -> JSON {
        guard case .bytes(let data) = response.body else { throw CancellationError() }
        return try #require(JSON.parse(String(decoding: data, as: UTF8.self)))
    }

    // MARK: - Flavours

    @Test func flavour55AddsCountsIsEmptyAndIsCurrent() async throws {
        let folder = try Self.json(try await Self.jsonapi("folders/\(Self.topFolder)", flavour: .v55))
        let data = try #require(folder["data"])
        #expect(data["attributes"]?["is-empty"] == .bool(false))
        #expect(data["relationships"]?["folders"]?["meta"]?["count"] == .int(3))
        #expect(data["relationships"]?["file-refs"]?["meta"]?["count"] == .int(1))
        guard case .object(let owner)? = data["relationships"]?["owner"] else { throw CancellationError() }
        #expect(owner.map(\.0) == ["links", "data", "meta"])

        let old = try Self.json(try await Self.jsonapi("folders/\(Self.topFolder)", flavour: .v50))
        #expect(old["data"]?["attributes"]?["is-empty"] == nil)
        #expect(old["data"]?["relationships"]?["folders"]?["meta"] == nil)

        let semesters = try Self.json(try await Self.jsonapi("semesters", flavour: .v55))
        guard case .array(let items)? = semesters["data"] else { throw CancellationError() }
        #expect(items.last?["attributes"]?["is-current"] == .bool(true))
        #expect(items.last?["attributes"]?["description"] == nil)

        let me = try Self.json(try await Self.jsonapi("users/me", flavour: .v6))
        guard case .array(let memberships)? = me["data"]?["relationships"]?["course-memberships"]?["data"] else {
            throw CancellationError()
        }
        #expect(memberships.count == 5)
        let ref = try Self.json(try await Self.jsonapi("file-refs/\(Self.umlautFile)", flavour: .v55))
        guard case .string(let url)? = ref["data"]?["meta"]?["download-url"] else { throw CancellationError() }
        #expect(url.hasPrefix("/sendfile.php?type=0&file_id=\(Self.umlautFile)&file_name="))
    }

    @Test func flavour6ContentDispositionHasBothForms() async throws {
        let response = try await Self.jsonapi("file-refs/\(Self.umlautFile)/content", accept: nil, flavour: .v6)
        #expect(
            response.header("Content-Disposition")
                == "attachment; filename=\"Ubungsblatt_1_-_Losungen.txt\"; "
                + "filename*=UTF-8''%C3%9Cbungsblatt_1_%E2%80%93_L%C3%B6sungen.txt")
    }

    // MARK: - JSON:API request rules

    @Test func acceptHeaderRule() async throws {
        #expect(try await Self.jsonapi("users/me", accept: "application/json").status == 406)
        #expect(try await Self.jsonapi("users/me", accept: "*/*").status == 200)
        #expect(try await Self.jsonapi("users/me", accept: "application/*").status == 200)
        #expect(try await Self.jsonapi("users/me", accept: nil, flavour: .v50).status == 200)
        #expect(try await Self.jsonapi("users/me", accept: nil, flavour: .v55).status == 406)
        #expect(
            try await Self.jsonapi("file-refs/\(Self.umlautFile)/content", accept: "application/json").status == 200)
        let error = try await Self.jsonapi("users/me", accept: "text/html", flavour: .v55)
        #expect(error.header("Content-Type") == "application/json")
        #expect(try Self.json(error) == ["errors": [["status": "406", "title": "Not Acceptable Error"]]])
    }

    @Test func unknownAndMisplacedParametersAre400() async throws {
        let unknown = try await Self.jsonapi("semesters", query: [("foo", "1")])
        #expect(unknown.status == 400)
        let paging = try await Self.jsonapi("folders/\(Self.topFolder)", query: [("page[offset]", "0")], flavour: .v55)
        #expect(paging.status == 400)
        #expect(
            try Self.json(paging)
                == ["errors": [["title": "Page parameter offset is not allowed.", "source": ["parameter": "page"]]]])
        #expect(try await Self.jsonapi("semesters", query: [("filter[current]", "1")]).status == 400)
    }

    @Test func trailingSlashRedirectsAndErrorShapes() async throws {
        let context = try Self.context()
        let request = SimRequest(method: "GET", segments: ["users", "me"], hasTrailingSlash: true)
        let redirect = await JSONAPIHandler().handle(request, context: context)
        #expect(redirect.status == 301)
        #expect(redirect.header("Location") == "/jsonapi.php/v1/users/me")

        let old = try await Self.jsonapi("folders/00000000000000000000000000000000")
        #expect(old.header("Content-Type") == "application/vnd.api+json")
        #expect(try Self.json(old) == ["errors": [["id": "Not Found", "status": "404"]]])
        let new = try await Self.jsonapi("folders/00000000000000000000000000000000", flavour: .v6)
        #expect(try Self.json(new) == ["errors": [["status": "404", "title": "Not Found"]]])
        #expect(try await Self.jsonapi("users/me", user: nil).status == 401)
        #expect(try await Self.jsonapi("semesters", user: nil).status == 200)
    }

    // MARK: - Pagination

    @Test func jsonapiPaginationBoundaries() async throws {
        let path = "users/\(Self.autor)/courses"
        func page(_ offset: Int, _ limit: Int) async throws -> JSON {
            try Self.json(
                try await Self.jsonapi(path, query: [("page[offset]", "\(offset)"), ("page[limit]", "\(limit)")]))
        }
        func offsetOf(_ link: JSON?) -> String? {
            guard case .string(let url)? = link else { return nil }
            return url.firstMatch(of: /page%5Boffset%5D=(\d+)/).map { String($0.1) }
        }
        let first = try await page(0, 1)
        guard case .array(let one)? = first["data"] else { throw CancellationError() }
        #expect(one.count == 1)
        #expect(offsetOf(first["links"]?["last"]) == "4")
        #expect(offsetOf(first["links"]?["next"]) == "1")
        #expect(first["links"]?["prev"] == nil)

        let wrongLast = try await page(0, 2)
        #expect(offsetOf(wrongLast["links"]?["last"]) == "2", "the shipped Paginator's last offset for 5 items")

        let atEnd = try await page(5, 2)
        #expect(atEnd["data"] == .array([]))
        #expect(atEnd["meta"]?["page"]?["total"] == .int(5))
        #expect(atEnd["links"]?["next"] == nil)
        #expect(offsetOf(atEnd["links"]?["prev"]) == "3")

        let beyond = try await page(50, 2)
        #expect(beyond["data"] == .array([]))
    }

    @Test func legacyPaginationNextPointsToItself() async throws {
        let path = "user/\(Self.autor)/courses"
        let last = try Self.json(try await Self.rest(path, query: [("offset", "4"), ("limit", "2")]))
        #expect(last["pagination"]?["offset"] == .int(4))
        guard case .string(let next)? = last["pagination"]?["links"]?["next"] else { throw CancellationError() }
        #expect(next == "/api.php/\(path)?offset=4&limit=2")
        guard case .object(let items)? = last["collection"] else { throw CancellationError() }
        #expect(items.count == 1)

        let all = try Self.json(try await Self.rest(path))
        #expect(all["pagination"]?["links"] == nil, "links only when total > limit")
        let rounded = try Self.json(try await Self.rest(path, query: [("offset", "3"), ("limit", "2")]))
        #expect(rounded["pagination"]?["offset"] == .int(2))
        let empty = try Self.json(try await Self.rest(path, query: [("offset", "9"), ("limit", "2")]))
        #expect(empty["collection"] == .array([]))
    }

    // MARK: - Downloads

    @Test func etagAndIfNoneMatch() async throws {
        let path = "file-refs/\(Self.umlautFile)/content"
        let head = try await Self.jsonapi(path, accept: nil, method: "HEAD")
        let etag = try #require(head.header("ETag"))
        #expect(etag.contains(/^"\d+ \d+ 49"$/))
        #expect(try await Self.jsonapi(path, accept: nil, headers: ["if-none-match": etag]).status == 304)
        #expect(try await Self.jsonapi(path, accept: nil, headers: ["if-none-match": "*"]).status == 304)
        #expect(try await Self.jsonapi(path, accept: nil, headers: ["if-none-match": "\"1 2 3\""]).status == 200)
        #expect(
            try await Self.jsonapi(path, accept: nil, headers: ["if-none-match": "\"1 2 3\", \(etag)"]).status == 304)
        let weak = try await Self.jsonapi(path, accept: nil, headers: ["if-none-match": "W/\(etag)"])
        #expect(weak.status == 200, "strong comparison only, as captured (p2_v4_jsonapi_content_if_none_match_weak)")
        let forbidden = try await Self.jsonapi("file-refs/5f3393347f23ede7610f8b8b8b565980/content", accept: nil)
        #expect(forbidden.status == 403)
        #expect(forbidden.header("Content-Type") == "text/html; charset=UTF-8")
    }

    /// Stud.IP 5.0.7's `RouteMap::lastModified()` compares a date string with an integer: `If-Modified-Since`
    /// never gets a 304, `If-Unmodified-Since` always gets a 412 (fixtures-5.0.7-more Part 2, `p2_*_rest_download_if_*`).
    @Test func conditionalRequestsAndHeadOnLegacyDownload() async throws {
        let path = "file/\(Self.umlautFile)/download"
        let full = try await Self.rest(path)
        #expect(full.header("Last-Modified") == "Thu, 15 Oct 2026 08:09:00 GMT")
        for date in ["Thu, 15 Oct 2026 08:09:00 GMT", "Thu, 15 Oct 2026 08:08:59 GMT"] {
            let conditional = try await Self.rest(path, headers: ["if-modified-since": date])
            guard case .document(let id, _, _, _) = conditional.body else { throw CancellationError() }
            #expect(conditional.status == 200 && id == Self.umlautFile)
        }
        let unmodified = try await Self.rest(path, headers: ["if-unmodified-since": "Thu, 15 Oct 2026 08:09:00 GMT"])
        guard case .empty = unmodified.body else { throw CancellationError() }
        #expect(unmodified.status == 412)
        let head = try await Self.rest(path, method: "HEAD")
        #expect(head.status == 405)
        #expect(head.header("Allow") == "GET")
    }

    @Test func contentDispositionForms() {
        #expect(ContentDisposition.attachment("Kapitel 1.pdf") == "attachment; filename=\"Kapitel 1.pdf\"")
        #expect(ContentDisposition.attachment("Lösung.txt") == "attachment; filename*=UTF-8''L%C3%B6sung.txt")
        #expect(ContentDisposition.attachment("100% sicher.txt") == "attachment; filename*=UTF-8''100%25%20sicher.txt")
        #expect(ContentDisposition.cleanFileName("daten (groß).bin") == "daten_groß.bin")
        #expect(ContentDisposition.cleanFileName(".a&b;c d?.txt") == "a+b-c_d.txt")
    }

    @Test func legacyErrorShapes() async throws {
        let noAuth = try await Self.rest("user", user: nil)
        #expect(noAuth.status == 401)
        #expect(noAuth.header("WWW-Authenticate") == "Basic realm=\"demo-installation\"")
        let foreign = try await Self.rest("course/6a46f9f6be280c641496e59e58648a18")
        #expect(foreign.status == 401)
        #expect(try Self.json(foreign) == "")
        let missing = try await Self.rest("folder/00000000000000000000000000000000")
        #expect(try Self.json(missing) == "Folder with id 00000000000000000000000000000000 not found!")
        #expect(try await Self.rest("no/such/route").status == 404)
        #expect(try await Self.rest("semesters", user: nil).status == 200)
    }

    @Test func legacyIsGoneOn6x() async throws {
        try await withSimulator(.fixtures507, flavour: .v6) { sim async throws in
            let response = try await HTTP.get("\(sim.baseURL)/api.php/user", headers: [HTTP.basic("test_autor")])
            #expect(response.status == 404)
        }
    }
}
