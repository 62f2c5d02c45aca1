import Foundation

/// The `small` installation: each hostile case of API.md §7 and of the naming rules at least once, in six courses.
///
/// Names and structure are fixed so tests can look cases up by name; ids, dates and contents follow the seed.
extension GeneratedBuilder {
    /// A 300-byte document name with multi-byte characters, so cutting it needs a UTF-8 boundary.
    static let longName: String = {
        let pattern = Array("Zusammenfassung der Vorlesung über Bäume, Graphen und Sortierverfahren – ")
        var name = ""
        var index = 0
        while (name + String(pattern[index % pattern.count])).utf8.count <= 296 {
            name.append(pattern[index % pattern.count])
            index += 1
        }
        name += String(repeating: "e", count: 296 - name.utf8.count)
        return name + ".pdf"
    }()

    /// "Übung" composed (NFC) and decomposed (NFD): equal for Swift, different bytes on the wire.
    static let composedName = "\u{DC}bung.txt"
    static let decomposedName = "U\u{308}bung.txt"

    mutating func buildSmall() {
        let semesters = addRecentSemesters(3)
        let (previous, summer, current) = (semesters[0], semesters[1], semesters[2])
        addHostileCourse(current)

        let algebra = addCourse(
            number: "MATH-110 ", title: "Linear Algebra I", semesters: [summer], lecturers: [lecturers[0]],
            students: [autor], rootName: "Linear Algebra I",
            description: "Migrated course: its root folder still carries the course name.")
        let window = Self.activity(of: [summer])
        let slides = addFolder("Lecture slides", in: algebra, owner: lecturers[0].id, mkdate: window.lowerBound)
        for number in 1...3 {
            addGenerated(
                "Lecture \(number).pdf", in: slides, kind: .pdf, size: rng.int(in: 12...40) * Self.kibibyte,
                owner: lecturers[0], mkdate: date(in: window))
        }
        let sheets = addFolder("Exercise sheets", in: algebra, owner: lecturers[0].id, mkdate: window.lowerBound)
        for number in 1...2 {
            addGenerated(
                "Sheet \(number).pdf", in: sheets, kind: .pdf, size: 10 * Self.kibibyte, owner: lecturers[0],
                mkdate: date(in: window))
        }

        let project = addCourse(
            number: "INF-390", title: "Projektseminar: Robotik", semesters: [summer, current],
            lecturers: [dozent, lecturers[1]], students: [autor])
        let projectWindow = Self.activity(of: [summer, current])
        let groups = addFolder("Gruppe A/B", in: project, owner: dozent.id, mkdate: projectWindow.lowerBound)
        addGenerated(
            "Projektplan.pdf", in: groups, kind: .pdf, size: 20 * Self.kibibyte, owner: dozent,
            mkdate: date(in: projectWindow))
        addGenerated(
            "sensoren.csv", in: project, kind: .text, size: 14 * Self.kibibyte, owner: lecturers[1],
            mkdate: projectWindow.lowerBound + 30 * Self.day, chdate: GeneratedDataset.now - 2 * Self.day)

        let group = addCourse(
            number: "", title: "Lerngruppe Analysis", semesters: [], lecturers: [tutor], students: [autor], type: 99,
            semClass: 99)
        let groupWindow = Self.activity(of: [])
        addGenerated(
            "Protokoll.txt", in: group, kind: .text, size: 3 * Self.kibibyte, owner: autor,
            mkdate: date(in: groupWindow))
        addExternal(
            "Formelsammlung (extern).txt", in: group, size: 5 * Self.kibibyte, owner: tutor,
            mkdate: date(in: groupWindow))

        let analysis = addCourse(
            number: "MAT-101", title: "Analysis I", semesters: [previous], lecturers: [lecturers[2]],
            students: [autor])
        let analysisWindow = Self.activity(of: [previous])
        addGenerated(
            "Skript.pdf", in: analysis, kind: .pdf, size: 64 * Self.kibibyte, owner: lecturers[2],
            mkdate: date(in: analysisWindow))

        // A course the student is not a member of (foreign-course errors).
        let colloquium = addCourse(
            number: "KOL-900", title: "Kolloquium der Arbeitsgruppe", semesters: [current], lecturers: [dozent],
            students: [])
        addGenerated(
            "Vortragsplan.txt", in: colloquium, kind: .text, size: 2 * Self.kibibyte, owner: dozent,
            mkdate: date(in: Self.activity(of: [current])))
    }

