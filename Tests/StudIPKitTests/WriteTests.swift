import Foundation
import StudIPKit
import StudIPModel
import Synchronization
import TestSupport
import Testing

@testable import StudIPSimulator

/// `DocumentWriter` against the simulator on the dataset `fixtures-5.0.7-writes` (the demo course as the write
/// capture found it; docs/simulator.md, "Writing"), as the student test_autor and the lecturer test_dozent.
@Suite("Writing: uploads, new versions, renames, moves, deletes, folders through both APIs")
final class WriteTests: Sendable {
    /// Files to upload, removed after each test.
    let scratch = FileManager.default.temporaryDirectory.appending(path: "campusfs-write-\(UUID().uuidString)")

    init() throws {
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: scratch) }

    func file(_ bytes: Data) throws -> String {
        let url = scratch.appending(path: UUID().uuidString)
        try bytes.write(to: url)
        return url.path
    }

    /// A file of `size` zero bytes that takes no disk space.
    func sparseFile(size: Int) throws -> String {
        let path = try file(Data())
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(size))
        try handle.close()
        return path
    }
    static let rootFolder = "f7fc5ae64d2c453daa9619a820a6467e"
    /// "Allgemeiner Dateiordner": writable for the student.
    static let generalFolder = "ca002fbae136b07e4df29e0136e3bd32"
    /// A date folder: listed and readable, not writable for the student.
    static let dateFolder = "012cb91a42cf85e5fafdd84e54ed2ec3"
    /// The group folder: the only one where the student may create folders.
    static let groupFolder = "df122112a21812ff4ffcf1965cb48fc3"
    /// "Hausaufgaben", a HomeworkFolder.
    static let homeworkFolder = "ad8dc6a6162fb0fe022af4a62a15e309"
    static let courseID = "a07535cf2f8a72df33c12ddfa4b53dde"

    // MARK: Uploads

    @Test("JSON:API upload: one POST and one read-back; the lecturer sees the same bytes")
    func uploadIsOnePostAndOneReadBack() async throws {
        let bytes = Data("Protokoll der dritten Sitzung.\n".utf8)
        try await Self.withWriter { sim, writer, _ in
            let file = try file(bytes)
            sim.resetStatistics()
            let receipt = try await writer.upload(
                file: file, toFolder: Self.generalFolder, name: "Protokoll Sitzung 3.txt", termsID: "SELFMADE_NONPUB",
                progress: nil)
            #expect(sim.served == 2)
            let document = try #require(receipt.document)
            #expect(receipt.documentID == document.id)
            #expect(document.name == "Protokoll Sitzung 3.txt")
            #expect(document.size == Int64(bytes.count))
            #expect(document.folderID == Self.generalFolder)
            #expect(document.license == "SELFMADE_NONPUB")
            #expect(!document.fileID.isEmpty)
            #expect(receipt.sentSize == Int64(bytes.count))

            try await Self.withWriter(sim, user: "test_dozent") { lecturer, source in
                let seen = try await lecturer.documents(inFolder: Self.generalFolder)
                #expect(seen.contains { $0.id == document.id && $0.name == "Protokoll Sitzung 3.txt" })
                #expect(try await Self.content(of: document.id, source) == bytes)
            }
        }
    }

    @Test("A taken name is stored as Name[2].ext, then Name[3].ext; the receipt says which")
    func duplicateNamesGetNumbers() async throws {
        try await Self.withWriter { _, writer, _ in
            var names: [String] = []
            for text in ["eins", "zwei", "drei"] {
                let receipt = try await writer.upload(
                    file: try file(Data(text.utf8)), toFolder: Self.generalFolder, name: "Notizen.txt",
                    termsID: nil, progress: nil)
                names.append(try #require(receipt.document).name)
            }
            #expect(names == ["Notizen.txt", "Notizen[2].txt", "Notizen[3].txt"])
        }
    }

    @Test("Progress: from 0 to the file's size in chunks, in order; the stored size is what was sent")
    func progressReportsEveryChunk() async throws {
        let size = 3 * (256 << 10) + 17
        let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try await Self.withWriter { _, writer, source in
            let seen = Mutex<[Int64]>([])
            let receipt = try await writer.upload(
                file: try file(bytes), toFolder: Self.generalFolder, name: "Daten.bin", termsID: nil
            ) { sent, total in
                #expect(total == Int64(size))
                seen.withLock { $0.append(sent) }
            }
            let reports = seen.withLock { $0 }
            #expect(reports == [0, 256 << 10, 512 << 10, 768 << 10, Int64(size)])
            let document = try #require(receipt.document)
            #expect(document.size == Int64(size))
            #expect(try await Self.content(of: document.id, source) == bytes)
        }
    }

    @Test("A failed read-back after the 201 is a receipt, not an error: stored, unverified, never sent again")
    func aFailedReadBackIsStoredUnverified() async throws {
        try await Self.withWriter { sim, writer, _ in
            let path = try file(Data("x".utf8))
            sim.inject(Fault(action: .status(500), pathContains: "/file-refs/", method: "GET"))
            let receipt = try await writer.upload(
                file: path, toFolder: Self.generalFolder, name: "a.txt", termsID: nil, progress: nil)
            guard case .storedUnverified = receipt.outcome else {
                Issue.record("expected storedUnverified, got \(receipt.outcome)")
                return
            }
            #expect(receipt.isStored)
            let id = try #require(receipt.documentID)
            sim.clearFaults()
            #expect(try await writer.document(id: id).name == "a.txt")
        }
    }

    @Test("Homework: stored, cannot be read back; the lecturer sees it, another student does not")
    func homeworkIsStoredButUnreadable() async throws {
        let bytes = Data("Abgabe Blatt 1\n".utf8)
        try await withSimulator(.custom(try Self.withSecondStudent()), flavour: .v50) { sim in
            let id = try await Self.withWriter(sim, user: "test_autor") { writer, _ in
                sim.resetStatistics()
                let receipt = try await writer.upload(
                    file: try file(bytes), toFolder: Self.homeworkFolder, name: "Abgabe Blatt 1.pdf",
                    termsID: nil, progress: nil)
                #expect(receipt.outcome == .storedUnreadable)
                #expect(receipt.isStored)
                #expect(sim.served == 2)
                let id = try #require(receipt.documentID)
                // The student's own submission: 403 on every route, so "was it stored?" cannot be asked.
                #expect(
                    await Harness.error { () async throws(StudIPError) in try await writer.document(id: id) }
                        == .forbidden(what: "document \(id)"))
                return id
            }
            try await Self.withWriter(sim, user: "test_dozent") { lecturer, source in
                let listed = try await lecturer.documents(inFolder: Self.homeworkFolder)
                #expect(listed.map(\.id) == [id])
                #expect(listed.first?.size == Int64(bytes.count))
                #expect(try await Self.content(of: id, source) == bytes)
            }
            try await Self.withWriter(sim, user: "test_autor", api: .legacyREST) { writer, _ in
                // Legacy REST refuses what JSON:API accepts (`w6_rest_upload_autor`).
                let path = try file(bytes)
                let refused = await Harness.error { () async throws(StudIPError) in
                    try await writer.upload(
                        file: path, toFolder: Self.homeworkFolder, name: "Abgabe.pdf",
                        termsID: nil, progress: nil)
                }
                guard case .notPermitted(let said?) = Self.refusal(refused) else {
                    Issue.record("expected notPermitted, got \(String(describing: refused))")
                    return
                }
                #expect(said.contains("You are not allowed"))
            }
            try await Self.withWriter(sim, user: "test_autor2") { other, _ in
                let listing = await Harness.error { () async throws(StudIPError) in
                    try await other.documents(inFolder: Self.homeworkFolder)
                }
                #expect(listing == .forbidden(what: "the documents of folder \(Self.homeworkFolder)"))
                #expect(
                    await Harness.error { () async throws(StudIPError) in try await other.document(id: id) }
                        == .forbidden(what: "document \(id)"))
            }
        }
    }

    // MARK: Refusals

    @Test("Refusals are typed, not retryable, and say what to do")
    func refusalsAreTyped() async throws {
        try await Self.withWriter { _, writer, _ in
            let path = try file(Data("x".utf8))
            let closed = await Harness.error { () async throws(StudIPError) in
                try await writer.upload(
                    file: path, toFolder: Self.dateFolder, name: "a.txt", termsID: nil, progress: nil)
            }
            #expect(Self.refusal(closed) == .notPermitted(serverSaid: nil))
            let exe = await Harness.error { () async throws(StudIPError) in
                try await writer.upload(
                    file: path, toFolder: Self.generalFolder, name: "Setup.EXE", termsID: nil, progress: nil)
            }
            #expect(Self.refusal(exe) == .forbiddenType(fileExtension: "exe"))
            #expect(exe?.description.contains("does not accept .exe files") == true)
            for error in [closed, exe] { #expect(error?.isRetryable == false) }
        }
    }

    @Test("A 413 from a proxy before Stud.IP is too large, through both APIs, and not retried")
    func requestEntityTooLarge() async throws {
        for api in [ClientConfiguration.API.jsonAPI, .legacyREST] {
            try await Self.withWriter(api: api) { sim, writer, _ in
                let path = try file(Data(repeating: 1, count: 2 << 20))
                sim.inject(Fault(action: .status(413), method: "POST"))
                sim.resetStatistics()
                let error = await Harness.error { () async throws(StudIPError) in
                    try await writer.upload(
                        file: path, toFolder: Self.generalFolder, name: "Scan.pdf", termsID: nil, progress: nil)
                }
                #expect(Self.refusal(error) == .tooLarge(size: 2 << 20, limit: nil), "\(api)")
                #expect(error?.description.contains("2 MiB is more than it accepts") == true, "\(api)")
                #expect(sim.served == 1, "\(api)")
            }
        }
    }

    @Test("A file that shrinks while it is sent fails the upload as unreadable, not as a network error")
    func aShrinkingFileIsUnreadable() async throws {
        try await Self.withWriter { _, writer, _ in
            let path = try file(Data(repeating: 7, count: 300_000))
            let error = await Harness.error { () async throws(StudIPError) in
                try await writer.upload(file: path, toFolder: Self.generalFolder, name: "a.bin", termsID: nil) {
                    sent, _ in
                    // Called before the first byte of the file is read.
                    if sent == 0 { truncate(path, 1000) }
                }
            }
            #expect(error == .unreadableFile(path: path, detail: "it changed size while it was sent"))
            #expect(error?.isRetryable == false)
        }
    }

    @Test("Over 64 MiB: Stud.IP's bare 400 is read as too large, from what was sent")
    func tooLargeIsInferred() async throws {
        try await Self.withWriter { sim, writer, _ in
            let path = try sparseFile(size: (64 << 20) + 1)
            sim.resetStatistics()
            let error = await Harness.error { () async throws(StudIPError) in
                try await writer.upload(
                    file: path, toFolder: Self.generalFolder, name: "Video.mp4", termsID: nil, progress: nil)
            }
            #expect(Self.refusal(error) == .tooLarge(size: (64 << 20) + 1, limit: 64 << 20))
            #expect(error?.description.contains("64 MiB") == true)
            #expect(sim.served == 1)
        }
    }

    @Test("Someone else's document: new version, rename and delete are not permitted; a deleted one is gone")
    func othersDocumentsAndGoneOnes() async throws {
        try await Self.withWriter { sim, writer, _ in
            let lecturers = try await Self.withWriter(sim, user: "test_dozent") { lecturer, _ in
                try #require(
                    try await lecturer.upload(
                        file: try file(Data("Folien".utf8)), toFolder: Self.generalFolder,
                        name: "Folien.pdf", termsID: "WITH_LICENSE", progress: nil
                    ).documentID)
            }
            let path = try file(Data("mine".utf8))
            let refusals = [
                await Harness.error { () async throws(StudIPError) in
                    try await writer.uploadNewVersion(
                        documentID: lecturers, file: path, name: "Folien.pdf", progress: nil)
                },
                await Harness.error { () async throws(StudIPError) in
                    try await writer.rename(documentID: lecturers, to: "Meine.pdf")
                },
                await Harness.error { () async throws(StudIPError) in try await writer.delete(documentID: lecturers) },
            ]
            for refusal in refusals {
                guard case .notPermitted = Self.refusal(refusal) else {
                    Issue.record("expected notPermitted, got \(String(describing: refusal))")
                    continue
                }
            }
            let own = try #require(
                try await writer.upload(
                    file: path, toFolder: Self.generalFolder, name: "weg.txt", termsID: nil, progress: nil
                ).documentID)
            try await writer.delete(documentID: own)
            #expect(
                await Harness.error { () async throws(StudIPError) in try await writer.document(id: own) }
                    == .notFound(what: "document \(own)"))
            let again = await Harness.error { () async throws(StudIPError) in try await writer.delete(documentID: own) }
            #expect(again == .notFound(what: "deleting document \(own)"))
            #expect(again?.isRetryable == false)
        }
    }

    @Test("A 503 to a write is retryable but not retried by the client: one POST, PATCH or DELETE; a GET is")
    func writesAreNeverRetriedByTheClient() async throws {
        try await Self.withWriter { sim, writer, _ in
            let path = try file(Data("x".utf8))
            let id = try #require(
                try await writer.upload(
                    file: path, toFolder: Self.generalFolder, name: "a.txt", termsID: nil, progress: nil
                ).documentID)
            let writes: [(method: String, write: () async throws(StudIPError) -> Void)] = [
                (
                    "POST",
                    { () async throws(StudIPError) in
                        _ = try await writer.upload(
                            file: path, toFolder: Self.generalFolder, name: "b.txt", termsID: nil, progress: nil)
                    }
                ),
                ("PATCH", { () async throws(StudIPError) in _ = try await writer.rename(documentID: id, to: "c.txt") }),
                ("DELETE", { () async throws(StudIPError) in try await writer.delete(documentID: id) }),
            ]
            for (method, write) in writes {
                sim.clearFaults()
                sim.inject(Fault(action: .status(503), method: method))
                sim.resetStatistics()
                let error = await Harness.error(write)
                #expect(error?.isRetryable == true, "\(method)")
                guard case .serverError(503, _) = error else {
                    Issue.record("\(method): expected a 503 server error, got \(String(describing: error))")
                    continue
                }
                // The rename's GET for the licence goes first.
                #expect(sim.served == (method == "PATCH" ? 2 : 1), "\(method)")
            }
            sim.clearFaults()
            sim.inject(Fault(action: .status(503), method: "GET", remaining: 1))
            sim.resetStatistics()
            #expect(try await writer.document(id: id).name == "a.txt")
            #expect(sim.served == 2)
        }
    }

    @Test("An upload that times out after it left broke off after sending; one to a closed port did not")
    func interruptedUploadsSayWhetherTheyLeft() async throws {
        let path = try file(Data("x".utf8))
        try await withSimulator(.fixtures507Writes, flavour: .v50) { sim in
            var configuration = Harness.configuration(sim, api: .jsonAPI)
            configuration.requestTimeout = .milliseconds(300)
            try await withSource(configuration) { source in
                let writer = try #require(source.writer)
                sim.inject(Fault(action: .stall(milliseconds: 1500), pathContains: "/file-refs", method: "POST"))
                let error = await Harness.error { () async throws(StudIPError) in
                    try await writer.upload(
                        file: path, toFolder: Self.generalFolder, name: "a.txt", termsID: nil, progress: nil)
                }
                #expect(error?.brokeOffAfterSending == true, "\(String(describing: error))")
                #expect(error?.isRetryable == true)
            }
        }
        // A port nobody listens on (a stopped simulator's): the connection is refused before anything is sent.
        let sim = try await Simulator.start(SimulatorConfiguration(dataset: .fixtures507Writes, flavour: .v50))
        let source = try await withSimulator(sim) { sim in try await StudIP.connect(Harness.configuration(sim)) }
        let refused = await Harness.error { () async throws(StudIPError) in
            try await source.writer?.upload(
                file: path, toFolder: Self.generalFolder, name: "a.txt", termsID: nil, progress: nil)
        }
        await source.shutdown()
        guard case .unreachable = refused else {
            Issue.record("expected unreachable, got \(String(describing: refused))")
            return
        }
        #expect(refused?.brokeOffAfterSending == false)
    }

    // MARK: Own documents

    @Test("New version: same id and file id, the name kept, the content's ETag changes at the same size")
    func newVersionKeepsTheDocument() async throws {
        try await Self.withWriter { sim, writer, source in
            let first = try #require(
                try await writer.upload(
                    file: try file(Data("Version 1".utf8)), toFolder: Self.generalFolder,
                    name: "Protokoll.txt", termsID: nil, progress: nil
                ).document)
            let etag = try #require(try await writer.contentETag(documentID: first.id))
            // Stud.IP's ETag holds the mtime in seconds: a version within the same second would look the same.
            try await Task.sleep(for: .seconds(1.1))
            let newBytes = Data("Version 2".utf8)
            sim.resetStatistics()
            let receipt = try await writer.uploadNewVersion(
                documentID: first.id, file: try file(newBytes), name: "Protokoll.txt", progress: nil)
            #expect(sim.served == 2)
            let second = try #require(receipt.document)
            #expect(second.id == first.id)
            #expect(second.fileID == first.fileID)
            #expect(second.name == "Protokoll.txt")
            #expect(second.version == first.version)
            #expect(try await writer.contentETag(documentID: first.id) != etag)
            #expect(try await Self.content(of: first.id, source) == newBytes)
        }
    }

    @Test("Rename: one GET for the licence, one PATCH; a taken name becomes Name[1].ext")
    func renameSendsTheLicence() async throws {
        try await Self.withWriter { sim, writer, _ in
            var ids: [String] = []
            for name in ["a.txt", "b.txt"] {
                ids.append(
                    try #require(
                        try await writer.upload(
                            file: try file(Data(name.utf8)), toFolder: Self.generalFolder, name: name,
                            termsID: "SELFMADE_NONPUB", progress: nil
                        ).documentID))
            }
            sim.resetStatistics()
            let renamed = try await writer.rename(documentID: ids[0], to: "Protokoll 3. Sitzung.txt")
            #expect(sim.served == 2)
            #expect(renamed.name == "Protokoll 3. Sitzung.txt")
            #expect(renamed.license == "SELFMADE_NONPUB")
            let taken = try await writer.rename(documentID: ids[1], to: "Protokoll 3. Sitzung.txt")
            #expect(taken.name == "Protokoll 3. Sitzung[1].txt")
        }
    }

    @Test("Move: JSON:API throws unsupported (EXDEV for the mount), legacy REST moves")
    func moveOnlyThroughLegacyREST() async throws {
        try await withSimulator(.fixtures507Writes, flavour: .v50) { sim in
            let id = try await Self.withWriter(sim, user: "test_autor") { writer, _ in
                let id = try #require(
                    try await writer.upload(
                        file: try file(Data("x".utf8)), toFolder: Self.generalFolder, name: "m.txt",
                        termsID: nil, progress: nil
                    ).documentID)
                let error = await Harness.error { () async throws(StudIPError) in
                    try await writer.move(documentID: id, toFolder: Self.rootFolder)
                }
                #expect(error == .unsupported(operation: "move a document into another folder", api: "JSON:API"))
                #expect(error?.isRetryable == false)
                return id
            }
            try await Self.withWriter(sim, user: "test_autor", api: .legacyREST) { writer, _ in
                let moved = try await writer.move(documentID: id, toFolder: Self.rootFolder)
                #expect(moved.folderID == Self.rootFolder)
                #expect(moved.name == "m.txt")
                let refused = await Harness.error { () async throws(StudIPError) in
                    try await writer.move(documentID: id, toFolder: Self.dateFolder)
                }
                guard case .notPermitted(let said?) = Self.refusal(refused) else {
                    Issue.record("expected notPermitted with Stud.IP's message, got \(String(describing: refused))")
                    return
                }
                #expect(said.contains("Ungenügende Berechtigungen"))
            }
        }
    }

    // MARK: Folders and terms of use

    @Test("Folders: created where subfolders are allowed, Name[1] when taken, not permitted elsewhere")
    func makeFolder() async throws {
        for api in [ClientConfiguration.API.jsonAPI, .legacyREST] {
            try await Self.withWriter(api: api) { _, writer, _ in
                let folder = try await writer.makeFolder(parentFolderID: Self.groupFolder, name: "Team 1")
                #expect(folder.name == "Team 1")
                #expect(folder.parentID == Self.groupFolder)
                #expect(folder.folderType == "StandardFolder")
                let again = try await writer.makeFolder(parentFolderID: Self.groupFolder, name: "Team 1")
                #expect(again.name == "Team 1[1]")
                #expect(again.id != folder.id)
                let refused = await Harness.error { () async throws(StudIPError) in
                    try await writer.makeFolder(parentFolderID: Self.dateFolder, name: "x")
                }
                guard case .notPermitted = Self.refusal(refused) else {
                    Issue.record("\(api): expected notPermitted, got \(String(describing: refused))")
                    return
                }
            }
        }
    }

    @Test("Subfolders through both APIs: the readable ones with their ids, a new one and its Name[1] among them")
    func foldersInAFolder() async throws {
        for api in [ClientConfiguration.API.jsonAPI, .legacyREST] {
            try await Self.withWriter(api: api) { _, writer, _ in
                #expect(try await writer.folders(inFolder: Self.groupFolder).isEmpty, "\(api)")
                let made = [
                    try await writer.makeFolder(parentFolderID: Self.groupFolder, name: "Team 1"),
                    try await writer.makeFolder(parentFolderID: Self.groupFolder, name: "Team 1"),
                ]
                let listed = try await writer.folders(inFolder: Self.groupFolder)
                #expect(listed.map(\.name).sorted() == ["Team 1", "Team 1[1]"], "\(api)")
                #expect(Set(listed.map(\.id)) == Set(made.map(\.id)), "\(api)")
                #expect(listed.allSatisfy { $0.parentID == Self.groupFolder && $0.permissions.isReadable }, "\(api)")
                // The homework folder is listed to a student without an id (legacy REST) or not at all (JSON:API).
                let inRoot = try await writer.folders(inFolder: Self.rootFolder)
                #expect(
                    Set(inRoot.map(\.id)) == [Self.generalFolder, Self.dateFolder, Self.groupFolder], "\(api)")
            }
        }
    }

    @Test("Terms of use from both APIs; a student's own work gets SELFMADE_NONPUB, else the default")
    func termsOfUse() async throws {
        for api in [ClientConfiguration.API.jsonAPI, .legacyREST] {
            try await Self.withWriter(api: api) { _, writer, _ in
                let terms = try await writer.termsOfUse()
                #expect(terms.count == 6, "\(api)")
                #expect(terms.first(where: \.isDefault)?.id == "UNDEF_LICENSE", "\(api)")
                #expect(terms.first { $0.id == "CAMPUSFS_NODOWNLOAD" }?.downloadCondition == 2, "\(api)")
                #expect(TermsOfUse.forOwnWork(in: terms)?.id == "SELFMADE_NONPUB", "\(api)")
                let without = terms.filter { $0.id != "SELFMADE_NONPUB" }
                #expect(TermsOfUse.forOwnWork(in: without)?.id == "UNDEF_LICENSE", "\(api)")
            }
        }
    }

    // MARK: Legacy REST

    @Test("Legacy REST upload: stored, answered 500, maybe stored; the folder's listing shows it")
    func legacyUploadIsMaybeStored() async throws {
        let bytes = Data("REST Upload\n".utf8)
        try await Self.withWriter(api: .legacyREST) { sim, writer, source in
            sim.resetStatistics()
            let receipt = try await writer.upload(
                file: try file(bytes), toFolder: Self.generalFolder, name: "REST Upload.txt", termsID: nil,
                progress: nil)
            #expect(receipt.outcome == .maybeStored)
            #expect(receipt.documentID == nil)
            #expect(!receipt.isStored)
            #expect(sim.served == 1)
            let found = try #require(
                try await writer.documents(inFolder: Self.generalFolder).first { $0.name == "REST Upload.txt" })
            #expect(found.size == Int64(bytes.count))
            // `file/{id}` does not name the course, so only the web link differs from the listing's.
            var single = try await writer.document(id: found.id)
            single.webURL = found.webURL
            #expect(single == found)
            #expect(try await Self.content(of: found.id, source) == bytes)
        }
    }

    @Test("Legacy REST: new version, rename and delete of one's own document; refusals carry Stud.IP's words")
    func legacyOwnDocument() async throws {
        try await Self.withWriter(api: .legacyREST) { _, writer, source in
            _ = try await writer.upload(
                file: try file(Data("eins".utf8)), toFolder: Self.generalFolder, name: "Eigen.txt",
                termsID: nil, progress: nil)
            let own = try #require(
                try await writer.documents(inFolder: Self.generalFolder).first { $0.name == "Eigen.txt" })
            let newBytes = Data("zwei, länger".utf8)
            let receipt = try await writer.uploadNewVersion(
                documentID: own.id, file: try file(newBytes), name: "Eigen.txt", progress: nil)
            let updated = try #require(receipt.document)
            #expect(updated.id == own.id)
            // Legacy REST's update makes a new `files` row (fixtures-5.0.7-more `p2_v4_rest_file_update`).
            #expect(updated.fileID != own.fileID)
            #expect(updated.size == Int64(newBytes.count))
            #expect(try await Self.content(of: own.id, source) == newBytes)
            #expect(try await writer.contentETag(documentID: own.id) == nil)
            let renamed = try await writer.rename(documentID: own.id, to: "Umbenannt.txt")
            #expect(renamed.name == "Umbenannt.txt")
            let path = try file(Data("x".utf8))
            let exe = await Harness.error { () async throws(StudIPError) in
                try await writer.upload(
                    file: path, toFolder: Self.generalFolder, name: "setup.exe",
                    termsID: nil, progress: nil)
            }
            #expect(Self.refusal(exe) == .forbiddenType(fileExtension: "exe"))
            let closed = await Harness.error { () async throws(StudIPError) in
                try await writer.upload(
                    file: path, toFolder: Self.dateFolder, name: "a.txt", termsID: nil,
                    progress: nil)
            }
            guard case .notPermitted(let said?) = Self.refusal(closed) else {
                Issue.record("expected notPermitted, got \(String(describing: closed))")
                return
            }
            #expect(said.contains("Keine Schreibrechte"))
            try await writer.delete(documentID: own.id)
            #expect(
                await Harness.error { () async throws(StudIPError) in try await writer.document(id: own.id) }
                    == .notFound(what: "document \(own.id)"))
        }
    }

    // MARK: Support

    static func refusal(_ error: StudIPError?) -> WriteRefusal? {
        if case .refused(let refusal, _) = error { refusal } else { nil }
    }

    /// The dataset with a second student in the course (the capture had none; `WriteCaptureTests` does the same).
    static func withSecondStudent() throws -> University {
        var university = try Dataset.fixtures507Writes.load()
        let second = User(
            id: "e7a0a84b161f3e8c09b4a0a2e8a58148", username: "test_autor2", password: Harness.password,
            givenName: "Zweiter", familyName: "Student", perms: "autor", email: "autor2@example.org")
        university.add(second)
        var course = try #require(university.courses[courseID])
        course.members.append(Membership(userID: second.id, permission: "autor", mkdate: 1_795_850_000))
        university.add(course)
        return university
    }

    /// A fresh simulator of the write dataset and test_autor's writer on it.
    static func withWriter<T: Sendable>(
        api: ClientConfiguration.API = .jsonAPI,
        _ body: (Simulator, any DocumentWriter, any DocumentSource) async throws -> T
    ) async throws -> T {
        try await withSimulator(.fixtures507Writes, flavour: .v50) { sim in
            try await withWriter(sim, user: "test_autor", api: api) { writer, source in
                try await body(sim, writer, source)
            }
        }
    }

    static func withWriter<T: Sendable>(
        _ sim: Simulator, user: String, api: ClientConfiguration.API = .jsonAPI,
        _ body: (any DocumentWriter, any DocumentSource) async throws -> T
    ) async throws -> T {
        try await withSource(Harness.configuration(sim, user: user, api: api)) { source in
            try await body(try #require(source.writer), source)
        }
    }

    /// The document's bytes as `source`'s user downloads them.
    static func content(of id: String, _ source: any DocumentSource) async throws -> Data {
        let downloader = try #require(source.downloader)
        return try await DownloadTests.readAll(
            try await DownloadTests.content(downloader, DownloadRequest(documentID: id)))
    }
}
