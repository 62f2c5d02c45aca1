import Foundation
import StudIPKit
import StudIPModel
import TestSupport
import Testing

@testable import MetadataStore
@testable import StudIPSimulator

/// Folder and document permissions in the store (issue 32, docs/metadata-store.md "Permissions"): a refresh as the
/// student test_autor against the simulator's `fixtures-5.0.7-writes` (the folders that capture found), read back
/// by node id.
@Suite("Permissions in the store")
struct PermissionsTests {
    static let autorID = "e7a0a84b161f3e8c09b4a0a2e8a58147"
    static let dozentID = "205f3efb7997a0fc9755da2b535038da"
    static let courseID = "a07535cf2f8a72df33c12ddfa4b53dde"
    static let rootID = "f7fc5ae64d2c453daa9619a820a6467e"
    static let generalID = "ca002fbae136b07e4df29e0136e3bd32"
    static let homeworkID = "ad8dc6a6162fb0fe022af4a62a15e309"

    /// `fixtures-5.0.7-writes` with a document of test_autor's and one of the lecturer's in "Allgemeiner
    /// Dateiordner", and test_autor's submission in "Hausaufgaben", which a student's listing never shows.
    static func dataset() throws -> University {
        var university = try Dataset.fixtures507Writes.load()
        for (id, name, owner, folder) in [
            ("own-upload", "Protokoll Sitzung 3.txt", autorID, generalID),
            ("lecturers-document", "Folien Vorlesung 1.pdf", dozentID, generalID),
            ("submission", "Abgabe Blatt 1.pdf", autorID, homeworkID),
        ] {
            university.add(
                FileRef(
                    id: id, fileID: id + "-file", folderID: folder, name: name, userID: owner, mimeType: "text/plain",
                    size: 5, mkdate: 1_795_853_872, chdate: 1_795_853_872, content: .bytes(Data("hallo".utf8))))
        }
        return university
    }

    static func refresh(_ sim: Simulator, _ api: ClientConfiguration.API) async throws -> MetadataStore {
        let store = try MetadataStore.temporary()
        try await TestSupport.withSource(
            ClientConfiguration(
                baseURL: sim.baseURL, api: api, credentials: .basic(username: "test_autor", password: "testing"))
        ) { source in
            _ = try store.applyOverview(try await source.overview(), now: now)
            for course in try store.placedCourses() where course.courseID == courseID {
                let remote = try #require(try await source.overview().courses.first { $0.id == course.courseID })
                let content = try await source.content(
                    of: remote, lastChecked: try store.restrictedChecks(courseID: course.courseID))
                let summary = try store.applyCourse(content, now: now)
                #expect(summary.problems.isEmpty)
                #expect(content.failedFolderIDs.isEmpty, "no listing of the homework folder was tried")
            }
        }
        return store
    }

    static func courseDirectory(_ store: MetadataStore) throws -> String {
        try #require(try store.walk().map(\.path).first { $0.hasSuffix("/12345 Test Lehrveranstaltung") })
    }

    @Test(
        "a refresh as test_autor stores what it may do in each folder and with each document",
        arguments: [ClientConfiguration.API.jsonAPI, .legacyREST])
    func refreshStoresPermissions(api: ClientConfiguration.API) async throws {
        try await withSimulator(.custom(try Self.dataset())) { sim async throws in
            let store = try await Self.refresh(sim, api)
            let course = try Self.courseDirectory(store)
            func access(_ path: String) throws -> FolderAccess {
                try #require(try store.folderAccess(inode: try store.inode(path)), "\(path)")
            }
            func flags(_ access: FolderAccess) -> [Bool] {
                [access.permissions.isReadable, access.permissions.isWritable, access.permissions.isSubfolderAllowed]
            }
            let root = try access(course)
            #expect(root.folderID == Self.rootID && root.courseID == Self.courseID && root.folderType == "RootFolder")
            #expect(flags(root) == [true, true, false])
            let general = try access(course + "/Allgemeiner Dateiordner")
            #expect(general.folderID == Self.generalID && general.folderType == "StandardFolder")
            #expect(flags(general) == [true, true, false])
            #expect(
                flags(try access(course + "/13. Klausur am Wed., 07-27-22, 10:15 - 12:00")) == [true, false, false])
            let group = try access(course + "/Dateiordner der Gruppe: Studierende")
            #expect(flags(group) == [true, true, true] && !group.isHomework)

            let own = try #require(
                try store.document(inode: try store.inode(course + "/Allgemeiner Dateiordner/Protokoll Sitzung 3.txt")))
            #expect(own.id == "own-upload" && own.folderID == Self.generalID && own.courseID == Self.courseID)
            #expect(own.fileID == "own-upload-file")
            #expect(own.isWritable && own.isEditable)
            let lecturers = try #require(
                try store.document(inode: try store.inode(course + "/Allgemeiner Dateiordner/Folien Vorlesung 1.pdf")))
            #expect(!lecturers.isWritable && !lecturers.isEditable)

            #expect(
                try store.folderAccess(
                    inode: try store.inode(course + "/Allgemeiner Dateiordner/Protokoll Sitzung 3.txt")) == nil)
            #expect(try store.folderAccess(inode: Node.rootInode) == nil)

            let homework = course + "/Hausaufgaben"
            if api == .jsonAPI {
                let access = try access(homework)
                #expect(access.isHomework && access.folderID == Self.homeworkID)
                #expect(flags(access) == [false, true, false])
                let node = try #require(try store.node(inode: try store.inode(homework)))
                #expect(node.kind == .directory)
                #expect(try store.children(of: node.inode).isEmpty, "a student sees no submission, not even their own")
            } else {
                // Legacy REST shows an unreadable folder without id or name (docs/client.md, "Permissions").
                #expect(throws: StoreError.self) { try store.inode(homework) }
            }
        }
    }

    @Test("the permissions follow Stud.IP: a refresh after the lecturer changed them rewrites the rows")
    func permissionsChange() async throws {
        try await withSimulator(.custom(try Self.dataset())) { sim async throws in
            let store = try await Self.refresh(sim, .jsonAPI)
            let general = try Self.courseDirectory(store) + "/Allgemeiner Dateiordner"
            #expect(try store.folderAccess(inode: try store.inode(general))?.permissions.isWritable == true)
            // The date folder's rule made "Allgemeiner Dateiordner" read-only for students.
            _ = try sim.store.mutate { university in
                var folder = try #require(university.folders[Self.generalID])
                folder.folderType = "CourseDateFolder"
                folder.dataContent = #"{"termin_id":"9ff59e18112a686c553412761a5df85c","permission":5}"#
                university.add(folder)
            }
            try await TestSupport.withSource(
                ClientConfiguration(
                    baseURL: sim.baseURL, api: .jsonAPI,
                    credentials: .basic(username: "test_autor", password: "testing"))
            ) { source in
                let course = try #require(try await source.overview().courses.first { $0.id == Self.courseID })
                _ = try store.applyCourse(
                    try await source.content(of: course, lastChecked: try store.restrictedChecks(courseID: course.id)),
                    now: now + day)
            }
            let access = try #require(try store.folderAccess(inode: try store.inode(general)))
            #expect(access.folderType == "CourseDateFolder" && !access.permissions.isWritable)
        }
    }
}
