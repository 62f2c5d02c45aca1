/// The `large` and `huge` installations: many realistic courses whose folder trees (up to four levels below the
/// root) and documents are grown at random to exact totals, so benchmarks know what they measure.
extension GeneratedBuilder {
    /// - Parameters:
    ///   - folders: all folders, root folders included.
    ///   - bigFiles: adds `big-64MiB.bin` and `huge-1GiB.bin` (within the totals) to the first course.
    mutating func buildBulk(semesters count: Int, courses: Int, folders: Int, documents: Int, bigFiles: Bool) {
        let semesters = addRecentSemesters(count)
        var plans: [[Semester]] = (0..<(courses - 2)).map { [semesters[count - 1 - $0 % count]] }
        plans.append(Array(semesters.suffix(2)))
        plans.append([])
        let extraFolders = bigFiles ? 1 : 0
        let extraDocuments = bigFiles ? 2 : 0
        let folderShares = split(folders - courses - extraFolders, over: courses, minimum: 3)
        let documentShares = split(documents - extraDocuments, over: courses, minimum: 5)
        let templates = rng.shuffled(GeneratedNames.courses)

        for (index, terms) in plans.enumerated() {
            var template = templates[index % templates.count]
            let round = index / templates.count
            if terms.isEmpty {
                template = GeneratedNames.CourseTemplate(
                    number: "", title: rng.pick(GeneratedNames.studyGroups), english: false,
                    topics: GeneratedNames.informatikDE)
            } else if round > 0 {
                template.title += template.english ? " (Section \(round + 1))" : " (Gruppe \(round + 1))"
            }
            var teachers = [index % 4 == 0 ? dozent : rng.pick(lecturers)]
            if rng.chance(0.25) { teachers.append(rng.pick(lecturers.filter { $0.id != teachers[0].id })) }
            let root = addCourse(
                number: template.number, title: template.title, semesters: terms,
                lecturers: terms.isEmpty ? [tutor] : teachers, tutors: terms.isEmpty || index % 3 != 0 ? [] : [tutor],
                students: [autor], type: terms.isEmpty ? 99 : 1, semClass: terms.isEmpty ? 99 : 1)
            var tree = CourseTree(
                template: template, window: Self.activity(of: terms), teachers: terms.isEmpty ? [tutor] : teachers,
                helper: index % 3 == 0 ? tutor : teachers[0])
            grow(&tree, root: root, folders: folderShares[index], documents: documentShares[index])
            if bigFiles && index == 0 { addBenchmarkFiles(root: root, tree: tree) }
        }
    }

    /// Splits `total` into `parts` log-normally weighted shares of at least `minimum` that add up exactly.
    private mutating func split(_ total: Int, over parts: Int, minimum: Int) -> [Int] {
        let weights = (0..<parts).map { _ in rng.logNormal(median: 1, sigma: 0.5) }
        let sum = weights.reduce(0, +)
        let spare = Double(max(0, total - parts * minimum))
        var shares: [Int] = []
        var cumulative = 0.0
        var assigned = 0
        for weight in weights {
            cumulative += weight
            let upTo = Int((spare * cumulative / sum).rounded())
            shares.append(minimum + upTo - assigned)
            assigned = upTo
        }
        return shares
    }

    private mutating func addBenchmarkFiles(root: Folder, tree: CourseTree) {
        let owner = tree.teachers[0]
        let folder = addFolder(
            tree.template.english ? "Datasets" : "Datensätze", in: root, owner: owner.id,
            mkdate: tree.window.lowerBound + Self.day, description: "Large files for the benchmarks.")
        for (name, size) in [("big-64MiB.bin", 64 * Self.mebibyte), ("huge-1GiB.bin", 1_024 * Self.mebibyte)] {
            addGenerated(name, in: folder, kind: .binary, size: size, owner: owner, mkdate: date(in: tree.window))
        }
    }

    // MARK: - Trees

    /// What a top-level folder of a course is for; it decides the names below it.
    private enum Role: CaseIterable {
        case slides, exercises, literature, organisation, tutorials, exams, recordings, code, hidden
    }

    private struct Node {
        var folder: Folder
        var role: Role
        var depth: Int
        var children = 0
        var documents = 0
    }

    private struct CourseTree {
        var template: GeneratedNames.CourseTemplate
        var window: ClosedRange<Int>
        var teachers: [User]
        /// Uploads solutions and hidden material (the tutor where there is one).
        var helper: User
        var nodes: [Node] = []
        /// Node indices by depth 1…3: the parents a new folder may get.
        var byDepth: [[Int]] = [[], [], [], []]

