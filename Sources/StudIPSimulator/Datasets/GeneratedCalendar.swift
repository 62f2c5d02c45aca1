/// Announcements and course dates of the generated installations: every course gets a weekly regular time per
/// semester with a room, a few single dates (exam, excursion or guest talk), one cancelled lecture with a reason,
/// and lecturers' announcements in German HTML that read like real ones (room change, exam registration,
/// cancelled lecture, reading list) — most current, sometimes an expired or a not yet published one.
///
/// Drawn from a generator of its own (derived from the seed), so adding them changed no other generated value.
extension GeneratedBuilder {
    private static let rooms = [
        "Hörsaal 1 (Gebäude A, Raum 0.12)", "Audimax", "Seminarraum 2.104", "Hörsaal Ü 3", "PC-Pool (Raum E.07)",
        "Großer Hörsaal Physik", "Seminarraum Nord 014", "Raum 1.41 (Bibliothek)",
    ]
    private static let slots = [(8, 15), (10, 15), (12, 15), (14, 15), (16, 15)]
    private static let reasons = [
        "Dies academicus – die Veranstaltung fällt aus.",
        "Krankheit – die Sitzung entfällt, Material folgt im Dateibereich.",
        "Die Lehrende ist auf einer Tagung; bitte bearbeiten Sie das Übungsblatt selbstständig.",
        "Wegen der Personalversammlung fällt die Veranstaltung aus.",
    ]

    mutating func addAnnouncementsAndDates(seed: UInt64) {
        var rng = SplitMix64(seed: SplitMix64.derive(seed, 18))
        university.pinnedNow = GeneratedDataset.now
        let semesters = university.orderedSemesters
        for course in university.courses.values.sorted(by: { $0.id < $1.id }) {
            let lecturer = course.lecturers.first.flatMap { university.users[$0.userID] }
            let inSemesters =
                course.isOpenEnded ? Array(semesters.suffix(1)) : semesters.filter { course.isIn(semester: $0.id) }
            for semester in inSemesters {
                for date in regularDates(of: course, in: semester, rng: &rng) { university.add(date) }
                for date in singleDates(of: course, in: semester, rng: &rng) { university.add(date) }
            }
            // One lecture soon (within about three weeks of "now") is cancelled, else the last one.
            let weekly = university.events(ofCourse: course.id).filter { $0.cycleID != nil }
            let soon = GeneratedDataset.now + rng.int(in: 0...3) * Self.week
            var cancelled = weekly.first { $0.start > soon } ?? weekly.last
            if var date = cancelled {
                date.isCancelled = true
                date.cancelComment = rng.pick(Self.reasons)
                university.add(date)
                cancelled = date
            }
            for item in announcements(of: course, lecturer: lecturer, cancelled: cancelled, rng: &rng) {
                university.add(item)
            }
        }
    }

    /// One weekly 90-minute slot from the first to the last lecture week, none in the semester's breaks.
    private func regularDates(of course: Course, in semester: Semester, rng: inout SplitMix64) -> [CourseEvent] {
        let cycleID = rng.id()
        let weekday = rng.int(in: 1...5)
        let (hour, minute) = rng.pick(Self.slots)
        let room = rng.pick(Self.rooms)
        let kind = course.type == 1 ? "Vorlesung" : rng.pick(["Seminar", "Übung", "Sitzung"])
        let created = semester.begin + rng.int(in: 0...(10 * Self.day))
        let begin = BerlinTime.dateString(semester.lecturesBegin).split(separator: "-").compactMap { Int($0) }
        guard begin.count == 3 else { return [] }
        let first = BerlinTime.day(weekday, onOrAfter: begin[0], begin[1], begin[2])
        var dates: [CourseEvent] = []
        for week in 0..<20 {
            let start = BerlinTime.unix(begin[0], begin[1], first + 7 * week, hour, minute)
            guard start < semester.lecturesEnd else { break }
            if semester.isHoliday(start) { continue }
            dates.append(
                CourseEvent(
                    id: rng.id(), courseID: course.id, cycleID: cycleID, start: start, end: start + 90 * 60,
                    category: kind, cycleDescription: kind, room: room, mkdate: created, chdate: created))
        }
        return dates
    }

