import Foundation
import StudIPKit
import StudIPModel
import TestSupport
import Testing

@testable import StudIPSimulator

/// The `small` dataset: every hostile case of API.md §7, looked up by name (GeneratedSmall.swift).
@Suite("small: the hostile cases")
struct HostileCasesTests {
    struct Walk: Sendable {
        var overview: RemoteOverview
        var contents: [String: CourseContent]
    }

    static func walk(_ sim: Simulator, api: ClientConfiguration.API, user: String = "test_autor") async throws -> Walk {
        try await withSource(Harness.configuration(sim, user: user, api: api)) { source in
            let overview = try await source.overview()
            var contents: [String: CourseContent] = [:]
            for course in overview.courses { contents[course.number] = try await source.content(of: course) }
            return Walk(overview: overview, contents: contents)
        }
    }

    static let small = Dataset.generated(.small, seed: 1)

    @Test(
        "both APIs list exactly the readable folders and all their documents",
        arguments: [
            ClientConfiguration.API.jsonAPI, .legacyREST,
        ])
    func completeAndOnlyReadable(api: ClientConfiguration.API) async throws {
        try await withSimulator(Self.small, flavour: .v55) { sim async throws in
            let walk = try await Self.walk(sim, api: api)
            let model = sim.university
            #expect(!walk.contents.isEmpty)
            for content in walk.contents.values {
                let expected = ExpectedContent(course: content.course.id, user: "test_autor", in: model)
                #expect(content.folderIDs == Set(expected.folders.keys), "\(content.course.title)")
                #expect(content.documentIDs == Set(expected.documents.keys), "\(content.course.title)")
                #expect(content.failedFolderIDs.isEmpty)
                #expect(content.foldersWithUncheckedRestrictedDocuments.isEmpty, "complete on 5.5 and legacy REST")
                #expect(content.problems.isEmpty)
                for folder in content.folders where folder.parentID != nil {
                    #expect(folder.name == expected.folders[folder.id]?.name, "names pass through unchanged")
                    #expect(folder.parentID == expected.folders[folder.id]?.parentID)
                }
                for document in content.documents {
                    let ref = try #require(expected.documents[document.id])
                    #expect(document.name == ref.name, "names pass through unchanged")
                    #expect(document.size == Int64(ref.size))
                    #expect(document.mimeType == ref.mimeType)
                    #expect(document.fileID == ref.fileID)
                    #expect(document.license == ref.termsOfUseID)
                    #expect(document.isDownloadable == expected.downloadable.contains(ref.id), "\(ref.name)")
                    #expect(document.changed == Date(timeIntervalSince1970: TimeInterval(ref.chdate)))
                    #expect(document.created == Date(timeIntervalSince1970: TimeInterval(ref.mkdate)))
                }
            }
        }
    }

    @Test(
        "unreadable and hidden folders are absent for students, present for tutors",
        arguments: [
            ClientConfiguration.API.jsonAPI, .legacyREST,
        ])
    func restrictedFolders(api: ClientConfiguration.API) async throws {
        try await withSimulator(Self.small, flavour: .v55) { sim async throws in
            let student = try #require(try await Self.walk(sim, api: api).contents["INF-101"])
            #expect(student.folder(named: "Abgaben") == nil, "visible but unreadable: skipped")
            #expect(student.folder(named: "Tutorenmaterial") == nil, "hidden from students")
            #expect(student.document(named: "Abgabe Gruppe 1.pdf") == nil)
            #expect(student.folder(named: "Leerer Ordner") != nil)

            let tutor = try #require(try await Self.walk(sim, api: api, user: "test_tutor").contents["INF-101"])
            #expect(tutor.folder(named: "Abgaben") != nil)
            #expect(tutor.folder(named: "Tutorenmaterial")?.folderType == "HiddenFolder")
            #expect(tutor.document(named: "Musterlösung 1.txt") != nil)
        }
    }

    @Test(
        "documents the student may not download are present with isDownloadable false",
        arguments: [
            ClientConfiguration.API.jsonAPI, .legacyREST,
        ])
    func nonDownloadable(api: ClientConfiguration.API) async throws {
        try await withSimulator(Self.small, flavour: .v55) { sim async throws in
            let content = try #require(try await Self.walk(sim, api: api).contents["INF-101"])
            let scan = try #require(content.document(named: "Lehrbuch Kapitel 3 (Scan).pdf"))
            #expect(!scan.isDownloadable)
            #expect(scan.license == "NO_LICENSE")
            #expect(scan.folderID == content.folder(named: "Vorlesungsfolien")?.id)
            #expect(content.document(named: "README.txt")?.isDownloadable == true)
        }
    }

