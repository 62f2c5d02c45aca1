import Foundation
import StudIPModel
import TestSupport
import Testing

@testable import CourseFiles

/// The `.ics` files as a real iCalendar parser reads them: Debian's python3-icalendar (Scripts/bootstrap), run
/// as `/usr/bin/python3` (a pyenv `python3` on the PATH does not see Debian's modules).
@Suite struct ICalendarTests {
    static let berlin = TimeZone(identifier: "Europe/Berlin") ?? .gmt
    static let stamp = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18T11:06:40Z

    /// Commas, semicolons, a backslash, line breaks of both kinds, umlauts, an emoji and enough text to fold
    /// several times, with multi-byte characters across the fold points.
    static let awkward =
        "Übung; Gruppe A, B und C \\ Raum „Ä 1.02“\nzweite Zeile\r\ndritte: "
        + String(repeating: "äöüß€😀, ", count: 30)

    static func berlin(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = berlin
        return calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute))
            ?? .distantPast
    }

    static var courseDates: [CourseDate] {
        [
            CourseDate(
                id: "d-winter", start: berlin(2027, 1, 12, 10, 15), end: berlin(2027, 1, 12, 11, 45),
                title: "Vorlesung",
                description: "Bäume, Graphen; Rekursion", room: "Hörsaal 1 (Gebäude Ä, Raum 0.12)", isCancelled: false,
                cancellationNote: nil),
            CourseDate(
                id: "d-summer", start: berlin(2026, 7, 14, 10, 15), end: berlin(2026, 7, 14, 11, 45), title: "Sitzung",
                description: nil, room: nil, isCancelled: false, cancellationNote: nil),
            CourseDate(
                id: "d-cancelled", start: berlin(2026, 12, 1, 10, 15), end: berlin(2026, 12, 1, 11, 45),
                title: "Vorlesung", description: nil, room: "Hörsaal 1", isCancelled: true,
                cancellationNote: "Dies Academicus"),
            CourseDate(
                id: "d-awkward", start: berlin(2026, 10, 26, 8, 0), end: berlin(2026, 10, 26, 9, 30), title: awkward,
                description: awkward, room: awkward, isCancelled: false, cancellationNote: nil),
        ]
    }

    static var events: [ICalendar.Event] {
        courseDates.map { ICalendar.Event($0, course: "Einführung in die Informatik", host: "studip.example.org") }
    }

    @Test func realParserReadsCourseDates() async throws {
        let ics = ICalendar.calendar(
            name: "INF-101, Termine", events: Self.events, timeZone: Self.berlin, stamp: Self.stamp)
        let parsed = try await Self.parse(ics, zone: "Europe/Berlin")
        #expect(parsed.errors.isEmpty)
        #expect(parsed.calendarName == "INF-101, Termine")
        #expect(parsed.mismatches.isEmpty, "VTIMEZONE differs from the zone's data at \(parsed.mismatches)")
        #expect(parsed.events.count == Self.courseDates.count)
        let byUID = Dictionary(parsed.events.map { ($0.uid, $0) }, uniquingKeysWith: { first, _ in first })

        // 10:15 in Berlin in winter (+01:00) and in summer (+02:00), by the zone's name and by the VTIMEZONE.
        let winter = try #require(byUID["d-winter@studip.example.org"])
        #expect(winter.start == "2027-01-12T10:15:00+01:00" && winter.startByVTIMEZONE == winter.start)
        #expect(winter.end == "2027-01-12T11:45:00+01:00" && winter.tzid == "Europe/Berlin")
        #expect(winter.summary == "Einführung in die Informatik (Vorlesung)")
        #expect(winter.location == "Hörsaal 1 (Gebäude Ä, Raum 0.12)")
        #expect(winter.description == "Bäume, Graphen; Rekursion")
        #expect(winter.status == "CONFIRMED" && winter.stamp == "2026-11-18T11:06:40+00:00")
        let summer = try #require(byUID["d-summer@studip.example.org"])
        #expect(summer.start == "2026-07-14T10:15:00+02:00" && summer.startByVTIMEZONE == summer.start)
        #expect(summer.location == nil && summer.description == nil)

        let cancelled = try #require(byUID["d-cancelled@studip.example.org"])
        #expect(cancelled.status == "CANCELLED" && cancelled.summary == "Einführung in die Informatik (Vorlesung)")
        #expect(cancelled.location == nil && cancelled.description == nil, "only what both APIs give")

        // The day after the clocks went back.
        let awkward = try #require(byUID["d-awkward@studip.example.org"])
        let expected = Self.awkward.replacing("\r\n", with: "\n")
        // The title trimmed in the summary, the rest exact.
        #expect(awkward.summary == "Einführung in die Informatik (\(expected.trimmingCharacters(in: .whitespaces)))")
        #expect(awkward.location == expected && awkward.description == expected)
        #expect(awkward.start == "2026-10-26T08:00:00+01:00" && awkward.startByVTIMEZONE == awkward.start)
    }

    /// The cancelled lecture of the captured Stud.IP 5.0.7 as each API's parser reads it: JSON:API with its room
    /// and the cancel comment, legacy REST with neither; and a holiday's name beside a date that takes place
    /// (REST only). One calendar.
    @Test func aCancelledDateReadsTheSameFromBothAPIs() {
        func date(room: String?, note: String?, cancelled: Bool = true) -> CourseDate {
            CourseDate(
                id: "e5184063", start: Self.berlin(2026, 12, 1, 10, 15), end: Self.berlin(2026, 12, 1, 11, 45),
                title: cancelled ? "Vorlesung" : "Klausur", description: nil, room: room, isCancelled: cancelled,
                cancellationNote: note)
        }
        func calendar(_ dates: [CourseDate]) -> String {
            ICalendar.calendar(
                name: "INF-101, Termine",
                events: dates.map { ICalendar.Event($0, course: "Einführung in die Informatik", host: "h") },
                timeZone: Self.berlin, stamp: Self.stamp)
        }
        let jsonAPI = calendar([
            date(room: "Hörsaal 1 (Gebäude Ä, Raum 0.12)", note: "Dies academicus – die Veranstaltung fällt aus."),
            date(room: "Audimax", note: nil, cancelled: false),
        ])
        let legacyREST = calendar([
            date(room: nil, note: nil),
            date(room: "Audimax", note: "Fastnacht", cancelled: false),
        ])
        #expect(jsonAPI == legacyREST)
        #expect(jsonAPI.contains("SUMMARY:Einführung in die Informatik (Vorlesung)\r\n"))
    }

    static let winter = RemoteSemester(
        id: "ws26", title: "WS 2026/27", begin: berlin(2026, 10, 1, 0, 0), end: berlin(2027, 3, 31, 23, 59),
        lectures: berlin(2026, 10, 12, 0, 0)...berlin(2027, 2, 5, 23, 59))

    static func lecture(_ id: String, _ start: Date, minutes: Int = 90, cancelled: Bool = false) -> CourseDate {
        CourseDate(
            id: id, start: start, end: start.addingTimeInterval(TimeInterval(minutes * 60)), title: "Vorlesung",
            description: nil, room: "Hörsaal 1", isCancelled: cancelled, cancellationNote: nil)
    }

    /// 10:15 on the Tuesday `week` weeks after 13 October 2026.
    static func tuesday(week: Int) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = berlin
        return calendar.date(byAdding: .day, value: 7 * week, to: berlin(2026, 10, 13, 10, 15)) ?? .distantPast
    }

    static let tuesdaySlot = ScheduleSlot(
        id: "cycle-1", courseID: "c1", title: "INF-101 Einführung in die Informatik", weekday: 2, startMinute: 615,
        endMinute: 705, room: "Hörsaal 1", description: "Vorlesung")

    /// A course's dates as Stud.IP makes them: weekly Tuesdays at 10:15 from 13 October to 2 February without the
    /// Christmas break, one cancelled, plus dates that are not the slot's (another time, another weekday, the
    /// summer semester).
    static var tuesdayDates: [CourseDate] {
        var dates: [CourseDate] = []
        for week in 0..<17 {
            let start = tuesday(week: week)
            let day = LocalTime(start, in: berlin)
            if (day.month, day.day) == (12, 22) || (day.month, day.day) == (12, 29) { continue }
            dates.append(lecture("w\(week)", start, cancelled: (day.month, day.day) == (12, 1)))
        }
        dates.append(lecture("exam", berlin(2027, 2, 9, 10, 15), minutes: 120))
        dates.append(lecture("excursion", berlin(2026, 12, 3, 14, 0), minutes: 90))
        dates.append(lecture("summer", berlin(2026, 7, 14, 10, 15)))
        return dates
    }

    /// The timetable repeats a slot on exactly its course's dates: from the first (not the semester's first
    /// Tuesday) to the last (not the semester's end), the break and the cancelled date excluded — as a real
    /// parser expands it.
    @Test func timetableRepeatsOnTheCoursesDatesOnly() async throws {
        let events = Timetable.events(
            [Self.tuesdaySlot], courseDates: ["c1": Self.tuesdayDates], semester: Self.winter, host: "h.example",
            timeZone: Self.berlin)
        let parsed = try await Self.parse(
            ICalendar.calendar(name: "Stundenplan", events: events, timeZone: Self.berlin, stamp: Self.stamp),
            zone: "Europe/Berlin")
        #expect(parsed.errors.isEmpty && parsed.events.count == 1)
        let tuesday = try #require(parsed.events.first)
        #expect(tuesday.uid == "cycle-1@h.example" && tuesday.summary == "INF-101 Einführung in die Informatik")
        #expect(tuesday.start == "2026-10-13T10:15:00+02:00" && tuesday.end == "2026-10-13T11:45:00+02:00")
        #expect(tuesday.rrule == "FREQ=WEEKLY;UNTIL=20270202T091500Z")
        #expect(tuesday.exdates == ["2026-12-01T10:15:00", "2026-12-22T10:15:00", "2026-12-29T10:15:00"])
        let held = Self.tuesdayDates.filter { $0.id.hasPrefix("w") && !$0.isCancelled }
            .map { LocalTime($0.start, in: Self.berlin) }
            .map { String(format: "%04d-%02d-%02dT%02d:%02d:00", $0.year, $0.month, $0.day, $0.hour, $0.minute) }
        #expect(held.count == 14)
        #expect(tuesday.occurrences == held, "both sides of the change to winter time at 10:15")
    }

    /// A session at the slot's weekday but another length (10:15–12:00) or time (14:00, and 16:00 after the
    /// 10:15 date was cancelled) replaces its week's occurrence: an overriding event with the series' UID and a
    /// `RECURRENCE-ID`, so the expanded timetable shows it as it happens, not as an `EXDATE`. A second cycle of
    /// the course at the same weekday and time takes none of the dates the first has: nothing twice.
    @Test func aSessionAtAnotherTimeReplacesItsWeeksOccurrence() async throws {
        var dates = Self.tuesdayDates.filter { $0.id != "w3" && $0.id != "w5" }
        dates.append(Self.lecture("r3", Self.tuesday(week: 3), minutes: 105))
        dates.append(Self.lecture("r5", Self.tuesday(week: 5) + 225 * 60))
        if let index = dates.firstIndex(where: { $0.id == "w6" }) { dates[index].isCancelled = true }
        dates.append(Self.lecture("r6", Self.tuesday(week: 6) + 345 * 60))
        var twin = Self.tuesdaySlot
        twin.id = "cycle-2"
        twin.room = "Hörsaal 2"
        let events = Timetable.events(
            [twin, Self.tuesdaySlot], courseDates: ["c1": dates], semester: Self.winter, host: "h.example",
            timeZone: Self.berlin)
        let parsed = try await Self.parse(
            ICalendar.calendar(name: "Stundenplan", events: events, timeZone: Self.berlin, stamp: Self.stamp),
            zone: "Europe/Berlin")
        #expect(parsed.errors.isEmpty && Set(parsed.events.map(\.uid)) == ["cycle-1@h.example"])
        let series = try #require(parsed.events.first { $0.recurrenceID == nil })
        #expect(series.exdates == ["2026-12-01T10:15:00", "2026-12-22T10:15:00", "2026-12-29T10:15:00"])
        let overrides = parsed.events.filter { $0.recurrenceID != nil }
        #expect(
            overrides.map { "\($0.recurrenceID ?? "") \($0.start) \($0.end ?? "")" }.sorted() == [
                "2026-11-03T10:15:00 2026-11-03T10:15:00+01:00 2026-11-03T12:00:00+01:00",
                "2026-11-17T10:15:00 2026-11-17T14:00:00+01:00 2026-11-17T15:30:00+01:00",
                "2026-11-24T10:15:00 2026-11-24T16:00:00+01:00 2026-11-24T17:30:00+01:00",
            ])
        #expect(overrides.allSatisfy { $0.summary == Self.tuesdaySlot.title && $0.location == "Hörsaal 1" })
        func local(_ date: Date) -> String {
            let time = LocalTime(date, in: Self.berlin)
            return String(
                format: "%04d-%02d-%02dT%02d:%02d:00", time.year, time.month, time.day, time.hour, time.minute)
        }
        let held = dates.filter { ($0.id.hasPrefix("w") || $0.id.hasPrefix("r")) && !$0.isCancelled }
            .map { ["cycle-1@h.example", local($0.start), local($0.end)] }.sorted { $0.lexicographicallyPrecedes($1) }
        #expect(held.count == 14)
        #expect(parsed.expanded == held)
    }

    /// An entry that is no course's has no dates: weekly within the lecture period, not the semester.
    @Test func ownEntryRepeatsWithinTheLecturePeriod() async throws {
        let slot = ScheduleSlot(
            id: "own", courseID: nil, title: "Sonntagsslot", weekday: 7, startMinute: 16 * 60 + 15,
            endMinute: 17 * 60 + 45, room: nil, description: nil)
        let events = Timetable.events(
            [slot], courseDates: [:], semester: Self.winter, host: "h.example", timeZone: Self.berlin)
        let parsed = try await Self.parse(
            ICalendar.calendar(name: "Stundenplan", events: events, timeZone: Self.berlin, stamp: Self.stamp),
            zone: "Europe/Berlin")
        let sunday = try #require(parsed.events.first)
        #expect(sunday.occurrences.first == "2026-10-18T16:15:00" && sunday.occurrences.last == "2027-01-31T16:15:00")
        #expect(sunday.occurrences.count == 16 && sunday.exdates.isEmpty)
    }

    /// A fortnightly cycle is a rule with `INTERVAL=2`, no exceptions; a slot whose dates are few and far apart
    /// is one event per date; one date is one event without a rule; a slot without dates none.
    @Test func sparseAndFortnightlySlots() async throws {
        let fortnightly = (0..<7).map {
            Self.lecture("f\($0)", Self.tuesday(week: 2 * $0))
        }
        let sparse = [0, 9, 17].map {
            Self.lecture("s\($0)", Self.tuesday(week: $0))
        }
        func events(_ dates: [CourseDate]) -> [ICalendar.Event] {
            Timetable.events(
                [Self.tuesdaySlot], courseDates: ["c1": dates], semester: Self.winter, host: "h", timeZone: Self.berlin)
        }
        let parsed = try await Self.parse(
            ICalendar.calendar(name: "x", events: events(fortnightly), timeZone: Self.berlin, stamp: Self.stamp),
            zone: "Europe/Berlin")
        #expect(
            parsed.events.count == 1 && parsed.events.first?.rrule == "FREQ=WEEKLY;UNTIL=20270105T091500Z;INTERVAL=2")
        #expect(parsed.events.first?.occurrences.count == 7 && parsed.events.first?.exdates == [])
        let apart = events(sparse)
        #expect(apart.count == 3 && Set(apart.map(\.uid)).count == 3 && apart.allSatisfy { $0.recurrence == nil })
        let one = events(Array(sparse.prefix(1)))
        #expect(one.count == 1 && one.first?.recurrence == nil && one.first?.uid == "cycle-1@h")
        #expect(
            events([]).isEmpty
                && events(
                    fortnightly.map {
                        var date = $0
                        date.isCancelled = true
                        return date
                    }
                ).isEmpty)
    }

    /// Other zones' rules read off the system's data: a second Sunday (New York), the southern hemisphere
    /// (Sydney), and no daylight saving time (Tokyo).
    @Test(arguments: ["America/New_York", "Australia/Sydney", "Asia/Tokyo"])
    func vtimezoneOfOtherZones(_ identifier: String) async throws {
        let zone = try #require(TimeZone(identifier: identifier))
        let event = ICalendar.Event(uid: "x@h", start: Self.stamp, end: Self.stamp + 3600, summary: "x")
        let parsed = try await Self.parse(
            ICalendar.calendar(name: "x", events: [event], timeZone: zone, stamp: Self.stamp), zone: identifier)
        #expect(parsed.errors.isEmpty && parsed.events.count == 1)
        #expect(parsed.mismatches.isEmpty, "VTIMEZONE differs from \(identifier) at \(parsed.mismatches)")
    }

    /// RFC 5545's line rules on the bytes: CRLF only, at most 75 octets a line, continuations start with a space,
    /// and no line splits a UTF-8 sequence (each is valid UTF-8 on its own).
    @Test func linesFoldedAt75OctetsWithoutSplittingCharacters() throws {
        let ics = ICalendar.calendar(name: Self.awkward, events: Self.events, timeZone: Self.berlin, stamp: Self.stamp)
        let bytes = Array(ics.utf8)
        #expect(ics.hasSuffix("END:VCALENDAR\r\n"))
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).dropLast()
        var continuations = 0
        for line in lines {
            #expect(line.last == UInt8(ascii: "\r"), "a line without CR")
            let content = line.dropLast()
            #expect(!content.contains(UInt8(ascii: "\r")), "a bare CR")
            #expect(content.count <= 75, "\(content.count) octets: \(String(decoding: content, as: UTF8.self))")
            #expect(String(validating: content, as: UTF8.self) != nil, "a line splits a character")
            if content.first == UInt8(ascii: " ") { continuations += 1 }
        }
        #expect(continuations > 10)
        let unfolded = ics.replacing("\r\n ", with: "")
        #expect(
            unfolded.contains(
                "\r\nLOCATION:Übung\\; Gruppe A\\, B und C \\\\ Raum „Ä 1.02“\\nzweite Zeile\\ndritte: äöüß€😀\\, "))
    }

    /// Same dates, same bytes, whatever order the server listed them in.
    @Test func deterministic() {
        let first = ICalendar.calendar(name: "T", events: Self.events, timeZone: Self.berlin, stamp: Self.stamp)
        let again = ICalendar.calendar(
            name: "T", events: Self.events.reversed(), timeZone: Self.berlin, stamp: Self.stamp)
        #expect(first == again)
        #expect(first.components(separatedBy: "BEGIN:VEVENT").count == 5)
        let starts = first.split(separator: "\r\n").filter { $0.hasPrefix("DTSTART;") }
        #expect(starts == starts.sorted())
    }

    /// Odd input never traps and still makes a calendar that parses: an empty title, controls, dates beyond the
    /// year 9999 (clamped to its start) or before year 1, a slot on weekday 0 or 12 at minute -5 or 5,000, an end before the start.
    @Test func oddInput() async throws {
        let odd = [
            ICalendar.Event(
                uid: "a\u{0}b@h", start: .distantFuture, end: .distantPast, summary: "", location: "\u{7}\u{1B}",
                description: "\r"),
            ICalendar.Event(
                uid: "c@h", start: Date(timeIntervalSince1970: 1e15), end: Date(timeIntervalSince1970: -1e15),
                summary: "\u{85}x"),
        ]
        let semester = RemoteSemester(id: "s", title: "", begin: .distantPast, end: .distantFuture)
        let slots = Timetable.events(
            [0, 12, -3].map {
                ScheduleSlot(
                    id: "s\($0)", courseID: nil, title: "", weekday: $0, startMinute: -5, endMinute: 5000, room: "",
                    description: "")
            }, courseDates: [:], semester: semester, host: "h", timeZone: Self.berlin)
        let ics = ICalendar.calendar(name: "", events: odd + slots, timeZone: Self.berlin, stamp: .distantFuture)
        #expect(!ics.unicodeScalars.contains { $0.value < 0x20 && $0 != "\r" && $0 != "\n" })
        let parsed = try await Self.parse(ics, zone: "Europe/Berlin")
        #expect(parsed.errors.isEmpty && parsed.events.count == 5)
        #expect(parsed.events.first { $0.uid == "ab@h" }?.start == "4001-01-01T01:00:00+01:00")
        #expect(parsed.events.first { $0.uid == "c@h" }?.start == "9999-01-01T01:00:00+01:00")
        #expect(!ics.contains("LOCATION:\r\n") && ics.contains("DESCRIPTION:\\n\r\n"))
    }

    // MARK: The parser

    struct Parsed: Decodable {
        var calendarName: String
        var errors: [String]
        /// Hours in 2020–2032 where the VTIMEZONE's offset differs from the zone's.
        var mismatches: [String]
        var events: [ParsedEvent]
        /// Every occurrence of the calendar, overrides applied: UID, local start, local end; sorted.
        var expanded: [[String]]
    }

    struct ParsedEvent: Decodable {
        var uid: String
        var tzid: String?
        var start: String
        var startByVTIMEZONE: String
        var end: String?
        var summary: String
        var location: String?
        var description: String?
        var status: String
        var stamp: String
        var rrule: String?
        /// Local times of its EXDATEs.
        var exdates: [String]
        /// Local start times of its occurrences in 2000–2099, the rule expanded by Debian's
        /// python3-recurring-ical-events (RRULE, EXDATE; Scripts/bootstrap installs it).
        var occurrences: [String]
        /// Local time of the occurrence it replaces (`RECURRENCE-ID`).
        var recurrenceID: String?
    }

    static let script = """
        import datetime, json, sys, zoneinfo
        import recurring_ical_events
        from icalendar import Calendar
        cal = Calendar.from_ical(open(sys.argv[1], 'rb').read())
        zone = zoneinfo.ZoneInfo(sys.argv[2])
        vtz = cal.walk('VTIMEZONE')[0].to_tz()
        mismatches = []
        base = datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)
        for hour in range(0, 24 * 366 * 13):
            t = base + datetime.timedelta(hours=hour)
            if t.astimezone(vtz).utcoffset() != t.astimezone(zone).utcoffset():
                mismatches.append(t.isoformat())
        occurrences = {}
        expanded = []
        for o in recurring_ical_events.of(cal).between((2000, 1, 1), (2100, 1, 1)):
            occurrences.setdefault(str(o['UID']), []).append(o['DTSTART'].dt.replace(tzinfo=None).isoformat())
            expanded.append([str(o['UID']), o['DTSTART'].dt.replace(tzinfo=None).isoformat(),
                o['DTEND'].dt.replace(tzinfo=None).isoformat() if 'DTEND' in o else ''])
        events = []
        for e in cal.walk('VEVENT'):
            start = e['DTSTART']
            naive = start.dt.replace(tzinfo=None)
            rrule = e['RRULE'].to_ical().decode() if 'RRULE' in e else None
            events.append({
                'uid': str(e['UID']), 'tzid': start.params.get('TZID'), 'start': start.dt.isoformat(),
                'startByVTIMEZONE': vtz.localize(naive).isoformat(),
                'end': e['DTEND'].dt.isoformat() if 'DTEND' in e else None,
                'summary': str(e['SUMMARY']), 'location': str(e['LOCATION']) if 'LOCATION' in e else None,
                'description': str(e['DESCRIPTION']) if 'DESCRIPTION' in e else None,
                'status': str(e['STATUS']), 'stamp': e.decoded('DTSTAMP').isoformat(), 'rrule': rrule,
                'exdates': [d.dt.replace(tzinfo=None).isoformat() for x in
                    (e['EXDATE'] if isinstance(e.get('EXDATE'), list) else [e['EXDATE']] if 'EXDATE' in e else [])
                    for d in x.dts],
                'occurrences': sorted(occurrences.get(str(e['UID']), [])),
                'recurrenceID': e['RECURRENCE-ID'].dt.replace(tzinfo=None).isoformat()
                    if 'RECURRENCE-ID' in e else None})
        errors = [str(error) for c in cal.walk() for error in c.errors]
        print(json.dumps({'calendarName': str(cal['X-WR-CALNAME']), 'errors': errors,
            'mismatches': mismatches[:5], 'events': events, 'expanded': sorted(expanded)}))
        """

    /// `ics` as python3-icalendar reads it, with its VTIMEZONE checked hour by hour against `zone`'s data.
    static func parse(_ ics: String, zone: String) async throws -> Parsed {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("campusfs-\(UUID().uuidString).ics")
        try Data(ics.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try await runTool("/usr/bin/python3", ["-c", script, file.path, zone])
        try #require(
            result.status == 0,
            "python3-icalendar failed (Scripts/bootstrap installs it): \(result.stderr)\n\(ics)")
        return try JSONDecoder().decode(Parsed.self, from: Data(result.stdout.utf8))
    }
}
