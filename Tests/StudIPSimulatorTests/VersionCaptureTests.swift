import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// New versions, renames, moves, undownloadable and elsewhere-hosted documents, held against what an unmodified
/// Stud.IP 5.0.7 sent (`Tests/Fixtures/studip-5.0.7-more`, README Parts 2, 3, 4 and 6).
@Suite("Versions, renames, moves, undownloadable and elsewhere-hosted documents as Stud.IP 5.0.7 has them")
struct VersionCaptureTests {
    /// One captured change: a new document starts with the bytes and name of state `from`; the control API applies
    /// `change` (and the bytes of `toBytes` as a new version); then the values that changed on the simulator must
    /// be the values that changed between the captured states `from` and `to`.
    struct Step: Sendable, CustomTestStringConvertible {
        let testDescription: String
        /// Capture prefix: `p2` (versions) or `p3` (rename, move).
        let part: String
        let from: String
        let to: String
        /// Fixture whose body holds the bytes before.
        let fromBytes: String
        /// Fixture whose body holds the new version's bytes; nil = no new version.
        var toBytes: String?
        var change: [String: String] = [:]
        /// Values the capture lacks, as the README states them: changed or not. After the restore only the
        /// file-ref was captured (Part 2); Part 3 has no `files/{id}`, but its file id and `Last-Modified` (the
        /// row's chdate) stay.
        var stated: [String: Bool] = [:]

        private static let filesRowUntouched = [
            "files id": false, "files mkdate": false, "files chdate": false, "files filesize": false,
        ]

        static let all = [
            Step(
                testDescription: "web UI, other size", part: "p2", from: "before", to: "v1",
                fromBytes: "p2_before_rest_download", toBytes: "p2_v1_rest_download", change: ["via": "web"]),
            Step(
                testDescription: "web UI, same size", part: "p2", from: "v1", to: "v2",
                fromBytes: "p2_v1_rest_download", toBytes: "p2_v2_rest_download", change: ["via": "web"]),
            Step(
                testDescription: "JSON:API content, same size", part: "p2", from: "v2", to: "v3",
                fromBytes: "p2_v2_rest_download", toBytes: "p2_v3_rest_download", change: ["via": "jsonapi"]),
            Step(
                testDescription: "legacy REST update, other size", part: "p2", from: "v3", to: "v4",
                fromBytes: "p2_v3_rest_download", toBytes: "p2_v4_rest_download", change: ["via": "rest"]),
            Step(
                testDescription: "JSON:API content, other size", part: "p2", from: "v4", to: "restore",
                fromBytes: "p2_v4_rest_download", toBytes: "p2_before_rest_download", change: ["via": "jsonapi"],
                stated: [
                    "files id": false, "files mkdate": false, "files chdate": true, "files filesize": true,
                    "ETag inode": false, "ETag mtime": true, "ETag size": true, "REST file_id": false,
                    "REST chdate": false, "REST size": true, "REST name": false, "REST folder_id": false,
                    "REST Last-Modified": true, "REST Content-Disposition": false,
                ]),
            Step(
                testDescription: "rename", part: "p3", from: "before", to: "renamed",
                fromBytes: "p3_before_rest_download",
                change: ["name": "Bewertungsschema ½ (überarbeitet).txt"], stated: filesRowUntouched),
            Step(
                testDescription: "move", part: "p3", from: "renamed", to: "moved", fromBytes: "p3_before_rest_download",
                change: ["folder_id": Scenario.rootFolderID], stated: filesRowUntouched),
        ]
    }

    /// What a client sees of one document, by name: JSON:API `file-refs/{id}`, `files/{file id}` and the content
    /// route's ETag; legacy `file/{id}` and the headers of its download.
    typealias Observation = [String: String]

