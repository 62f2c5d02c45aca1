import Foundation
import StudIPSimulator
import TestSupport
import Testing

/// `campusfs refresh` then `campusfs tree` against the real 5.0.7 data: exactly the tree of docs/architecture.md, "The
/// tree", whichever API and release delivers it.
@Suite("The fixtures tree through the CLI")
struct FixtureTreeTests {
    /// The content every demo course of the fixtures has (demo_manifest.json), relative to the course folder.
    static let demoCourseContent = [
        "Leerer Ordner",
        "README.txt",
        "Vorlesungsfolien",
        "Vorlesungsfolien/Archiv 2025",
        "Vorlesungsfolien/Archiv 2025/folien_2025.md",
        "Vorlesungsfolien/Kapitel 1 - Einleitung.pdf",
        "Vorlesungsfolien/Kapitel 2 - Grundlagen.pdf",
        "Übungsblätter",
        "Übungsblätter/daten (groß).bin",
        "Übungsblätter/diagramm.png",
        "Übungsblätter/leer.txt",
        "Übungsblätter/Übungsblatt 1 – Lösungen.txt",
    ]

    static func course(_ path: String) -> [String] {
        [path] + demoCourseContent.map { "\(path)/\($0)" }
    }

    /// test_autor: five courses; the study group is open-ended (no end semester), so it lives in `Ongoing`;
    /// semester titles lose their `/`; PRIV-404 is not theirs and does not appear.
    static let autorTree =
        ["Ongoing", "Ongoing/Test Studiengruppe", "SS 2022", "SS 2022/12345 Test Lehrveranstaltung", "SS 2026"]
        + course("SS 2026/VS-303 Seminar: Verteilte Systeme (Sommer)") + ["WS 2026-27"]
        + course("WS 2026-27/BS-202 Betriebssysteme & Dateisysteme")
        + course("WS 2026-27/INF-101 Einführung in die Informatik")

    /// root@studip is a member of the three demo courses only.
    static let rootTree =
        ["SS 2026"] + course("SS 2026/VS-303 Seminar: Verteilte Systeme (Sommer)") + ["WS 2026-27"]
        + course("WS 2026-27/BS-202 Betriebssysteme & Dateisysteme")
        + course("WS 2026-27/INF-101 Einführung in die Informatik")

    static let cases: [(Flavour, String, String)] = [
        (.v50, "jsonapi", "test_autor"), (.v50, "rest", "test_autor"), (.v50, "jsonapi", "root@studip"),
        (.v50, "rest", "root@studip"), (.v55, "jsonapi", "test_autor"), (.v55, "rest", "test_autor"),
        (.v6, "jsonapi", "test_autor"), (.v6, "auto", "root@studip"),
    ]

    @Test(arguments: cases)
    func treeIsExactlyTheDesignedOne(flavour: Flavour, api: String, user: String) async throws {
        try await withSimulator(.fixtures507, flavour: flavour) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let login = ["--server", sim.baseURL, "--username", user, "--api", api]
            let refresh = try await cli.run(["refresh"] + login)
            #expect(refresh.status == 0, "\(refresh.stderr)")

            let tree = try await cli.run(["tree", "--paths"])
            #expect(tree.status == 0, "\(tree.stderr)")
            let expected = user == "test_autor" ? Self.autorTree : Self.rootTree
            #expect(tree.lines.sorted() == expected.sorted())
        }
    }

    /// Folders and documents have dates from Stud.IP; semester and course directories get the time they appeared.
    static func isBelowACourse(_ line: String) -> Bool {
        let path = line.split(separator: "  ").last.map(String.init) ?? ""
        return path.split(separator: "/").count > 2
    }

    @Test func bothAPIsAgreeOnSizesAndDates() async throws {
        try await withSimulator(.fixtures507, flavour: .v50) { sim async throws in
            var listings: [String] = []
            for api in ["jsonapi", "rest"] {
                let cli = try CLI()
                defer { cli.removeHome() }
                let refresh = try await cli.run([
                    "refresh", "--server", sim.baseURL, "--username", "test_autor", "--api", api,
                ])
                #expect(refresh.status == 0, "\(refresh.stderr)")
                let listing = try await cli.run(["tree", "--long"])
                #expect(listing.status == 0)
                listings.append(listing.lines.filter(Self.isBelowACourse).joined(separator: "\n"))
            }
            #expect(listings[0] == listings[1])
            #expect(listings[0].split(separator: "\n").count == 3 * Self.demoCourseContent.count)

            let cli = try CLI()
            defer { cli.removeHome() }
            _ = try await cli.run(["refresh", "--server", sim.baseURL, "--username", "test_autor"])
            let folder = try await cli.run([
                "ls", "-l", "WS 2026-27/INF-101 Einführung in die Informatik/Übungsblätter",
            ])
            #expect(folder.status == 0, "\(folder.stderr)")
            let big = try #require(folder.lines.first { $0.hasSuffix("daten (groß).bin") })
            #expect(big.contains("1572987"), "size from metadata: \(big)")
            #expect(big.contains("2026-10-15 10:11"), "mtime = the document's chdate in local time: \(big)")
        }
    }
}