        init(template: GeneratedNames.CourseTemplate, window: ClosedRange<Int>, teachers: [User], helper: User) {
            self.template = template
            self.window = window
            self.teachers = teachers
            self.helper = helper
        }
    }

    private mutating func grow(_ tree: inout CourseTree, root: Folder, folders: Int, documents: Int) {
        let english = tree.template.english
        let opened = tree.window.lowerBound + rng.int(in: 0...5) * Self.day
        var roles = [Role.slides, .exercises] + rng.shuffled([.literature, .organisation, .tutorials, .exams, .code])
        if rng.chance(0.15) { roles.insert(.recordings, at: 2) }
        if rng.chance(0.25) { roles.insert(.hidden, at: 2) }
        let sections = min(folders, rng.int(in: 4...7))
        for role in roles.prefix(sections) {
            let (german, englishName) = Self.sectionNames(role)
            let folder = addFolder(
                english ? englishName : german, in: root, owner: tree.teachers[0].id, mkdate: opened,
                type: role == .hidden ? "HiddenFolder" : "StandardFolder")
            tree.byDepth[1].append(tree.nodes.count)
            tree.nodes.append(Node(folder: folder, role: role, depth: 1))
        }
        for _ in 0..<(folders - sections) {
            let roll = rng.unit()
            let depth = roll < 0.5 || tree.byDepth[2].isEmpty ? 1 : (roll < 0.85 || tree.byDepth[3].isEmpty ? 2 : 3)
            var parentIndex = rng.pick(tree.byDepth[depth])
            if tree.nodes[parentIndex].role == .organisation && rng.chance(0.7) {
                parentIndex = rng.pick(tree.byDepth[depth])  // Organisational folders rarely grow deep trees.
            }
            let parent = tree.nodes[parentIndex]
            tree.nodes[parentIndex].children += 1
            let name = childName(parent.role, depth: depth + 1, number: parent.children + 1, template: tree.template)
            let folder = addFolder(
                name, in: parent.folder, owner: parent.role == .hidden ? tree.helper.id : tree.teachers[0].id,
                mkdate: min(GeneratedDataset.now, opened + rng.int(in: 0...60) * Self.day),
                type: parent.role == .hidden ? "HiddenFolder" : "StandardFolder")
            if depth + 1 <= 3 { tree.byDepth[depth + 1].append(tree.nodes.count) }
            tree.nodes.append(Node(folder: folder, role: parent.role, depth: depth + 1))
        }
        var rootDocuments = 0
        for _ in 0..<documents {
            if tree.nodes.isEmpty || rng.chance(0.02) {
                rootDocuments += 1
                addBulkDocument(role: .organisation, number: rootDocuments, in: root, tree: tree)
            } else {
                let index = rng.int(in: 0...(tree.nodes.count - 1))
                tree.nodes[index].documents += 1
                let node = tree.nodes[index]
                addBulkDocument(role: node.role, number: node.documents, in: node.folder, tree: tree)
            }
        }
    }

    private mutating func addBulkDocument(role: Role, number: Int, in folder: Folder, tree: CourseTree) {
        let pattern = rng.pick(Self.documentPatterns(role))
        let english = tree.template.english
        let base = english ? pattern.english : pattern.german
        let name: String
        switch pattern.style {
        case .numberTopic:
            let topic = tree.template.topics[(number - 1) % tree.template.topics.count]
            name = "\(base) \(number.padded(2)) – \(topic).\(pattern.ext)"
        case .number: name = "\(base) \(number.padded(2)).\(pattern.ext)"
        case .joined: name = "\(base)\(number.padded(2)).\(pattern.ext)"
        case .author:
            let topic = tree.template.topics[(number * 7) % tree.template.topics.count]
            name = "\(rng.pick(GeneratedNames.literatureAuthors)) – \(topic).\(pattern.ext)"
        case .plain: name = number == 1 ? "\(base).\(pattern.ext)" : "\(base) (v\(number)).\(pattern.ext)"
        }
        let owner = role == .hidden || (role == .exercises && rng.chance(0.4)) ? tree.helper : rng.pick(tree.teachers)
        let median: Int
        switch pattern.ext {
        case "pdf": median = 700 * Self.kibibyte
        case "png", "jpg": median = 400 * Self.kibibyte
        case "zip": median = 2 * Self.mebibyte
        case "mp4": median = 12 * Self.mebibyte
        default: median = 16 * Self.kibibyte
        }
        addGenerated(
            name, in: folder, kind: Self.kind(of: name),
            size: size(median: median, sigma: pattern.ext == "mp4" ? 0.5 : 1),
            owner: owner, mkdate: date(in: tree.window),
            termsOfUse: role == .literature ? (rng.chance(0.1) ? "WITH_LICENSE" : "FREE_LICENSE") : "SELFMADE_NONPUB")
    }

