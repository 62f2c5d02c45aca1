import Foundation
import StudIPKit
import StudIPModel
import TestSupport
import Testing

@testable import StudIPSimulator

@Suite("Stud.IP 5.5 and 6.x")
struct FlavourTests {
    @Test("JSON:API walks 5.5 and 6.x completely", arguments: [Flavour.v55, .v6])
    func jsonAPIWalk(flavour: Flavour) async throws {
        try await withSimulator(.generated(.demo, seed: 1), flavour: flavour) { sim async throws in
            try await withSource(Harness.configuration(sim)) { source in
                #expect(source.apiName == "JSON:API")
                let overview = try await source.overview()
                let model = sim.university
                let user = try #require(model.user(named: "test_autor"))
                #expect(Set(overview.courses.map(\.id)) == Set(model.courses(of: user.id).map(\.id)))
                #expect(overview.semesters.count == model.orderedSemesters.count)
                for course in overview.courses {
                    #expect(course.semesterIDs == model.courses[course.id]?.semesterIDs, "\(course.title)")
                    let content = try await source.content(of: course)
                    let expected = ExpectedContent(course: course.id, user: "test_autor", in: model)
                    #expect(content.folderIDs == Set(expected.folders.keys), "\(course.title)")
                    #expect(content.documentIDs == Set(expected.documents.keys), "\(course.title)")
                    #expect(content.failedFolderIDs.isEmpty)
                }
            }
        }
    }

    @Test("auto picks JSON:API on 6.x, which has no legacy REST")
    func autoOnSix() async throws {
        try await withSimulator(flavour: .v6) { sim async throws in
            try await withSource(Harness.configuration(sim, api: .auto)) { source in
                #expect(source.apiName == "JSON:API")
                let overview = try await source.overview()
                #expect(overview.courses.count == 5)
            }
        }
    }

    @Test("auto picks JSON:API on 5.0 too, where both exist")
    func autoOnFive() async throws {
        try await withSimulator(flavour: .v50) { sim async throws in
            try await withSource(Harness.configuration(sim, api: .auto)) { source in
                #expect(source.apiName == "JSON:API")
            }
        }
    }

    @Test("legacy REST against 6.x is a clear error")
    func legacyOnSix() async throws {
        try await withSimulator(flavour: .v6) { sim async throws in
            let error = await Harness.error { () async throws(StudIPError) in
                try await StudIP.connect(Harness.configuration(sim, api: .legacyREST))
            }
            guard case .apiUnavailable(let server, let detail) = error else {
                Issue.record("expected apiUnavailable, got \(String(describing: error))")
                return
            }
            #expect(server == sim.baseURL)
            #expect(detail.contains("Stud.IP 6"))
            #expect(error?.exitCode == 3)
        }
    }

    @Test("an installation below a path (https://host/studip) works with both APIs")
    func basePath() async throws {
        try await withSimulator(basePath: "/studip") { sim async throws in
            for api in [ClientConfiguration.API.jsonAPI, .legacyREST] {
                var configuration = Harness.configuration(sim, api: api)
                configuration.baseURL = sim.baseURL + "/"
                try await withSource(configuration) { source in
                    let overview = try await source.overview()
                    let course = try #require(overview.courses.first { $0.number == "INF-101" })
                    let content = try await source.content(of: course)
                    #expect(content.documents.count == 8)
                }
            }
        }
    }

    @Test("no Stud.IP at the URL: neither API answers")
    func noStudIP() async throws {
        try await withSimulator { sim in
            var configuration = Harness.configuration(sim)
            configuration.baseURL = sim.baseURL + "/nothing-here"
            let error = await Harness.error { () async throws(StudIPError) in
                try await StudIP.connect(configuration)
            }
            guard case .apiUnavailable = error else {
                Issue.record("expected apiUnavailable, got \(String(describing: error))")
                return
            }
        }
    }
}
