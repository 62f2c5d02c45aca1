import Foundation
import StudIPKit
import StudIPModel
import StudIPWire
import TestSupport
import Testing

@testable import StudIPKit
@testable import StudIPSimulator

/// Announcements, course dates and the timetable (issue 18) decoded from the exchanges captured on Stud.IP 5.0.7
/// (Fixtures/studip-5.0.7-more, README there): the values the README's tables promise, and the same model values
/// through both APIs where both carry them.
@Suite("Announcements, dates and timetable from the 5.0.7 captures")
struct CourseItemsTests {
    static let inf101 = "29f7bd5e79910822b1be93be3c53a72c"
    static let l14 = "3e96f409a19c24b672d5d8534c827e73"
    static let dozentID = "205f3efb7997a0fc9755da2b535038da"
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Fixtures/studip-5.0.7-more")

    static func body(_ name: String) throws -> JSONValue {
        try JSONValue.parse(Data(contentsOf: fixtures.appending(path: "\(name).json")), what: name)
    }

    /// The `data` elements of JSON:API pages, in order.
    static func jsonAPIData(_ names: String...) throws -> [JSONValue] {
        try names.flatMap { try #require(body($0)["data"]?.array) }
    }

    /// The `collection` elements of legacy REST pages, in order.
    static func legacyCollection(_ names: String...) throws -> [JSONValue] {
        try names.flatMap { try #require(body($0)["collection"]?.elements) }
    }

    /// An instant given as wall-clock time in Europe/Berlin, as the README's tables give them.
    static func berlin(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int) throws -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: "Europe/Berlin"))
        return try #require(
            calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute)))
    }

    static func jsonAPIAnnouncements(_ name: String) throws -> [Announcement] {
        let document = try body(name)
        return try JSONAPIFormat.announcements(
            try #require(document["data"]?.array), included: document["included"]?.array ?? [], what: name)
    }

    static func legacyAnnouncements(_ name: String) throws -> [Announcement] {
        try LegacyRESTFormat.announcements(
            legacyCollection(name), names: [dozentID: "Testaccount Dozent"], what: name)
    }

    // MARK: - Announcements

    @Test("course news: only the published ones, newest first, the HTML marker gone, end as returned")
    func jsonAPINews() throws {
        let news = try Self.jsonAPIAnnouncements("jsonapi_course_news")
        #expect(news.map(\.id) == ["8cee09c018ea2cced83190ff0f5413f8", "2506890f1ea83fdd6c59bda6885ddd25"])
        let comments = news[0]
        #expect(comments.title == "Klausurtermin & Hinweise (Kommentare erlaubt)")
        #expect(comments.html.hasPrefix("<p>Liebe Studierende,</p><p>der <strong>Klausurtermin</strong>"))
        #expect(!news.contains { $0.html.contains("<!--HTML-->") })
        #expect(comments.published == (try Self.berlin(2026, 11, 23, 0, 0)))
        #expect(comments.expires == (try Self.berlin(2026, 12, 19, 0, 0)), "sent 2026-12-18, returned a day later")
        #expect(comments.changed == Date(timeIntervalSince1970: 1_795_480_349))
        #expect(comments.commentsAllowed)
        #expect(!news[1].commentsAllowed)
        #expect(news[1].expires == (try Self.berlin(2027, 4, 1, 0, 0)))
        #expect(news.allSatisfy { $0.authorName == nil }, "no author without include=author")
        #expect(try Self.jsonAPIAnnouncements("jsonapi_course2_news").map(\.id) == ["2194e176832502797db5120c58cf7f7a"])
    }

    @Test("include=author names the author without a request per item")
    func jsonAPIAuthor() throws {
        let news = try Self.jsonAPIAnnouncements("jsonapi_course_news_include")
        #expect(news.count == 2)
        #expect(news.allSatisfy { $0.authorName == "Testaccount Dozent" })
    }

    @Test("legacy REST news: body_html unwrapped, date + expire; both APIs give the same announcements")
    func legacyNews() throws {
        let legacy = try Self.legacyAnnouncements("rest_course_news")
        #expect(legacy.map(\.id) == ["8cee09c018ea2cced83190ff0f5413f8", "2506890f1ea83fdd6c59bda6885ddd25"])
        #expect(!legacy.contains { $0.html.contains("formatted-content") || $0.html.contains("<!--HTML-->") })
        #expect(legacy == (try Self.jsonAPIAnnouncements("jsonapi_course_news_include")))
        #expect(
            try Self.legacyAnnouncements("rest_course2_news")
                == (try Self.jsonAPIAnnouncements("jsonapi_course2_news")).map {
                    var named = $0
                    named.authorName = "Testaccount Dozent"
                    return named
                })
        let unknownAuthor = try LegacyRESTFormat.announcements(
            Self.legacyCollection("rest_course_news"), names: [:], what: "test")
        #expect(unknownAuthor.allSatisfy { $0.authorName == nil })
    }

    // MARK: - Dates

    @Test("INF-101: 19 dates, the cancelled one flagged in both APIs, rooms and Berlin times")
    func inf101Dates() throws {
        let jsonAPI = try JSONAPIFormat.courseDates(Self.jsonAPIData("jsonapi_course_events"), what: "test")
        let legacy = try LegacyRESTFormat.courseDates(Self.legacyCollection("rest_course_events"), what: "test")
        for dates in [jsonAPI, legacy] {
            #expect(dates.count == 19)
            #expect(dates.filter(\.isCancelled).map(\.id) == ["e5184063f32dcb46ccc9dd663caee8be"])
            let first = try #require(dates.first)
            #expect(first.id == "12a4df2575dfdb19f7214a5b216e42a8")
            #expect(first.start == (try Self.berlin(2026, 10, 13, 10, 15)), "summer time")
            #expect(first.end == (try Self.berlin(2026, 10, 13, 11, 45)))
            #expect(first.title == "Vorlesung")
            #expect(first.room == "Hörsaal 1 (Gebäude Ä, Raum 0.12)")
            let excursion = try #require(dates.first { $0.id == "c70baa6aa032028a81b9ce6bc138a8f2" })
            #expect(excursion.start == (try Self.berlin(2026, 12, 3, 14, 0)), "winter time")
            #expect(excursion.end == (try Self.berlin(2026, 12, 3, 17, 0)))
            #expect(excursion.title == "Exkursion")
            #expect(excursion.room == "Rechenzentrum, Treffpunkt Foyer")
            let exam = try #require(dates.last)
            #expect(exam.id == "f84ff469016fe49940fde3a9f1d04fbf")
            #expect(exam.room == "Audimax")
            #expect(!exam.isCancelled)
        }
        let cancelled = try #require(jsonAPI.first { $0.isCancelled })
        #expect(
            cancelled.cancellationNote == "Dies academicus – die Veranstaltung fällt aus. Nächster Termin wie üblich.")
        #expect(cancelled.description == nil)
        #expect(
            cancelled.title == "Vorlesung",
            "JSON:API gives no category: its siblings' title \"Vorlesung, Einführung in die Informatik\" have one")
        #expect(try #require(legacy.first { $0.isCancelled }).title == cancelled.title, "REST names the same kind")
        #expect(try #require(legacy.first { $0.isCancelled }).room == nil, "REST's room \"(fällt aus)\" is none")
        #expect(legacy.last?.cancellationNote == "Fastnacht", "a holiday's name, the exam still takes place")
        // The dates that take place read the same through both APIs, apart from REST's holiday name.
        let plain = { (dates: [CourseDate]) in
            dates.filter { !$0.isCancelled }.map {
                var date = $0
                date.cancellationNote = nil
                return date
            }
        }
        #expect(plain(jsonAPI).count == 18)
        #expect(plain(jsonAPI) == plain(legacy))
        #expect(
            jsonAPI.map { [$0.id, "\($0.start)", "\($0.end)"] } == legacy.map { [$0.id, "\($0.start)", "\($0.end)"] })
    }

    @Test("L-14: 33 dates over two pages in both APIs, the cancelled one flagged with the same id")
    func l14Dates() throws {
        let jsonAPI = try JSONAPIFormat.courseDates(
            Self.jsonAPIData("jsonapi_course2_events", "jsonapi_course2_events_page2"), what: "test")
        let legacy = try LegacyRESTFormat.courseDates(
            Self.legacyCollection("rest_course2_events", "rest_course2_events_page2"), what: "test")
        for dates in [jsonAPI, legacy] {
            #expect(dates.count == 33)
            #expect(Set(dates.map(\.id)).count == 33)
            #expect(dates.filter(\.isCancelled).map(\.id) == ["1f343d164952931b912b99bd7c1b29cd"])
            let special = try #require(dates.first { $0.id == "7320a801297b47c59df46be69d8f4ec6" })
            #expect(special.title == "Sondersitzung")
            #expect(special.room == "Großer Sitzungssaal")
            #expect(special.start == (try Self.berlin(2026, 11, 27, 9, 0)))
            #expect(dates.filter { $0.room == "Projektlabor Ü 3 (Informatikgebäude)" }.count >= 30)
        }
        #expect(jsonAPI.map(\.id) == legacy.map(\.id), "both by start")
        // The cancelled meeting's kind: REST's category, JSON:API's siblings' ("Projekttreffen, <course>": Sitzung).
        #expect(jsonAPI.first(where: \.isCancelled)?.title == "Sitzung")
        #expect(legacy.first(where: \.isCancelled)?.title == "Sitzung")
        // A date without a room: REST's "()" is none, as JSON:API's empty location.
        guard case .object(let date) = try #require(Self.legacyCollection("rest_course2_events").first) else {
            Issue.record("a date is an object")
            return
        }
        let roomless = JSONObject(pairs: date.pairs + [("room", .string("()"))])
        #expect(try LegacyRESTFormat.courseDates([.object(roomless)], what: "test").first?.room == nil)
    }

    // MARK: - Timetable

    @Test("timetable: the same slots through users/{id}/schedule and user/{id}/schedule/{semester}")
    func schedule() throws {
        let jsonAPI = try JSONAPIFormat.schedule(Self.jsonAPIData("jsonapi_user_schedule"), what: "test")
        let legacy = try LegacyRESTFormat.schedule(Self.body("rest_user_schedule_ws26"), what: "test")
        #expect(
            jsonAPI == [
                ScheduleSlot(
                    id: "882af53b277ea00a814c473f6b65e9da", courseID: Self.inf101,
                    title: "INF-101 Einführung in die Informatik", weekday: 2, startMinute: 10 * 60 + 15,
                    endMinute: 11 * 60 + 45, room: "Hörsaal 1 (Gebäude Ä, Raum 0.12)", description: "Vorlesung"),
                ScheduleSlot(
                    id: "be73e4a7e93b54775bff963414ff2fff", courseID: Self.l14,
                    title: "L-14 Projektseminar SS 2026 – WS 2026/27", weekday: 3, startMinute: 16 * 60 + 15,
                    endMinute: 17 * 60 + 45, room: "Projektlabor Ü 3 (Informatikgebäude)",
                    description: "Projekttreffen"),
            ])
        #expect(legacy == jsonAPI)
        let summer = try JSONAPIFormat.schedule(Self.jsonAPIData("jsonapi_user_schedule_ss26"), what: "test")
        #expect(summer == (try LegacyRESTFormat.schedule(Self.body("rest_user_schedule_ss26"), what: "test")))
        #expect(summer.map(\.courseID).contains(Self.l14))
    }

    // MARK: - Broken answers

    @Test("malformed items and shapes are a clear error, never a crash")
    func malformed() throws {
        let broken: [(String, () throws(StudIPError) -> Void)] = [
            (
                "news without id",
                { () throws(StudIPError) in
                    _ = try JSONAPIFormat.announcements(
                        [.object(["attributes": .object([:])])], included: [], what: "x")
                }
            ),
            (
                "REST news without date",
                { () throws(StudIPError) in
                    _ = try LegacyRESTFormat.announcements([.object(["news_id": .string("a")])], names: [:], what: "x")
                }
            ),
            (
                "date without end",
                { () throws(StudIPError) in
                    _ = try JSONAPIFormat.courseDates(
                        [
                            .object([
                                "id": .string("a"),
                                "attributes": .object(["start": .string("2026-10-13T10:15:00+02:00")]),
                            ])
                        ],
                        what: "x")
                }
            ),
            (
                "REST date with text times",
                { () throws(StudIPError) in
                    _ = try LegacyRESTFormat.courseDates(
                        [.object(["event_id": .string("a"), "start": .string("soon"), "end": .string("later")])],
                        what: "x")
                }
            ),
            (
                "slot at 25:00",
                { () throws(StudIPError) in
                    _ = try JSONAPIFormat.schedule(
                        [
                            .object([
                                "id": .string("a"),
                                "attributes": .object([
                                    "weekday": .number(2), "start": .string("25:00"), "end": .string("26:00"),
                                ]),
                            ])
                        ],
                        what: "x")
                }
            ),
            (
                "REST schedule as a list",
                { () throws(StudIPError) in
                    _ = try LegacyRESTFormat.schedule(.array([]), what: "x")
                }
            ),
            (
                "REST schedule day 9",
                { () throws(StudIPError) in
                    _ = try LegacyRESTFormat.schedule(.object(["9": .array([])]), what: "x")
                }
            ),
        ]
        for (label, decode) in broken {
            do {
                try decode()
                Issue.record("\(label): accepted")
            } catch {
                guard case .malformedResponse(what: "x", _) = error else {
                    Issue.record("\(label): \(error)")
                    continue
                }
            }
        }
    }
}