    // MARK: - Names

    private static func sectionNames(_ role: Role) -> (String, String) {
        switch role {
        case .slides: return ("Vorlesungsfolien", "Lecture slides")
        case .exercises: return ("Übungsblätter", "Exercise sheets")
        case .literature: return ("Literatur", "Reading")
        case .organisation: return ("Organisatorisches", "Course information")
        case .tutorials: return ("Tutorien", "Tutorials")
        case .exams: return ("Altklausuren", "Past exams")
        case .recordings: return ("Aufzeichnungen", "Recordings")
        case .code: return ("Programmierprojekte", "Programming projects")
        case .hidden: return ("Musterlösungen (nur Tutoren)", "Model solutions (tutors only)")
        }
    }

    /// The name of the `number`th subfolder at `depth` (2…4) below a section.
    private func childName(_ role: Role, depth: Int, number: Int, template: GeneratedNames.CourseTemplate) -> String {
        let english = template.english
        func cycle(_ names: [String]) -> String {
            let name = names[(number - 1) % names.count]
            return number <= names.count ? name : "\(name) \((number - 1) / names.count + 1)"
        }
        let topic = template.topics[(number - 1) % template.topics.count]
        switch (role, depth) {
        case (.slides, 2): return english ? "Chapter \(number) – \(topic)" : "Kapitel \(number) – \(topic)"
        case (.slides, 3):
            return cycle(
                english
                    ? ["Examples", "Figures", "Extras", "Code"]
                    : ["Beispiele", "Abbildungen", "Zusatzmaterial", "Code"])
        case (.slides, _): return cycle(english ? ["old", "drafts", "sources"] : ["alt", "Entwürfe", "Quellen"])
        case (.exercises, 2), (.hidden, 2): return english ? "Sheet \(number.padded(2))" : "Blatt \(number.padded(2))"
        case (.exercises, 3), (.hidden, 3):
            return cycle(
                english
                    ? ["Material", "Solutions", "Data", "Templates"]
                    : ["Material", "Lösungen", "Daten", "Vorlagen"])
        case (.exercises, _), (.hidden, _): return english ? "Task \(number)" : "Aufgabe \(number)"
        case (.literature, 2):
            return cycle(
                english
                    ? ["Papers", "Books", "Lecture notes", "Further reading"]
                    : ["Artikel", "Bücher", "Skripte", "Weiterführendes"])
        case (.literature, 3): return String(2014 + number)
        case (.literature, _): return cycle(english ? ["Summaries", "Notes"] : ["Zusammenfassungen", "Notizen"])
        case (.organisation, 2):
            return cycle(
                english
                    ? ["Schedule", "Forms", "Module handbook", "Evaluation"]
                    : ["Termine", "Formulare", "Modulhandbuch", "Evaluation"])
        case (.organisation, _): return cycle(english ? ["2025", "2026", "Archive"] : ["2025", "2026", "Archiv"])
        case (.tutorials, 2):
            let slot = GeneratedNames.tutorialSlots[(number - 1) % GeneratedNames.tutorialSlots.count]
            return english ? "Tutorial group \(number) (\(slot))" : "Tutorium \(number) (\(slot))"
        case (.tutorials, 3): return cycle(english ? ["Notes", "Slides", "Tasks"] : ["Notizen", "Folien", "Aufgaben"])
        case (.tutorials, _): return english ? "Week \(number.padded(2))" : "Woche \(number.padded(2))"
        case (.exams, 2):
            let terms = ["SS 2023", "WS 2023-24", "SS 2024", "WS 2024-25", "SS 2025", "WS 2025-26"]
            return cycle(terms.map { english ? "Exam \($0)" : "Klausur \($0)" })
        case (.exams, 3): return cycle(english ? ["Questions", "Solutions"] : ["Aufgaben", "Lösungen"])
        case (.exams, _): return english ? "Part \(number)" : "Teil \(number)"
        case (.recordings, 2): return english ? "Week \(number.padded(2))" : "Woche \(number.padded(2))"
        case (.recordings, _): return english ? "Part \(number)" : "Teil \(number)"
        case (.code, 2): return english ? "Project \(number)" : "Projekt \(number)"
        case (.code, 3): return cycle(["src", "tests", "data", "docs"])
        case (.code, _): return cycle(["main", "util", "fixtures", "examples"])
        }
    }

