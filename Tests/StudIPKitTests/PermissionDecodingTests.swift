import Foundation
import StudIPModel
import StudIPWire
import Testing

/// Folder and document permissions (issue 32) decoded from what Stud.IP 5.0.7 sent the student test_autor and the
/// lecturer test_dozent (Fixtures/studip-5.0.7-writes, README there, step 1 and its table of folders).
@Suite("Permissions from the 5.0.7 write captures")
struct PermissionDecodingTests {
    static let autorID = "e7a0a84b161f3e8c09b4a0a2e8a58147"
    static let dozentID = "205f3efb7997a0fc9755da2b535038da"
    static let course = RemoteCourse(
        id: "a07535cf2f8a72df33c12ddfa4b53dde", number: "12345", title: "Test Lehrveranstaltung", semesterIDs: [])
    static let root = "f7fc5ae64d2c453daa9619a820a6467e"
    static let general = "ca002fbae136b07e4df29e0136e3bd32"
    static let dateFolder = "012cb91a42cf85e5fafdd84e54ed2ec3"
    static let groupFolder = "df122112a21812ff4ffcf1965cb48fc3"
    static let homework = "ad8dc6a6162fb0fe022af4a62a15e309"
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Fixtures/studip-5.0.7-writes")

    static func body(_ name: String) throws -> JSONValue {
        try JSONValue.parse(Data(contentsOf: fixtures.appending(path: "\(name).json")), what: name)
    }

    static func installation() throws -> Installation { try Installation("http://127.0.0.1:8080") }

    /// The course tree JSON:API's walk builds from a captured `courses/{id}/folders`.
    static func jsonAPITree(_ name: String) throws -> CourseTree {
        let format = JSONAPIFormat(installation: try installation())
        let folders = try #require(try body(name)["data"]?.array).map { format.folder($0, courseID: course.id) }
        return try format.readableTree(folders, course: course, label: name)
    }

    static func byID(_ folders: [RemoteFolder]) -> [String: RemoteFolder] {
        Dictionary(uniqueKeysWithValues: folders.map { ($0.id, $0) })
    }

    @Test(
        "JSON:API, test_autor: root and the general folder writable, the date folder not, subfolders only in the group folder, the homework folder kept"
    )
    func studentsFolders() throws {
        let tree = try Self.jsonAPITree("w1_course_folders")
        let folders = Self.byID(tree.content.folders)
        #expect(Set(folders.keys) == [Self.root, Self.general, Self.dateFolder, Self.groupFolder, Self.homework])
        let flags = folders.mapValues {
            [$0.permissions.isReadable, $0.permissions.isWritable, $0.permissions.isSubfolderAllowed]
        }
        #expect(flags[Self.root] == [true, true, false])
        #expect(flags[Self.general] == [true, true, false])
        #expect(flags[Self.dateFolder] == [true, false, false])
        #expect(flags[Self.groupFolder] == [true, true, true])
        #expect(flags[Self.homework] == [false, true, false])
        let homework = try #require(folders[Self.homework])
        #expect(homework.isUnreadableHomework && homework.folderType == "HomeworkFolder")
        #expect(homework.parentID == Self.root && homework.name == "Hausaufgaben")
        #expect(folders.values.filter(\.isUnreadableHomework).map(\.id) == [Self.homework])
        // Its listing answers 403 to a student (`w1_folder_homework_demo_file_refs`): never asked for.
        #expect(!tree.foldersWithoutCount().map(\.id).contains(Self.homework))
        #expect(tree.foldersWithoutCount().count == 4)
    }

    @Test("JSON:API, test_dozent: the same folders, all readable, subfolders everywhere but in the homework folder")
    func lecturersFolders() throws {
        let folders = Self.byID(try Self.jsonAPITree("w1_course_folders_dozent").content.folders)
        #expect(folders.count == 5)
        #expect(folders.values.allSatisfy { $0.permissions.isReadable && $0.permissions.isWritable })
        #expect(folders.values.filter { !$0.permissions.isSubfolderAllowed }.map(\.id) == [Self.homework])
        #expect(!(try #require(folders[Self.homework]).isUnreadableHomework))
    }

