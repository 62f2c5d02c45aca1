import Foundation

/// The `demo` installation: what a new user should see on a first `campusfs demo` — a believable student's view.
/// Courses come from ``ContentCatalogue``, and every generated document's seed carries its course, number and
/// role (``ContentProfile``), so slides, sheets, code and notes are about what the course teaches.
extension GeneratedBuilder {
    mutating func buildDemo() {
        let semesters = addRecentSemesters(3)
        let (current, summer, previous) = (semesters[2], semesters[1], semesters[0])
        let catalogue = ContentCatalogue.courses.indices
        let others = rng.shuffled(catalogue.filter { ContentCatalogue.courses[$0].number != "INF-101" })
        let order = (ContentCatalogue.index(of: "INF-101").map { [$0] } ?? []) + others
        let plan: [[Semester]] = [
            [current], [current], [current], [current], [summer], [summer], [previous], [previous], [summer, current],
        ]
        var attended: [Int] = []
        for (index, terms) in plan.enumerated() {
            let catalogueIndex = order[index % order.count]
            let template = ContentCatalogue.courses[catalogueIndex]
            var teachers = [index % 3 == 0 ? dozent : rng.pick(lecturers)]
            if rng.chance(0.3) { teachers.append(rng.pick(lecturers.filter { $0.id != teachers[0].id })) }
            // One course of last winter the student never joined: it exists, but not under their semesters.
            let students = index == 7 ? [] : [autor]
            if index != 7 { attended.append(catalogueIndex) }
            let root = addCourse(
                number: template.number, title: template.title, semesters: terms, lecturers: teachers,
                tutors: index % 2 == 0 ? [tutor] : [], students: students,
                description: template.english
                    ? "Lecture with exercises. Slides and exercise sheets are published here every week."
                    : "Vorlesung mit Übung. Folien und Übungsblätter werden hier wöchentlich bereitgestellt.",
                location: "Hörsaal \(rng.int(in: 1...12)), Zentrales Hörsaalgebäude")
            populateDemoCourse(
                root: root, course: catalogueIndex, semesters: terms, teachers: teachers, index: index)
        }
        addDemoStudyGroup(course: rng.pick(attended))
    }