    /// INF-101: hostile names, duplicates, odd ids, restricted folders and documents, a deleted owner.
    private mutating func addHostileCourse(_ semester: Semester) {
        let root = addCourse(
            number: "INF-101", title: "Einführung in die Informatik", semesters: [semester], lecturers: [dozent],
            tutors: [tutor], students: [autor], description: "Every hostile case of the fake-server checklist.")
        let window = Self.activity(of: [semester])
        let opened = window.lowerBound
        func text(_ name: String, in folder: Folder, owner: User? = nil) {
            addGenerated(
                name, in: folder, kind: .text, size: rng.int(in: 1...4) * Self.kibibyte, owner: owner ?? dozent,
                mkdate: date(in: window))
        }
        func pdf(_ name: String, in folder: Folder, owner: User? = nil, mkdate: Int? = nil) {
            addGenerated(
                name, in: folder, kind: .pdf, size: rng.int(in: 10...30) * Self.kibibyte, owner: owner ?? dozent,
                mkdate: mkdate ?? date(in: window))
        }

        text("README.txt", in: root)
        addDocument(
            "leer.txt", in: root, owner: dozent, content: .bytes(Data()), size: 0, mimeType: "text/plain",
            mkdate: date(in: window))
        for name in [".", ".."] {
            let size = rng.int(in: 1...4) * Self.kibibyte
            addDocument(
                name, in: root, owner: dozent, content: .generated(kind: .text, seed: rng.next(), size: size),
                size: size, mimeType: "text/plain", mkdate: date(in: window))
        }
        pdf(Self.longName, in: root)
        let pdfSize = 12 * Self.kibibyte
        addDocument(
            "LIESMICH", in: root, owner: dozent, content: .generated(kind: .pdf, seed: rng.next(), size: pdfSize),
            size: pdfSize, mimeType: "application/pdf", mkdate: date(in: window))
        addDocument(
            "Notizen", in: root, owner: dozent, content: .generated(kind: .text, seed: rng.next(), size: 1_500),
            size: 1_500, mimeType: "0", mkdate: date(in: window))
        addExternal(
            "Online-Skript (extern).txt", in: root, size: 6 * Self.kibibyte, owner: dozent, mkdate: date(in: window))
        let unusualSize = 2 * Self.kibibyte
        for length in [8, 40] {
            addDocument(
                "Kurze und lange ID \(length).txt", in: root, owner: dozent,
                content: .generated(kind: .text, seed: rng.next(), size: unusualSize), size: unusualSize,
                mimeType: "text/plain", mkdate: date(in: window), id: rng.id(length: length))
        }

        let slides = addFolder("Vorlesungsfolien", in: root, owner: dozent.id, mkdate: opened)
        pdf("Vorlesung 1: Einführung.pdf", in: slides)
        pdf("Klausur WS 2025/26.pdf", in: slides)
        pdf("Party 🎉.pdf", in: slides)
        let first = date(in: window)
        pdf("Folien.pdf", in: slides, mkdate: first)
        pdf("Folien.pdf", in: slides, mkdate: first + 3 * Self.day)
        text(Self.composedName, in: slides)
        text(Self.decomposedName, in: slides)
        text("bell\u{1}char.txt", in: slides)
        text("tab\tname.txt", in: slides)
        text("line\nbreak.txt", in: slides)
        addExternal("Linkliste.txt", in: slides, size: 2_345, owner: dozent, mkdate: date(in: window))
        addGenerated(
            "Lehrbuch Kapitel 3 (Scan).pdf", in: slides, kind: .pdf, size: 40 * Self.kibibyte, owner: dozent,
            mkdate: date(in: window), description: "Nur für Lehrende herunterladbar.", termsOfUse: "NO_LICENSE")

        let halves = addFolder("Übungen 1/2", in: root, owner: dozent.id, mkdate: opened)
        pdf("Übungsblatt 1.pdf", in: halves)
        for offset in [0, 5] {
            let material = addFolder(
                "Material", in: root, owner: dozent.id, mkdate: opened + offset * Self.day)
            text("Material \(offset).txt", in: material)
        }
        let dots = addFolder("..", in: root, owner: dozent.id, mkdate: opened)
        text("in dot dot.txt", in: dots)
        let shortID = addFolder("Kurze Ordner-ID", in: root, owner: dozent.id, mkdate: opened, id: rng.id(length: 8))
        text("inside.txt", in: shortID)

        let submissions = addFolder(
            "Abgaben", in: root, owner: dozent.id, mkdate: opened, type: "PermissionEnabledFolder",
            dataContent: #"{"permission":"1"}"#, description: "Students may see this folder but not read it.")
        pdf("Abgabe Gruppe 1.pdf", in: submissions, owner: tutor)
        pdf("Abgabe Gruppe 2.pdf", in: submissions, owner: tutor)
        let hidden = addFolder(
            "Tutorenmaterial", in: root, owner: tutor.id, mkdate: opened, type: "HiddenFolder",
            dataContent: #"{"download_allowed":0}"#)
        text("Musterlösung 1.txt", in: hidden, owner: tutor)
        text("Bewertungsschema.txt", in: hidden, owner: tutor)
        addFolder("Leerer Ordner", in: root, owner: dozent.id, mkdate: opened)

        // The uploader's account was deleted: its id names nobody, the author name remains.
        let formerID = rng.id()
        let former = addFolder("Archiv (ehemalige Lehrkraft)", in: root, owner: formerID, mkdate: opened)
        var orphan = addGenerated(
            "Altes Skript.pdf", in: former, kind: .pdf, size: 16 * Self.kibibyte, owner: dozent,
            mkdate: opened - 200 * Self.day)
        orphan.userID = formerID
        orphan.authorName = "Hans-Peter Ehemalig"
        university.add(orphan)
    }
}
