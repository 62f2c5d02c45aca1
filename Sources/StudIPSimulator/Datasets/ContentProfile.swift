import Synchronization

/// What a generated document is about — course, lecture or sheet number, and role — carried in its seed, because
/// the model stores only (kind, seed, size) and content must stay a pure function of them.
///
/// A dataset that knows the course encodes it (``seed(course:number:role:variation:)``, the demo does); any other
/// seed (bulk datasets, new versions, documents hosted elsewhere) is read as a course chosen from the seed's bits,
/// with the role its kind suggests, so every generated document is coherent in itself.
struct ContentProfile: Sendable {
    enum Role: UInt64, Sendable {
        case slides, sheet, solution, notes, chapter, exam, archive, summary, code, minutes
    }

    var course: ContentCatalogue.Course
    /// The lecture, sheet, part or chapter number, from 1.
    var number: Int
    var role: Role
    var seed: UInt64

    /// Marks seeds built by ``seed(course:number:role:variation:)``; a random seed carries it once in 65,536.
    private static let tag: UInt64 = 0xC0DE

    /// A seed for the course at `course` in the catalogue: tag (16 bits), course (8), number (8), role (4), and
    /// 28 bits of `variation` so documents of the same role still differ.
    static func seed(course: Int, number: Int, role: Role, variation: UInt64) -> UInt64 {
        tag << 48 | UInt64(course & 0xFF) << 40 | UInt64(number & 0xFF) << 32 | role.rawValue << 28
            | variation & 0x0FFF_FFFF
    }

    /// The seed of a new version of the document generated from `seed`: the same course, number and role with other
    /// words (from `version`), so that a new version of a lecture's slides is again slides of that lecture, as when a
    /// lecturer uploads corrected slides.
    static func revised(_ seed: UInt64, kind: Content.GeneratedKind, version: UInt64) -> UInt64 {
        let profile = ContentProfile(seed: seed, kind: kind)
        let course = ContentCatalogue.courses.firstIndex { $0.number == profile.course.number } ?? 0
        return Self.seed(
            course: course, number: profile.number, role: profile.role, variation: SplitMix64.derive(seed, version))
    }

    init(seed: UInt64, kind: Content.GeneratedKind) {
        self.seed = seed
        let courses = ContentCatalogue.courses
        if seed >> 48 == Self.tag, let role = Role(rawValue: seed >> 28 & 0xF) {
            course = courses[Int(seed >> 40 & 0xFF) % courses.count]
            number = max(1, Int(seed >> 32 & 0xFF))
            self.role = role
        } else {
            let mixed = SplitMix64.derive(seed, 0xC0_0125E)
            course = courses[Int(mixed % UInt64(courses.count))]
            number = 1 + Int((mixed >> 32) % UInt64(course.lectures.count))
            role = kind == .pdf ? .slides : .notes
        }
    }

    /// The lecture a numbered document is about (numbers beyond the outline wrap around, as in a second term).
    var lecture: ContentCatalogue.Lecture {
        course.lectures[(number - 1) % course.lectures.count]
    }

    private var english: Bool { course.english }

    /// The document's heading: the second line of its title slide, the first line of a text.
    var title: String {
        let number = self.number.padded(2)
        switch role {
        case .slides: return english ? "Lecture \(number): \(lecture.title)" : "Vorlesung \(number): \(lecture.title)"
        case .sheet: return english ? "Exercise Sheet \(number)" : "Übungsblatt \(number)"
        case .solution: return english ? "Solution to Sheet \(number)" : "Lösung zu Übungsblatt \(number)"
        case .notes: return english ? "Lecture Notes" : "Vorlesungsskript"
        case .chapter: return lecture.title
        case .exam: return english ? "Final Exam" : "Klausur"
        case .archive: return english ? "Slides 2025, Part \(self.number)" : "Folien 2025, Teil \(self.number)"
        case .summary: return english ? "Summary: \(lecture.title)" : "Zusammenfassung: \(lecture.title)"
        case .code: return english ? "Exercise \(number): \(lecture.title)" : "Aufgabe \(number): \(lecture.title)"
        case .minutes: return english ? "Study group minutes" : "Protokoll der Lerngruppe"
        }
    }

    /// The lectures a document covers: one for slides and sheets, a range for parts, all for notes and exams.
    var lectures: [ContentCatalogue.Lecture] {
        let all = course.lectures
        switch role {
        case .notes, .exam: return all
        case .archive:
            let part = (all.count + 2) / 3
            let start = min(all.count - 1, (number - 1) % 3 * part)
            return Array(all[start..<min(all.count, start + part)])
        default: return [lecture]
        }
    }

    /// The heading of page `page` (from 1) of a deck about `lecture`, cycling through its terms and the usual
    /// kinds of slides.
    func heading(page: Int, lecture: ContentCatalogue.Lecture, rng: inout SplitMix64) -> String {
        let terms = lecture.terms
        let term = terms[(page - 1) % max(1, terms.count)]
        switch role {
        case .sheet, .exam:
            return english
                ? "Exercise \(page) (\(rng.int(in: 2...6) * 2) points)"
                : "Aufgabe \(page) (\(rng.int(in: 2...6) * 2) Punkte)"
        case .solution: return english ? "Solution to exercise \(page)" : "Lösung zu Aufgabe \(page)"
        default: break
        }
        if page == 1 { return english ? "Overview: \(lecture.title)" : "Überblick: \(lecture.title)" }
        let forms =
            english
            ? ["\(term)", "Definition: \(term)", "Example: \(term)", "\(term): properties", "Motivation", "Summary"]
            : [
                "\(term)", "Definition: \(term)", "Beispiel: \(term)", "\(term): Eigenschaften", "Motivation",
                "Zusammenfassung",
            ]
        return forms[rng.int(in: 0...(page % 7 == 0 ? 5 : 3))]
    }

