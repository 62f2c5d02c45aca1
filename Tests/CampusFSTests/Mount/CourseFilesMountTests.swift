import Daemon
import Foundation
import MetadataStore
import Refreshing
import StudIPKit
import TestSupport
import Testing

@testable import StudIPSimulator

/// Announcements, course dates and timetables (issue 18) through a real mount of the simulator's Stud.IP 5.0.7
/// data: the files are there, real parsers read them, a server change shows after a refresh.
@Suite(.serialized)
struct CourseFilesMountTests {
    static let inf101 = "29f7bd5e79910822b1be93be3c53a72c"

    static func coursePath(_ store: MetadataStore) throws -> String {
        try #require(try store.walk().first { $0.node.item == .course && $0.node.studipID == inf101 }?.path)
    }

    static func names(_ store: MetadataStore, _ path: String) throws -> [String] {
        try store.children(of: store.resolve(path: path).inode).map(\.node.name)
    }

    /// VEVENTs and their STATUS values as python3-icalendar (Debian's) reads the file.
    static func events(_ file: String) async throws -> [String] {
        let script = """
            import sys
            from icalendar import Calendar
            calendar = Calendar.from_ical(open(sys.argv[1], 'rb').read())
            for event in calendar.walk('VEVENT'):
                print(str(event.get('STATUS')))
            """
        let result = try await shell("/usr/bin/python3 -c \(quoted(script)) \(file)")
        try #require(result.status == 0, "python3-icalendar: \(result.stderr)")
        return result.lines
    }