    @Test(
        "JSON:API: a homework folder created later is kept too; other unreadable folders and what lies below stay out")
    func unreadableFolders() throws {
        let folders = Self.byID(try Self.jsonAPITree("w6_course_folders").content.folders)
        #expect(folders.values.filter(\.isUnreadableHomework).count == 2)
        #expect(folders["e10ff5681ffd759098309b555341bbea"]?.name == "Abgabe Übungsblatt 1")

        // An unreadable folder of another type, and a folder below the homework folder (which a student cannot
        // list, so the walk must not show it either).
        let format = JSONAPIFormat(installation: try Self.installation())
        var listed = try #require(try Self.body("w1_course_folders")["data"]?.array).map {
            format.folder($0, courseID: Self.course.id)
        }
        let dated = try #require(listed.firstIndex { $0.id == Self.dateFolder })
        listed[dated].isReadable = false
        listed[dated].folder?.permissions.isReadable = false
        var below = listed[dated]
        below.id = "below-homework"
        below.parentID = Self.homework
        below.isReadable = true
        below.folder?.id = "below-homework"
        below.folder?.permissions.isReadable = true
        listed.append(below)
        let tree = try format.readableTree(listed, course: Self.course, label: "edited")
        #expect(Set(tree.content.folders.map(\.id)) == [Self.root, Self.general, Self.groupFolder, Self.homework])
    }

    @Test("JSON:API file-refs: test_autor may change its own upload, not the lecturer's document")
    func documentFlags() throws {
        let format = JSONAPIFormat(installation: try Self.installation())
        func document(_ name: String) throws -> RemoteDocument {
            let element = try #require(try Self.body(name)["data"])
            return try #require(format.document(element, courseID: Self.course.id).document)
        }
        let own = try document("w2_upload_file_ref")
        #expect(own.name == "Protokoll Sitzung 3.txt")
        #expect(own.isWritable && own.isEditable)
        let lecturers = try document("w5_file_ref")
        #expect(lecturers.name == "Folien Vorlesung 1.pdf" && lecturers.isDownloadable)
        #expect(!lecturers.isWritable && !lecturers.isEditable)
        #expect(try document("w5_file_ref_dozent").isWritable)
        #expect(try document("w5_file_ref_dozent").isEditable)
    }

    /// Legacy REST's walk over a captured `top_folder`/`folder/{id}` listing as `userID`.
    static func legacyWalk(_ listing: JSONValue, userID: String? = autorID) throws -> FolderWalk {
        var walk = FolderWalk(course: course, rootID: root, installation: try installation())
        walk.userID = userID
        _ = walk.add(listing: listing, of: root, parentID: nil, label: "test")
        return walk
    }

    @Test(
        "legacy REST, test_autor: is_writable of every folder, subfolders only in the writable group folder, the homework folder (no id) absent"
    )
    func legacyFolders() throws {
        let walk = try Self.legacyWalk(try Self.body("w6_rest_top_folder"))
        let folders = Self.byID(walk.content.folders)
        #expect(Set(folders.keys) == [Self.root, Self.general, Self.dateFolder, Self.groupFolder])
        let flags = folders.mapValues {
            [$0.permissions.isReadable, $0.permissions.isWritable, $0.permissions.isSubfolderAllowed]
        }
        #expect(flags[Self.root] == [true, true, false])
        #expect(flags[Self.general] == [true, true, false])
        #expect(flags[Self.dateFolder] == [true, false, false])
        #expect(flags[Self.groupFolder] == [true, true, true])
    }

    @Test("legacy REST file-refs: is_writable and is_editable as sent; without them, the user's own documents")
    func legacyDocumentFlags() throws {
        let root = try Self.body("w1_rest_folder_root")
        let own = try Self.body("w4_before_rest_file")
        guard case .object(var listing) = root, case .object(let ownFile) = own else {
            Issue.record("captures are objects")
            return
        }
        let withoutFlags = JSONObject(pairs: ownFile.pairs.filter { !["is_writable", "is_editable"].contains($0.key) })
        listing = JSONObject(
            pairs: listing.pairs.map { pair in
                pair.key == "file_refs"
                    ? (pair.key, .array((root["file_refs"]?.array ?? []) + [own, .object(withoutFlags)]))
                    : pair
            })
        #expect(listing["file_refs"]?.array?.count == 3)

        func flags(_ walk: FolderWalk) -> [String: [Bool]] {
            Dictionary(uniqueKeysWithValues: walk.content.documents.map { ($0.name, [$0.isWritable, $0.isEditable]) })
        }
        // The URL document the root user added; test_autor's upload with its flags; the same without them.
        var asAutor = try Self.legacyWalk(.object(listing))
        #expect(asAutor.content.documents.count == 2, "the upload is listed twice; the second is a duplicate id")
        #expect(flags(asAutor)["mappe_studip-el.pdf"] == [false, false])
        #expect(flags(asAutor)["Protokoll Sitzung 3.txt"] == [true, true])

        listing = JSONObject(
            pairs: listing.pairs.map { pair in
                pair.key == "file_refs" ? (pair.key, .array([.object(withoutFlags)])) : pair
            })
        asAutor = try Self.legacyWalk(.object(listing))
        #expect(flags(asAutor)["Protokoll Sitzung 3.txt"] == [true, true], "owned by test_autor")
        let asDozent = try Self.legacyWalk(.object(listing), userID: Self.dozentID)
        #expect(flags(asDozent)["Protokoll Sitzung 3.txt"] == [false, false], "owned by someone else")
        let unknown = try Self.legacyWalk(.object(listing), userID: nil)
        #expect(flags(unknown)["Protokoll Sitzung 3.txt"] == [false, false], "no user: read-only")
    }
}
