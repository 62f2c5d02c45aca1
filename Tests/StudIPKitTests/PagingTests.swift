import Foundation
import StudIPKit
import StudIPModel
import TestSupport
import Testing

@testable import StudIPSimulator

/// Paging ends on totals, with the server's defaults (JSON:API 30, legacy 20) and with 1,000 per page.
@Suite("Paging")
struct PagingTests {
    static let semesterID = "5e0000000000000000000000000000a1"
    static let laterSemesterID = "5e0000000000000000000000000000a2"
    static let bigFolder = "f0000000000000000000000000000big"
    static let courseCount = 31
    static let documentCount = 1_001

    /// 31 courses for test_autor in one semester; the first has a folder with 1,001 documents.
    static func university() -> University {
        var university = University(installationID: "paging")
        let student = User(
            id: "u0000000000000000000000000000001", username: "test_autor", password: "testing",
            givenName: "Test", familyName: "Autor", perms: "autor", email: "autor@example.org")
        let lecturer = User(
            id: "u0000000000000000000000000000002", username: "test_dozent", password: "testing",
            givenName: "Test", familyName: "Dozent", perms: "dozent", email: "dozent@example.org")
        university.add(student)
        university.add(lecturer)
        university.add(
            Semester(
                id: semesterID, title: "WS 2026/27", begin: 1_790_805_600, end: 1_806_530_399,
                lecturesBegin: 1_791_756_000, lecturesEnd: 1_801_868_399))
        university.add(
            Semester(
                id: laterSemesterID, title: "SS 2027", begin: 1_806_530_400, end: 1_822_427_999,
                lecturesBegin: 1_807_135_200, lecturesEnd: 1_815_343_199))
        for index in 0..<courseCount {
            let courseID = String(format: "c%031d", index)
            let rootID = String(format: "r%031d", index)
            university.add(
                Course(
                    id: courseID, number: String(format: "P-%03d", index), title: "Course \(index)",
                    instituteID: "i0000000000000000000000000000001", semesterIDs: [semesterID],
                    members: [
                        Membership(userID: lecturer.id, permission: "dozent", mkdate: 1_790_900_000),
                        Membership(userID: student.id, permission: "autor", mkdate: 1_790_900_000 + index),
                    ],
                    topFolderID: rootID, mkdate: 1_790_900_000, chdate: 1_790_900_000))
            university.add(
                Folder(
                    id: rootID, userID: lecturer.id, parentID: "", rangeID: courseID, folderType: "RootFolder",
                    name: "", mkdate: 1_790_900_000, chdate: 1_790_900_000))
        }
        university.add(
            Folder(
                id: bigFolder, userID: lecturer.id, parentID: String(format: "r%031d", 0),
                rangeID: String(format: "c%031d", 0), folderType: "StandardFolder", name: "Scans",
                mkdate: 1_790_900_100, chdate: 1_790_900_100))
        for index in 0..<documentCount {
            university.add(
                FileRef(
                    id: String(format: "d%031d", index), fileID: String(format: "e%031d", index), folderID: bigFolder,
                    name: "scan \(index).txt", userID: lecturer.id, mimeType: "text/plain", size: 10 + index,
                    mkdate: 1_790_900_200, chdate: 1_790_900_200, content: .bytes(Data("x".utf8))))
        }
        return university
    }

    static func walk(
        _ sim: Simulator, api: ClientConfiguration.API, pageSize: Int
    ) async throws -> (overview: RemoteOverview, big: CourseContent, requests: Int) {
        var configuration = Harness.configuration(sim, api: api)
        configuration.pageSize = pageSize
        return try await withSource(configuration) { source in
            let overview = try await source.overview()
            let first = try #require(overview.courses.first { $0.number == "P-000" })
            let big = try await source.content(of: first)
            return (overview, big, source.requestCount)
        }
    }

    @Test("JSON:API with 1,000 per page: one request for 31 courses, two for 1,001 documents")
    func jsonAPIThousand() async throws {
        try await withSimulator(.custom(Self.university()), flavour: .v55) { sim async throws in
            let walk = try await Self.walk(sim, api: .jsonAPI, pageSize: 1000)
            #expect(walk.overview.courses.count == Self.courseCount)
            #expect(walk.big.documents.count == Self.documentCount)
            #expect(Set(walk.big.documents.map(\.size)).count == Self.documentCount)
            // users/me, semesters, 1 course page per semester; folders 1 page, file-refs 2 pages.
            #expect(walk.requests == 2 + 2 + 1 + 2)
            #expect(sim.served == walk.requests)
        }
    }

