import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// Issue 13: the demo university reads like a real one — each course's documents are about its subject, code
/// compiles, and PDFs compress their pages like real slides (a plain `grep` does not see their text).
@Suite("Demo content")
struct DemoContentTests {
    static let university = GeneratedDataset.make(.demo, seed: 1)

    /// Generated documents of the demo, with the catalogue course they belong to (study groups by their title).
    static func documents(kind: Content.GeneratedKind) -> [(course: ContentCatalogue.Course, ref: FileRef)] {
        university.fileRefs.values.sorted { $0.id < $1.id }.compactMap { ref in
            guard case .generated(kind, _, _) = ref.content, let owner = university.course(ofFolder: ref.folderID),
                let course = ContentCatalogue.courses.first(where: {
                    $0.number == owner.number && !owner.number.isEmpty || owner.title.hasSuffix(" \($0.title)")
                })
            else { return nil }
            return (course, ref)
        }
    }

    static func bytes(_ ref: FileRef) -> [UInt8] {
        guard case .generated(let kind, let seed, let size) = ref.content else { return [] }
        return ContentGenerator.bytes(kind: kind, seed: seed, size: size, offset: 0, length: size)
    }

    /// Words only `course`'s subject uses: its terms and lecture titles.
    static func vocabulary(_ course: ContentCatalogue.Course) -> [String] {
        course.lectures.flatMap { [$0.title] + $0.terms }
    }

    /// The subject of a course number: `INF`, `MAT`, `MATH`, …; courses of one subject may share terms.
    static func subject(_ course: ContentCatalogue.Course) -> Substring {
        course.number.prefix { $0 != "-" }
    }

    /// Tell-tale terms of other subjects that cannot appear in a text of `course`'s subject by accident.
    static func foreignTerms(for course: ContentCatalogue.Course) -> [String] {
        let own = ContentCatalogue.courses.filter { subject($0) == subject(course) }.flatMap(vocabulary).joined(
            separator: " "
        ).lowercased()
        return ContentCatalogue.courses.filter { subject($0) != subject(course) }.flatMap { $0.lectures }
            .flatMap(\.terms).filter { $0.count >= 6 && !own.contains($0.lowercased()) }
    }

    @Test("Every course's PDFs are about its subject", .enabled(if: Tool.installed("/usr/bin/pdftotext")))
    func pdfsMatchTheirCourse() async throws {
        let documents = Self.documents(kind: .pdf)
        let courses = Set(documents.map(\.course.number))
        #expect(courses.count >= 8, "one demo course per catalogue subject, plus the study group")
        // A few PDFs of each demo course (whichever come first), and slides, a sheet and the notes of every
        // catalogue course, so subjects this seed's demo left out are checked too.
        var picks: [(ContentCatalogue.Course, String, [UInt8])] = []
        for number in courses.sorted() {
            for (course, ref) in documents.filter({ $0.course.number == number }).prefix(4) {
                picks.append((course, ref.name, Self.bytes(ref)))
            }
        }
        for (index, course) in ContentCatalogue.courses.enumerated() {
            for role: ContentProfile.Role in [.slides, .sheet, .notes] {
                let seed = ContentProfile.seed(course: index, number: 3, role: role, variation: 1)
                let bytes = ContentGenerator.bytes(kind: .pdf, seed: seed, size: 60_000, offset: 0, length: 60_000)
                picks.append((course, "\(role) of \(course.number)", bytes))
            }
        }
        for (course, name, bytes) in picks {
            let result = try await Tool.pdftotext(bytes)
            #expect(result.status == 0 && result.stderr.isEmpty, "\(name): \(result.stderr)")
            let text = result.stdout
            #expect(text.contains(course.title), "\(name) names its course")
            let own = Self.vocabulary(course).filter { text.contains($0) }
            #expect(own.count >= 3, "\(name) of \(course.title) uses its subject's terms: \(own)")
            let foreign = Self.foreignTerms(for: course).filter { text.contains($0) }
            #expect(foreign.isEmpty, "\(name) of \(course.title) talks about \(foreign)")
        }
    }

