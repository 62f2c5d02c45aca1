import Foundation
import StudIPModel
import StudIPWire
import Testing

/// The writes' wire format read from what a real Stud.IP 5.0.7 answered (`Tests/Fixtures/studip-5.0.7-writes`,
/// README there), without a server: the refusals a simulator might word differently, the licences, the answers of
/// a move and a new folder.
@Suite("Writing's wire format on the captured 5.0.7 answers")
struct WriteFormatTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Fixtures/studip-5.0.7-writes")
    let format: WriteFormat

    init() throws {
        format = WriteFormat(installation: try Installation("http://127.0.0.1:8080"))
    }

    static func body(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appending(path: name))
    }

    static func json(_ name: String) throws -> JSONValue {
        try JSONValue.parse(try body(name), what: name)
    }

    @Test("Legacy REST's 500 messages read as the refusals they are, Stud.IP's words kept")
    func legacyRefusals() throws {
        let permission = ["w8_rest_upload_nonwritable", "w5_rest_update", "w5_rest_rename", "w5_rest_move"]
        for name in permission + ["w7_rest_new_folder_general"] {
            let message = try #require(WriteFormat.legacyRouteMessage(try Self.body("\(name).json")), "\(name)")
            #expect(WriteFormat.legacyRefusal(message, size: 1) == .notPermitted(serverSaid: message), "\(name)")
        }
        let exe = try #require(WriteFormat.legacyRouteMessage(try Self.body("w8_rest_upload_exe.json")))
        #expect(WriteFormat.legacyRefusal(exe, size: 1) == .forbiddenType(fileExtension: "exe"))
        // "Error while deleting a file reference: " names no reason: the writer reports it as it is.
        let delete = try #require(WriteFormat.legacyRouteMessage(try Self.body("w5_rest_delete.json")))
        #expect(WriteFormat.legacyRefusal(delete, size: nil) == nil)
        // The upload's 500 is an HTML page after storing the file: no route message, so "maybe stored".
        #expect(WriteFormat.legacyRouteMessage(try Self.body("w8_rest_upload.body")) == nil)
    }

    @Test("JSON:API's refusals: the detail where Stud.IP gives one, nothing for a bare status")
    func jsonAPIRefusals() throws {
        #expect(
            WriteFormat.serverSaid(try Self.body("w4_rename_patch_no_terms.json"))
                == "Missing `terms-of-use` relationship.")
        #expect(
            WriteFormat.serverSaid(try Self.body("w7_subfolder_groupfolder_homework.json"))
                == "Ein Ordner vom Typ HomeworkFolder kann nicht in einem Ordner vom Typ CourseGroupFolder erzeugt werden!"
        )
        #expect(WriteFormat.serverSaid(try Self.body("w5_rename.json")) == nil)
        #expect(WriteFormat.serverSaid(Data("Bad Request".utf8)) == nil)
        #expect(
            WriteFormat.uploadRefusal(status: 400, size: 67_108_865, name: "a.txt", serverSaid: nil)
                == .tooLarge(size: 67_108_865, limit: 67_108_864))
        #expect(
            WriteFormat.uploadRefusal(status: 413, size: 9_000_000, name: "a.txt", serverSaid: nil)
                == .tooLarge(size: 9_000_000, limit: nil))
        #expect(
            WriteFormat.uploadRefusal(status: 400, size: 1, name: "SETUP.EXE", serverSaid: nil)
                == .forbiddenType(fileExtension: "exe"))
        #expect(
            WriteFormat.uploadRefusal(status: 400, size: 1, name: "exe", serverSaid: nil)
                == .invalid(status: 400, serverSaid: nil))
        #expect(
            WriteFormat.uploadRefusal(status: 400, size: 67_108_864, name: "video.mp4", serverSaid: nil)
                == .invalid(status: 400, serverSaid: nil))
    }

    @Test("Terms of use from both APIs' captured lists")
    func termsOfUse() throws {
        let jsonAPI = try #require(try Self.json("w1_terms_of_use.json")["data"]?.array).compactMap(
            WriteFormat.termsOfUse)
        let legacy = try #require(try Self.json("w1_rest_terms_of_use.json")["collection"]?.elements).compactMap(
            WriteFormat.legacyTermsOfUse)
        for list in [jsonAPI, legacy] {
            #expect(
                Set(list.map(\.id)) == [
                    "CAMPUSFS_NODOWNLOAD", "FREE_LICENSE", "NO_LICENSE", "SELFMADE_NONPUB", "UNDEF_LICENSE",
                    "WITH_LICENSE",
                ])
            #expect(list.filter(\.isDefault).map(\.id) == ["UNDEF_LICENSE"])
            #expect(list.first { $0.id == "CAMPUSFS_NODOWNLOAD" }?.downloadCondition == 2)
            #expect(TermsOfUse.forOwnWork(in: list)?.id == "SELFMADE_NONPUB")
        }
    }

    @Test("A 201's Location names the new document, absolute or relative")
    func locations() throws {
        let meta = try Self.json("w2_upload.meta.json")
        let location = try #require(
            meta["headers"]?.array?.first { $0.array?.first?.string == "Location" }?.array?.last?.string)
        #expect(WriteFormat.id(fromLocation: location) == "9939b64763e8baf41222432a8ad6998d")
        #expect(
            WriteFormat.id(fromLocation: "/jsonapi.php/v1/folders/e10ff5681ffd759098309b555341bbea")
                == "e10ff5681ffd759098309b555341bbea")
        #expect(WriteFormat.id(fromLocation: nil) == nil)
    }

    @Test("Answers read back into the model: the upload's file-ref, a moved REST file-ref, new folders")
    func answers() throws {
        let uploadedJSON = try #require(try Self.json("w2_upload_file_ref.json")["data"])
        let uploaded = try #require(format.document(uploadedJSON))
        #expect(uploaded.name == "Protokoll Sitzung 3.txt")
        #expect(uploaded.folderID == "ca002fbae136b07e4df29e0136e3bd32")
        #expect(uploaded.size == 1500)
        #expect(uploaded.fileID == "bf5f0001d3f009c2daa85d88484a7c91")
        #expect(uploaded.license == "UNDEF_LICENSE")

        let moved = try #require(format.legacyDocument(try Self.json("w4_move_rest.json")))
        #expect(moved.id == "9939b64763e8baf41222432a8ad6998d")
        #expect(moved.folderID == "f7fc5ae64d2c453daa9619a820a6467e")
        #expect(moved.fileID == "bf5f0001d3f009c2daa85d88484a7c91")
        #expect(moved.size == 2400)

        let folderJSON = try #require(try Self.json("w7_subfolder_groupfolder.json")["data"])
        let folder = try #require(format.folder(folderJSON))
        #expect(folder.id == "f36d52136175c1dbdc922167de1bcfc9")
        #expect(folder.name == "Gruppenarbeit Team 1")
        #expect(folder.parentID == "df122112a21812ff4ffcf1965cb48fc3")
        let legacyFolder = try #require(
            format.legacyFolder(
                try Self.json("w7_rest_new_folder_groupfolder.json"), parentID: "df122112a21812ff4ffcf1965cb48fc3"))
        #expect(legacyFolder.id == "71f3a5870d26d3d3c10b457f0ceee851")
        #expect(legacyFolder.name == "REST-Ordner")
        #expect(legacyFolder.parentID == "df122112a21812ff4ffcf1965cb48fc3")
    }

    @Test("Request bodies: the rename carries the licence, the Slug is percent-encoded as captured")
    func requests() throws {
        let rename = try JSONValue.parse(
            WriteFormat.renameBody(documentID: "d", name: "Protokoll 3. Sitzung.txt", termsID: "SELFMADE_NONPUB"),
            what: "rename")
        #expect(rename["data"]?["attributes"]?["name"]?.string == "Protokoll 3. Sitzung.txt")
        #expect(rename["data"]?["relationships"]?["terms-of-use"]?["data"]?["id"]?.string == "SELFMADE_NONPUB")
        let captured = try #require(
            try Self.json("w2_upload_slug.meta.json")["request_headers"]?["Slug"]?.string)
        #expect(WriteFormat.slug("Übung 2 – Lösung (Entwurf).txt") == captured)
        let (head, tail) = WriteFormat.multipart(
            boundary: "B", textParts: [("term-id", "SELFMADE_NONPUB")], fileField: "file", fileName: "a \"b\".txt")
        #expect(
            String(decoding: head, as: UTF8.self)
                == "--B\r\nContent-Disposition: form-data; name=\"term-id\"\r\n\r\nSELFMADE_NONPUB\r\n"
                + "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a %22b%22.txt\"\r\n"
                + "Content-Type: text/plain\r\n\r\n")
        let (pdf, _) = WriteFormat.multipart(boundary: "B", textParts: [], fileField: "file", fileName: "Blatt 1.PDF")
        #expect(String(decoding: pdf, as: UTF8.self).contains("Content-Type: application/pdf\r\n"))
        let (unknown, _) = WriteFormat.multipart(boundary: "B", textParts: [], fileField: "file", fileName: "Makefile")
        #expect(String(decoding: unknown, as: UTF8.self).contains("Content-Type: application/octet-stream\r\n"))
        #expect(String(decoding: tail, as: UTF8.self) == "\r\n--B--\r\n")
    }
}