    @Test("JSON:API with Stud.IP's default of 30: 2 course pages, 34 document pages, despite the wrong `last` link")
    func jsonAPIThirty() async throws {
        try await withSimulator(.custom(Self.university()), flavour: .v55) { sim async throws in
            let walk = try await Self.walk(sim, api: .jsonAPI, pageSize: 30)
            #expect(walk.overview.courses.count == Self.courseCount)
            #expect(walk.big.documents.count == Self.documentCount)
            let documentPages = (Self.documentCount + 29) / 30
            // users/me, semesters, 2 + 1 course pages; folders 1 page, file-refs 34 pages.
            #expect(walk.requests == 1 + 1 + 3 + 1 + documentPages)
        }
    }

    @Test("legacy REST with its default of 20 and `next` pointing to the last page itself")
    func legacyTwenty() async throws {
        try await withSimulator(.custom(Self.university()), flavour: .v55) { sim async throws in
            let walk = try await Self.walk(sim, api: .legacyREST, pageSize: 20)
            #expect(walk.overview.courses.count == Self.courseCount)
            #expect(walk.big.documents.count == Self.documentCount, "file_refs arrive inline, unpaged")
            // user, semesters, 2 + 1 course pages; top_folder, folder/<big>.
            #expect(walk.requests == 1 + 1 + 3 + 2)
        }
    }

    @Test("legacy REST with 1,000 per page")
    func legacyThousand() async throws {
        try await withSimulator(.custom(Self.university()), flavour: .v55) { sim async throws in
            let walk = try await Self.walk(sim, api: .legacyREST, pageSize: 1000)
            #expect(walk.overview.courses.count == Self.courseCount)
            #expect(walk.requests == 1 + 1 + 2 + 2)
        }
    }

    @Test("a server that ignores the limit and sends everything at once ends paging after one page")
    func serverIgnoresLimit() async throws {
        try await withSimulator(.custom(Self.university()), flavour: .v55) { sim async throws in
            // Both semesters and total 2, whatever offset and limit were asked for.
            let body = """
                {"meta":{"page":{"offset":0,"limit":30,"total":2}},"data":[
                {"type":"semesters","id":"\(Self.semesterID)","attributes":{"title":"WS 2026/27",
                "start":"2026-10-01T00:00:00+02:00","end":"2027-03-31T23:59:59+02:00"}},
                {"type":"semesters","id":"\(Self.laterSemesterID)","attributes":{"title":"SS 2027",
                "start":"2027-04-01T00:00:00+02:00","end":"2027-09-30T23:59:59+02:00"}}]}
                """
            sim.inject(Fault(action: .body(body), pathContains: "v1/semesters"))
            var configuration = Harness.configuration(sim, api: .jsonAPI)
            configuration.pageSize = 10
            try await withSource(configuration) { source in
                let overview = try await source.overview()
                #expect(overview.semesters.map(\.id) == [Self.semesterID, Self.laterSemesterID])
                #expect(sim.statistics.snapshot().routes["fault"] == 1, "one request for the semesters")
                #expect(overview.courses.count == Self.courseCount)
                // users/me, semesters, 4 pages of courses in the first semester, 1 empty page in the second.
                #expect(source.requestCount == 1 + 1 + 4 + 1)
            }
        }
    }

    @Test("a server that ignores the offset and repeats its first page is an error, not an endless loop")
    func serverIgnoresOffset() async throws {
        try await withSimulator(.custom(Self.university()), flavour: .v55) { sim async throws in
            let body = """
                {"meta":{"page":{"offset":0,"limit":1,"total":2}},"data":[
                {"type":"semesters","id":"\(Self.semesterID)","attributes":{"title":"WS 2026/27",
                "start":"2026-10-01T00:00:00+02:00","end":"2027-03-31T23:59:59+02:00"}}]}
                """
            sim.inject(Fault(action: .body(body), pathContains: "v1/semesters"))
            var configuration = Harness.configuration(sim, api: .jsonAPI)
            configuration.pageSize = 1
            try await withSource(configuration) { source in
                let error = await Harness.error { () async throws(StudIPError) in try await source.overview() }
                guard case .malformedResponse(let what, _) = error else {
                    Issue.record("expected malformedResponse, got \(String(describing: error))")
                    return
                }
                #expect(what == "the semesters")
                #expect(sim.statistics.snapshot().routes["fault"] == 2, "stopped at the first repeat")
            }
        }
    }
}