    /// An exam after the lectures, sometimes an excursion or a guest talk.
    private func singleDates(of course: Course, in semester: Semester, rng: inout SplitMix64) -> [CourseEvent] {
        var result: [CourseEvent] = []
        let examDay = semester.lecturesEnd + rng.int(in: 2...12) * Self.day
        let examDate = BerlinTime.dateString(examDay).split(separator: "-").compactMap { Int($0) }
        if examDate.count == 3 {
            let start = BerlinTime.unix(examDate[0], examDate[1], examDate[2], rng.pick([9, 10, 14]))
            result.append(
                CourseEvent(
                    id: rng.id(), courseID: course.id, start: start, end: start + 2 * 3600, category: "Klausur",
                    room: rng.pick(["Audimax", "Großer Hörsaal Physik", "Sporthalle Campus Nord"]),
                    mkdate: semester.begin + 3 * Self.week, chdate: semester.begin + 3 * Self.week))
        }
        if rng.chance(0.5) {
            let start = semester.lecturesBegin + rng.int(in: 4...10) * Self.week + 2 * Self.day + 13 * 3600
            result.append(
                CourseEvent(
                    id: rng.id(), courseID: course.id, start: start, end: start + 3 * 3600,
                    category: rng.pick(["Exkursion", "Gastvortrag", "Sondersitzung"]),
                    room: rng.pick(["Treffpunkt Foyer Hauptgebäude", "Rechenzentrum, Raum 0.01", "Senatssaal"]),
                    mkdate: semester.begin + 2 * Self.week, chdate: semester.begin + 2 * Self.week))
        }
        return result
    }

    /// "08.12.2026", as German announcements write a date.
    private static func germanDate(_ time: Int) -> String {
        BerlinTime.dateString(time).split(separator: "-").reversed().joined(separator: ".")
    }

    private func announcements(
        of course: Course, lecturer: User?, cancelled: CourseEvent?, rng: inout SplitMix64
    ) -> [News] {
        let name = lecturer?.formattedName ?? "Ihr Lehrteam"
        let now = GeneratedDataset.now
        let title = course.title
        var items: [(title: String, body: String, start: Int, days: Int)] = [
            (
                "Willkommen in „\(title)“",
                "<p>Liebe Studierende,</p><p>herzlich willkommen! Alle Folien und Übungsblätter finden Sie im "
                    + "<strong>Dateibereich</strong>. Bitte beachten Sie:</p><ul><li>Die Übungen beginnen in der "
                    + "zweiten Vorlesungswoche.</li><li>Fragen gern im Forum – nicht per E-Mail.</li></ul>"
                    + "<p>Viele Grüße<br />\(name)</p>",
                now - rng.int(in: 30...50) * Self.day, 120
            ),
            (
                "Raumänderung ab nächster Woche",
                "<p>Die Veranstaltung findet ab sofort in <strong>\(rng.pick(Self.rooms))</strong> statt. "
                    + "Der alte Raum ist wegen Bauarbeiten gesperrt.</p><p>Danke für Ihr Verständnis!</p>",
                now - rng.int(in: 2...9) * Self.day, 21
            ),
            (
                "Anmeldung zur Prüfung bis 15. Januar",
                "<p>Die Prüfungsanmeldung ist freigeschaltet. Melden Sie sich bitte <em>bis zum 15.01.</em> im "
                    + "<a href=\"https://www.studip.de/\" class=\"link-extern\" target=\"_blank\" "
                    + "rel=\"noreferrer noopener\">Prüfungsportal</a> an.</p><ol><li>Modul auswählen</li>"
                    + "<li>Prüfungstermin bestätigen</li><li>Bestätigungsmail aufbewahren</li></ol>"
                    + "<p>Hilfsmittel: ein beidseitig beschriebenes DIN-A4-Blatt, kein Taschenrechner.</p>",
                now - rng.int(in: 0...5) * Self.day, 60
            ),
            (
                "Literaturliste ergänzt",
                "<p>Ich habe die Literaturliste um zwei Titel ergänzt (Kapitel 3 &amp; 4). Die Bücher stehen im "
                    + "Semesterapparat der Bibliothek.</p>",
                now - 70 * Self.day, 30
            ),
            (
                "Vorschau: Gastvortrag im nächsten Monat",
                "<p>Wir freuen uns auf einen Gastvortrag aus der Praxis – Details folgen.</p>",
                now + rng.int(in: 5...20) * Self.day, 30
            ),
        ]
        if let cancelled {
            items.append(
                (
                    "Die Veranstaltung am \(Self.germanDate(cancelled.start)) fällt aus",
                    "<p>\(cancelled.cancelComment)</p><p>Der Stoff wird in der folgenden Woche nachgeholt. "
                        + "Bitte lesen Sie bis dahin Kapitel 5 im Skript.</p><p>\(name)</p>",
                    min(now, cancelled.start) - 3 * Self.day, 14
                ))
        }
        // The first three always, the rest by chance; the cancelled lecture's notice always.
        let chosen = items.enumerated().filter { $0.offset < 3 || $0.offset >= 5 || rng.chance(0.5) }.map(\.element)
        return chosen.map { item in
            News(
                id: rng.id(), title: item.title, content: "<!--HTML-->" + item.body,
                authorID: lecturer?.id ?? "", rangeIDs: [course.id], date: item.start, expire: item.days * Self.day,
                allowComments: rng.chance(0.3), mkdate: min(item.start, now), chdate: min(item.start, now))
        }
    }
}
