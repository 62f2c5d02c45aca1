import Daemon
import Foundation
import MetadataStore
import Refreshing
import StudIPKit
import TestSupport
import Testing

@testable import StudIPSimulator

/// Issue 28: the timetable shows only lectures that happen. A refresh as the daemon does it (both APIs) against
/// the 5.0.7 data and a generated installation with a Christmas break; `Stundenplan.ics` expanded by a real
/// iCalendar library (Debian's python3-recurring-ical-events on python3-icalendar) and held against the union of
/// the `Termine.ics` files of the same refresh and the simulator's own dates.
@Suite struct TimetableTests {
    /// Each file's events as a real parser expands them: start and end in Unix seconds, the status.
    struct Occurrence: Decodable, Hashable {
        var uid: String
        var start: Int
        var end: Int
        var status: String
    }

    static let script = """
        import json, sys
        import recurring_ical_events
        from icalendar import Calendar
        result = {}
        for path in sys.argv[1:]:
            calendar = Calendar.from_ical(open(path, 'rb').read())
            result[path] = [
                {'uid': str(e['UID']), 'start': int(e['DTSTART'].dt.timestamp()),
                 'end': int(e['DTEND'].dt.timestamp()), 'status': str(e.get('STATUS'))}
                for e in recurring_ical_events.of(calendar).between((2000, 1, 1), (2100, 1, 1))]
        print(json.dumps(result))
        """

    /// The occurrences of each `.ics` file (contents by name).
    static func expand(_ files: [String: Data]) async throws -> [String: [Occurrence]] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("timetable-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var paths: [String: String] = [:]
        for (index, (name, bytes)) in files.enumerated() {
            let path = directory.appendingPathComponent("\(index).ics").path
            try bytes.write(to: URL(fileURLWithPath: path))
            paths[path] = name
        }
        let result = try await runTool("/usr/bin/python3", ["-c", script] + paths.keys.sorted())
        try #require(result.status == 0, "python3-recurring-ical-events (Scripts/bootstrap): \(result.stderr)")
        let byPath = try JSONDecoder().decode([String: [Occurrence]].self, from: Data(result.stdout.utf8))
        return Dictionary(uniqueKeysWithValues: byPath.map { (paths[$0.key] ?? $0.key, $0.value) })
    }

    /// One refresh through `api`: the generated files by path, with the semester id of each timetable.
    static func refresh(
        _ university: University, _ api: ClientConfiguration.API, courseFiles: CourseFilesOptions = CourseFilesOptions()
    ) async throws -> (files: [String: Data], timetables: [String: String]) {
        try await withSimulator(.custom(university)) { sim in
            var configuration = ClientConfiguration(
                baseURL: sim.baseURL, credentials: .basic(username: "test_autor", password: "testing"))
            configuration.api = api
            return try await withSource(configuration) { source in
                let store = try MetadataStore.temporary()
                _ = try await Refresher(source: source, store: store, options: TreeOptions(), courseFiles: courseFiles)
                    .refresh()
                var files: [String: Data] = [:]
                var timetables: [String: String] = [:]
                for entry in try store.walk()
                where [.announcement, .courseCalendar, .timetable].contains(entry.node.item) {
                    files[entry.path] = try store.generatedContent(inode: entry.node.inode)
                    if entry.node.item == .timetable { timetables[entry.path] = entry.node.studipID }
                }
                return (files, timetables)
            }
        }
    }

    static let datasets: [Dataset] = [.fixtures507More, .generated(.small, seed: 1)]