    @Test("legacy REST marks documents hosted elsewhere; JSON:API cannot tell")
    func links() async throws {
        try await withSimulator(Self.small, flavour: .v55) { sim async throws in
            let legacy = try await Self.walk(sim, api: .legacyREST)
            let names = ["Online-Skript (extern).txt", "Linkliste.txt"]
            let inf = try #require(legacy.contents["INF-101"])
            for name in names { #expect(inf.document(named: name)?.isLink == true, "\(name)") }
            #expect(inf.document(named: "README.txt")?.isLink == false)
            let group = try #require(legacy.contents[""])
            #expect(group.document(named: "Formelsammlung (extern).txt")?.isLink == true)

            let json = try await Self.walk(sim, api: .jsonAPI)
            let jsonInf = try #require(json.contents["INF-101"])
            for name in names { #expect(jsonInf.document(named: name)?.isLink == false, "\(name)") }
        }
    }

    @Test("open-ended and multi-semester courses", arguments: [ClientConfiguration.API.jsonAPI, .legacyREST])
    func semesters(api: ClientConfiguration.API) async throws {
        try await withSimulator(Self.small, flavour: .v55) { sim async throws in
            let overview = try await Self.walk(sim, api: api).overview
            let ids = overview.semesters.map(\.id)
            #expect(ids.count == 3)
            let group = try #require(overview.course(titled: "Lerngruppe Analysis"))
            #expect(group.semesterIDs.isEmpty)
            #expect(group.number.isEmpty)
            let project = try #require(overview.course(titled: "Projektseminar: Robotik"))
            #expect(project.semesterIDs == [ids[1], ids[2]])
            let algebra = try #require(overview.course(titled: "Linear Algebra I"))
            #expect(algebra.semesterIDs == [ids[1]])
            #expect(algebra.number == "MATH-110", "trailing blank trimmed")
            #expect(overview.course(titled: "Analysis I")?.semesterIDs == [ids[0]])
            #expect(overview.course(titled: "Kolloquium der Arbeitsgruppe") == nil, "not a member")
            #expect(overview.courses.count == 5)
        }
    }

    @Test(
        "odd id lengths and hostile names pass through unchanged",
        arguments: [
            ClientConfiguration.API.jsonAPI, .legacyREST,
        ])
    func oddIDsAndNames(api: ClientConfiguration.API) async throws {
        try await withSimulator(Self.small, flavour: .v55) { sim async throws in
            let content = try #require(try await Self.walk(sim, api: api).contents["INF-101"])
            #expect(content.document(named: "Kurze und lange ID 8.txt")?.id.count == 8)
            #expect(content.document(named: "Kurze und lange ID 40.txt")?.id.count == 40)
            let shortFolder = try #require(content.folder(named: "Kurze Ordner-ID"))
            #expect(shortFolder.id.count == 8)
            #expect(content.documents.contains { $0.name == "inside.txt" && $0.folderID == shortFolder.id })
            for name in [
                ".", "..", "bell\u{1}char.txt", "tab\tname.txt", "line\nbreak.txt", "Party 🎉.pdf",
                "Klausur WS 2025/26.pdf", "\u{DC}bung.txt", "Notizen", "LIESMICH",
            ] {
                #expect(content.documents.contains { $0.name == name }, "\(name.debugDescription)")
            }
            let composed = content.documents.filter {
                $0.name.unicodeScalars.elementsEqual("\u{DC}bung.txt".unicodeScalars)
            }
            let decomposed = content.documents.filter {
                $0.name.unicodeScalars.elementsEqual("U\u{308}bung.txt".unicodeScalars)
            }
            #expect(composed.count == 1 && decomposed.count == 1, "NFC and NFD names stay distinct bytes")
            #expect(content.documents.filter { $0.name == "Folien.pdf" }.count == 2, "duplicates kept")
            #expect(content.folders.filter { $0.name == "Material" }.count == 2)
            #expect(content.folder(named: "..") != nil)
            #expect(content.folder(named: "Übungen 1/2") != nil)
            #expect(content.document(named: "Notizen")?.mimeType == "0", "odd MIME types as sent")
            let orphan = try #require(content.document(named: "Altes Skript.pdf"))
            if api == .jsonAPI { #expect(orphan.ownerName == "Hans-Peter Ehemalig", "deleted owner's name") }
        }
    }
}
