import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// The profile's `language`, `announcements`, `dates` and `timetable` (issue 18) as `campusfs refresh` applies them.
@Suite struct CourseFilesConfigTests {
    func paths(_ config: String) async throws -> [String] {
        try await withSimulator(.fixtures507More) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            try FileManager.default.createDirectory(
                at: cli.configFile.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(
                """
                [profiles.default]
                url = "\(sim.baseURL)"
                username = "test_autor"
                \(config)
                """.utf8
            ).write(to: cli.configFile)
            let refresh = try await cli.run(["refresh"])
            #expect(refresh.status == 0, "\(refresh.stderr)")
            let tree = try await cli.run(["tree", "--paths"])
            #expect(tree.status == 0, "\(tree.stderr)")
            return tree.lines.map { $0.split(separator: "/").last.map(String.init) ?? "" }
        }
    }

    @Test func germanByDefaultEnglishOnRequestAndEachPartCanBeSwitchedOff() async throws {
        let german = try await paths("")
        #expect(
            german.contains("Ankündigungen") && german.contains("Termine.ics") && german.contains("Stundenplan.ics"))
        let english = try await paths(#"language = "en""#)
        #expect(english.contains("Announcements") && english.contains("Dates.ics") && english.contains("Timetable.ics"))
        #expect(!english.contains("Ankündigungen"))
        let none = try await paths("announcements = false\ndates = false\ntimetable = false")
        #expect(!none.contains { ["Ankündigungen", "Termine.ics", "Stundenplan.ics"].contains($0) })
        #expect(!none.isEmpty && Set(none).isSubset(of: Set(german)), "the rest of the tree stays")
    }
}
