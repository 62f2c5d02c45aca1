import Foundation
import StudIPModel
import StudIPWire
import Testing

@testable import CourseFiles

/// The timetable made of what a real Stud.IP 5.0.7 sent (Fixtures/studip-5.0.7-writes, step 10 of its README):
/// each API's semester, schedule and course dates, rendered and expanded by a real iCalendar library.
@Suite struct TimetableCaptureTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Fixtures/studip-5.0.7-writes")

    static func body(_ name: String) throws -> JSONValue {
        try JSONValue.parse(Data(contentsOf: fixtures.appending(path: "\(name).json")), what: name)
    }

    /// A JSON:API document's `data`.
    static func data(_ name: String) throws -> JSONValue {
        try #require(try body(name)["data"], "\(name) has data")
    }

    /// The timetable of one semester as one API gives it: its file and the course dates it was made of.
    static func timetable(jsonAPI: Bool, semester: String, schedule: String, dates: String) throws -> (
        ics: String, dates: [CourseDate]
    ) {
        let term: RemoteSemester
        let slots: [ScheduleSlot]
        let courseDates: [CourseDate]
        if jsonAPI {
            term = try #require(JSONAPIFormat.semester(try Self.data("w10_jsonapi_semester_\(semester)")))
            slots = try JSONAPIFormat.schedule(
                try #require(try body("w10_jsonapi_user_schedule_\(schedule)")["data"]?.array), what: "t")
            courseDates = try JSONAPIFormat.courseDates(
                try #require(try body("w10_jsonapi_\(dates)")["data"]?.array), what: "t")
        } else {
            term = try #require(LegacyRESTFormat.semester(try body("w10_rest_semester_\(semester)")))
            slots = try LegacyRESTFormat.schedule(try body("w10_rest_user_schedule_\(schedule)"), what: "t")
            courseDates = try LegacyRESTFormat.courseDates(
                try #require(try body("w10_rest_\(dates)")["collection"]?.elements), what: "t")
        }
        let events = Timetable.events(
            slots,
            courseDates: Dictionary(uniqueKeysWithValues: Set(slots.compactMap(\.courseID)).map { ($0, courseDates) }),
            semester: term, host: "studip.example", timeZone: ICalendarTests.berlin)
        let ics = ICalendar.calendar(
            name: term.title, events: events, timeZone: ICalendarTests.berlin, stamp: ICalendarTests.stamp)
        return (ics, courseDates)
    }

    /// Local `YYYY-MM-DDTHH:MM:00` of the dates that take place, as the parser prints occurrences.
    static func held(_ dates: [CourseDate], at minute: Int) -> [String] {
        dates.filter { !$0.isCancelled }.map { LocalTime($0.start, in: ICalendarTests.berlin) }
            .filter { $0.hour * 60 + $0.minute == minute }
            .map { String(format: "%04d-%02d-%02dT%02d:%02d:00", $0.year, $0.month, $0.day, $0.hour, $0.minute) }
    }

    /// INF-101's Tuesday lecture: the 5.0.7 schedule route's own rule says 13 October to 2 February without the
    /// cancelled 1 December; the timetable says the same (not 6 October to 31 March), through both APIs alike.
    @Test func inf101FollowsItsDates() async throws {
        let jsonAPI = try Self.timetable(
            jsonAPI: true, semester: "ws2627", schedule: "ws2627", dates: "course_inf101_events")
        let legacy = try Self.timetable(
            jsonAPI: false, semester: "ws2627", schedule: "ws2627", dates: "course_inf101_events")
        #expect(jsonAPI.ics == legacy.ics)
        let parsed = try await ICalendarTests.parse(jsonAPI.ics, zone: "Europe/Berlin")
        let lecture = try #require(parsed.events.first)
        #expect(parsed.errors.isEmpty && parsed.events.count == 1)
        #expect(lecture.start == "2026-10-13T10:15:00+02:00" && lecture.rrule == "FREQ=WEEKLY;UNTIL=20270202T091500Z")
        #expect(lecture.exdates == ["2026-12-01T10:15:00"])
        #expect(lecture.occurrences == Self.held(jsonAPI.dates, at: 615) && lecture.occurrences.count == 16)
    }

    /// "Test Lehrveranstaltung": 5.0.7's rule for its Monday cycle (25 April to 18 July 2022) yields Whit Monday,
    /// 6 June, on which the server has no date; the timetable leaves it out.
    @Test func whitMondayIsNoLecture() async throws {
        for jsonAPI in [true, false] {
            let made = try Self.timetable(
                jsonAPI: jsonAPI, semester: "ss22", schedule: "ss22", dates: "course_test_events")
            let parsed = try await ICalendarTests.parse(made.ics, zone: "Europe/Berlin")
            let monday = try #require(parsed.events.first)
            #expect(parsed.events.count == 1 && monday.start == "2022-04-25T09:00:00+02:00")
            #expect(monday.exdates == ["2022-06-06T09:00:00"])
            #expect(monday.occurrences == Self.held(made.dates, at: 540) && monday.occurrences.count == 12)
            #expect(!monday.occurrences.contains("2022-06-06T09:00:00"))
        }
    }

    /// Both APIs give the lecture period: JSON:API `start-of-lectures`/`end-of-lectures`, REST
    /// `seminars_begin`/`seminars_end`.
    @Test func lecturePeriodFromBothAPIs() throws {
        let jsonAPI = try #require(JSONAPIFormat.semester(try Self.data("w10_jsonapi_semester_ws2627")))
        let legacy = try #require(LegacyRESTFormat.semester(try Self.body("w10_rest_semester_ws2627")))
        #expect(
            jsonAPI.lectures == ICalendarTests.berlin(2026, 10, 12, 0, 0)...ICalendarTests.berlin(2027, 2, 5, 23, 59)
                + 59)
        #expect(legacy.lectures == jsonAPI.lectures && legacy.begin == jsonAPI.begin && legacy.end == jsonAPI.end)
    }

    /// REST's placeholder for a date without a room ("keine Raumangabe", no parentheses) is no room, as JSON:API's
    /// null location: the same dates and the same `Termine.ics` through both APIs.
    @Test func roomPlaceholderIsNoRoom() throws {
        let jsonAPI = try JSONAPIFormat.courseDates(
            try #require(try Self.body("w10_jsonapi_course_inf101_events")["data"]?.array), what: "t")
        let legacy = try LegacyRESTFormat.courseDates(
            try #require(try Self.body("w10_rest_course_inf101_events")["collection"]?.elements), what: "t")
        #expect(legacy.map(\.room) == jsonAPI.map(\.room))
        #expect(legacy.filter { $0.room == nil }.count == 17)
        #expect(legacy.compactMap(\.room) == ["Rechenzentrum, Treffpunkt Foyer", "Audimax"])
        func calendar(_ dates: [CourseDate]) -> String {
            ICalendar.calendar(
                name: "INF-101",
                events: dates.map { ICalendar.Event($0, course: "Einführung in die Informatik", host: "h") },
                timeZone: ICalendarTests.berlin, stamp: ICalendarTests.stamp)
        }
        #expect(calendar(legacy) == calendar(jsonAPI))
        #expect(!calendar(legacy).contains("Raumangabe"))
        // The demo course: a date cancelled on Whit Monday 2021 has the room "(Pfingstmontag)" in REST, none in
        // JSON:API; the holiday's name is no room.
        let test = try LegacyRESTFormat.courseDates(
            try #require(try Self.body("w10_rest_course_test_events")["collection"]?.elements), what: "t")
        let testJSONAPI = try JSONAPIFormat.courseDates(
            try #require(try Self.body("w10_jsonapi_course_test_events")["data"]?.array), what: "t")
        #expect(test.first { $0.isCancelled }?.cancellationNote == "Pfingstmontag")
        #expect(test.map(\.room) == testJSONAPI.map(\.room) && test.allSatisfy { $0.room == nil })
    }
}