    private struct DocumentPattern {
        enum Style { case numberTopic, number, joined, author, plain }
        var german: String
        var english: String
        var ext: String
        var style: Style

        init(_ german: String, _ english: String, _ ext: String, _ style: Style) {
            self.german = german
            self.english = english
            self.ext = ext
            self.style = style
        }
    }

    private static func documentPatterns(_ role: Role) -> [DocumentPattern] {
        switch role {
        case .slides: return slidePatterns
        case .exercises: return exercisePatterns
        case .literature: return literaturePatterns
        case .organisation: return organisationPatterns
        case .tutorials: return tutorialPatterns
        case .exams: return examPatterns
        case .recordings: return recordingPatterns
        case .code: return codePatterns
        case .hidden: return hiddenPatterns
        }
    }

    private static let slidePatterns = [
        DocumentPattern("Vorlesung", "Lecture", "pdf", .numberTopic),
        DocumentPattern("Vorlesung", "Lecture", "pdf", .numberTopic),
        DocumentPattern("Folien", "Slides", "pdf", .numberTopic),
        DocumentPattern("Handout", "Handout", "pdf", .number),
        DocumentPattern("beispiel", "example", "py", .joined),
        DocumentPattern("abbildung", "figure", "png", .joined),
        DocumentPattern("notizen", "notes", "md", .joined),
    ]
    private static let exercisePatterns = [
        DocumentPattern("Übungsblatt", "Exercise sheet", "pdf", .number),
        DocumentPattern("Übungsblatt", "Exercise sheet", "pdf", .number),
        DocumentPattern("Lösung", "Solution", "pdf", .number),
        DocumentPattern("aufgabe", "task", "py", .joined),
        DocumentPattern("daten", "data", "csv", .joined),
        DocumentPattern("material", "material", "zip", .joined),
        DocumentPattern("vorlage", "template", "tex", .joined),
    ]
    private static let literaturePatterns = [
        DocumentPattern("", "", "pdf", .author),
        DocumentPattern("", "", "pdf", .author),
        DocumentPattern("Artikel", "Paper", "pdf", .number),
        DocumentPattern("Leseliste", "Reading list", "txt", .plain),
    ]
    private static let organisationPatterns = [
        DocumentPattern("README", "README", "txt", .plain),
        DocumentPattern("Termine", "Schedule", "txt", .plain),
        DocumentPattern("Modulbeschreibung", "Module description", "pdf", .plain),
        DocumentPattern("Bewertungsschema", "Grading scheme", "pdf", .plain),
        DocumentPattern("Anmeldung", "Registration", "pdf", .plain),
    ]
    private static let tutorialPatterns = [
        DocumentPattern("Tutorium", "Tutorial", "pdf", .number),
        DocumentPattern("Notizen Tutorium", "Tutorial notes", "txt", .number),
        DocumentPattern("tutorium", "tutorial", "ipynb", .joined),
    ]
    private static let examPatterns = [
        DocumentPattern("Klausur", "Exam", "pdf", .number),
        DocumentPattern("Probeklausur", "Mock exam", "pdf", .number),
        DocumentPattern("Lösungsskizze", "Solution sketch", "pdf", .number),
    ]
    private static let recordingPatterns = [
        DocumentPattern("Aufzeichnung", "Recording", "mp4", .number),
        DocumentPattern("Tafelbild", "Whiteboard", "jpg", .number),
    ]
    private static let codePatterns = [
        DocumentPattern("main", "main", "py", .joined),
        DocumentPattern("projekt", "project", "zip", .joined),
        DocumentPattern("README", "README", "md", .plain),
        DocumentPattern("testdaten", "testdata", "csv", .joined),
    ]
    private static let hiddenPatterns = [
        DocumentPattern("Musterlösung", "Model solution", "pdf", .number),
        DocumentPattern("Korrekturhinweise", "Marking notes", "txt", .number),
    ]
}
