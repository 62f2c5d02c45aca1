import Foundation

/// Installations generated from a seed: the same seed yields the same university, id for id and byte for byte.
///
/// - `demo`: a pleasant first run — three semesters, ten courses with slides, sheets, code, literature and links,
///   each document about its course's subject (``ContentCatalogue``).
/// - `small`: every hostile case of API.md §7 in a few dozen documents, for tests.
/// - `large`: the benchmarks' dataset (docs/architecture.md, "Targets") — 3 semesters, 40 courses, ~8,000 documents,
///   ~2,500 folders, plus 64 MiB and 1 GiB files.
/// - `huge`: the same shape with 100,000 documents; contents are generated on demand, never held in memory.
/// - `scale-1k`, `scale-10k`: `huge`'s shape per course with 1,000 and 10,000 documents (5 and 50 courses), for the
///   bench's scale curve (docs/benchmarks.md): how time and memory grow with the history, `huge` its last point.
///
/// Every generated installation is as of ``now`` (2026-11-21, Europe/Berlin).
public enum GeneratedDataset {
    public enum Size: String, CaseIterable, Sendable {
        // New sizes go last: a size's place in this list salts its generator (`make`).
        case demo, small, large, huge
        case scale1k = "scale-1k"
        case scale10k = "scale-10k"
    }

    /// The moment the generated installations describe: nothing is created or changed after it.
    public static let now = BerlinTime.now

    public static func make(_ size: Size, seed: UInt64) -> University {
        var builder = GeneratedBuilder(seed: seed, salt: UInt64(Size.allCases.firstIndex(of: size) ?? 0))
        switch size {
        case .demo: builder.buildDemo()
        case .small: builder.buildSmall()
        case .large: builder.buildBulk(semesters: 3, courses: 40, folders: 2_500, documents: 8_000, bigFiles: true)
        case .huge: builder.buildScaled(documents: 100_000)
        case .scale1k: builder.buildScaled(documents: 1_000)
        case .scale10k: builder.buildScaled(documents: 10_000)
        }
        builder.addAnnouncementsAndDates(seed: seed)
        return builder.university
    }
}

extension GeneratedBuilder {
    /// Documents and folders per course of `huge` (100,000 and 31,250 in 500 courses): the scale curve's points
    /// differ in how many such courses they have, not in what a course looks like.
    static let scaledDocumentsPerCourse = 200
    static let scaledFoldersPerCourse = 62.5

    /// `huge`'s shape with `documents` documents: six semesters, one course per 200 documents.
    mutating func buildScaled(documents: Int) {
        let courses = documents / Self.scaledDocumentsPerCourse
        buildBulk(
            semesters: 6, courses: courses, folders: Int(Double(courses) * Self.scaledFoldersPerCourse),
            documents: documents, bigFiles: false)
    }
}

/// Shared machinery of the generated datasets: users, semesters, licenses, and adding entities with realistic
/// ids, owners and dates drawn from one seeded generator (so generation order alone fixes the result).
struct GeneratedBuilder {
    var rng: SplitMix64
    var university = University()
    let autor: User
    let tutor: User
    let dozent: User
    let root: User
    /// Other lecturers with realistic names; `dozent` is not among them.
    let lecturers: [User]

    static let day = 86_400
    static let week = 7 * day
    static let kibibyte = 1_024
    static let mebibyte = 1_024 * 1_024

    init(seed: UInt64, salt: UInt64) {
        var rng = SplitMix64(seed: SplitMix64.derive(seed, salt))
        func account(_ username: String, _ given: String, _ family: String, _ perms: String, _ email: String) -> User {
            User(
                id: rng.id(), username: username, password: "testing", givenName: given, familyName: family,
                perms: perms, email: email, avatarTimestamp: BerlinTime.unix(2026, 3, 2))
        }
        root = account("root@studip", "Root", "Studip", "root", "root@localhost")
        dozent = account("test_dozent", "Testaccount", "Dozent", "dozent", "dozent@studip.de")
        tutor = account("test_tutor", "Testaccount", "Tutor", "tutor", "tutor@studip.de")
        autor = account("test_autor", "Testaccount", "Autor", "autor", "autor@studip.de")
        var lecturers: [User] = []
        for person in GeneratedNames.lecturers {
            let ascii = person.family.folding(options: [.diacriticInsensitive], locale: nil)
                .lowercased().filter { $0.isLetter && $0.isASCII }
            let username = "\(person.given.prefix(1).lowercased())\(ascii)"
            var user = account(username, person.given, person.family, "dozent", "\(username)@uni.example")
            user.prefix = person.prefix
            lecturers.append(user)
        }
        self.lecturers = lecturers
        self.rng = rng
        for user in [root, dozent, tutor, autor] + lecturers { university.add(user) }
        addTermsOfUse()
    }

