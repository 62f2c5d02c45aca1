import Foundation
import StudIPKit
import StudIPModel
import TestSupport
import Testing

@testable import StudIPSimulator

/// JSON:API on Stud.IP 5.0: the course-wide list omits documents the user may not download and no folder
/// announces a count, so each listing of a course looks in one folder on its own — the root first, then the
/// folder looked in least recently.
@Suite("Documents the user may not download on JSON:API 5.0")
struct RestrictedDocumentsTests {
    static let scan = "Lehrbuch Kapitel 3 (Scan).pdf"

    /// `small`, with INF-101's `README.txt` in the root folder restricted like the scan in "Vorlesungsfolien".
    static func dataset() throws -> Dataset {
        var university = try Dataset.generated(.small, seed: 1).load()
        let course = try #require(university.course(numbered: "INF-101"))
        var readme = try #require(university.fileRefs(in: course.topFolderID).first { $0.name == "README.txt" })
        readme.termsOfUseID = "NO_LICENSE"
        try university.update(readme)
        return .custom(university)
    }

    @Test(
        "the first listing finds the root's restricted document, later ones every other folder's, each in 2 + S + 3C"
    )
    func rotation() async throws {
        try await withSimulator(try Self.dataset(), flavour: .v50) { sim async throws in
            let model = sim.university
            let student = try #require(model.user(named: "test_autor"))
            let inf = try #require(model.course(numbered: "INF-101"))
            let expected = ExpectedContent(course: inf.id, user: "test_autor", in: model)
            let folders = Set(expected.folders.keys)
            #expect(folders.count > 2)
            let capture = LogCapture()
            sim.resetStatistics()
            try await withSource(Harness.configuration(sim, api: .jsonAPI, logger: capture.logger)) { source in
                var lookedIn = Set<String>()
                var seen = Set<String>()
                // What the store keeps between listings: which folder was looked in when.
                var lastChecked: [String: Int64] = [:]
                for listing in 1...folders.count {
                    let retries = capture.retries
                    let overview = try await source.overview()
                    var contents: [String: CourseContent] = [:]
                    for course in overview.courses {
                        contents[course.id] = try await source.content(of: course, lastChecked: lastChecked)
                    }
                    #expect(
                        sim.served == 2 + overview.semesters.count + 3 * overview.courses.count
                            + capture.retries - retries, "listing \(listing): \(sim.statistics.snapshot().routes)")
                    sim.resetStatistics()

                    let content = try #require(contents[inf.id])
                    let unchecked = content.foldersWithUncheckedRestrictedDocuments
                    #expect(unchecked.count == folders.count - 1, "one folder per listing")
                    #expect(unchecked.isSubset(of: folders))
                    #expect(content.failedFolderIDs.isEmpty)
                    if listing == 1 {
                        #expect(unchecked == folders.subtracting([inf.topFolderID]), "the root comes first")
                        #expect(content.document(named: "README.txt")?.isDownloadable == false)
                        #expect(content.document(named: Self.scan) == nil)
                    }
                    #expect(content.foldersCheckedForTheFirstTime == folders.subtracting(unchecked))
                    for folder in folders.subtracting(unchecked) { lastChecked[folder] = Int64(listing) }
                    lookedIn.formUnion(folders.subtracting(unchecked))
                    seen.formUnion(content.documentIDs)
                    for document in content.documents {
                        let ref = try #require(expected.documents[document.id])
                        #expect(document.isDownloadable == model.canDownload(ref, user: student), "\(ref.name)")
                    }
                }
                #expect(lookedIn == folders, "every folder is looked in within F listings")
                #expect(seen == Set(expected.documents.keys), "the scan was found too")
            }
        }
    }

    @Test("listsRestrictedDocuments = false: two requests per course, restricted documents absent")
    func switchedOff() async throws {
        try await withSimulator(try Self.dataset(), flavour: .v50) { sim async throws in
            sim.resetStatistics()
            let capture = LogCapture()
            var configuration = Harness.configuration(sim, api: .jsonAPI, logger: capture.logger)
            configuration.listsRestrictedDocuments = false
            try await withSource(configuration) { source in
                let overview = try await source.overview()
                for course in overview.courses {
                    let content = try await source.content(of: course)
                    let expected = ExpectedContent(course: course.id, user: "test_autor", in: sim.university)
                    #expect(content.documentIDs == expected.downloadable, "\(course.title)")
                    #expect(content.foldersWithUncheckedRestrictedDocuments.isEmpty)
                }
                #expect(
                    sim.served == 2 + overview.semesters.count + 2 * overview.courses.count + capture.retries,
                    "\(sim.statistics.snapshot().routes)")
            }
        }
    }
}