/// The `small` dataset's hostile cases as a user sees them in the tree.
@Suite("The small dataset's tree through the CLI")
struct HostileTreeTests {
    /// A CLI whose profile was refreshed from the simulator's `small` dataset as test_autor.
    static func refreshed(_ body: (CLI, Simulator) async throws -> Void) async throws {
        try await withSimulator(.generated(.small, seed: 1), flavour: .v55) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let refresh = try await cli.run(["refresh", "--server", sim.baseURL, "--username", "test_autor"])
            #expect(refresh.status == 0, "\(refresh.stderr)")
            try await body(cli, sim)
        }
    }

    /// A document the user may not download is marked `locked` in `ls -l`; its neighbours are not.
    @Test func aDocumentThatMayNotBeDownloadedIsLocked() async throws {
        try await Self.refreshed { cli, _ in
            let paths = try await cli.run(["tree", "--paths"]).lines
            let scan = try #require(paths.first { $0.hasSuffix("/Lehrbuch Kapitel 3 (Scan).pdf") })
            let folder = String(scan.dropLast("/Lehrbuch Kapitel 3 (Scan).pdf".count))
            let listing = try await cli.run(["ls", "-l", folder])
            #expect(listing.status == 0, "\(listing.stderr)")
            let line = try #require(listing.lines.first { $0.contains("Lehrbuch Kapitel 3 (Scan).pdf") })
            #expect(line.hasSuffix("Lehrbuch Kapitel 3 (Scan).pdf  locked"), "\(line)")
            #expect(listing.lines.filter { $0.contains("locked") } == [line], "\(listing.stdout)")
        }
    }

    @Test func sanitizedNamesSymlinksAndUnreadableFolders() async throws {
        try await Self.refreshed { cli, sim in
            let paths = try await cli.run(["tree", "--paths"])
            let lines = Set(paths.lines)
            let university = sim.university
            let project = try #require(university.courses.values.first { $0.title == "Projektseminar: Robotik" })
            let semesters = project.semesterIDs.compactMap { university.semesters[$0] }.sorted { $0.begin < $1.begin }
            let earlier = try #require(semesters.first).title.replacingOccurrences(of: "/", with: "-")
            let latest = try #require(semesters.last).title.replacingOccurrences(of: "/", with: "-")
            let courseName = "INF-390 Projektseminar: Robotik"

            #expect(lines.contains("\(latest)/\(courseName)/Gruppe A-B/Projektplan.pdf"), "`/` in a folder name → `-`")
            #expect(lines.contains("\(earlier)/\(courseName)"), "the earlier semester has the course as a link")
            #expect(!lines.contains("\(earlier)/\(courseName)/Gruppe A-B"), "tree does not descend into the link")
            let link = try await cli.run(["ls", "-l", earlier])
            #expect(
                link.lines.contains {
                    $0.hasPrefix("l ") && $0.hasSuffix("\(courseName) -> ../\(latest)/\(courseName)")
                })

            let inf = lines.first { $0.hasSuffix("/INF-101 Einführung in die Informatik") }
            let course = try #require(inf)
            // Documents "." and ".." become "_." and "_.." and, having no extension, get one from their MIME type.
            for expected in [
                "_..txt", "_...txt", "_../in dot dot.txt", "Vorlesungsfolien/Klausur WS 2025-26.pdf",
                "Vorlesungsfolien/bell_char.txt",
                "Vorlesungsfolien/Folien.pdf", "Vorlesungsfolien/Folien (2).pdf", "Notizen", "LIESMICH.pdf",
            ] {
                #expect(lines.contains("\(course)/\(expected)"), "\(expected)")
            }
            #expect(
                !lines.contains { $0.hasPrefix("\(course)/Abgaben") }, "a folder the student may not read is not shown")
            #expect(!lines.contains { $0.hasPrefix("\(course)/Tutorenmaterial") })
            #expect(
                lines.contains("\(course)/Vorlesungsfolien/Lehrbuch Kapitel 3 (Scan).pdf"), "non-downloadable: shown")
            let umlautNames = lines.filter {
                $0.hasPrefix("\(course)/Vorlesungsfolien/") && $0.contains("bung") && $0.hasSuffix(".txt")
            }
            #expect(umlautNames.count == 2, "NFC and NFD spellings of one name are told apart: \(umlautNames)")
            #expect(lines.allSatisfy { $0.split(separator: "/").allSatisfy { $0.utf8.count <= 255 } })
        }
    }
}
