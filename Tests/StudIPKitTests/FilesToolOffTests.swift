import Foundation
import StudIPKit
import StudIPModel
import TestSupport
import Testing

@testable import StudIPSimulator

/// A course whose files tool is switched off (fixtures-5.0.7-more Part 5): an ordinary course without documents.
@Suite("A course with its files tool switched off")
struct FilesToolOffTests {
    /// Adds L-16 as captured: test_autor and test_dozent are members, the files tool is off. Returns its id.
    static func addCourse(_ sim: Simulator) throws -> String {
        let semester = try #require(sim.university.orderedSemesters.last?.id)
        let created = try sim.control(
            "POST", ["courses"],
            [
                "title": "Ringvorlesung ohne Dateibereich", "number": "L-16", "semester_ids": [semester],
                "members": ["test_dozent": "dozent", "test_autor": "autor"], "files_tool": false,
            ])
        return try #require(created["id"] as? String)
    }

    @Test(
        "both APIs list it empty and complete, without a problem, on every refresh",
        arguments: [
            (Flavour.v50, ClientConfiguration.API.jsonAPI), (.v50, .legacyREST), (.v55, .jsonAPI),
        ])
    func emptyAndComplete(flavour: Flavour, api: ClientConfiguration.API) async throws {
        try await withSimulator(flavour: flavour) { sim async throws in
            let id = try Self.addCourse(sim)
            let capture = LogCapture()
            try await withSource(Harness.configuration(sim, api: api, logger: capture.logger)) { source in
                for _ in 1...2 {
                    let overview = try await source.overview()
                    #expect(overview.problems.isEmpty)
                    let course = try #require(overview.courses.first { $0.id == id })
                    let content = try await source.content(of: course)
                    #expect(content.folders.allSatisfy { $0.parentID == nil }, "at most the root folder")
                    #expect(content.documents.isEmpty)
                    #expect(content.failedFolderIDs.isEmpty)
                    #expect(content.foldersWithUncheckedRestrictedDocuments.isEmpty)
                    #expect(content.problems.isEmpty)
                }
            }
            if api == .jsonAPI {
                let logged = capture.text.split(separator: "\n").filter { $0.contains("files tool switched off") }
                #expect(logged.count == 1, "logged once per source")
                #expect(logged.first?.hasPrefix("debug ") == true)
            }
        }
    }

    @Test("a 403 for a course with a file area stays an error")
    func otherForbiddenCourses() async throws {
        try await withSimulator(flavour: .v50) { sim async throws in
            try await withSource(Harness.configuration(sim, api: .jsonAPI)) { source in
                let overview = try await source.overview()
                let course = try #require(overview.courses.first { $0.number == "INF-101" })
                sim.inject(Fault(action: .status(403), pathContains: "/courses/\(course.id)/folders"))
                let error = await Harness.error { () async throws(StudIPError) in try await source.content(of: course) }
                guard case .forbidden = error else {
                    Issue.record("expected forbidden, got \(String(describing: error))")
                    return
                }
            }
        }
    }
}
