import Foundation
import Testing

@testable import StudIPSimulator

@Suite("Generated datasets")
struct GeneratedDatasetTests {
    // MARK: - Determinism

    @Test(
        "The same seed yields the same university",
        arguments: [GeneratedDataset.Size.demo, .small, .large, .scale1k, .scale10k])
    func sameSeedSameUniversity(size: GeneratedDataset.Size) {
        let first = GeneratedDataset.make(size, seed: 42)
        let second = GeneratedDataset.make(size, seed: 42)
        #expect(first.users == second.users)
        #expect(first.semesters == second.semesters)
        #expect(first.semesterOrder == second.semesterOrder)
        #expect(first.courses == second.courses)
        #expect(first.folders == second.folders)
        #expect(first.fileRefs == second.fileRefs)
        #expect(first.termsOfUse == second.termsOfUse)
        #expect(first.news == second.news)
        #expect(first.events == second.events)
    }

    @Test("Courses have weekly dates, single dates, one cancelled lecture and real-looking announcements")
    func announcementsAndDates() throws {
        let university = GeneratedDataset.make(.demo, seed: 7)
        #expect(GeneratedDataset.make(.demo, seed: 8).news.keys.allSatisfy { university.news[$0] == nil })
        for course in university.courses.values {
            let dates = university.events(ofCourse: course.id)
            let weekly = dates.filter { $0.cycleID != nil }
            #expect(weekly.count >= 10, "\(course.title): \(weekly.count) weekly dates")
            #expect(weekly.allSatisfy { !$0.room.isEmpty && $0.end - $0.start == 90 * 60 })
            #expect(dates.contains { $0.cycleID == nil && $0.category == "Klausur" })
            let cancelled = dates.filter(\.isCancelled)
            #expect(cancelled.count == 1 && cancelled.allSatisfy { !$0.cancelComment.isEmpty })
            let news = university.news(inRange: course.id)
            #expect(news.count >= 3)
            #expect(
                news.allSatisfy {
                    $0.content.hasPrefix("<!--HTML--><p>") && $0.authorID == course.lecturers.first?.userID
                })
            #expect(news.contains { $0.content.contains("<a href=") && $0.content.contains("<li>") })
            #expect(news.contains { $0.title.contains("fällt aus") }, "the cancelled lecture is announced")
            #expect(!university.news(inRange: course.id, publishedAt: university.now).isEmpty)
        }
        #expect(
            university.regularTimes(
                of: try #require(university.user(named: "test_autor")).id,
                in: try #require(
                    university.currentSemester(now: Date(timeIntervalSince1970: TimeInterval(university.now))))
            ).count > 0)
    }

    @Test(
        "A different seed yields different ids and names",
        arguments: [GeneratedDataset.Size.demo, .small, .large, .scale1k])
    func differentSeedDiffers(size: GeneratedDataset.Size) {
        let first = GeneratedDataset.make(size, seed: 1)
        let second = GeneratedDataset.make(size, seed: 2)
        #expect(Set(first.fileRefs.keys).isDisjoint(with: second.fileRefs.keys))
        #expect(Set(first.courses.keys).isDisjoint(with: second.courses.keys))
        #expect(first.user(named: "test_autor")?.id != second.user(named: "test_autor")?.id)
        let seeds = { (university: University) in
            Set(
                university.fileRefs.values.compactMap { ref -> UInt64? in
                    if case .generated(_, let seed, _) = ref.content { return seed }
                    return nil
                })
        }
        #expect(seeds(first).isDisjoint(with: seeds(second)))
        if size != .small {
            let names = { (university: University) in Set(university.fileRefs.values.map(\.name)) }
            #expect(names(first) != names(second))
        }
    }

    @Test("Every entity hangs together", arguments: GeneratedDataset.Size.allCases.filter { $0 != .huge })
    func integrity(size: GeneratedDataset.Size) throws {
        let university = GeneratedDataset.make(size, seed: 7)
        let now = GeneratedDataset.now
        for user in ["test_autor", "test_dozent", "root@studip"] {
            #expect(university.user(named: user)?.password == "testing")
        }
        #expect(university.user(named: "test_autor")?.perms == "autor")
        #expect(university.user(named: "test_dozent")?.perms == "dozent")
        #expect(university.user(named: "root@studip")?.perms == "root")
        #expect(university.timeZone.identifier == "Europe/Berlin")
        for course in university.courses.values {
            let root = try #require(university.folders[course.topFolderID])
            #expect(root.isRoot && root.folderType == "RootFolder" && root.rangeID == course.id)
            #expect(course.semesterIDs.allSatisfy { university.semesters[$0] != nil })
            #expect(course.members.allSatisfy { university.users[$0.userID] != nil })
        }
        for folder in university.folders.values where !folder.isRoot {
            #expect(university.folders[folder.parentID] != nil)
            #expect(folder.mkdate <= now && folder.chdate <= now)
        }
        for ref in university.fileRefs.values {
            #expect(university.folders[ref.folderID] != nil)
            #expect(university.termsOfUse[ref.termsOfUseID] != nil)
            #expect(ref.mkdate <= ref.chdate && ref.chdate <= now)
            switch ref.content {
            case .bytes(let data): #expect(data.count == ref.size)
            case .generated(let kind, _, let size):
                #expect(size == ref.size)
                if kind == .pdf { #expect(size >= ContentGenerator.minimumPDFSize) }
            case .external(let url):
                #expect(url == "/elsewhere/\(ref.id)/\(url.split(separator: "/").last ?? "")")
                #expect(ContentGenerator.externalBytes(path: url, size: ref.size).count == ref.size)
            }
        }
        let autor = try #require(university.user(named: "test_autor"))
        #expect(university.courses(of: autor.id).count * 4 >= university.courses.count * 3)
        let dozent = try #require(university.user(named: "test_dozent"))
        #expect(university.courses.values.contains { $0.lecturers.contains { $0.userID == dozent.id } })
        let recent = university.fileRefs.values.filter { $0.chdate > now - 7 * 86_400 && $0.chdate > $0.mkdate }
        #expect(!recent.isEmpty)
    }

    // MARK: - Shapes

    @Test("demo is a pleasant university")
    func demo() {
        let university = GeneratedDataset.make(.demo, seed: 1)
        #expect((2...3).contains(university.semesters.count))
        #expect((8...12).contains(university.courses.count))
        #expect(university.orderedSemesters.map(\.title).contains("WS 2026/27"))
        #expect(university.courses.values.contains { $0.isOpenEnded })
        #expect(university.courses.values.contains { $0.semesterIDs.count == 2 })
        #expect(university.courses.values.contains { $0.number == "INF-101" })
        #expect(university.fileRefs.values.contains { $0.name == "README.txt" })
        #expect(university.fileRefs.values.filter(\.isLink).count >= 2)
        #expect(university.fileRefs.values.filter { $0.mimeType == "application/pdf" }.count >= 50)
        #expect(university.folders.values.contains { $0.name == "Vorlesungsfolien" || $0.name == "Lecture slides" })
    }

    @Test("large has the size of DESIGN.md §4")
    func large() throws {
        let university = GeneratedDataset.make(.large, seed: 1)
        #expect(university.semesters.count == 3)
        #expect(university.courses.count == 40)
        #expect((7_500...8_500).contains(university.fileRefs.count))
        #expect((2_300...2_700).contains(university.folders.count))
        let big = try #require(university.fileRefs.values.first { $0.name == "big-64MiB.bin" })
        let huge = try #require(university.fileRefs.values.first { $0.name == "huge-1GiB.bin" })
        #expect(big.size == 64 << 20 && huge.size == 1 << 30)
        #expect(university.course(ofFolder: big.folderID)?.id == university.course(ofFolder: huge.folderID)?.id)
        #expect(Self.deepestFolder(university) == 4)
        var kinds: Set<Content.GeneratedKind> = []
        for ref in university.fileRefs.values {
            if case .generated(let kind, _, _) = ref.content { kinds.insert(kind) }
        }
        #expect(kinds == [.pdf, .text, .binary])
        let ordinary = university.fileRefs.values.map(\.size).filter { $0 < 64 << 20 }
        #expect(ordinary.allSatisfy { (10 << 10)...(20 << 20) ~= $0 })
    }

    @Test("huge has 100,000 documents in 500 courses and no contents in memory")
    func huge() {
        let university = GeneratedDataset.make(.huge, seed: 1)
        #expect(university.fileRefs.count == 100_000)
        #expect(university.courses.count == 500 && university.folders.count == 31_250)
        #expect(university.semesters.count == 6)
        #expect(
            university.fileRefs.values.allSatisfy { ref in
                if case .generated = ref.content { return true }
                return false
            })
    }

    /// How many folders deep the deepest folder lies below its course's root folder.
    static func deepestFolder(_ university: University) -> Int? {
        university.folders.values.map { folder in
            var depth = 0
            var cursor = folder
            while let parent = university.folders[cursor.parentID] {
                depth += 1
                cursor = parent
            }
            return depth
        }.max()
    }

    /// The bench's scale curve (docs/benchmarks.md) compares installations that differ in size alone.
    @Test(
        "scale-1k and scale-10k are huge's shape in fewer courses",
        arguments: [(GeneratedDataset.Size.scale1k, 1_000), (.scale10k, 10_000)])
    func scaleCurve(size: GeneratedDataset.Size, documents: Int) throws {
        let university = GeneratedDataset.make(size, seed: 1)
        #expect(university.fileRefs.count == documents)
        #expect(university.courses.count == documents / 200)
        #expect(university.folders.count == documents * 5 / 16)
        #expect(university.semesters.count == 6)
        #expect(
            university.fileRefs.values.allSatisfy { ref in
                if case .generated = ref.content { return true }
                return false
            })
        #expect(Self.deepestFolder(university) == 4)
        #expect(university.fileRefs.values.contains { $0.mimeType == "application/pdf" })
        guard case .generated(let parsed, _) = try #require(Dataset(name: size.rawValue)) else {
            Issue.record("studip-sim --dataset \(size.rawValue) is not a generated installation")
            return
        }
        #expect(parsed == size)
    }

    // MARK: - Hostile cases

    @Test("small contains every hostile case")
    func smallHostileCases() throws {
        let university = GeneratedDataset.make(.small, seed: 3)
        let refs = Array(university.fileRefs.values)
        let folders = Array(university.folders.values)
        let names = refs.map(\.name) + folders.map(\.name)
        #expect(university.semesters.count <= 3 && university.courses.count <= 6 && refs.count <= 80)

        #expect(names.contains { $0.contains("/") })
        #expect(folders.contains { $0.name.contains("/") })
        #expect(names.contains { $0.contains(":") })
        for control in ["\u{1}", "\t", "\n"] {
            #expect(names.contains { $0.unicodeScalars.contains { String($0) == control } })
        }
        #expect(names.contains { $0.unicodeScalars.contains { $0.properties.isEmojiPresentation } })
        let composed = Array(GeneratedBuilder.composedName.utf8)
        let decomposed = Array(GeneratedBuilder.decomposedName.utf8)
        #expect(composed != decomposed)
        let sameFolder = try #require(refs.first { Array($0.name.utf8) == composed }).folderID
        #expect(refs.contains { Array($0.name.utf8) == decomposed && $0.folderID == sameFolder })
        #expect(refs.contains { $0.name == "." } && refs.contains { $0.name == ".." })
        #expect(folders.contains { $0.name == ".." })
        #expect(refs.contains { $0.name.utf8.count == 300 })
        #expect(GeneratedBuilder.longName.utf8.count == 300 && GeneratedBuilder.longName.hasSuffix(".pdf"))

        let duplicateDocuments = Dictionary(grouping: refs) { "\($0.folderID)/\($0.name)" }.values.filter {
            $0.count > 1
        }
        #expect(duplicateDocuments.contains { Set($0.map(\.mkdate)).count == $0.count })
        let duplicateFolders = Dictionary(grouping: folders) { "\($0.parentID)/\($0.name)" }.values.filter {
            $0.count > 1
        }
        #expect(duplicateFolders.contains { Set($0.map(\.mkdate)).count == $0.count })

        #expect(refs.contains { !$0.name.contains(".") && $0.mimeType == "application/pdf" })
        #expect(refs.contains { !$0.name.contains(".") && $0.mimeType == "0" })
        #expect(refs.contains { $0.size == 0 })

        let autor = try #require(university.user(named: "test_autor"))
        let tutor = try #require(university.user(named: "test_tutor"))
        let locked = try #require(folders.first { $0.folderType == "PermissionEnabledFolder" })
        #expect(locked.dataContent == #"{"permission":"1"}"#)
        #expect(university.canSee(folder: locked, user: autor) && !university.canRead(folder: locked, user: autor))
        #expect(!university.fileRefs(in: locked.id).isEmpty)
        let hidden = try #require(folders.first { $0.folderType == "HiddenFolder" })
        #expect(!university.canSee(folder: hidden, user: autor) && university.canRead(folder: hidden, user: tutor))
        #expect(university.termsOfUse["NO_LICENSE"]?.downloadCondition == 2)
        let restricted = try #require(refs.first { $0.termsOfUseID == "NO_LICENSE" })
        #expect(!university.canDownload(restricted, user: autor))
        let empty = folders.filter {
            university.fileRefs(in: $0.id).isEmpty && university.subfolders(of: $0.id).isEmpty
        }
        #expect(!empty.isEmpty)

        #expect(refs.filter(\.isLink).count >= 2)
        #expect(refs.contains { $0.id.count == 8 } && refs.contains { $0.id.count == 40 })
        #expect(folders.contains { $0.id.count == 8 })
        #expect(university.courses.values.contains { $0.isOpenEnded })
        #expect(university.courses.values.contains { $0.semesterIDs.count >= 2 })
        #expect(university.courses.values.contains { university.folders[$0.topFolderID]?.name.isEmpty == false })
        #expect(university.courses.values.contains { university.membership(of: autor.id, in: $0.id) == nil })
        let orphan = try #require(refs.first { university.users[$0.userID] == nil })
        #expect(!orphan.authorName.isEmpty)
    }

    // MARK: - Content

    @Test("Chunks concatenate to the whole document", arguments: [Content.GeneratedKind.binary, .text, .pdf])
    func randomAccess(kind: Content.GeneratedKind) {
        for size in [0, 1, 4_095, 4_096, 4_097, 100_003, 300_000] where kind != .pdf || size >= 10_000 {
            let whole = ContentGenerator.bytes(kind: kind, seed: 99, size: size, offset: 0, length: size + 10)
            #expect(whole.count == size)
            var pieces: [UInt8] = []
            var offset = 0
            var step = 1
            while offset < size {
                pieces += ContentGenerator.bytes(kind: kind, seed: 99, size: size, offset: offset, length: step)
                offset += step
                step = step * 3 + 5
            }
            #expect(pieces == whole)
            #expect(ContentGenerator.bytes(kind: kind, seed: 99, size: size, offset: size, length: 10).isEmpty)
        }
        let other = ContentGenerator.bytes(kind: kind, seed: 100, size: 50_000, offset: 0, length: 50_000)
        #expect(other != ContentGenerator.bytes(kind: kind, seed: 99, size: 50_000, offset: 0, length: 50_000))
    }

    @Test("A chunk deep inside a gigabyte document is cheap and consistent")
    func deepChunk() {
        let size = 1 << 30
        let start = size - 100_000
        let chunk = ContentGenerator.bytes(kind: .binary, seed: 5, size: size, offset: start, length: 200_000)
        #expect(chunk.count == 100_000)
        let inner = ContentGenerator.bytes(kind: .binary, seed: 5, size: size, offset: start + 1_234, length: 10)
        #expect(Array(chunk[1_234..<1_244]) == inner)
        let pdf = ContentGenerator.bytes(kind: .pdf, seed: 5, size: 20 << 20, offset: 10 << 20, length: 65_536)
        #expect(pdf.count == 65_536)
    }

    @Test("Text is readable UTF-8 ending in a newline")
    func text() throws {
        let bytes = ContentGenerator.bytes(kind: .text, seed: 8, size: 20_000, offset: 0, length: 20_000)
        #expect(bytes.allSatisfy { $0 == 0x0A || $0 >= 0x20 && $0 != 0x7F })
        #expect(bytes.last == 0x0A)
        let text = try #require(String(validating: bytes, as: UTF8.self))
        #expect(text.hasPrefix(ContentGenerator.title(seed: 8, kind: .text) + "\n"))
        #expect(text.split(separator: "\n").allSatisfy { $0.count <= 80 })
        let external = ContentGenerator.externalBytes(path: "/elsewhere/abc/list.txt", size: 5_000)
        #expect(external.count == 5_000)
        #expect(external == ContentGenerator.externalBytes(path: "/elsewhere/abc/list.txt", size: 5_000))
        #expect(external != ContentGenerator.externalBytes(path: "/elsewhere/abd/list.txt", size: 5_000))
    }

    @Test(
        "PDFs are well-formed at every size", arguments: [3_900, 4_000, 10_006, 10_007, 100_006, 1_000_007, 5_242_880])
    func pdfStructure(size: Int) throws {
        for seed: UInt64 in [1, 2, 3] {
            let bytes = ContentGenerator.bytes(kind: .pdf, seed: seed, size: size, offset: 0, length: size)
            #expect(bytes.count == size)
            try Self.checkPDF(bytes)
        }
    }

    @Test("The page count chosen from a size always fits")
    func pdfBounds() throws {
        #expect(ContentGenerator.minimumPDFSize == ContentPDF.sizeBound(pages: 1))
        for pages in 1...ContentPDF.maximumPages {
            for seed: UInt64 in [11, 12] {
                let size = ContentPDF.sizeBound(pages: pages)
                #expect(ContentPDF.pageCount(size: size) == pages)
                let layout = ContentPDF.makeLayout(seed: seed, size: size)
                #expect(!layout.tail.isEmpty && layout.head.count + layout.padding + layout.tail.count == size)
            }
        }
    }

    @Test("pdftotext extracts the page text", .enabled(if: Tool.installed("/usr/bin/pdftotext"), "needs poppler-utils"))
    func pdftotext() async throws {
        let seed: UInt64 = 21
        let size = 150_000
        let bytes = ContentGenerator.bytes(kind: .pdf, seed: seed, size: size, offset: 0, length: size)
        let result = try await Tool.pdftotext(bytes)
        #expect(result.status == 0)
        #expect(result.stderr.isEmpty)
        let pages = ContentPDF.pageCount(size: size)
        #expect(result.stdout.contains(ContentGenerator.title(seed: seed)))
        #expect(result.stdout.contains("1 / \(pages)") && result.stdout.contains("\(pages) / \(pages)"))
    }

    /// Header, trailer, and every xref entry pointing at its `N 0 obj`.
    static func checkPDF(_ bytes: [UInt8]) throws {
        #expect(bytes.starts(with: Array("%PDF-".utf8)))
        let text = String(decoding: bytes.suffix(64), as: UTF8.self)
        #expect(text.hasSuffix("%%EOF\n"))
        let lines = text.split(whereSeparator: \.isNewline)
        let startIndex = try #require(lines.lastIndex { $0 == "startxref" })
        let xref = try #require(Int(lines[startIndex + 1]))
        let table = String(decoding: bytes[xref..<min(bytes.count, xref + 32)], as: UTF8.self)
        #expect(table.hasPrefix("xref\n0 "))
        let header = try #require(table.split(separator: "\n").dropFirst().first?.split(separator: " "))
        let count = try #require(Int(header[1]))
        let entriesStart = xref + "xref\n0 \(count)\n".utf8.count
        for object in 1..<count {
            let entry = bytes[(entriesStart + 20 * object)..<(entriesStart + 20 * object + 20)]
            let offset = try #require(Int(String(decoding: entry.prefix(10), as: UTF8.self)))
            let marker = Array("\(object) 0 obj".utf8)
            #expect(Array(bytes[offset..<offset + marker.count]) == marker)
        }
    }
}