/// The sources' methods over HTTP: the simulator answers the captured bodies (faults replace its answer), so the
/// paging, the error rules and the request counts are those of a real refresh.
@Suite("Announcements, dates and timetable through both sources")
struct CourseItemSourceTests {
    typealias Captured = CourseItemsTests

    static func text(_ name: String) throws -> String {
        try String(contentsOf: Captured.fixtures.appending(path: "\(name).json"), encoding: .utf8)
    }

    @Test("JSON:API: the captured news with their author, one request; 403 gives []")
    func jsonAPIAnnouncements() async throws {
        try await withSimulator(flavour: .v50) { sim async throws in
            sim.inject(Fault(action: .body(try Self.text("jsonapi_course_news_include")), pathContains: "/news"))
            try await withSource(Harness.configuration(sim, api: .jsonAPI)) { source async throws in
                sim.resetStatistics()
                let news = try await source.announcements(courseID: Captured.inf101)
                #expect(sim.served == 1)
                #expect(news == (try Captured.jsonAPIAnnouncements("jsonapi_course_news_include")))
                #expect(news.map(\.authorName) == ["Testaccount Dozent", "Testaccount Dozent"])
                sim.clearFaults()
                sim.inject(Fault(action: .status(403), pathContains: "/news"))
                #expect(try await source.announcements(courseID: Captured.inf101) == [])
                sim.inject(Fault(action: .status(403), pathContains: "/events"))
                #expect(try await source.dates(courseID: Captured.inf101) == [])
            }
        }
    }