    static func observe(
        fileRef: Data?, file: Data?, etag: String?, restFile: Data?, download: [String: String]?
    ) throws -> Observation {
        var seen: Observation = [:]
        if let fileRef {
            let data = try object(fileRef)["data"] as? [String: Any]
            let attributes = data?["attributes"] as? [String: Any] ?? [:]
            let relationships = data?["relationships"] as? [String: Any] ?? [:]
            func related(_ name: String) -> String? {
                ((relationships[name] as? [String: Any])?["data"] as? [String: Any])?["id"] as? String
            }
            seen["file-ref chdate"] = attributes["chdate"].map { "\($0)" }
            seen["name"] = attributes["name"].map { "\($0)" }
            seen["filesize"] = attributes["filesize"].map { "\($0)" }
            seen["file id"] = related("file")
            seen["parent"] = related("parent")
        }
        if let file {
            let data = try object(file)["data"] as? [String: Any]
            let attributes = data?["attributes"] as? [String: Any] ?? [:]
            seen["files id"] = data?["id"] as? String
            for key in ["mkdate", "chdate", "filesize"] { seen["files \(key)"] = attributes[key].map { "\($0)" } }
        }
        if let etag {
            let parts = etag.trimmingCharacters(in: CharacterSet(charactersIn: "\"")).split(separator: " ")
            for (name, part) in zip(["inode", "mtime", "size"], parts) { seen["ETag \(name)"] = String(part) }
        }
        if let restFile {
            let json = try object(restFile)
            for key in ["file_id", "chdate", "size", "name", "folder_id"] {
                seen["REST \(key)"] = json[key].map { "\($0)" }
            }
        }
        for (name, value) in download ?? [:] { seen["REST \(name)"] = value }
        return seen
    }