    private mutating func populateDemoCourse(
        root: Folder, course: Int, semesters: [Semester], teachers: [User], index: Int
    ) {
        let template = ContentCatalogue.courses[course]
        let english = template.english
        let owner = teachers[0]
        let window = Self.activity(of: semesters)
        let opened = window.lowerBound + rng.int(in: 1...5) * Self.day
        let term = semesters.last?.title ?? ""
        let readme = Array(readmeText(template: template, term: term, teachers: teachers).utf8)
        addDocument(
            "README.txt", in: root, owner: owner, content: .bytes(Data(readme)), size: readme.count,
            mimeType: "text/plain", mkdate: opened)

        // Weekly lectures from the start of the (first) lecture period until now or its end.
        let lectures = semesters.flatMap { semester in
            stride(
                from: semester.lecturesBegin + rng.int(in: 0...2) * Self.day, to: semester.lecturesEnd, by: Self.week
            )
            .filter { $0 < GeneratedDataset.now - 3 * 3_600 }
            .prefix(14)
        }
        let slides = addFolder(
            english ? "Lecture slides" : "Vorlesungsfolien", in: root, owner: owner.id, mkdate: opened,
            description: english ? "Slides of each lecture, usually the day before." : "Folien zur Vorlesung")
        for (number, date) in lectures.enumerated() {
            let topic = template.lectures[number % template.lectures.count].title
            let name =
                english
                ? "Lecture \((number + 1).padded(2)) – \(topic).pdf"
                : "Vorlesung \((number + 1).padded(2)) – \(topic).pdf"
            let day = BerlinTime.dateString(date)
            addGenerated(
                name, in: slides, kind: .pdf, size: size(median: 900 * Self.kibibyte, sigma: 0.6), owner: owner,
                mkdate: date - rng.int(in: 2...20) * 3_600,
                description: english ? "Slides of the lecture on \(day)." : "Folien zur Vorlesung am \(day).",
                about: (course, number + 1, .slides))
        }
        if index % 2 == 1 {
            let archive = addFolder(
                english ? "Archive 2025" : "Archiv 2025", in: slides, owner: owner.id, mkdate: opened)
            for number in 1...3 {
                addGenerated(
                    english ? "Slides 2025 part \(number).pdf" : "Folien 2025 Teil \(number).pdf", in: archive,
                    kind: .pdf, size: size(median: 2 * Self.mebibyte, sigma: 0.5), owner: owner,
                    mkdate: window.lowerBound - rng.int(in: 300...380) * Self.day, about: (course, number, .archive))
            }
        }

        // A sheet a week after the first lecture, a solution once its deadline has passed.
        let sheets = addFolder(english ? "Exercise sheets" : "Übungsblätter", in: root, owner: owner.id, mkdate: opened)
        let solutions = addFolder(english ? "Solutions" : "Lösungen", in: sheets, owner: owner.id, mkdate: opened)
        let helper = teachers.count > 1 || index % 2 == 0 ? tutor : owner
        for (number, date) in lectures.dropFirst().enumerated() {
            let sheet = (number + 1).padded(2)
            addGenerated(
                english ? "Exercise sheet \(sheet).pdf" : "Übungsblatt \(sheet).pdf", in: sheets, kind: .pdf,
                size: size(median: 120 * Self.kibibyte, sigma: 0.5), owner: owner, mkdate: date + 4 * 3_600,
                about: (course, number + 1, .sheet))
            if let language = template.code {
                addGenerated(
                    "aufgabe\(sheet).\(language.fileExtension)", in: sheets, kind: .text,
                    size: rng.int(in: 2...9) * Self.kibibyte, owner: helper, mkdate: date + 5 * 3_600,
                    about: (course, number + 1, .code))
            }
            let due = date + 2 * Self.week
            if due < GeneratedDataset.now {
                addGenerated(
                    english ? "Solution \(sheet).pdf" : "Lösung \(sheet).pdf", in: solutions, kind: .pdf,
                    size: size(median: 150 * Self.kibibyte, sigma: 0.5), owner: helper, mkdate: due + 3_600,
                    about: (course, number + 1, .solution))
            }
        }

        let reading = addFolder(english ? "Reading" : "Literatur", in: root, owner: owner.id, mkdate: opened)
        addGenerated(
            english ? "Lecture notes.pdf" : "Skript.pdf", in: reading, kind: .pdf,
            size: size(median: 3 * Self.mebibyte, sigma: 0.4), owner: owner, mkdate: opened + Self.day,
            description: english ? "Complete lecture notes (draft)." : "Vollständiges Vorlesungsskript (Entwurf).",
            termsOfUse: "FREE_LICENSE", about: (course, 1, .notes))
        addGenerated(
            "\(template.literatureAuthor) – \(template.lectures[1].title).pdf", in: reading, kind: .pdf,
            size: size(median: 4 * Self.mebibyte, sigma: 0.3), owner: owner, mkdate: opened + 2 * Self.day,
            description: index == 0
                ? "Chapter scan under copyright: only the uploader may download it."
                : (english ? "Chapter scan for preparation." : "Kapitel-Scan zur Vorbereitung."),
            termsOfUse: index == 0 ? "NO_LICENSE" : "UNDEF_LICENSE", about: (course, 2, .chapter))
        addExternal(
            english ? "Reading list (university library).txt" : "Literaturliste (Universitätsbibliothek).txt",
            in: reading, size: rng.int(in: 3...12) * Self.kibibyte, owner: owner, mkdate: opened + 3 * Self.day,
            description: english ? "Hosted by the university library." : "Liegt auf dem Server der Bibliothek.")

        if index % 3 != 2 {
            let exams = addFolder(english ? "Past exams" : "Altklausuren", in: root, owner: owner.id, mkdate: opened)
            for year in [2023, 2024] {
                addGenerated(
                    english ? "Exam WS \(year)/\((year + 1) % 100).pdf" : "Klausur WS \(year)/\((year + 1) % 100).pdf",
                    in: exams, kind: .pdf, size: size(median: 300 * Self.kibibyte, sigma: 0.4), owner: owner,
                    mkdate: opened + rng.int(in: 0...3_600), about: (course, year % 100, .exam))
            }
        }
    }