    @Test("legacy REST: L-14's 33 dates over the captured two pages, two requests")
    func legacyDatePages() async throws {
        try await withSimulator(flavour: .v50) { sim async throws in
            for page in ["rest_course2_events", "rest_course2_events_page2"] {
                sim.inject(Fault(action: .body(try Self.text(page)), pathContains: "/events", remaining: 1))
            }
            try await withSource(Harness.configuration(sim, api: .legacyREST)) { source async throws in
                sim.resetStatistics()
                let dates = try await source.dates(courseID: Captured.l14)
                #expect(sim.served == 2)
                #expect(dates.count == 33)
                #expect(dates.filter(\.isCancelled).map(\.id) == ["1f343d164952931b912b99bd7c1b29cd"])
            }
        }
    }

    /// The captured response as the transport sees it: status, headers, body.
    static func captured(_ name: String, in folder: String = "studip-5.0.7-more") throws -> HTTPResponse {
        let directory = Captured.fixtures.deletingLastPathComponent().appending(path: folder)
        let meta = try JSONValue.parse(Data(contentsOf: directory.appending(path: "\(name).meta.json")), what: name)
        var headers: [String: [String]] = [:]
        for pair in meta["headers"]?.array ?? [] {
            if let field = pair.array?.first?.string, let value = pair.array?.last?.string {
                headers[field.lowercased(), default: []].append(value)
            }
        }
        let file = try #require(meta["body_file"]?.string)
        return HTTPResponse(
            status: Int(try #require(meta["status"]?.int)), headers: headers,
            body: try Data(contentsOf: directory.appending(path: file)))
    }

    @Test("the captured 401s: a course route's refusal is told apart from refused credentials")
    func capturedRefusals() throws {
        for name in ["rest_course_news_forbidden", "rest_course_events_forbidden"] {
            #expect(HTTPTransport.isRouteRefusal(try Self.captured(name)), "\(name)")
        }
        for name in ["rest_user_badpw", "rest_user_noauth"] {
            #expect(!HTTPTransport.isRouteRefusal(try Self.captured(name, in: "studip-5.0.7")), "\(name)")
        }
    }

    @Test("legacy REST refuses a course's route with 401 and \"\": access denied, not \"login needed\"")
    func legacyRouteRefusal() async throws {
        // Captured as rest_course_top_folder_forbidden (fixtures-5.0.7): test_autor is no member of this course.
        let foreign = RemoteCourse(id: "6a46f9f6be280c641496e59e58648a18", number: "", title: "Fremd", semesterIDs: [])
        try await withSimulator(flavour: .v50) { sim async throws in
            try await withSource(Harness.configuration(sim, api: .legacyREST)) { source async throws in
                let error = await Harness.error { () async throws(StudIPError) in try await source.content(of: foreign)
                }
                guard case .forbidden = try #require(error) else {
                    Issue.record("\(String(describing: error))")
                    return
                }
            }
        }
    }