    /// Every occurrence of every timetable is a date of the union of the courses' `Termine.ics` that takes place
    /// (same start and end, not cancelled), inside its semester's lecture period and outside its breaks; and
    /// every date of the student's regular times in that semester that takes place is one.
    @Test(arguments: datasets, [ClientConfiguration.API.jsonAPI, .legacyREST])
    func everyOccurrenceIsADateThatTakesPlace(dataset: Dataset, api: ClientConfiguration.API) async throws {
        let university = try dataset.load()
        let student = try #require(university.user(named: "test_autor"))
        let (files, timetables) = try await Self.refresh(university, api)
        let expanded = try await Self.expand(files.filter { $0.key.hasSuffix(".ics") })
        let held = Set(
            expanded.filter { timetables[$0.key] == nil }.values.joined().filter { $0.status == "CONFIRMED" }
                .map { [$0.start, $0.end] })
        let cancelled = Set(
            expanded.filter { timetables[$0.key] == nil }.values.joined().filter { $0.status == "CANCELLED" }
                .map(\.start))
        try #require(!timetables.isEmpty && !held.isEmpty && !cancelled.isEmpty)
        for (path, semesterID) in timetables {
            let semester = try #require(university.semesters[semesterID])
            let occurrences = try #require(expanded[path])
            for occurrence in occurrences {
                #expect(held.contains([occurrence.start, occurrence.end]), "\(path): \(occurrence) is no date")
                #expect(!cancelled.contains(occurrence.start), "\(path): \(occurrence) is cancelled")
                #expect(
                    (semester.lecturesBegin...semester.lecturesEnd).contains(occurrence.start)
                        && !semester.isHoliday(occurrence.start), "\(path): \(occurrence) outside the lectures")
            }
            let regular = university.regularTimes(of: student.id, in: semester).flatMap(\.dates)
                .filter { !$0.isCancelled && semester.contains($0.start) }
            #expect(
                Set(occurrences.map(\.start)) == Set(regular.map(\.start)) && occurrences.count == regular.count,
                "\(path): \(occurrences.count) occurrences, \(regular.count) regular dates")
        }
    }

    /// A session of a regular time at another length or hour for once (15 minutes longer; four hours later) is in
    /// the timetable as it happens, through both APIs: the expanded `Stundenplan.ics` has every date of the
    /// student's regular times that takes place exactly once, at its own start and end.
    @Test(arguments: [ClientConfiguration.API.jsonAPI, .legacyREST])
    func aSessionAtAnotherTimeShowsAsItHappens(api: ClientConfiguration.API) async throws {
        var university = try Dataset.fixtures507More.load()
        let student = try #require(university.user(named: "test_autor"))
        let course = try #require(university.courses.values.first { $0.number == "INF-101" })
        let regular = university.events(ofCourse: course.id).filter { $0.cycleID != nil && !$0.isCancelled }
        try #require(regular.count > 6)
        var longer = regular[2]
        longer.end += 15 * 60
        var later = regular[4]
        later.start += 4 * 3600
        later.end += 4 * 3600
        university.add(longer)
        university.add(later)
        let (files, timetables) = try await Self.refresh(university, api)
        let (path, semesterID) = try #require(
            timetables.first { university.semesters[$0.value]?.contains(later.start) == true })
        let semester = try #require(university.semesters[semesterID])
        let file = try #require(files[path])
        let occurrences = try #require(try await Self.expand([path: file])[path])
        let dates = university.regularTimes(of: student.id, in: semester).flatMap(\.dates)
            .filter { !$0.isCancelled && semester.contains($0.start) }
        let order = { (a: [Int], b: [Int]) in a.lexicographicallyPrecedes(b) }
        #expect(
            occurrences.map { [$0.start, $0.end] }.sorted(by: order)
                == dates.map { [$0.start, $0.end] }.sorted(by: order))
        #expect(occurrences.contains { [$0.start, $0.end] == [later.start, later.end] })
        #expect(occurrences.contains { [$0.start, $0.end] == [longer.start, longer.end] })
    }

    /// What a student sees in khal (Debian's, Scripts/bootstrap) after importing both files: every lecture the
    /// timetable lists in a semester is a date `Termine.ics` lists as taking place, at the same start and end.
    @Test func khalListsOnlyLecturesThatHappen() async throws {
        let (files, timetables) = try await Self.refresh(try Dataset.fixtures507More.load(), .jsonAPI)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("khal-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("config/khal")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        var settings = "[calendars]\n"
        for name in ["timetable", "dates"] {
            let path = directory.appendingPathComponent("calendars/\(name)")
            try FileManager.default.createDirectory(at: path, withIntermediateDirectories: true)
            settings += "[[\(name)]]\npath = \(path.path)\n"
        }
        settings += "[locale]\nlocal_timezone = Europe/Berlin\ndefault_timezone = Europe/Berlin\n"
        settings += "timeformat = %H:%M\ndateformat = %Y-%m-%d\nlongdateformat = %Y-%m-%d\n"
        settings += "datetimeformat = %Y-%m-%d %H:%M\nlongdatetimeformat = %Y-%m-%d %H:%M\n"
        try Data(settings.utf8).write(to: config.appendingPathComponent("config"))
        let environment =
            "XDG_CONFIG_HOME=\(quoted(directory.appendingPathComponent("config").path)) "
            + "XDG_DATA_HOME=\(quoted(directory.appendingPathComponent("data").path))"
        func khal(_ arguments: String) async throws -> [String] {
            let result = try await shell("env \(environment) /usr/bin/khal \(arguments)", timeout: 60)
            try #require(result.status == 0, "khal \(arguments): \(result.stderr)")
            return result.lines.filter { !$0.isEmpty }
        }
        for (index, (path, bytes)) in files.filter({ $0.key.hasSuffix(".ics") }).enumerated() {
            let file = directory.appendingPathComponent("\(index).ics")
            try bytes.write(to: file)
            let calendar = timetables[path] == nil ? "dates" : "timetable"
            _ = try await khal("import --batch -a \(calendar) \(quoted(file.path))")
        }
        let list = "list --day-format '' --format '{start} {end} {status}{title}' 2026-04-01 2027-04-01"
        let lectures = try await khal(list + " -a timetable")
        let dates = try await khal(list + " -a dates")
        let held = Set(dates.filter { !$0.contains("CANCELLED") }.map { $0.split(separator: " ").prefix(4) })
        #expect(lectures.count >= 16 && dates.contains { $0.contains("CANCELLED") }, "\(lectures) \(dates)")
        for lecture in lectures {
            #expect(held.contains(lecture.split(separator: " ").prefix(4)), "khal shows \(lecture), no date")
        }
    }

    /// `dates = false` hides `Termine.ics`, not the dates the timetable is made of.
    @Test func theTimetableNeedsNoDatesFile() async throws {
        let (files, timetables) = try await Self.refresh(
            try Dataset.fixtures507More.load(), .jsonAPI, courseFiles: CourseFilesOptions(dates: false))
        #expect(!files.keys.contains { $0.hasSuffix("/Termine.ics") })
        let expanded = try await Self.expand(files.filter { timetables[$0.key] != nil })
        #expect(!expanded.isEmpty && expanded.values.allSatisfy { !$0.isEmpty })
    }

    /// The generated winter semesters have a break over Christmas, and their courses no date in it; the 5.0.7
    /// data has the captured installation's one.
    @Test func generatedCoursesHaveNoDateInTheBreak() throws {
        let university = try Dataset.generated(.small, seed: 1).load()
        let winters = university.orderedSemesters.filter { !$0.holidays.isEmpty }
        #expect(!winters.isEmpty)
        for semester in winters {
            let dates = university.courses.keys.flatMap { university.events(ofCourse: $0) }
                .filter { semester.contains($0.start) }
            #expect(!dates.isEmpty && !dates.contains { semester.isHoliday($0.start) }, "\(semester.title)")
        }
        // The captured installation's only break (fixtures-5.0.7-writes step 10): 24.12.2021–9.1.2022.
        let captured = try Dataset.fixtures507.load().orderedSemesters.filter { !$0.holidays.isEmpty }
        #expect(captured.map(\.title) == ["WS 2021/2022"] && captured.first?.holidays.first?.name == "Unterbrechung")
    }

    /// A plain-text announcement (no `<!--HTML-->` marker) with a line break: REST's `body_html` has a `<br>`,
    /// JSON:API's `content` a newline; both give the same Markdown with the break. A date without a room (REST's
    /// "keine Raumangabe") is one without a location in both.
    @Test func plainTextBreaksAndRoomlessDatesReadTheSameThroughBothAPIs() async throws {
        var university = try Dataset.fixtures507More.load()
        let course = try #require(university.courses.values.first { $0.number == "INF-101" })
        let author = try #require(university.user(named: "test_dozent"))
        university.add(
            News(
                id: "plainnews0000000000000000000000a", title: "Sprechstunde", content: "Erste Zeile\nZweite <Zeile>",
                authorID: author.id, rangeIDs: [course.id], date: university.now - 86_400, expire: 30 * 86_400,
                mkdate: university.now - 86_400, chdate: university.now - 86_400))
        var roomless = try #require(university.events(ofCourse: course.id).first { !$0.isCancelled })
        roomless.room = ""
        university.add(roomless)
        var trees: [[String: Data]] = []
        for api in [ClientConfiguration.API.jsonAPI, .legacyREST] {
            trees.append(try await Self.refresh(university, api).files)
        }
        for tree in trees {
            let note = try #require(tree.first { $0.key.hasSuffix("Sprechstunde.md") }?.value)
            #expect(String(decoding: note, as: UTF8.self).hasSuffix("Erste Zeile  \nZweite \\<Zeile>\n"))
            let dates = try #require(tree.first { $0.key.hasSuffix("/Termine.ics") && $0.key.contains("INF-101") })
            #expect(!String(decoding: dates.value, as: UTF8.self).contains("Raumangabe"))
        }
        #expect(trees[0] == trees[1])
    }
}