    private func readmeText(template: ContentCatalogue.Course, term: String, teachers: [User]) -> String {
        let names = teachers.map(\.formattedName).joined(separator: ", ")
        if template.english {
            return """
                \(template.number) \(template.title) – \(term)

                Welcome! This folder holds everything for the course:
                  Lecture slides    one PDF per lecture, uploaded the day before
                  Exercise sheets   a new sheet every week; solutions two weeks later
                  Reading           lecture notes and further reading

                Lecturer(s): \(names)
                Questions? Use the course forum or come to the office hours.

                """
        }
        return """
            \(template.number) \(template.title) – \(term)

            Willkommen! In diesem Ordner finden Sie alles zur Veranstaltung:
              Vorlesungsfolien   eine PDF pro Vorlesung, jeweils am Vortag
              Übungsblätter      jede Woche ein neues Blatt, Lösungen zwei Wochen später
              Literatur          Skript und weiterführende Literatur

            Lehrende: \(names)
            Fragen bitte ins Forum der Veranstaltung oder in die Sprechstunde.

            """
    }

    /// An open-ended study group (no semester) for one of the student's courses: it lives in every semester, the
    /// tree shows it once.
    private mutating func addDemoStudyGroup(course: Int) {
        let subject = ContentCatalogue.courses[course]
        let title = subject.english ? "Study Group \(subject.title)" : "Lerngruppe \(subject.title)"
        let root = addCourse(
            number: "", title: title, semesters: [], lecturers: [tutor], students: [autor], type: 99, semClass: 99,
            description: "Wir treffen uns jeden Freitag um 14 Uhr in der Bibliothek.")
        let window = Self.activity(of: [])
        let opened = window.lowerBound + Self.day
        let minutes = addFolder("Protokolle", in: root, owner: tutor.id, mkdate: opened)
        var meeting = GeneratedDataset.now - 8 * Self.week - Self.day
        var number = 1
        while meeting < GeneratedDataset.now - Self.day {
            addGenerated(
                "Treffen \(BerlinTime.dateString(meeting)).txt", in: minutes, kind: .text,
                size: rng.int(in: 1...6) * Self.kibibyte,
                owner: rng.chance(0.5) ? tutor : autor, mkdate: meeting + 6 * 3_600, about: (course, number, .minutes))
            meeting += Self.week
            number += 1
        }
        let summaries = addFolder("Zusammenfassungen", in: root, owner: tutor.id, mkdate: opened)
        for chapter in 1...4 {
            addGenerated(
                "Zusammenfassung Kapitel \(chapter).pdf", in: summaries, kind: .pdf,
                size: size(median: 200 * Self.kibibyte, sigma: 0.5), owner: chapter % 2 == 0 ? autor : tutor,
                mkdate: date(in: window), about: (course, chapter, .summary))
        }
        let links = addFolder("Links", in: root, owner: tutor.id, mkdate: opened)
        addExternal(
            "Altklausuren der Fachschaft.txt", in: links, size: 7 * Self.kibibyte, owner: tutor,
            mkdate: opened + Self.week, description: "Sammlung der Fachschaft, liegt auf deren Server.")
        addFolder("Sonstiges", in: root, owner: tutor.id, mkdate: opened + 2 * Self.week)
    }
}