    /// Stud.IP's default licenses (`db/studip_default_data.sql`); `NO_LICENSE` allows downloads by the owner only.
    private mutating func addTermsOfUse() {
        let date = BerlinTime.unix(2024, 9, 2, 9)
        let entries: [(String, String, String, Int, Bool)] = [
            ("UNDEF_LICENSE", "Ungeklärte Lizenz", "question-circle", 0, true),
            ("SELFMADE_NONPUB", "Selbst verfasstes, nicht publiziertes Werk", "own-license", 0, false),
            ("FREE_LICENSE", "Werk mit freier Lizenz", "cc", 0, false),
            ("WITH_LICENSE", "Nutzungserlaubnis oder Lizenz liegt vor", "license", 1, false),
            ("NO_LICENSE", "Nicht frei von Rechten Dritter", "block", 2, false),
        ]
        for (position, entry) in entries.enumerated() {
            university.add(
                TermsOfUse(
                    id: entry.0, name: entry.1, icon: entry.2, position: position, mkdate: date, chdate: date,
                    description: entry.3 == 2
                        ? "Das Werk darf nur von der hochladenden Person heruntergeladen werden."
                        : "",
                    studentDescription: entry.3 == 0 ? "" : "Download nur eingeschränkt möglich.",
                    isDefault: entry.4, downloadCondition: entry.3))
        }
    }

    // MARK: - Semesters

    /// Adds the semester and returns it; titles and dates follow German universities ("WS 2026/27" runs
    /// October to March, lectures from the second week of October to mid-February, without the break from
    /// Christmas Eve to Epiphany).
    @discardableResult
    mutating func addSemester(summer: Bool, year: Int) -> Semester {
        let semester: Semester
        if summer {
            semester = Semester(
                id: rng.id(), title: "SS \(year)", begin: BerlinTime.unix(year, 4, 1),
                end: BerlinTime.unix(year, 9, 30, 23, 59, 59),
                lecturesBegin: BerlinTime.unix(year, 4, BerlinTime.day(1, onOrAfter: year, 4, 10)),
                lecturesEnd: BerlinTime.unix(year, 7, BerlinTime.day(5, onOrAfter: year, 7, 15), 23, 59, 59),
                token: "SS\(year % 100)")
        } else {
            let next = (year + 1) % 100
            var winter = Semester(
                id: rng.id(), title: "WS \(year)/\(next.padded(2))", begin: BerlinTime.unix(year, 10, 1),
                end: BerlinTime.unix(year + 1, 3, 31, 23, 59, 59),
                lecturesBegin: BerlinTime.unix(year, 10, BerlinTime.day(1, onOrAfter: year, 10, 10)),
                lecturesEnd: BerlinTime.unix(year + 1, 2, BerlinTime.day(5, onOrAfter: year + 1, 2, 8), 23, 59, 59),
                token: "WS\(year % 100)")
            winter.holidays = [
                Holiday(
                    name: "Unterbrechung", begin: BerlinTime.unix(year, 12, 24),
                    end: BerlinTime.unix(year + 1, 1, 6, 23, 59, 59))
            ]
            semester = winter
        }
        university.add(semester)
        return semester
    }

    /// The `count` most recent semesters up to WS 2026/27, oldest first.
    mutating func addRecentSemesters(_ count: Int) -> [Semester] {
        var terms: [(summer: Bool, year: Int)] = []
        var term = (summer: false, year: 2026)
        for _ in 0..<count {
            terms.insert(term, at: 0)
            term = term.summer ? (false, term.year - 1) : (true, term.year)
        }
        return terms.map { addSemester(summer: $0.summer, year: $0.year) }
    }

    // MARK: - Entities