    static func object(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func downloadHeaders(_ header: (String) -> String?) -> [String: String] {
        var headers: [String: String] = [:]
        for name in ["Last-Modified", "Content-Disposition"] { headers[name] = header(name) }
        return headers
    }

    /// A captured state, from whichever of its exchanges were captured.
    static func captured(_ part: String, _ state: String) throws -> Observation {
        func body(_ kind: String) throws -> Data? { try fixture(part, state, kind)?.body }
        return try observe(
            fileRef: try body("jsonapi_file_ref"), file: try body("jsonapi_file"),
            etag: try fixture(part, state, "jsonapi_content_head")?.header("ETag"), restFile: try body("rest_file"),
            download: try fixture(part, state, "rest_download").map { download in downloadHeaders(download.header) })
    }

    static func fixture(_ part: String, _ state: String, _ kind: String) throws -> Fixture? {
        let name = "\(part)_\(state)_\(kind)"
        guard FileManager.default.fileExists(atPath: Fixture.more.appending(path: "\(name).meta.json").path) else {
            return nil
        }
        return try Fixture.named(name, in: Fixture.more)
    }

    /// The same state on the simulator, as test_autor sees it.
    static func simulated(_ id: String, _ sim: Simulator) async throws -> (Observation, etag: String) {
        let jsonapi = "\(sim.baseURL)/jsonapi.php/v1"
        let auth = [HTTP.basic("test_autor"), HTTP.jsonAPIAccept]
        let fileRef = try await HTTP.get("\(jsonapi)/file-refs/\(id)", headers: auth)
        let fileID = try #require(sim.university.fileRefs[id]?.fileID)
        let file = try await HTTP.get("\(jsonapi)/files/\(fileID)", headers: auth)
        let head = try await HTTP.request(.HEAD, "\(jsonapi)/file-refs/\(id)/content", headers: auth)
        let restFile = try await HTTP.get("\(sim.baseURL)/api.php/file/\(id)", headers: [HTTP.basic("test_autor")])
        let download = try await HTTP.get(
            "\(sim.baseURL)/api.php/file/\(id)/download", headers: [HTTP.basic("test_autor")])
        for response in [fileRef, file, head, restFile, download] { try #require(response.status == 200) }
        let etag = try #require(head.header("ETag"))
        let seen = try observe(
            fileRef: fileRef.body, file: file.body, etag: etag, restFile: restFile.body,
            download: downloadHeaders(download.header))
        return (seen, etag)
    }

    static func changed(_ before: Observation, _ after: Observation) -> Set<String> {
        Set(before.keys.filter { after[$0] != nil && after[$0] != before[$0] })
    }

    @Test(arguments: Step.all)
    func changesWhatStudIPChanged(_ step: Step) async throws {
        let capturedBefore = try Self.captured(step.part, step.from)
        let capturedAfter = try Self.captured(step.part, step.to)
        let bytes = try #require(try Fixture.named(step.fromBytes, in: Fixture.more).body)
        let text = String(decoding: bytes, as: UTF8.self)
        try #require(Data(text.utf8) == bytes, "the captured bytes travel as text through the control API")

        try await withSimulator(Scenario.start(flavour: .v50)) { sim async throws in
            let added = try Self.object(
                try await HTTP.control(
                    .POST, "\(sim.controlURL)/documents",
                    try Self.json([
                        "folder_id": Scenario.slidesFolderID, "name": try #require(capturedBefore["name"]),
                        "mime_type": "text/plain", "text": text,
                    ])
                ).body)
            let id = try #require(added["id"] as? String)
            let (before, oldETag) = try await Self.simulated(id, sim)

            var change = step.change
            let newBytes = try step.toBytes.map { try #require(try Fixture.named($0, in: Fixture.more).body) }
            if let newBytes { change["text"] = String(decoding: newBytes, as: UTF8.self) }
            let patched = try await HTTP.control(.PATCH, "\(sim.controlURL)/documents/\(id)", try Self.json(change))
            try #require(patched.status == 200, "\(patched.text)")
            let (after, newETag) = try await Self.simulated(id, sim)

            let compared = Set(capturedBefore.keys).intersection(capturedAfter.keys).union(step.stated.keys)
            let expected = Self.changed(capturedBefore, capturedAfter).union(step.stated.filter(\.value).keys)
            #expect(compared == Set(after.keys), "every value the simulator shows is captured or stated")
            #expect(Self.changed(before, after) == expected)
            for key in ["name", "filesize", "files filesize", "ETag size", "REST size", "REST Content-Disposition"] {
                if let captured = capturedAfter[key] { #expect(after[key] == captured, "\(key)") }
            }

            let content = "\(sim.baseURL)/jsonapi.php/v1/file-refs/\(id)/content"
            let autor = [HTTP.basic("test_autor")]
            let full = try await HTTP.get(content, headers: autor)
            #expect(full.header("ETag") == newETag)
            #expect(full.body == newBytes ?? bytes)
            if let captured = try Self.fixture(step.part, step.to, "jsonapi_content") {
                #expect(full.body == captured.body)
            }
            let old = try await HTTP.get(content, headers: autor + [("If-None-Match", oldETag)])
            #expect(old.status == (expected.contains { $0.hasPrefix("ETag") } ? 200 : 304))
            if let captured = try Self.fixture(step.part, step.to, "jsonapi_content_if_none_match_old") {
                #expect(old.status == captured.status)
            }
            let current = try await HTTP.get(content, headers: autor + [("If-None-Match", newETag)])
            #expect(current.status == 304)
            #expect(current.header("ETag") == newETag)
        }
    }

    static func json(_ object: [String: String]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    /// Part 4: listed by folder with `is-downloadable: false`, left out of the course-wide list, 403 to download.
    @Test func documentTheStudentMayNotDownload() async throws {
        var university = Scenario.university()
        university.add(
            TermsOfUse(
                id: "CAMPUSFS_NODOWNLOAD", name: "Nur Lehrende (kein Download)", icon: "lock", position: 9, mkdate: 0,
                chdate: 0, downloadCondition: 2))
        let id = "d0000000000000000000000000000009"
        let lecturer = try #require(university.user(named: "test_dozent")?.id)
        university.add(
            FileRef(
                id: id, fileID: "e0000000000000000000000000000009", folderID: Scenario.slidesFolderID,
                name: "Musterlösung (gesperrt).pdf", userID: lecturer, mimeType: "application/pdf", size: 100,
                mkdate: 1_790_900_500, chdate: 1_790_900_500, content: .generated(kind: .binary, seed: 9, size: 100),
                termsOfUseID: "CAMPUSFS_NODOWNLOAD"))
        try await withSimulator(.custom(university), flavour: .v50) { sim async throws in
            let capturedID = "3ea71767f91c62bc2f96e65077ef2674"
            let auth = [HTTP.basic("test_autor"), HTTP.jsonAPIAccept]
            let jsonapi = "\(sim.baseURL)/jsonapi.php/v1"

            func entries(_ body: Data?) throws -> [[String: Any]] {
                let document = try Self.object(try #require(body))
                return try #require(document["data"] as? [[String: Any]])
            }
            func flags(_ entry: [String: Any]?) -> [String: Bool] {
                (entry?["attributes"] as? [String: Any] ?? [:]).filter { $0.key.hasPrefix("is-") }
                    .compactMapValues { $0 as? Bool }
            }
            let capturedListing = try entries(
                try Fixture.named("p4_jsonapi_folder_root_file_refs", in: Fixture.more).body)
            let capturedEntry = capturedListing.first { $0["id"] as? String == capturedID }
            let listing = try entries(
                try await HTTP.get("\(jsonapi)/folders/\(Scenario.slidesFolderID)/file-refs", headers: auth).body)
            let entry = listing.first { $0["id"] as? String == id }
            #expect(flags(entry) == flags(capturedEntry))
            #expect(flags(entry)["is-downloadable"] == false)
            #expect((entry?["meta"] as? [String: Any])?["download-url"] != nil)

            let course = try Self.object(
                try await HTTP.get("\(jsonapi)/courses/\(Scenario.courseID)/file-refs", headers: auth).body)
            let listed = (course["data"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
            #expect(!listed.contains(id))
            #expect(listed.count == university.fileRefs.count - 1)
            #expect(((course["meta"] as? [String: Any])?["page"] as? [String: Any])?["total"] as? Int == listed.count)

            let content = try await HTTP.get("\(jsonapi)/file-refs/\(id)/content", headers: [HTTP.basic("test_autor")])
            let capturedContent = try Fixture.named("p4_jsonapi_content", in: Fixture.more)
            #expect(content.status == capturedContent.status)
            #expect(content.body == capturedContent.body)
            let download = try await HTTP.get(
                "\(sim.baseURL)/api.php/file/\(id)/download", headers: [HTTP.basic("test_autor")])
            let capturedDownload = try Fixture.named("p4_rest_file_download", in: Fixture.more)
            #expect(download.status == capturedDownload.status)
            let message = try JSONSerialization.jsonObject(
                with: try #require(capturedDownload.body), options: .fragmentsAllowed)
            #expect(
                try download.json() as? String == (message as? String)?.replacingOccurrences(of: capturedID, with: id))
        }
    }

    /// Part 6: JSON:API redirects a GET to the other host and answers HEAD without an ETag; legacy REST cannot
    /// deliver it at all.
    @Test func documentHostedElsewhere() async throws {
        try await withSimulator(Scenario.start(flavour: .v50)) { sim async throws in
            let id = Scenario.linkID
            let content = "\(sim.baseURL)/jsonapi.php/v1/file-refs/\(id)/content"
            let autor = [HTTP.basic("test_autor")]

            let redirect = try await HTTP.get(content, headers: autor)
            let capturedRedirect = try Fixture.named("p6_jsonapi_content", in: Fixture.more)
            #expect(redirect.status == capturedRedirect.status)
            #expect(redirect.header("Location") == "\(sim.externalBaseURL)/elsewhere/\(id)/Paper.pdf")
            #expect(redirect.header("Content-Type") == capturedRedirect.header("Content-Type"))
            #expect(redirect.body.isEmpty)

            let head = try await HTTP.request(.HEAD, content, headers: autor)
            let capturedHead = try Fixture.named("p6_jsonapi_content_head", in: Fixture.more)
            #expect(head.status == capturedHead.status)
            #expect(head.header("ETag") == nil && capturedHead.header("ETag") == nil)
            #expect(head.header("Location") == nil)

            let download = try await HTTP.get("\(sim.baseURL)/api.php/file/\(id)/download", headers: autor)
            let capturedDownload = try Fixture.named("p6_rest_file_download", in: Fixture.more)
            #expect(download.status == capturedDownload.status)
            let message = try JSONSerialization.jsonObject(
                with: try #require(capturedDownload.body), options: .fragmentsAllowed)
            #expect(try download.json() as? String == message as? String)

            let file = try Self.object(try await HTTP.get("\(sim.baseURL)/api.php/file/\(id)", headers: autor).body)
            let capturedFile = try Self.object(try #require(try Fixture.named("p6_rest_file", in: Fixture.more).body))
            #expect(file["storage"] as? String == capturedFile["storage"] as? String)
            let capturedURL = (capturedFile["url"] as? String)?
                .replacingOccurrences(of: "f62768f0cbd0bcdc4912ce5e4f84eb14", with: id)
                .replacingOccurrences(of: "mappe_studip-el.pdf", with: "Paper.pdf")
            #expect(file["url"] as? String == capturedURL)
        }
    }
}