    /// A bullet of a slide or a sentence of prose about `lecture`, capitalised; `form` picks the kind of sentence
    /// (consecutive forms differ, so a slide need not repeat one), else the generator does.
    func sentence(lecture: ContentCatalogue.Lecture, rng: inout SplitMix64, form: Int? = nil) -> String {
        let terms = lecture.terms.isEmpty ? [lecture.title] : lecture.terms
        let a = rng.pick(terms)
        let b = rng.pick(terms)
        let forms = self.forms(lecture: lecture, a, b)
        let sentence = form.map { forms[$0 % forms.count] } ?? rng.pick(forms)
        return sentence.prefix(1).uppercased() + sentence.dropFirst()
    }

    /// Every sentence ``sentence(lecture:rng:form:)`` can say about `lecture`, as UTF-8 ending in a full stop:
    /// prose picks from these, because a download generates text for every chunk and building strings is slow.
    func prose(lecture: ContentCatalogue.Lecture) -> [[UInt8]] {
        let key = "\(role)|\(course.number)|\(lecture.title)"
        if let pool = Self.prose.withLock({ $0[key] }) { return pool }
        let terms = lecture.terms.isEmpty ? [lecture.title] : lecture.terms
        var pool: [[UInt8]] = []
        for a in terms {
            for b in terms {
                for sentence in forms(lecture: lecture, a, b) {
                    let ending = sentence.last.map { ".?!".contains($0) } == true ? "" : "."
                    pool.append(Array((sentence.prefix(1).uppercased() + sentence.dropFirst() + ending).utf8))
                }
            }
        }
        Self.prose.withLock { $0[key] = pool }
        return pool
    }

    /// Bounded by the catalogue: one pool per course, lecture and role.
    private static let prose = Mutex<[String: [[UInt8]]]>([:])

    /// The kinds of sentence about terms `a` and `b` of `lecture` this role says.
    private func forms(lecture: ContentCatalogue.Lecture, _ a: String, _ b: String) -> [String] {
        let b = b == a ? lecture.title : b
        let course = self.course.title
        let forms: [String]
        switch (role, english) {
        case (.sheet, false), (.exam, false):
            forms = [
                "Erklären Sie den Begriff \(a) in eigenen Worten.", "Geben Sie ein Beispiel für \(a) an.",
                "Vergleichen Sie \(a) und \(b).", "Zeigen Sie, wie \(a) mit \(b) zusammenhängt.",
                "Begründen Sie Ihre Antwort zu \(a) kurz.", "Wenden Sie \(a) auf das Beispiel der Vorlesung an.",
            ]
        case (.sheet, true), (.exam, true):
            forms = [
                "Explain \(a) in your own words.", "Give an example of \(a).", "Compare \(a) and \(b).",
                "Show how \(a) relates to \(b).", "Justify your answer about \(a) briefly.",
                "Apply \(a) to the example from the lecture.",
            ]
        case (.solution, false):
            forms = [
                "Lösungsskizze: zuerst \(a), dann \(b).", "Häufiger Fehler: \(a) mit \(b) verwechselt.",
                "Volle Punktzahl, wenn \(a) korrekt begründet ist.", "Hinweis: \(a) folgt aus \(b).",
            ]
        case (.minutes, false):
            forms = [
                "Wir haben \(a) an einem Beispiel besprochen.", "Offene Frage: Wie hängt \(a) mit \(b) zusammen?",
                "Bis zum nächsten Treffen wiederholen alle \(a).", "\(a) war allen klar, \(b) noch nicht.",
                "Zur Klausur: \(a) und \(b) sicher erklären können.",
            ]
        case (.minutes, true):
            forms = [
                "We went through \(a) with an example.", "Open question: how does \(a) relate to \(b)?",
                "Before the next meeting everyone reviews \(a).", "\(a) was clear to everyone, \(b) not yet.",
                "For the exam: be able to explain \(a) and \(b).",
            ]
        case (.solution, true):
            forms = [
                "Sketch: first \(a), then \(b).", "Common mistake: confusing \(a) with \(b).",
                "Full marks if \(a) is justified correctly.", "Hint: \(a) follows from \(b).",
            ]
        case (_, false):
            forms = [
                "\(a): Definition und Eigenschaften", "\(a) und \(b) im Vergleich",
                "Beispiel: \(a) Schritt für Schritt",
                "Zusammenhang zwischen \(a) und \(b)", "Typischer Fehler: \(a) mit \(b) verwechseln",
                "\(a) in der Praxis", "Merke: \(a) setzt \(b) voraus", "Frage: Wann hilft \(a) weiter?",
                "Übung: \(a) an einem eigenen Beispiel erklären", "\(a) ist ein Kernbegriff in \(course)",
            ]
        case (_, true):
            forms = [
                "\(a): definition and properties", "\(a) compared with \(b)", "Example: \(a) step by step",
                "How \(a) relates to \(b)", "Common pitfall: confusing \(a) with \(b)", "\(a) in practice",
                "Note: \(a) requires \(b)", "Question: when does \(a) help?",
                "Exercise: explain \(a) with an example of your own", "\(a) is a key idea of \(course)",
            ]
        }
        return forms
    }

}