    @Test func filesAreThereParseAndFollowTheServer() async throws {
        try await MountedCampus.with(.fixtures507More) { campus in
            let course = try Self.coursePath(campus.store)
            let listing = try await shell("ls \(campus.path(course)) \(campus.path(course + "/Ankündigungen"))")
            #expect(listing.status == 0 && listing.lines.contains("Termine.ics"), "\(listing.stdout)")
            let news = try await campus.source.announcements(courseID: Self.inf101)
            let files = try Self.names(campus.store, course + "/Ankündigungen")
            #expect(files.count == news.count && !news.isEmpty)
            #expect(
                files.allSatisfy { $0.range(of: #"^\d{4}-\d{2}-\d{2} .+\.md$"#, options: .regularExpression) != nil })
            // An announcement is a Stud.IP object with its id; the folder and the calendar are CampusFS's: none.
            let id = { (path: String) in
                try await shell("getfattr --only-values -n user.campusfs.id \(campus.path(path))").stdout
            }
            let newest = try #require(files.max())
            let newestID = try await id(course + "/Ankündigungen/" + newest)
            #expect(news.contains { $0.id == newestID }, "\(newestID)")
            #expect(try await id(course + "/Ankündigungen").isEmpty)
            #expect(try await id(course + "/Termine.ics").isEmpty)

            let dates = try await campus.source.dates(courseID: Self.inf101)
            let statuses = try await Self.events(campus.path(course + "/Termine.ics"))
            #expect(statuses.count == dates.count && !dates.isEmpty)
            // Each semester's timetable: one weekly VEVENT per slot the schedule route lists.
            let overview = try await campus.source.overview()
            let semester = try #require(
                overview.courses.first { $0.id == Self.inf101 }?.semesterIDs.first.flatMap { id in
                    overview.semesters.first { $0.id == id }
                })
            let slots = try #require(try await campus.source.schedule(semesterID: semester.id))
            let timetable = try #require(course.split(separator: "/").first).description + "/Stundenplan.ics"
            let weekly = try await Self.events(campus.path(timetable))
            #expect(weekly.count == slots.count && !slots.isEmpty, "\(weekly.count) events, \(slots.count) slots")
            #expect(statuses.filter { $0 == "CANCELLED" }.count == dates.filter(\.isCancelled).count)

            // A new announcement and a cancelled date show after a refresh; the announcement is highlighted.
            let post =
                #"{"course_id": "\#(Self.inf101)", "title": "Raumänderung", "#
                + #""content": "<p>Heute im <b>Audimax</b>: Übung fällt aus.</p><ul><li>a</li></ul>"}"#
            let calendar = campus.path(course + "/Termine.ics")
            let before = try await shell("stat -c %Y \(calendar)")
            let open = try #require(dates.first { !$0.isCancelled })
            let changed = try await shell(
                "curl -sf -X POST -d \(quoted(post)) \(campus.sim.controlURL)/news >/dev/null && curl -sf -X PATCH -d "
                    + quoted(#"{"cancelled": true, "note": "Krankheit"}"#)
                    + " \(campus.sim.controlURL)/dates/\(open.id)")
            try #require(changed.status == 0, "\(changed.stderr)")
            try await campus.refresh()
            let added = try #require(
                try Self.names(campus.store, course + "/Ankündigungen").first { $0.hasSuffix(" Raumänderung.md") })
            let addedPath = course + "/Ankündigungen/" + added
            let isHighlighted = { try campus.store.highlightedDocuments().contains { $0.path == addedPath } }
            #expect(try isHighlighted())
            // `grep -r` reads every announcement, and the highlight stays; a person's `cat` clears it once the
            // burst of opens has ended (ScanDetector: a second of quiet).
            let scan = try await shell("grep -r -l Audimax \(campus.path(course))")
            #expect(scan.lines.contains { $0.hasSuffix("/Ankündigungen/" + added) }, "\(scan.stdout)")
            try await Task.sleep(for: .seconds(2))
            #expect(try isHighlighted(), "a scan is no reading")
            let markdown = try await shell("cat \(campus.path(addedPath))")
            for _ in 0..<100 where try isHighlighted() { try await Task.sleep(for: .milliseconds(50)) }
            #expect(try !isHighlighted(), "reading the announcement clears its highlight")
            #expect(markdown.stdout.hasPrefix("# Raumänderung\n"))
            #expect(markdown.stdout.contains("**Audimax**") && markdown.stdout.contains("Übung fällt aus."))
            #expect(markdown.stdout.contains("- a"))
            let after = try await Self.events(campus.path(course + "/Termine.ics"))
            #expect(after.filter { $0 == "CANCELLED" }.count == statuses.filter { $0 == "CANCELLED" }.count + 1)
            let stat = try await shell(
                "stat -c %s \(campus.path(course + "/Termine.ics")); wc -c < \(campus.path(course + "/Termine.ics"))")
            #expect(stat.lines.count == 2 && stat.lines[0] == stat.lines[1], "getattr's size is the file's")
            // The cancellation leaves the calendar's stamp (its latest end) as it was; the mtime moves all the same.
            let moved = try await shell("stat -c %Y \(calendar)")
            let seconds = { (result: CommandResult) in Int(result.stdout.trimmingCharacters(in: .newlines)) }
            #expect((seconds(moved) ?? 0) > (seconds(before) ?? .max), "the calendar's mtime moves")

            // Offline: the simulator stops answering, the files stay readable.
            await campus.sim.stop()
            let offline = try await shell(
                "cat \(campus.path(course + "/Ankündigungen/" + added)) \(campus.path(course + "/Termine.ics")) > /dev/null"
            )
            #expect(offline.status == 0, "\(offline.stderr)")
        }
    }

    /// The user's way, with the daemon in its own process: a lecturer posts an announcement and cancels a date,
    /// `campusfs refresh` reports the announcement as new, `campusfs new` lists it, and the mounted calendar says
    /// the date is cancelled.
    /// Looking into a course's folder of announcements is a listing like any other: it never reaches the server.
    /// (It did: its listing had no date, so every look started a background refresh of the course — 141 requests
    /// during one warm `find` of the `large` dataset.)
    @Test func lookingIntoTheAnnouncementsAsksTheServerNothing() async throws {
        try await DaemonTests.with(SimulatorConfiguration(dataset: .fixtures507More, flavour: .v50)) { setup in
            #expect(try await setup.mount().status == 0)
            let store = try MetadataStore(path: setup.cli.database().path)
            let course = try Self.coursePath(store)
            let before = setup.sim.requestCount
            for _ in 0..<3 {
                let looked = try await shell(
                    "ls -l \(setup.path(course + "/Ankündigungen")) >/dev/null && find \(setup.path(course)) >/dev/null"
                )
                #expect(looked.status == 0, "\(looked.stderr)")
            }
            try await Task.sleep(for: .seconds(1))
            #expect(setup.sim.requestCount == before, "listings sent requests")
        }
    }

    @Test func campusfsRefreshAndNewShowAnAnnouncementAndACancelledDate() async throws {
        try await DaemonTests.with(SimulatorConfiguration(dataset: .fixtures507More, flavour: .v50)) { setup in
            #expect(try await setup.mount().status == 0)
            let store = try MetadataStore(path: setup.cli.database().path)
            let course = try Self.coursePath(store)
            let calendar = setup.path(course + "/Termine.ics")
            let cancelledBefore = try await shell("grep -c STATUS:CANCELLED \(calendar)")
            let lecture = try #require(
                try store.courseDates(courseID: Self.inf101).first { $0.title == "Vorlesung" && !$0.isCancelled })
            let post =
                #"{"course_id": "\#(Self.inf101)", "title": "Klausuranmeldung", "content": "<p>Bis Freitag.</p>"}"#
            let changed = try await shell(
                "curl -sf -X POST -d \(quoted(post)) \(setup.sim.controlURL)/news >/dev/null && curl -sf -X PATCH -d "
                    + quoted(#"{"cancelled": true}"#) + " \(setup.sim.controlURL)/dates/\(lecture.id)")
            try #require(changed.status == 0, "\(changed.stderr)")

            let refresh = try await setup.campusfs(["refresh", "--json"])
            let outcome = try JSONSerialization.jsonObject(with: Data(refresh.stdout.utf8)) as? [String: Any]
            let added = (outcome?["new"] as? [String]) ?? []
            #expect(
                added.contains { $0.hasPrefix(course + "/Ankündigungen/") && $0.hasSuffix(" Klausuranmeldung.md") },
                "\(refresh.stdout) \(refresh.stderr)")
            let new = try await setup.campusfs(["new"])
            #expect(new.stdout.contains("Klausuranmeldung.md"), "\(new.stdout) \(new.stderr)")
            let cancelledAfter = try await shell("grep -c STATUS:CANCELLED \(calendar)")
            #expect((Int(cancelledAfter.lines.first ?? "") ?? 0) == (Int(cancelledBefore.lines.first ?? "") ?? 0) + 1)
        }
    }

    /// `campusfs refresh PATH` of a course renews its semester's timetable too: a room of the course's weekly
    /// lecture changes on the server, and the timetable read through the mount names it.
    @Test func refreshOfACourseRenewsItsSemestersTimetable() async throws {
        try await MountedCampus.with(.fixtures507More) { campus in
            let course = try Self.coursePath(campus.store)
            let timetable = try #require(course.split(separator: "/").first).description + "/Stundenplan.ics"
            let before = try await shell("cat \(campus.path(timetable))")
            #expect(before.status == 0 && !before.stdout.contains("Hörsaal 7"), "\(before.stderr)")
            let lecture = try #require(
                try await campus.source.dates(courseID: Self.inf101).last { $0.title == "Vorlesung" && !$0.isCancelled }
            )
            let moved = try await shell(
                "curl -sf -X PATCH -d \(quoted(#"{"room": "Hörsaal 7"}"#)) \(campus.sim.controlURL)/dates/\(lecture.id)"
            )
            try #require(moved.status == 0, "\(moved.stderr)")
            try await campus.refresh(courseIDs: [Self.inf101])
            let after = try await shell("cat \(campus.path(timetable))")
            #expect(after.stdout.contains("Hörsaal 7"), "the refreshed course's semester has its new room")
        }
    }

