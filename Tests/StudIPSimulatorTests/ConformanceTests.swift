import AsyncHTTPClient
import Foundation
import NIOHTTP1
import TestSupport
import Testing

@testable import StudIPSimulator

/// Replays every request captured from a real Stud.IP 5.0.7 against the simulator (flavour 5.0, dataset
/// `fixtures-5.0.7`) and compares status, bodies and the headers clients rely on.
@Suite("Conformance with the Stud.IP 5.0.7 fixtures")
struct ConformanceTests {
    /// What the replay does not compare, and why.
    enum Exception {
        /// Counters change with every download; the capture and the replay download different things first.
        static let volatileKeys: Set<String> = ["downloads"]
        /// Server-generated values of things created during the replay: upload time and the new `files` row id.
        static let generated: [String: [String]] = [
            "jsonapi_uploaded_file_ref": [
                ".data.attributes.mkdate", ".data.attributes.chdate", ".data.relationships.file.data.id",
                ".data.relationships.file.links.related",
            ],
            "jsonapi_create_subfolder": [".data.attributes.mkdate", ".data.attributes.chdate"],
            "jsonapi_create_news_inf_current": [".data.attributes.mkdate", ".data.attributes.chdate"],
            "jsonapi_create_news_inf_expired": [".data.attributes.mkdate", ".data.attributes.chdate"],
            "jsonapi_create_news_inf_comments": [".data.attributes.mkdate", ".data.attributes.chdate"],
            "jsonapi_create_news_l14_current": [".data.attributes.mkdate", ".data.attributes.chdate"],
            "jsonapi_create_news_l14_expired": [".data.attributes.mkdate", ".data.attributes.chdate"],
            "jsonapi_create_news_l14_scheduled": [".data.attributes.mkdate", ".data.attributes.chdate"],
        ]
        /// The capture host's name and port differ from the simulator's; absolute URLs are compared without them.
        static func withoutHost(_ text: String) -> String {
            text.replacing(/http:\/\/127\.0\.0\.1(:[0-9]+)?/, with: "http://<host>")
        }
        /// The full HTML error page of Stud.IP's web layout (24 KB of navigation and session data); only the
        /// status and content type are compared.
        static let htmlErrorPages: Set<String> = ["rest_upload_file"]
        /// Text bodies name the host too (iCalendar `UID`s, the home-page link of Slim's 404 page), and
        /// iCalendar's `DTSTAMP` is the time of the request (the two captured exports were 4 seconds apart).
        static func textForm(_ body: Data) -> String {
            String(decoding: body, as: UTF8.self).replacing(/DTSTAMP:[0-9TZ]+/, with: "DTSTAMP:<now>")
                .replacing(/127\.0\.0\.1(:[0-9]+)?/, with: "<host>")
        }
    }

    @Test func replayAllCapturedRequestsInOrder() async throws {
        let fixtures = try Fixture.all()
        #expect(fixtures.count == 69)
        try await replay(fixtures, on: .fixtures507)
    }

    /// Announcements and course dates as test_autor and test_dozent read them a few days later
    /// (`fixtures-5.0.7-more` Part 1), on the dataset with those news and dates and the clock of the capture.
    @Test func replayCapturedNewsAndDates() async throws {
        let fixtures = try Self.newsAndDates.map { try Fixture.named($0, in: Fixture.more) }
        try await replay(fixtures, on: .fixtures507More)
    }