    @Test("Every course's longest titles still fit the PDF size bounds")
    func pdfBounds() {
        let roles: [ContentProfile.Role] = [
            .slides, .sheet, .solution, .notes, .chapter, .exam, .archive, .summary, .code, .minutes,
        ]
        for (index, course) in ContentCatalogue.courses.enumerated() {
            let longest = course.lectures.indices.max {
                course.lectures[$0].title.count < course.lectures[$1].title.count
            }
            for role in roles {
                let seed = ContentProfile.seed(course: index, number: (longest ?? 0) + 1, role: role, variation: 3)
                for pages in [1, 2, ContentPDF.maximumPages] {
                    let size = ContentPDF.sizeBound(pages: pages)
                    let layout = ContentPDF.makeLayout(seed: seed, size: size)
                    #expect(!layout.tail.isEmpty, "\(course.number) \(role) at \(pages) pages")
                }
            }
        }
    }

    @Test("Slides are a title slide and the lecture's outline")
    func slidesFollowTheLecture() throws {
        let slides = Self.documents(kind: .pdf).filter { $0.ref.name.hasPrefix("Vorlesung 05") }
        let (course, ref) = try #require(slides.first)
        guard case .generated(_, let seed, _) = ref.content else {
            Issue.record("\(ref.name) is not generated content")
            return
        }
        let profile = ContentProfile(seed: seed, kind: .pdf)
        #expect(profile.role == .slides && profile.number == 5)
        #expect(profile.lecture.title == course.lectures[4].title)
        #expect(ref.name.hasSuffix("– \(course.lectures[4].title).pdf"))
    }

    @Test(
        "PDFs compress their pages: the raw bytes hide the text pdftotext reads",
        .enabled(if: Tool.installed("/usr/bin/pdftotext")))
    func pdfsAreCompressed() async throws {
        for (_, ref) in Self.documents(kind: .pdf).prefix(12) {
            let bytes = Self.bytes(ref)
            let raw = Data(bytes)
            #expect(raw.range(of: Data("/Filter /FlateDecode".utf8)) != nil)
            try GeneratedDatasetTests.checkPDF(bytes)
            let lines = try await Tool.pdftotext(bytes).stdout.split(separator: "\n").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
            let words = lines.filter { $0.count >= 8 }
            #expect(words.count >= 5)
            // Neither in the UTF-8 a grep pattern is typed in nor in the font's WinAnsi (Latin-1) encoding.
            let visible = words.filter { line in
                [Data(line.utf8), line.data(using: .isoLatin1)].contains {
                    $0.map { raw.range(of: $0) != nil } ?? false
                }
            }
            #expect(visible.isEmpty, "\(ref.name): \(visible.prefix(3))")
        }
    }