    /// When documents of a course appear: from shortly before its first semester to the end of its last lecture
    /// period, never after ``GeneratedDataset/now``.
    static func activity(of semesters: [Semester]) -> ClosedRange<Int> {
        guard let first = semesters.first, let last = semesters.last else {
            return (GeneratedDataset.now - 400 * day)...(GeneratedDataset.now - 3_600)
        }
        let start = first.begin - 14 * day
        let end = min(last.lecturesEnd + 21 * day, GeneratedDataset.now - 3_600)
        return start...max(start, end)
    }

    /// Adds a course with its root folder and memberships; returns the root folder.
    mutating func addCourse(
        number: String, title: String, semesters: [Semester], lecturers: [User], tutors: [User] = [],
        students: [User], type: Int = 1, semClass: Int = 1, rootName: String = "", description: String = "",
        location: String = "", id: String? = nil
    ) -> Folder {
        let start = Self.activity(of: semesters).lowerBound
        let mkdate = start - rng.int(in: 14...60) * Self.day + rng.int(in: 8 * 3_600...18 * 3_600)
        let courseID = id ?? rng.id()
        var members: [Membership] = []
        for (role, users) in [("dozent", lecturers), ("tutor", tutors), ("autor", students)] {
            for user in users {
                let joined = mkdate + rng.int(in: 0...(role == "autor" ? 40 : 5)) * Self.day + rng.int(in: 0...36_000)
                members.append(
                    Membership(
                        userID: user.id, permission: role, mkdate: min(joined, GeneratedDataset.now),
                        group: role == "autor" ? rng.int(in: 0...8) : 8, position: members.count))
            }
        }
        let rootFolder = Folder(
            id: rng.id(), userID: lecturers.first?.id ?? root.id, parentID: "", rangeID: courseID,
            folderType: "RootFolder", name: rootName, mkdate: mkdate, chdate: mkdate)
        university.add(
            Course(
                id: courseID, number: number, title: title, instituteID: Self.institute(for: number),
                semesterIDs: semesters.map(\.id), members: members, topFolderID: rootFolder.id, mkdate: mkdate,
                chdate: mkdate + rng.int(in: 0...20) * Self.day, type: type, semClass: semClass,
                description: description, location: location))
        university.add(rootFolder)
        return rootFolder
    }

