import Foundation
import StudIPKit
import StudIPModel
import TestSupport
import Testing

@testable import StudIPSimulator

/// The captured Stud.IP 5.0.7 installation through both APIs: ids, names, sizes and dates must be those of
/// `fixtures-5.0.7/demo_manifest.json`, and both APIs must describe the same university.
@Suite("Fixtures 5.0.7 through both APIs")
struct FixtureTests {
    static let autorID = "e7a0a84b161f3e8c09b4a0a2e8a58147"
    static let inf101 = "29f7bd5e79910822b1be93be3c53a72c"
    static let rootFolder = "2857ad97a2ea169cfcd40e47f8a26b1c"

    /// INF-101's folders from the manifest: id → (name, parent).
    static let folders: [String: (String, String?)] = [
        rootFolder: ("", nil),
        "642289635137e33b0c9539a51e405829": ("Vorlesungsfolien", rootFolder),
        "bc93d53feb18d93c26f8a320ce3d46f7": ("Archiv 2025", "642289635137e33b0c9539a51e405829"),
        "4e107a3e74b5a1e14c92af681110bb03": ("Übungsblätter", rootFolder),
        "40f3d4ecbb7dd2b3e724970b9f9b9ed5": ("Leerer Ordner", rootFolder),
    ]

    struct ManifestDocument {
        var id, fileID, name, folderID, mimeType: String
        var size: Int64
        var chdate: TimeInterval
    }

    /// INF-101's documents from the manifest.
    static let documents: [ManifestDocument] = [
        .init(
            id: "346b96b07721d0eb6363af88b43cb9e1", fileID: "442d8c2e3ae41addeeb8cee35536c599", name: "README.txt",
            folderID: rootFolder, mimeType: "text/plain", size: 62, chdate: 1_792_051_500),
        .init(
            id: "21805d9a8810dc1b904d88888b945788", fileID: "22c199dd80495a5873f45f4e0ff504e0",
            name: "Kapitel 1 - Einleitung.pdf", folderID: "642289635137e33b0c9539a51e405829",
            mimeType: "application/pdf", size: 594, chdate: 1_792_051_560),
        .init(
            id: "f62fdf1e2fbc239f27924bbced876f77", fileID: "bb4250c8e519f7a4b9600dca517d775d",
            name: "Kapitel 2 - Grundlagen.pdf", folderID: "642289635137e33b0c9539a51e405829",
            mimeType: "application/pdf", size: 594, chdate: 1_792_051_620),
        .init(
            id: "4c89d9e929256805896efe1317ed157e", fileID: "7a15f9533fb5b5a14a010d8ed56160e0", name: "folien_2025.md",
            folderID: "bc93d53feb18d93c26f8a320ce3d46f7", mimeType: "text/markdown", size: 45, chdate: 1_792_051_680),
        .init(
            id: "514fd500a2e4505f32aa939245044f6c", fileID: "5e8b0e4e3b275c9a9844e18d9f8afc3e",
            name: "Übungsblatt 1 – Lösungen.txt", folderID: "4e107a3e74b5a1e14c92af681110bb03",
            mimeType: "text/plain", size: 49, chdate: 1_792_051_740),
        .init(
            id: "07fbce1a52215afb98801a5a046193ed", fileID: "f96fa799d65a3167a0dad00db88cef10", name: "diagramm.png",
            folderID: "4e107a3e74b5a1e14c92af681110bb03", mimeType: "image/png", size: 277, chdate: 1_792_051_800),
        .init(
            id: "cd5d966516fe50ddfa2579a4f36aef6f", fileID: "9c631ae5c77bcd3c54efa0d1475ef068",
            name: "daten (groß).bin", folderID: "4e107a3e74b5a1e14c92af681110bb03",
            mimeType: "application/octet-stream", size: 1_572_987, chdate: 1_792_051_860),
        .init(
            id: "fabffffbef47c0077d96b5625c9e5c4d", fileID: "9e63375f6e9ea3caba84ff4e476cfeb6", name: "leer.txt",
            folderID: "4e107a3e74b5a1e14c92af681110bb03", mimeType: "text/plain", size: 0, chdate: 1_792_051_920),
    ]

    static let apis: [ClientConfiguration.API] = [.jsonAPI, .legacyREST]