    @Test("Exercise code compiles", .enabled(if: Tool.installed("/usr/bin/python3")))
    func codeCompiles() async throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // The demo's own code files, and every catalogue course's language at awkward sizes.
        var files = Self.documents(kind: .text).filter { $0.ref.name.hasPrefix("aufgabe") }.map {
            ($0.ref.name, Self.bytes($0.ref))
        }
        #expect(files.contains { $0.0.hasSuffix(".py") })
        for (index, course) in ContentCatalogue.courses.enumerated() {
            guard let language = course.code else { continue }
            for (number, size) in zip(1..., [1, 63, 64, 65, 700, 1_500, 2_048, 5_000, 9_216, 40_000]) {
                let seed = ContentProfile.seed(course: index, number: number, role: .code, variation: 7)
                let bytes = ContentGenerator.bytes(kind: .text, seed: seed, size: size, offset: 0, length: size)
                #expect(bytes.count == size)
                files.append(("\(course.number)-\(size)/aufgabe\(number.padded(2)).\(language.fileExtension)", bytes))
            }
        }
        var paths: [String: [String]] = [:]
        for (name, bytes) in files {
            let url = directory.appendingPathComponent(name)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(bytes).write(to: url)
            #expect(String(validating: bytes, as: UTF8.self) != nil, "\(name) is UTF-8")
            paths[url.pathExtension, default: []].append(url.path)
        }
        let python = try await runTool("/usr/bin/python3", ["-m", "py_compile"] + (paths["py"] ?? []))
        #expect(python.status == 0, "\(python.stderr)")
        if Tool.installed("/usr/bin/gcc") {
            let c = try await runTool("/usr/bin/gcc", ["-fsyntax-only", "-std=c11", "-Wall"] + (paths["c"] ?? []))
            #expect(c.status == 0 && c.stderr.isEmpty, "\(c.stderr)")
        }
        if Tool.installed("/usr/bin/javac") {
            // The demo's sheets and the generated ones each have distinct class names (`Aufgabe<number>`).
            let java = paths["java"] ?? []
            for group in [java.filter { !$0.contains("/INF-") }, java.filter { $0.contains("/INF-") }] {
                let out = directory.appendingPathComponent("classes-\(UUID().uuidString)").path
                let result = try await runTool("/usr/bin/javac", ["-encoding", "UTF-8", "-d", out] + group)
                #expect(result.status == 0, "\(result.stderr)")
            }
        }
    }

    @Test("Chunks at random offsets equal the whole document")
    func chunksEqualTheWhole() throws {
        var rng = SplitMix64(seed: 13)
        let documents = Self.documents(kind: .pdf).prefix(6) + Self.documents(kind: .text).prefix(6)
        for (_, ref) in documents {
            guard case .generated(let kind, let seed, let size) = ref.content else { continue }
            let whole = Self.bytes(ref)
            #expect(whole.count == size)
            if kind == .text { #expect(String(validating: whole, as: UTF8.self) != nil, "\(ref.name) is UTF-8") }
            for _ in 0..<20 {
                let offset = rng.int(in: 0...(size - 1))
                let length = rng.int(in: 1...70_000)
                let chunk = ContentGenerator.bytes(kind: kind, seed: seed, size: size, offset: offset, length: length)
                #expect(chunk == Array(whole[offset..<min(size, offset + length)]), "\(ref.name) at \(offset)")
            }
        }
    }

    /// Issue 28: what `campusfs demo` adds before mounting so that the first mount shows `new` documents: the next
    /// lecture's slides in two courses the student attends and the next sheet of one, dated in the last day and a
    /// half before `now`, each a PDF whose text is about the lecture its name gives.
    @Test(.enabled(if: Tool.installed("/usr/bin/pdftotext"), "needs poppler-utils"))
    func theDemoArrivalsAreThisWeeksNextLecturesAndSheet() async throws {
        var university = Self.university
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let added = university.addDemoArrivals(now: now).compactMap { university.fileRefs[$0] }
        #expect(added.count == 3)
        let student = try #require(university.user(named: "test_autor")).id
        var courses: Set<String> = []
        for ref in added {
            let course = try #require(university.course(ofFolder: ref.folderID))
            courses.insert(course.id)
            #expect(course.members.contains { $0.userID == student }, "\(ref.name)")
            #expect(ref.chdate <= 1_800_000_000 && ref.chdate >= 1_800_000_000 - 36 * 3_600, "\(ref.name)")
            let number = try #require(
                ref.name.firstMatch(of: /(Vorlesung|Lecture|Übungsblatt|Exercise sheet) ([0-9]+)/))
            let earlier = university.fileRefs(in: ref.folderID).filter { $0.id != ref.id }
            #expect(
                !earlier.contains { $0.name.hasPrefix("\(number.output.1) \(number.output.2)") },
                "\(ref.name) is the next one, not a second \(number.output.2)")
            #expect(earlier.contains { $0.name.hasPrefix("\(number.output.1) ") }, "\(ref.name) continues a series")
            let text = try await Tool.pdftotext(Self.bytes(ref))
            #expect(text.status == 0)
            if ref.name.hasPrefix("Vorlesung") || ref.name.hasPrefix("Lecture") {
                let topic = String(ref.name.split(separator: " – ").last?.dropLast(4) ?? "")
                #expect(text.stdout.contains(topic), "\(ref.name): \(text.stdout.prefix(200))")
            }
        }
        #expect(courses.count == 2)
        #expect(Self.university.fileRefs.count + 3 == university.fileRefs.count)
    }

}