    /// A stable fake institute id per subject prefix (`INF`, `MAT`, …), so courses of one subject share it.
    private static func institute(for number: String) -> String {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in number.prefix(while: { $0 != "-" }).utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 }
        var rng = SplitMix64(seed: hash)
        return rng.id()
    }

    @discardableResult
    mutating func addFolder(
        _ name: String, in parent: Folder, owner: String, mkdate: Int, type: String = "StandardFolder",
        dataContent: String = "[]", description: String = "", id: String? = nil
    ) -> Folder {
        let folder = Folder(
            id: id ?? rng.id(), userID: owner, parentID: parent.id, rangeID: parent.rangeID, folderType: type,
            name: name, mkdate: mkdate,
            chdate: min(GeneratedDataset.now, mkdate + (rng.chance(0.2) ? rng.int(in: 0...30) * Self.day : 0)),
            description: description, dataContent: dataContent)
        university.add(folder)
        return folder
    }

    /// Adds a document; `chdate` defaults to a realistic one (mostly unchanged, sometimes edited later).
    @discardableResult
    mutating func addDocument(
        _ name: String, in folder: Folder, owner: User, content: Content, size: Int, mimeType: String, mkdate: Int,
        chdate: Int? = nil, description: String = "", termsOfUse: String = "SELFMADE_NONPUB", id: String? = nil
    ) -> FileRef {
        let changed = max(mkdate, chdate ?? changeDate(after: mkdate))
        let ref = FileRef(
            id: id ?? rng.id(), fileID: rng.id(), folderID: folder.id, name: name, userID: owner.id,
            mimeType: mimeType, size: size, mkdate: mkdate, chdate: changed, content: content,
            description: description, authorName: "\(owner.givenName) \(owner.familyName)",
            downloads: rng.int(in: 0...120), termsOfUseID: termsOfUse)
        university.add(ref)
        return ref
    }

    /// Most documents never change; some get a new version later, a few in the last week.
    mutating func changeDate(after mkdate: Int) -> Int {
        let now = GeneratedDataset.now
        let roll = rng.unit()
        if roll < 0.75 || mkdate >= now - 3_600 { return mkdate }
        if roll < 0.985 { return rng.int(in: mkdate...min(now - 3_600, mkdate + 60 * Self.day)) }
        return max(mkdate, now - rng.int(in: 3_600...(7 * Self.day - 3_600)))
    }

    /// A working-hours time on a random day in `window`.
    mutating func date(in window: ClosedRange<Int>) -> Int {
        let day =
            window.lowerBound + rng.int(in: 0...max(0, (window.upperBound - window.lowerBound) / Self.day))
            * Self.day
        return min(window.upperBound, day + rng.int(in: 7 * 3_600...19 * 3_600))
    }

    /// A generated document of `kind` and `size` (raised to the minimum for PDFs); `about` names the catalogue
    /// course, number and role its content is about (see ``ContentProfile``), else the seed picks them.
    @discardableResult
    mutating func addGenerated(
        _ name: String, in folder: Folder, kind: Content.GeneratedKind, size: Int, owner: User, mkdate: Int,
        chdate: Int? = nil, description: String = "", termsOfUse: String = "SELFMADE_NONPUB",
        about: (course: Int, number: Int, role: ContentProfile.Role)? = nil
    ) -> FileRef {
        let bytes = kind == .pdf ? max(size, ContentGenerator.minimumPDFSize) : size
        var seed = rng.next()
        if let about {
            seed = ContentProfile.seed(course: about.course, number: about.number, role: about.role, variation: seed)
        }
        return addDocument(
            name, in: folder, owner: owner, content: .generated(kind: kind, seed: seed, size: bytes),
            size: bytes, mimeType: Self.mimeType(of: name), mkdate: mkdate, chdate: chdate, description: description,
            termsOfUse: termsOfUse)
    }

    /// A document hosted elsewhere, served by the simulator's external host under `/elsewhere/<id>/<slug>`.
    @discardableResult
    mutating func addExternal(
        _ name: String, in folder: Folder, size: Int, owner: User, mkdate: Int, description: String = ""
    ) -> FileRef {
        let id = rng.id()
        let url = "/elsewhere/\(id)/\(Self.slug(name))"
        return addDocument(
            name, in: folder, owner: owner, content: .external(url: url), size: size,
            mimeType: Self.mimeType(of: name), mkdate: mkdate, chdate: mkdate, description: description, id: id)
    }

    /// A URL-safe rendering of a name (the external host compares raw request paths).
    static func slug(_ name: String) -> String {
        let folded = name.folding(options: [.diacriticInsensitive], locale: nil).lowercased()
        var result = ""
        for scalar in folded.unicodeScalars {
            if scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == ".") {
                result.unicodeScalars.append(scalar)
            } else if !result.hasSuffix("-") {
                result.append("-")
            }
        }
        let trimmed = result.trimmingCharacters(in: CharacterSet(charactersIn: "-"))
        return trimmed.isEmpty ? "document" : trimmed
    }

    static func mimeType(of name: String) -> String {
        guard let dot = name.lastIndex(of: ".") else { return "application/octet-stream" }
        switch name[name.index(after: dot)...].lowercased() {
        case "pdf": return "application/pdf"
        case "txt": return "text/plain"
        case "md": return "text/markdown"
        case "csv": return "text/csv"
        case "py": return "text/x-python"
        case "tex": return "application/x-tex"
        case "ipynb": return "application/x-ipynb+json"
        case "zip": return "application/zip"
        case "png": return "image/png"
        case "jpg": return "image/jpeg"
        case "mp4": return "video/mp4"
        default: return "application/octet-stream"
        }
    }

    static func kind(of name: String) -> Content.GeneratedKind {
        switch mimeType(of: name) {
        case "application/pdf": return .pdf
        case "text/plain", "text/markdown", "text/csv", "text/x-python", "application/x-tex",
            "application/x-ipynb+json":
            return .text
        default: return .binary
        }
    }

    /// A log-normal size within [10 KiB, 20 MiB] around `median`.
    mutating func size(median: Int, sigma: Double = 1.0) -> Int {
        let value = rng.logNormal(median: Double(median), sigma: sigma)
        return Int(min(max(value, Double(10 * Self.kibibyte)), Double(20 * Self.mebibyte)))
    }
}
