import Foundation
import StudIPKit
import StudIPModel
import TestSupport
import Testing

@testable import MetadataStore
@testable import StudIPSimulator

/// Refreshes against the simulator: the tree each API leaves in the store (issue 12, "The same tree through both
/// APIs").
@Suite("The same tree through both APIs")
struct BothAPIsTests {
    static let inf101 = "INF-101 Einführung in die Informatik"
    static let scan = "Vorlesungsfolien/Lehrbuch Kapitel 3 (Scan).pdf"

    /// `small` with INF-101's `README.txt` (root folder) restricted like the scan in "Vorlesungsfolien", and L-16,
    /// a course of test_autor whose files tool is off (fixtures-5.0.7-more Part 5).
    static func dataset() throws -> University {
        var university = try Dataset.generated(.small, seed: 1).load()
        let inf = try #require(university.courses.values.first { $0.number == "INF-101" })
        var readme = try #require(university.fileRefs(in: inf.topFolderID).first { $0.name == "README.txt" })
        readme.termsOfUseID = "NO_LICENSE"
        try university.update(readme)
        let student = try #require(university.user(named: "test_autor"))
        let rootID = "l16-root"
        university.add(
            Course(
                id: "l16", number: "L-16", title: "Ringvorlesung ohne Dateibereich", instituteID: inf.instituteID,
                semesterIDs: inf.semesterIDs,
                members: [Membership(userID: student.id, permission: "autor", mkdate: inf.mkdate)],
                topFolderID: rootID, mkdate: inf.mkdate, chdate: inf.chdate, modules: ["wiki"]))
        university.add(
            Folder(
                id: rootID, userID: student.id, parentID: "", rangeID: "l16", folderType: "RootFolder", name: "",
                mkdate: inf.mkdate, chdate: inf.mkdate))
        return university
    }

    /// The most readable folders any course of test_autor has: the listings JSON:API 5.0 needs to look in all.
    static func folderCount(_ university: University) throws -> Int {
        let student = try #require(university.user(named: "test_autor"))
        return university.courses(of: student.id).map { course in
            university.folderTree(from: course.topFolderID).filter { university.canRead(folder: $0, user: student) }
                .count
        }.max() ?? 0
    }

    static func withSource<T: Sendable>(
        _ sim: Simulator, _ api: ClientConfiguration.API, _ body: (any DocumentSource) async throws -> T
    ) async throws -> T {
        try await TestSupport.withSource(
            ClientConfiguration(
                baseURL: sim.baseURL, api: api, credentials: .basic(username: "test_autor", password: "testing")),
            body)
    }

    /// One refresh as the daemon does it: the overview, then every placed course; returns the contents by number.
    @discardableResult
    static func refresh(_ store: MetadataStore, _ source: any DocumentSource, at time: Date) async throws
        -> [String: CourseContent]
    {
        let overview = try await source.overview()
        _ = try store.applyOverview(overview, now: time)
        let placed = Set(try store.placedCourses().map(\.courseID))
        var contents: [String: CourseContent] = [:]
        for course in overview.courses where placed.contains(course.id) {
            // As the refresher does: the store keeps where the rotation through the folders stands (Stud.IP 5.0).
            let content = try await source.content(
                of: course, lastChecked: try store.restrictedChecks(courseID: course.id))
            let summary = try store.applyCourse(content, now: time)
            #expect(summary.problems.isEmpty, "\(course.title)")
            contents[course.number] = content
        }
        return contents
    }

    static func paths(_ store: MetadataStore) throws -> Set<String> {
        Set(try store.walk().map(\.path))
    }

    static func path(_ paths: Set<String>, endingWith suffix: String) -> String? {
        paths.first { $0.hasSuffix("/" + suffix) }
    }

    @Test(
        "JSON:API 5.0 shows the root's restricted document at once, the others within F refreshes: the REST tree"
    )
    func sameTreeOnFiveZero() async throws {
        try await withSimulator(.custom(try Self.dataset()), flavour: .v50) { sim async throws in
            let rest = try MetadataStore.temporary()
            _ = try await Self.withSource(sim, .legacyREST) { try await Self.refresh(rest, $0, at: now) }
            let expected = try Self.paths(rest)
            #expect(Self.path(expected, endingWith: "\(Self.inf101)/\(Self.scan)") != nil)

            let json = try MetadataStore.temporary()
            let refreshes = try Self.folderCount(sim.university)
            #expect(refreshes > 2)
            try await Self.withSource(sim, .jsonAPI) { source in
                var previous = Set<String>()
                for refresh in 1...refreshes {
                    try await Self.refresh(json, source, at: now + Double(refresh) * day)
                    let paths = try Self.paths(json)
                    #expect(paths.isSubset(of: expected), "refresh \(refresh)")
                    #expect(previous.isSubset(of: paths), "refresh \(refresh): nothing found earlier is lost")
                    if refresh == 1 {
                        #expect(Self.path(paths, endingWith: "\(Self.inf101)/README.txt") != nil)
                        #expect(Self.path(paths, endingWith: "\(Self.inf101)/\(Self.scan)") == nil)
                    }
                    previous = paths
                }
                #expect(previous == expected)
            }
        }
    }

    @Test("a restricted document deleted on Stud.IP stays until a listing looks in its folder again")
    func deletedRestrictedDocument() async throws {
        try await withSimulator(.custom(try Self.dataset()), flavour: .v50) { sim async throws in
            let model = sim.university
            let scan = try #require(model.fileRefs.values.first { $0.name == "Lehrbuch Kapitel 3 (Scan).pdf" })
            let store = try MetadataStore.temporary()
            let refreshes = try Self.folderCount(model)
            try await Self.withSource(sim, .jsonAPI) { source in
                for refresh in 1...refreshes { try await Self.refresh(store, source, at: now + Double(refresh) * day) }
                let found = try #require(Self.path(try Self.paths(store), endingWith: "\(Self.inf101)/\(Self.scan)"))

                _ = try sim.store.mutate { try $0.removeFileRef(scan.id) }
                var stayed = 0
                for refresh in 1...refreshes {
                    let contents = try await Self.refresh(store, source, at: now + Double(refreshes + refresh) * day)
                    let unchecked = try #require(contents["INF-101"]).foldersWithUncheckedRestrictedDocuments
                    let present = try Self.paths(store).contains(found)
                    #expect(present == unchecked.contains(scan.folderID), "refresh \(refresh)")
                    guard present else { break }
                    stayed += 1
                }
                #expect(stayed >= 1, "the next refresh looks in the root again, not in the scan's folder")
                #expect(!(try Self.paths(store).contains(found)))
            }
        }
    }

    @Test(
        "a course with its files tool off is an empty, complete course directory through both APIs",
        arguments: [ClientConfiguration.API.jsonAPI, .legacyREST])
    func filesToolOff(api: ClientConfiguration.API) async throws {
        try await withSimulator(.custom(try Self.dataset()), flavour: .v50) { sim async throws in
            let store = try MetadataStore.temporary()
            try await Self.withSource(sim, api) { source in
                for refresh in 1...2 {
                    let contents = try await Self.refresh(store, source, at: now + Double(refresh) * day)
                    #expect(try #require(contents["L-16"]).documents.isEmpty)
                }
            }
            let course = try #require(try store.placedCourses().first { $0.courseID == "l16" })
            #expect(course.listedAt != nil, "listed completely")
            let directory = try #require(try store.path(of: course.inode))
            #expect(directory.hasSuffix("/L-16 Ringvorlesung ohne Dateibereich"))
            #expect(try Self.paths(store).filter { $0.hasPrefix(directory + "/") }.isEmpty)
        }
    }
}