    @Test("test_autor's overview: user, semesters, five courses with their semesters", arguments: apis)
    func studentOverview(api: ClientConfiguration.API) async throws {
        try await withSimulator { sim in
            try await withSource(Harness.configuration(sim, api: api)) { source in
                let overview = try await source.overview()
                #expect(
                    overview.user
                        == RemoteUser(id: Self.autorID, username: "test_autor", displayName: "Testaccount Autor"))
                let model = sim.university
                #expect(overview.semesters.map(\.id) == model.orderedSemesters.map(\.id))
                #expect(overview.semesters.map(\.title) == ["WS 2021/2022", "SS 2022", "SS 2026", "WS 2026/27"])
                #expect(
                    overview.semesters.first?.begin
                        == Date(timeIntervalSince1970: TimeInterval(model.orderedSemesters[0].begin)))

                #expect(overview.courses.count == 5)
                for course in overview.courses {
                    let expected = try #require(model.courses[course.id])
                    #expect(course.semesterIDs == expected.semesterIDs, "\(course.title)")
                    #expect(course.title == expected.title)
                    #expect(course.number == expected.number.trimmingCharacters(in: .whitespaces))
                }
                let group = try #require(overview.course(titled: "Test Studiengruppe"))
                #expect(group.isOpenEnded)
                #expect(group.number.isEmpty)
                let inf = try #require(overview.courses.first { $0.id == Self.inf101 })
                #expect(inf.semesterIDs == ["3f2e08d1db6da3e65754e0a193bdb775"])
                #expect(inf.number == "INF-101")
                #expect(inf.webURL == "\(sim.baseURL)/dispatch.php/course/overview?cid=\(Self.inf101)")
                #expect(overview.problems.isEmpty)
            }
        }
    }

    @Test("INF-101's folders and documents equal the manifest", arguments: apis)
    func inf101Content(api: ClientConfiguration.API) async throws {
        try await withSimulator { sim in
            try await withSource(Harness.configuration(sim, api: api)) { source in
                let overview = try await source.overview()
                let course = try #require(overview.courses.first { $0.id == Self.inf101 })
                let content = try await source.content(of: course)
                #expect(content.rootFolderID == Self.rootFolder)
                #expect(content.failedFolderIDs.isEmpty)
                #expect(content.problems.isEmpty)
                #expect(content.folderIDs == Set(Self.folders.keys))
                for folder in content.folders where folder.id != Self.rootFolder {
                    #expect(folder.name == Self.folders[folder.id]?.0)
                    #expect(folder.parentID == Self.folders[folder.id]?.1)
                    #expect(folder.folderType == "StandardFolder")
                }
                #expect(content.folders.first { $0.id == Self.rootFolder }?.parentID == nil)
                #expect(content.documents.count == Self.documents.count)
                for expected in Self.documents {
                    let document = try #require(content.documents.first { $0.id == expected.id }, "\(expected.name)")
                    #expect(document.name == expected.name)
                    #expect(document.fileID == expected.fileID)
                    #expect(document.folderID == expected.folderID)
                    #expect(document.mimeType == expected.mimeType)
                    #expect(document.size == expected.size)
                    #expect(document.changed == Date(timeIntervalSince1970: expected.chdate))
                    #expect(document.isDownloadable)
                    #expect(!document.isLink)
                    #expect(
                        document.webURL
                            == "\(sim.baseURL)/dispatch.php/file/details/\(expected.id)?cid=\(Self.inf101)")
                }
            }
        }
    }

    @Test("root@studip sees the courses it is a member of, with their semesters", arguments: apis)
    func rootOverview(api: ClientConfiguration.API) async throws {
        try await withSimulator { sim in
            try await withSource(Harness.configuration(sim, user: "root@studip", api: api)) { source in
                let overview = try await source.overview()
                let model = sim.university
                let root = try #require(model.user(named: "root@studip"))
                #expect(overview.user.id == root.id)
                let expected = model.courses(of: root.id)
                #expect(Set(overview.courses.map(\.id)) == Set(expected.map(\.id)))
                for course in overview.courses {
                    #expect(course.semesterIDs == model.courses[course.id]?.semesterIDs, "\(course.title)")
                }
                let inf = try #require(overview.courses.first { $0.id == Self.inf101 })
                let content = try await source.content(of: inf)
                #expect(content.documentIDs == Set(Self.documents.map(\.id)))
            }
        }
    }

    /// Both APIs describe the same university, except for what one of them cannot know:
    /// - the root folder's name: JSON:API reports the course's full name ("Vorlesung: INF-101 …"), legacy REST
    ///   the stored column (""); CampusFS never uses it;
    /// - course lecturers: only legacy REST lists them inline;
    /// - document owners: JSON:API names every uploader ("Family, Given"), legacy REST only sends ids, which
    ///   the client resolves for lecturers and the user ("Given Family");
    /// - `isLink`: only legacy REST says which documents are hosted elsewhere (none in these fixtures);
    /// - `foldersWithUncheckedRestrictedDocuments` and `foldersCheckedForTheFirstTime`: JSON:API on 5.0 looks in
    ///   one folder per listing for documents the user may not download (none in these fixtures), legacy REST lists
    ///   every folder;
    /// - whether the user may create subfolders: legacy REST has no flag, and the client allows it only in a writable
    ///   group folder (docs/client.md, "Permissions"), where JSON:API also says so for lecturers elsewhere.
    @Test("JSON:API and legacy REST produce the same overview and content", arguments: ["test_autor", "root@studip"])
    func bothAPIsAgree(user: String) async throws {
        try await withSimulator { sim in
            let json = try await Self.everything(sim, user: user, api: .jsonAPI)
            let legacy = try await Self.everything(sim, user: user, api: .legacyREST)
            #expect(json.overview == legacy.overview)
            #expect(json.contents.count == legacy.contents.count)
            for (lhs, rhs) in zip(json.contents, legacy.contents) {
                #expect(lhs == rhs, "\(lhs.course.title)")
            }
        }
    }

    private static func everything(
        _ sim: Simulator, user: String, api: ClientConfiguration.API
    ) async throws -> (overview: RemoteOverview, contents: [CourseContent]) {
        try await withSource(Harness.configuration(sim, user: user, api: api)) { source in
            var overview = try await source.overview()
            overview.courses.sort { $0.id < $1.id }
            for index in overview.courses.indices { overview.courses[index].lecturers = [] }
            var contents: [CourseContent] = []
            for course in overview.courses {
                var content = try await source.content(of: course)
                content.foldersWithUncheckedRestrictedDocuments = []
                content.foldersCheckedForTheFirstTime = []
                content.folders = content.folders.map { folder in
                    var folder = folder
                    if folder.parentID == nil { folder.name = "" }
                    folder.permissions.isSubfolderAllowed = false
                    return folder
                }.sorted { $0.id < $1.id }
                content.documents = content.documents.map { document in
                    var document = document
                    document.ownerName = ""
                    return document
                }.sorted { $0.id < $1.id }
                contents.append(content)
            }
            return (overview, contents)
        }
    }
}