    /// An installation without the schedule route (404): the timetable is the union of the semester's course
    /// dates, one VEVENT each, as python3-icalendar reads it. In-process: the file's bytes are the filesystem's
    /// answer, and the parser reads them from a copy.
    @Test func withoutAScheduleRouteTheTimetableIsTheSemestersDates() async throws {
        try await DriverMode.inProcess.run(.fixtures507More) { fs in
            fs.sim.faults.add(Fault(action: .status(404), pathContains: "/schedule"))
            try await fs.refresh()
            let course = try Self.coursePath(fs.store)
            let source = fs.campus.source
            let overview = try await source.overview()
            let semester = try #require(
                overview.courses.first { $0.id == Self.inf101 }?.semesterIDs.first.flatMap { id in
                    overview.semesters.first { $0.id == id }
                })
            var expected = 0
            for other in overview.courses where other.semesterIDs.contains(semester.id) {
                expected += try await source.dates(courseID: other.id).filter {
                    $0.start >= semester.begin && $0.start <= semester.end
                }.count
            }
            let timetable = try #require(course.split(separator: "/").first).description + "/Stundenplan.ics"
            let copy = try temporaryDirectory("campusfs-timetable") + "/Stundenplan.ics"
            defer { try? FileManager.default.removeItem(atPath: (copy as NSString).deletingLastPathComponent) }
            try Data(try await fs.read(timetable).get()).write(to: URL(fileURLWithPath: copy))
            let events = try await Self.events(quoted(copy))
            #expect(events.count == expected && expected > 0, "\(events.count) events, \(expected) dates")
        }
    }

    /// Both API generations give the same announcements, calendars and timetables byte for byte (the calendars
    /// carry only what both give of a cancelled date, docs/course-files.md).
    @Test func bothAPIsGiveTheSameFiles() async throws {
        var trees: [[String: Data]] = []
        for api in [ClientConfiguration.API.jsonAPI, .legacyREST] {
            try await withSimulator(.fixtures507More) { sim in
                var configuration = ClientConfiguration(
                    baseURL: sim.baseURL, credentials: .basic(username: "test_autor", password: "testing"))
                configuration.api = api
                try await withSource(configuration) { source in
                    let store = try MetadataStore.temporary()
                    _ = try await Refresher(source: source, store: store, options: TreeOptions()).refresh()
                    var files: [String: Data] = [:]
                    for entry in try store.walk()
                    where [.announcement, .courseCalendar, .timetable].contains(entry.node.item) {
                        files[entry.path] = try store.generatedContent(inode: entry.node.inode)
                    }
                    trees.append(files)
                }
            }
        }
        try #require(trees.count == 2)
        #expect(trees[0].keys.contains { $0.hasSuffix("/Stundenplan.ics") })
        #expect(trees[0].keys.contains { $0.hasSuffix(".md") })
        #expect(trees[0].keys.sorted() == trees[1].keys.sorted())
        for (path, bytes) in trees[0] {
            let mine = Set(String(decoding: bytes, as: UTF8.self).split(separator: "\r\n"))
            let theirs = Set(String(decoding: trees[1][path] ?? Data(), as: UTF8.self).split(separator: "\r\n"))
            #expect(
                trees[1][path] == bytes,
                "\(path) differs: JSON:API \(mine.subtracting(theirs)) REST \(theirs.subtracting(mine))")
        }
    }
}