    @Test(
        "timetable: the semester picked by a time within it; 404 means none (nil)",
        arguments: [
            ClientConfiguration.API.jsonAPI, .legacyREST,
        ])
    func schedule(api: ClientConfiguration.API) async throws {
        let winter = "3f2e08d1db6da3e65754e0a193bdb775"
        let captured = api == .jsonAPI ? "jsonapi_user_schedule" : "rest_user_schedule_ws26"
        try await withSimulator(flavour: .v50) { sim async throws in
            try await withSource(Harness.configuration(sim, api: api)) { source async throws in
                _ = try await source.overview()
                sim.inject(Fault(action: .body(try Self.text(captured)), pathContains: "/schedule", remaining: 1))
                sim.resetStatistics()
                let slots = try #require(try await source.schedule(semesterID: winter))
                #expect(sim.served == 1)
                #expect(slots.map(\.courseID) == [Captured.inf101, Captured.l14])
                #expect(slots.map(\.weekday) == [2, 3])
                sim.inject(Fault(action: .status(404), pathContains: "/schedule"))
                #expect(try await source.schedule(semesterID: winter) == nil)
            }
        }
    }
}

/// The simulator's routes (`.fixtures507More`: the data the captures were made with) through both sources.
@Suite("Announcements, dates and timetable against the simulator")
struct CourseItemSimulatorTests {
    typealias Captured = CourseItemsTests
    static let l17 = "45c1cafc071c9c77b79e333aaecf1cd7"
    static let winter = "3f2e08d1db6da3e65754e0a193bdb775"