extension University {
    /// This week's uploads of the demo, dated back from `now` (the real clock): the next lecture's slides in the two
    /// courses whose lectures run latest, and the next exercise sheet of the first. The demo installation is as of
    /// ``GeneratedDataset/now``; a first mount marks `new` only what changed in the last week (docs/mount.md,
    /// "Highlights"), so a newcomer running `campusfs demo` later would never see a highlight without these. They
    /// are what a student finds on a first mount in term time: a few documents the lecturers put up in the last
    /// days. Returns their ids.
    @discardableResult
    public mutating func addDemoArrivals(now: Date) -> [String] {
        let now = Int(now.timeIntervalSince1970)
        let student = user(named: "test_autor")?.id
        let slides = folders.values.filter { folder in
            ["Vorlesungsfolien", "Lecture slides"].contains(folder.name)
                && course(ofFolder: folder.id)?.members.contains { $0.userID == student } == true
        }
        let running = slides.compactMap { folder -> (Folder, latest: Int)? in
            fileRefs(in: folder.id).map(\.chdate).max().map { (folder, $0) }
        }
        .sorted { ($0.latest, $0.0.id) > ($1.latest, $1.0.id) }
        var added: [String] = []
        for (rank, (folder, _)) in running.prefix(2).enumerated() {
            guard let course = course(ofFolder: folder.id), let catalogue = ContentCatalogue.index(of: course.number)
            else { continue }
            let template = ContentCatalogue.courses[catalogue]
            let owner = course.lecturers.first?.userID ?? folder.userID
            let lecture = Self.nextNumber(in: fileRefs(in: folder.id), after: /^(Vorlesung|Lecture) ([0-9]+)\b/)
            let topic = template.lectures[(lecture - 1) % template.lectures.count].title
            let name = "\(template.english ? "Lecture" : "Vorlesung") \(lecture.padded(2)) – \(topic).pdf"
            added.append(
                addArrival(
                    name, in: folder, owner: owner, size: 870 * 1_024, at: now - (rank == 0 ? 2 : 26) * 3_600,
                    seed: ContentProfile.seed(course: catalogue, number: lecture, role: .slides, variation: 1)))
            let sheetsName = template.english ? "Exercise sheets" : "Übungsblätter"
            // Beside the slides, in the course's root folder.
            let sibling = folders.values.first { $0.parentID == folder.parentID && $0.name == sheetsName }
            guard rank == 0, let sheets = sibling else { continue }
            let sheet = Self.nextNumber(in: fileRefs(in: sheets.id), after: /^(Übungsblatt|Exercise sheet) ([0-9]+)/)
            added.append(
                addArrival(
                    "\(template.english ? "Exercise sheet" : "Übungsblatt") \(sheet.padded(2)).pdf", in: sheets,
                    owner: owner, size: 118 * 1_024, at: now - 5 * 3_600,
                    seed: ContentProfile.seed(course: catalogue, number: sheet, role: .sheet, variation: 1)))
        }
        return added
    }

    /// One more than the highest number the names of `documents` carry after `pattern`'s first word; 1 if none.
    private static func nextNumber(
        in documents: [FileRef], after pattern: Regex<(Substring, Substring, Substring)>
    ) -> Int {
        1 + (documents.compactMap { $0.name.firstMatch(of: pattern).flatMap { Int($0.output.2) } }.max() ?? 0)
    }

    private mutating func addArrival(
        _ name: String, in folder: Folder, owner: String, size: Int, at time: Int, seed: UInt64
    ) -> String {
        let id = PHP.newID()
        add(
            FileRef(
                id: id, fileID: PHP.newID(), folderID: folder.id, name: name, userID: owner,
                mimeType: "application/pdf", size: size, mkdate: time, chdate: time,
                content: .generated(kind: .pdf, seed: seed, size: size)))
        return id
    }
}

extension Simulator {
    /// ``University/addDemoArrivals(now:)`` on the installation this simulator serves (`campusfs demo` calls it
    /// before mounting).
    @discardableResult
    public func addDemoArrivals(now: Date) -> [String] {
        var added: [String] = []
        _ = try? store.mutate { university in added = university.addDemoArrivals(now: now) }
        return added
    }
}