    /// The six announcements as test_dozent posted them (JSON:API `POST courses/{id}/news`), on the later dataset
    /// without them: same stored start, the end a day later than sent, the purified HTML.
    @Test func replayCapturedNewsCreation() async throws {
        var university = try Dataset.fixtures507More.load()
        let names = Self.newsCreation.map { "jsonapi_create_news_\($0)" }
        let fixtures = try names.map { try Fixture.named($0, in: Fixture.more) }
        for fixture in fixtures {
            try university.removeNews(
                try #require(fixture.header("Location")?.split(separator: "/").last.map(String.init)))
        }
        try await replay(fixtures, on: .custom(university))
    }

    static let newsCreation = [
        "inf_current", "inf_expired", "inf_comments", "l14_current", "l14_expired", "l14_scheduled",
    ]

    /// The Part 1 exchanges copied into `Tests/Fixtures/studip-5.0.7-more`, in capture order.
    static let newsAndDates = [
        "jsonapi_course_news", "jsonapi_course_news_page", "jsonapi_course_news_page2", "jsonapi_course_news_include",
        "jsonapi_course_news_dozent", "jsonapi_course2_news", "jsonapi_course2_news_dozent",
        "jsonapi_course_news_forbidden", "jsonapi_course_news_notfound", "jsonapi_news_show",
        "jsonapi_news_show_expired", "jsonapi_news_show_scheduled", "jsonapi_news_show_notfound",
        "jsonapi_news_comments", "jsonapi_user_news_self", "jsonapi_user_news_dozent", "jsonapi_user_news_dozent_page",
        "jsonapi_user_news_dozent_self", "jsonapi_user_news_root", "jsonapi_news_mine", "jsonapi_news_mine_dozent",
        "jsonapi_studip_news", "jsonapi_studip_news_page", "rest_course_news", "rest_course_news_page",
        "rest_course_news_dozent", "rest_course2_news", "rest_course_news_forbidden", "rest_news_show",
        "rest_news_show_comments_allowed", "rest_news_show_expired", "rest_news_show_scheduled", "rest_news_comments",
        "rest_user_news_self", "rest_user_news_dozent", "rest_user_news_root", "rest_studip_news",
        "rest_studip_news_page", "jsonapi_news_show_include", "jsonapi_course_news_badfilter", "jsonapi_course_events",
        "jsonapi_course_events_page", "jsonapi_course2_events", "jsonapi_course2_events_page2",
        "jsonapi_course_events_forbidden", "jsonapi_course_events_dozent", "jsonapi_user_events",
        "jsonapi_user_events_page", "jsonapi_user_events_ts_ss26", "jsonapi_user_events_include_owner",
        "jsonapi_user_events_other", "jsonapi_user_events_dozent", "jsonapi_user_events_ics",
        "jsonapi_user_events_ics_other", "jsonapi_user_events_ics_slash", "rest_course_events",
        "rest_course_events_page",
        "rest_course2_events", "rest_course2_events_page2", "rest_course_events_forbidden", "rest_user_events",
        "rest_user_events_page", "rest_user_events_other", "rest_user_events_dozent", "rest_user_events_ics",
        "rest_user_events_ics_slash", "rest_user_events_ics_other", "jsonapi_user_schedule",
        "jsonapi_user_schedule_ss26", "jsonapi_user_schedule_nosemester", "jsonapi_user_schedule_other",
        "jsonapi_user_schedule_dozent", "jsonapi_seminar_cycle_date", "rest_user_schedule", "rest_user_schedule_ws26",
        "rest_user_schedule_ss26", "rest_user_schedule_badsemester", "rest_user_schedule_other",
        "rest_user_schedule_dozent", "jsonapi_user_schedule_page", "jsonapi_course_event_self",
    ]

    private func replay(_ fixtures: [Fixture], on dataset: Dataset) async throws {
        try await withSimulator(dataset, flavour: .v50) { sim async throws in
            /// Captured id → id the simulator generated (uploads, new folders), learned from `Location` headers.
            var ids: [String: String] = [:]

            for fixture in fixtures {
                var url = fixture.url
                for (captured, generated) in ids { url = url.replacingOccurrences(of: captured, with: generated) }
                var headers = fixture.requestHeaders.map { ($0.key, $0.value) }
                if let user = fixture.user {
                    headers.append(HTTP.basic(user, fixture.name.hasSuffix("_badpw") ? "wrong-password" : "testing"))
                }
                let response = try await HTTP.request(
                    .init(rawValue: fixture.method), sim.baseURL + url, headers: headers,
                    body: Self.requestBody(for: fixture))
                try #require(response.status == fixture.status, "\(fixture.name): status \(response.status)")

                if let location = fixture.header("Location"), let actual = response.header("Location") {
                    #expect(
                        headerForm(Exception.withoutHost(location)) == headerForm(Exception.withoutHost(actual)),
                        "\(fixture.name): Location \(actual)")
                    if let captured = location.split(separator: "/").last,
                        let generated = actual.split(separator: "/").last
                    {
                        ids[String(captured)] = String(generated)
                    }
                }
                for name in ["ETag", "Content-Disposition", "WWW-Authenticate", "Last-Modified", "Content-Type"] {
                    guard let expected = fixture.header(name) else { continue }
                    let actual = response.header(name) ?? "(missing)"
                    if name == "ETag", fixture.url.hasPrefix("/api.php") {
                        // Legacy REST's ETag is the MD5 of the body, and the bodies name the capture's host.
                        #expect(headerForm(expected) == headerForm(actual), "\(fixture.name): ETag \(actual)")
                    } else if name == "Content-Type" {
                        #expect(expected.lowercased() == actual.lowercased(), "\(fixture.name): Content-Type \(actual)")
                    } else {
                        #expect(
                            Exception.withoutHost(expected) == Exception.withoutHost(actual),
                            "\(fixture.name): \(name) \(actual)")
                    }
                }
                guard let body = fixture.body, !Exception.htmlErrorPages.contains(fixture.name) else { continue }
                if fixture.isJSONBody {
                    compareJSON(fixture, body: body, actual: response.body, ids: ids)
                } else {
                    #expect(
                        Exception.textForm(body) == Exception.textForm(response.body),
                        "\(fixture.name): body differs (\(response.body.count) bytes)")
                }
            }
        }
    }

    private func compareJSON(_ fixture: Fixture, body: Data, actual: Data, ids: [String: String]) {
        guard let expected = JSON.parse(String(decoding: body, as: UTF8.self)),
            let got = JSON.parse(String(decoding: actual, as: UTF8.self))
        else {
            Issue.record("\(fixture.name): body is not JSON: \(String(decoding: actual.prefix(200), as: UTF8.self))")
            return
        }
        let generated = Set(Exception.generated[fixture.name] ?? [])
        var comparison = JSONComparison(
            normalize: Exception.withoutHost,
            volatile: { path in
                generated.contains(path)
                    || Exception.volatileKeys.contains(String(path.split(separator: ".").last ?? ""))
            },
            rewrite: { text in
                var text = Exception.withoutHost(text)
                for (captured, new) in ids { text = text.replacingOccurrences(of: captured, with: new) }
                return text
            })
        comparison.compare(expected, got)
        #expect(comparison.differences.isEmpty, "\(fixture.name): \(comparison.differences.prefix(5))")
    }

    /// The bodies the capture script sent: one multipart file for uploads, a resource object for new folders.
    static func requestBody(for fixture: Fixture) -> Data? {
        if let type = fixture.requestHeaders["Content-Type"], type.hasPrefix("multipart/form-data; boundary=") {
            let boundary = String(type.dropFirst("multipart/form-data; boundary=".count))
            let content = "Hochgeladen über die API: \(fixture.name)\n"
            let name = fixture.name == "jsonapi_upload_file_ref" ? "upload-jsonapi.txt" : "\(fixture.name).txt"
            let payload = fixture.name == "jsonapi_upload_file_ref" ? String(repeating: "x", count: 41) + "\n" : content
            let body =
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(name)\"\r\n"
                + "Content-Type: text/plain\r\n\r\n\(payload)\r\n--\(boundary)--\r\n"
            return Data(body.utf8)
        }
        if fixture.name.hasPrefix("jsonapi_create_news_"), let sent = fixture.requestJSON {
            return Data(sent.encoded().utf8)
        }
        if fixture.name == "jsonapi_create_subfolder" {
            return Data(
                #"{"data":{"type":"folders","attributes":{"name":"API-Testordner","description":"via JSON:API"}}}"#.utf8
            )
        }
        return nil
    }
}