    struct Read: Equatable {
        var news: [Announcement]
        var l14News: [Announcement]
        var dates: [CourseDate]
        var l14Dates: [CourseDate]
        var schedule: [ScheduleSlot]?
    }

    static func read(api: ClientConfiguration.API, flavour: Flavour = .v50) async throws -> Read {
        try await withSimulator(.fixtures507More, flavour: flavour) { sim async throws in
            try await withSource(Harness.configuration(sim, api: api)) { source async throws in
                _ = try await source.overview()
                #expect(try await source.announcements(courseID: Self.l17) == [], "not a member")
                #expect(try await source.dates(courseID: Self.l17) == [], "not a member")
                return Read(
                    news: try await source.announcements(courseID: Captured.inf101),
                    l14News: try await source.announcements(courseID: Captured.l14),
                    dates: try await source.dates(courseID: Captured.inf101),
                    l14Dates: try await source.dates(courseID: Captured.l14),
                    schedule: try await source.schedule(semesterID: Self.winter))
            }
        }
    }

    @Test("the captured values, the same through both APIs", arguments: [Flavour.v50, .v55])
    func bothAPIs(flavour: Flavour) async throws {
        let jsonAPI = try await Self.read(api: .jsonAPI, flavour: flavour)
        let legacy = try await Self.read(api: .legacyREST, flavour: flavour)
        for read in [jsonAPI, legacy] {
            #expect(read.news.map(\.id) == ["8cee09c018ea2cced83190ff0f5413f8", "2506890f1ea83fdd6c59bda6885ddd25"])
            #expect(read.news.allSatisfy { $0.authorName == "Testaccount Dozent" })
            #expect(read.l14News.map(\.id) == ["2194e176832502797db5120c58cf7f7a"])
            #expect(read.dates.count == 19)
            #expect(read.dates.filter(\.isCancelled).map(\.id) == ["e5184063f32dcb46ccc9dd663caee8be"])
            #expect(read.l14Dates.count == 33)
            #expect(read.l14Dates.filter(\.isCancelled).map(\.id) == ["1f343d164952931b912b99bd7c1b29cd"])
            #expect(read.schedule?.map(\.courseID) == [Captured.inf101, Captured.l14])
        }
        #expect(jsonAPI.news == legacy.news)
        #expect(jsonAPI.schedule == legacy.schedule)
        #expect(jsonAPI.dates.map(\.start) == legacy.dates.map(\.start))
        #expect(
            jsonAPI.dates.filter { !$0.isCancelled }.map(\.room) == legacy.dates.filter { !$0.isCancelled }.map(\.room))
    }

    @Test("JSON:API on 6.x: the same announcements, dates and timetable")
    func jsonAPI6() async throws {
        let read = try await Self.read(api: .jsonAPI, flavour: .v6)
        #expect(read.news.count == 2)
        #expect(read.dates.filter(\.isCancelled).map(\.id) == ["e5184063f32dcb46ccc9dd663caee8be"])
        #expect(read.schedule?.count == 2)
    }

    /// The growth of a refresh's requests, measured: docs/client.md states it.
    @Test(
        "requests: +2 per course (news, dates) and +1 per semester (timetable)",
        arguments: [
            ClientConfiguration.API.jsonAPI, .legacyREST,
        ])
    func requestCount(api: ClientConfiguration.API) async throws {
        try await withSimulator(.fixtures507More) { sim async throws in
            let log = LogCapture()
            try await withSource(Harness.configuration(sim, api: api, logger: log.logger)) { source async throws in
                let overview = try await source.overview()
                sim.resetStatistics()
                for course in overview.courses {
                    _ = try await source.announcements(courseID: course.id)
                    _ = try await source.dates(courseID: course.id)
                }
                for semester in overview.semesters { _ = try await source.schedule(semesterID: semester.id) }
                #expect(overview.courses.count >= 5)
                #expect(sim.served == 2 * overview.courses.count + overview.semesters.count + log.retries)
            }
        }
    }
}
