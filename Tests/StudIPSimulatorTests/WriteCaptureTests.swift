import Foundation
import NIOHTTP1
import TestSupport
import Testing

@testable import StudIPSimulator

/// The writes of a student and a lecturer as an unmodified Stud.IP 5.0.7 answered them
/// (`Tests/Fixtures/studip-5.0.7-writes`, steps 1–8 of its README), replayed in capture order as the same user
/// on the dataset `fixtures-5.0.7-writes` (the demo course as that capture found it), and what other users see.
@Suite("Uploads, new versions, renames, deletes, homework and folders as Stud.IP 5.0.7 answers them")
struct WriteCaptureTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Fixtures/studip-5.0.7-writes")

    /// Exchanges not replayed, and why.
    static let skipped: [String: String] = [:]

    /// Uploads whose bytes a later exchange shows (the capture keeps only size and SHA-256 of what was sent):
    /// the body of that exchange is sent, so the content GETs compare byte for byte.
    static let uploadedBytes = [
        "w2_upload": "w2_upload_content", "w4_version_same_size": "w4_after_same_size_content",
        "w5_dozent_upload": "w5_content",
    ]

    /// Step names of the README that write or set up what the writes are checked against.
    static let steps: Set<String> = [
        "1-permissions", "2-upload", "3-refusals", "4-own-document", "5-lecturer-document", "6-homework",
        "7-subfolders", "8-legacy-rest",
    ]

    static func names() throws -> [String] {
        let index = try JSONSerialization.jsonObject(with: Data(contentsOf: directory.appending(path: "index.json")))
        let entries = try #require(index as? [[String: Any]])
        return entries.filter { steps.contains($0["step"] as? String ?? "") }.compactMap { $0["name"] as? String }
    }

    @Test func replayCapturedWritesInOrder() async throws {
        let names = try Self.names()
        #expect(names.count == 189)
        try await withSimulator(.fixtures507Writes, flavour: .v50) { sim async throws in
            var replay = Replay(baseURL: sim.baseURL, known: Set(sim.university.fileRefs.keys))
            for name in names where Self.skipped[name] == nil {
                try await replay.run(try Fixture.named(name, in: Self.directory))
            }
        }
    }

    static let courseID = "a07535cf2f8a72df33c12ddfa4b53dde"
    static let rootFolderID = "f7fc5ae64d2c453daa9619a820a6467e"
    static let generalFolderID = "ca002fbae136b07e4df29e0136e3bd32"

    /// One file part, as a client sends an upload.
    static func multipart(_ name: String, _ bytes: Data) -> (header: (String, String), body: Data) {
        let boundary = "----campusfs-test-boundary"
        var body = Data(
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(name)\"\r\n\r\n".utf8)
        body.append(bytes)
        body.append(Data("\r\n--\(boundary)--\r\n".utf8))
        return (("Content-Type", "multipart/form-data; boundary=\(boundary)"), body)
    }

    static func upload(
        _ sim: Simulator, as user: String, into folderID: String, name: String, bytes: Data
    ) async throws -> HTTPResult {
        let part = multipart(name, bytes)
        return try await HTTP.request(
            .POST, "\(sim.baseURL)/jsonapi.php/v1/folders/\(folderID)/file-refs",
            headers: [HTTP.basic(user), part.header], body: part.body)
    }

    static func data(_ result: HTTPResult) throws -> [String: Any] {
        try #require((try result.json() as? [String: Any])?["data"] as? [String: Any])
    }

    /// A student's upload into a folder they may write to: the lecturer finds it, owned by the student, with the
    /// same bytes through both APIs.
    @Test func lecturerSeesTheStudentsUploadWithTheSameBytes() async throws {
        try await withSimulator(.fixtures507Writes, flavour: .v50) { sim async throws in
            let bytes = Data("Meine Lösung, Aufgabe 1.\n".utf8)
            let uploaded = try await Self.upload(
                sim, as: "test_autor", into: Self.generalFolderID, name: "Lösung.txt", bytes: bytes)
            #expect(uploaded.status == 201)
            let location = try #require(uploaded.header("Location"))
            let id = try #require(location.split(separator: "/").last.map(String.init))
            let lecturer = [HTTP.basic("test_dozent"), HTTP.jsonAPIAccept]

            let ref = try Self.data(try await HTTP.get(location, headers: lecturer))
            let attributes = try #require(ref["attributes"] as? [String: Any])
            #expect(attributes["name"] as? String == "Lösung.txt")
            #expect(attributes["filesize"] as? Int == bytes.count)
            let owner = ((ref["relationships"] as? [String: Any])?["owner"] as? [String: Any])?["data"]
            #expect((owner as? [String: Any])?["id"] as? String == "e7a0a84b161f3e8c09b4a0a2e8a58147")
            let listing = try await HTTP.get(
                "\(sim.baseURL)/jsonapi.php/v1/folders/\(Self.generalFolderID)/file-refs", headers: lecturer)
            #expect(
                ((try listing.json() as? [String: Any])?["data"] as? [[String: Any]])?.map { $0["id"] as? String } == [
                    id
                ])

            let content = try await HTTP.get(
                "\(sim.baseURL)/jsonapi.php/v1/file-refs/\(id)/content", headers: [HTTP.basic("test_dozent")])
            #expect(content.status == 200)
            #expect(content.body == bytes)
            let download = try await HTTP.get(
                "\(sim.baseURL)/api.php/file/\(id)/download", headers: [HTTP.basic("test_dozent")])
            #expect(download.body == bytes)
        }
    }

    /// A homework folder shows no student any submission, not even their own: the capture had one student
    /// (README step 6), whose own submission was 403 to them; a second student, added here, follows the same
    /// per-user rule. The lecturer sees both, each with its owner and bytes.
    @Test func anotherStudentDoesNotSeeAHomeworkSubmission() async throws {
        var university = try Dataset.fixtures507Writes.load()
        let second = User(
            id: "e7a0a84b161f3e8c09b4a0a2e8a58148", username: "test_autor2", password: "testing",
            givenName: "Zweiter", familyName: "Student", perms: "autor", email: "autor2@example.org")
        university.add(second)
        var course = try #require(university.courses[Self.courseID])
        course.members.append(Membership(userID: second.id, permission: "autor", mkdate: 1_795_850_000))
        university.add(course)

        try await withSimulator(.custom(university), flavour: .v50) { sim async throws in
            let jsonapi = "\(sim.baseURL)/jsonapi.php/v1"
            let folder = #"{"data":{"type":"folders","attributes":{"name":"Abgabe 1","folder-type":"HomeworkFolder"}}}"#
            let created = try await HTTP.request(
                .POST, "\(jsonapi)/folders/\(Self.rootFolderID)/folders",
                headers: [HTTP.basic("test_dozent"), HTTP.jsonAPIAccept, ("Content-Type", "application/vnd.api+json")],
                body: Data(folder.utf8))
            #expect(created.status == 201)
            let homework = try #require(try Self.data(created)["id"] as? String)

            var submissions: [String: (id: String, bytes: Data)] = [:]
            for student in ["test_autor", "test_autor2"] {
                let bytes = Data("Abgabe von \(student)\n".utf8)
                let handedIn = try await Self.upload(
                    sim, as: student, into: homework, name: "Abgabe.pdf", bytes: bytes)
                #expect(handedIn.status == 201)
                let id = try #require(handedIn.header("Location")?.split(separator: "/").last.map(String.init))
                submissions[student] = (id, bytes)
            }
            let first = try #require(submissions["test_autor"])
            let other = try #require(submissions["test_autor2"])

            for student in ["test_autor", "test_autor2"] {
                let auth = [HTTP.basic(student), HTTP.jsonAPIAccept]
                #expect(try await HTTP.get("\(jsonapi)/folders/\(homework)", headers: auth).status == 403)
                #expect(try await HTTP.get("\(jsonapi)/folders/\(homework)/file-refs", headers: auth).status == 403)
                for submission in [first, other] {
                    #expect(try await HTTP.get("\(jsonapi)/file-refs/\(submission.id)", headers: auth).status == 403)
                    let content = try await HTTP.get(
                        "\(jsonapi)/file-refs/\(submission.id)/content", headers: [HTTP.basic(student)])
                    #expect(content.status == 403)
                    #expect(content.text == "Forbidden")
                }
                let all = try await HTTP.get("\(jsonapi)/courses/\(Self.courseID)/file-refs", headers: auth)
                let ids = ((try all.json() as? [String: Any])?["data"] as? [[String: Any]] ?? []).compactMap {
                    $0["id"] as? String
                }
                #expect(!ids.contains(first.id) && !ids.contains(other.id))
                let folders = try await HTTP.get("\(jsonapi)/courses/\(Self.courseID)/folders", headers: auth)
                let listed = ((try folders.json() as? [String: Any])?["data"] as? [[String: Any]] ?? []).first {
                    $0["id"] as? String == homework
                }
                let flags = (listed?["attributes"] as? [String: Any] ?? [:]).filter { $0.key.hasPrefix("is-") }
                #expect(
                    flags as? [String: Bool] == [
                        "is-visible": true, "is-readable": false, "is-writable": true, "is-editable": false,
                        "is-subfolder-allowed": false,
                    ])
            }

            let lecturer = [HTTP.basic("test_dozent"), HTTP.jsonAPIAccept]
            let listing = try await HTTP.get("\(jsonapi)/folders/\(homework)/file-refs", headers: lecturer)
            let entries = (try listing.json() as? [String: Any])?["data"] as? [[String: Any]] ?? []
            #expect(Set(entries.compactMap { $0["id"] as? String }) == [first.id, other.id])
            #expect(
                Set(entries.compactMap { ($0["attributes"] as? [String: Any])?["name"] as? String }) == [
                    "Abgabe.pdf", "Abgabe[2].pdf",
                ])
            for (student, submission) in submissions {
                let content = try await HTTP.get(
                    "\(jsonapi)/file-refs/\(submission.id)/content", headers: [HTTP.basic("test_dozent")])
                #expect(content.body == submission.bytes, "\(student)")
                let ref = try Self.data(try await HTTP.get("\(jsonapi)/file-refs/\(submission.id)", headers: lecturer))
                let owner = ((ref["relationships"] as? [String: Any])?["owner"] as? [String: Any])?["data"]
                #expect((owner as? [String: Any])?["id"] as? String == sim.university.user(named: student)?.id)
            }
        }
    }

    /// What a client sees of test_autor's document in one state (README step 4): the file-ref, its `files` row, the
    /// content route's ETag and legacy REST's file.
    static func observe(fileRef: Data?, file: Data?, etag: String?, restFile: Data?) throws -> [String: String] {
        var seen: [String: String] = [:]
        func object(_ data: Data?) throws -> [String: Any] {
            let bytes = try #require(data)
            return try #require(try JSONSerialization.jsonObject(with: bytes) as? [String: Any])
        }
        let ref = try #require(try object(fileRef)["data"] as? [String: Any])
        let refAttributes = ref["attributes"] as? [String: Any] ?? [:]
        for key in ["name", "chdate", "filesize", "mkdate"] {
            seen["file-ref \(key)"] = refAttributes[key].map { "\($0)" }
        }
        let row = try #require(try object(file)["data"] as? [String: Any])
        seen["files id"] = row["id"] as? String
        let rowAttributes = row["attributes"] as? [String: Any] ?? [:]
        for key in ["name", "chdate", "filesize", "mkdate"] {
            seen["files \(key)"] = rowAttributes[key].map { "\($0)" }
        }
        let parts = (etag ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "\"")).split(separator: " ")
        for (name, part) in zip(["inode", "mtime", "size"], parts) { seen["ETag \(name)"] = String(part) }
        let rest = try object(restFile)
        for key in ["file_id", "name", "chdate", "size", "folder_id"] {
            seen["REST \(key)"] = rest[key].map { "\($0)" }
        }
        return seen
    }

    static func changed(_ before: [String: String], _ after: [String: String]) -> Set<String> {
        Set(before.keys.filter { before[$0] != after[$0] })
    }

    /// test_autor's own document through README step 4: four new versions by `POST file-refs/{id}/content` (same
    /// size, other size, other file name, the old name as Slug), the renames by `PATCH` and the move by legacy REST.
    /// After each step the simulator has changed exactly the values Stud.IP changed between the captured states,
    /// to the captured names, sizes and folder; the clock moves a few seconds a step, as it did during the capture.
    @Test func ownDocumentChangesWhatStudIPChanged() async throws {
        let steps: [(state: String, exchanges: [String])] = [
            ("after_same_size", ["w4_version_same_size"]), ("after_other_size", ["w4_version_other_size"]),
            ("after_other_name", ["w4_version_other_name"]), ("after_slug_name", ["w4_version_slug_name"]),
            (
                "after_rename",
                [
                    "w4_rename_patch", "w4_rename_patch_existing_name", "w4_patch_description_terms",
                    "w4_move_patch_parent",
                ]
            ),
            ("after_move", ["w4_move_rest"]),
        ]
        let captured = try (["before"] + steps.map(\.state)).map { state in
            try Self.observe(
                fileRef: try Fixture.named("w4_\(state)_file_ref", in: Self.directory).body,
                file: try Fixture.named("w4_\(state)_file", in: Self.directory).body,
                etag: try Fixture.named("w4_\(state)_content_head", in: Self.directory).header("ETag"),
                restFile: try Fixture.named("w4_\(state)_rest_file", in: Self.directory).body)
        }
        try await withSimulator(.fixtures507Writes, flavour: .v50) { sim async throws in
            try sim.store.mutate { $0.pinnedNow = 1_795_853_872 }
            let upload = try Fixture.named("w2_upload", in: Self.directory)
            let created = try await HTTP.request(
                .POST, sim.baseURL + upload.url,
                headers: upload.requestHeaders.map { ($0.key, $0.value) } + [HTTP.basic("test_autor")],
                body: try Self.requestBody(upload))
            let id = try #require(created.header("Location")?.split(separator: "/").last.map(String.init))
            let capturedID = "9939b64763e8baf41222432a8ad6998d"
            let jsonapi = "\(sim.baseURL)/jsonapi.php/v1"
            let auth = [HTTP.basic("test_autor"), HTTP.jsonAPIAccept]
            func simulated() async throws -> [String: String] {
                let fileRef = try await HTTP.get("\(jsonapi)/file-refs/\(id)", headers: auth)
                let fileID = try #require(sim.university.fileRefs[id]?.fileID)
                return try Self.observe(
                    fileRef: fileRef.body, file: try await HTTP.get("\(jsonapi)/files/\(fileID)", headers: auth).body,
                    etag: try await HTTP.request(.HEAD, "\(jsonapi)/file-refs/\(id)/content", headers: auth).header(
                        "ETag"),
                    restFile: try await HTTP.get(
                        "\(sim.baseURL)/api.php/file/\(id)", headers: [HTTP.basic("test_autor")]
                    )
                    .body)
            }
            var before = try await simulated()
            for (index, step) in steps.enumerated() {
                for name in step.exchanges {
                    try sim.store.mutate { $0.pinnedNow = ($0.pinnedNow ?? 0) + 2 }
                    let fixture = try Fixture.named(name, in: Self.directory)
                    let body = try Self.requestBody(fixture).map {
                        Data(String(decoding: $0, as: UTF8.self).replacingOccurrences(of: capturedID, with: id).utf8)
                    }
                    let response = try await HTTP.request(
                        HTTPMethod(rawValue: fixture.method),
                        sim.baseURL + fixture.url.replacingOccurrences(of: capturedID, with: id),
                        headers: fixture.requestHeaders.map { ($0.key, $0.value) } + [HTTP.basic("test_autor")],
                        body: body)
                    #expect(response.status == fixture.status, "\(name)")
                }
                let after = try await simulated()
                let expected = captured[index + 1]
                #expect(Self.changed(before, after) == Self.changed(captured[index], expected), "\(step.state)")
                for key in [
                    "file-ref name", "file-ref filesize", "files name", "files filesize", "REST name", "REST size",
                    "REST folder_id",
                ] {
                    #expect(after[key] == expected[key], "\(step.state): \(key)")
                }
                before = after
            }
        }
    }

    /// One pass over the captured exchanges: the ids the simulator generates replace the captured ones as they
    /// become known (from `Location` headers and from bodies that show a new id where the capture had another).
    struct Replay {
        let baseURL: String
        /// Ids of the dataset: never learned as a replacement.
        let known: Set<String>
        var ids: [String: String] = [:]

        mutating func run(_ fixture: Fixture) async throws {
            var url = fixture.url
            for (captured, generated) in ids { url = url.replacingOccurrences(of: captured, with: generated) }
            var headers = fixture.requestHeaders.map { ($0.key, $0.value) }
            if let user = fixture.user { headers.append(HTTP.basic(user)) }
            let response = try await HTTP.request(
                HTTPMethod(rawValue: fixture.method), baseURL + url, headers: headers,
                body: try WriteCaptureTests.requestBody(fixture))
            #expect(
                response.status == fixture.status,
                "\(fixture.name): status \(response.status) \(response.text.prefix(300))")
            guard response.status == fixture.status else { return }

            if let location = fixture.header("Location") {
                let actual = response.header("Location") ?? "(missing)"
                #expect(
                    headerForm(Self.withoutHost(location)) == headerForm(Self.withoutHost(actual)),
                    "\(fixture.name): Location \(actual)")
                learn(
                    String(location.split(separator: "/").last ?? ""), String(actual.split(separator: "/").last ?? ""))
            }
            for name in ["Content-Type", "ETag"] {
                guard let expected = fixture.header(name) else { continue }
                let actual = response.header(name) ?? "(missing)"
                #expect(
                    headerForm(expected.lowercased()) == headerForm(actual.lowercased()),
                    "\(fixture.name): \(name) \(actual)")
            }
            guard let body = fixture.body else {
                #expect(response.body.isEmpty, "\(fixture.name): body of \(response.body.count) bytes")
                return
            }
            guard fixture.isJSONBody else {
                // Legacy REST upload's 500 is Stud.IP's whole HTML error page: its content type is compared above.
                if !fixture.name.hasPrefix("w8_rest_upload") {
                    #expect(response.body == body, "\(fixture.name): body differs (\(response.body.count) bytes)")
                }
                return
            }
            guard let expected = JSON.parse(String(decoding: body, as: UTF8.self)),
                let actual = JSON.parse(response.text)
            else {
                Issue.record("\(fixture.name): body is not JSON: \(response.text.prefix(200))")
                return
            }
            learnIDs(expected, actual)
            let ids = self.ids
            var comparison = JSONComparison(
                normalize: Self.withoutHost,
                volatile: { path in path.hasSuffix(".downloads") },
                rewrite: { text in
                    var text = Self.withoutHost(text)
                    for (captured, new) in ids { text = text.replacingOccurrences(of: captured, with: new) }
                    return text
                })
            comparison.compare(Self.stable(expected), Self.stable(actual))
            #expect(comparison.differences.isEmpty, "\(fixture.name): \(comparison.differences.prefix(6))")
        }

        /// Times the capture's server set while writing (28 Nov 2026) are the simulator's clock here: both become
        /// a placeholder, so only that they are such a time is compared.
        static func stable(_ value: JSON) -> JSON {
            switch value {
            case .object(let members): return .object(members.map { ($0.0, stable($0.1)) })
            case .array(let items): return .array(items.map(stable))
            case .string(let text) where text.hasPrefix("2026-11-28T") || isNow(text): return "<written>"
            case .int(let number) where number > 1_795_000_000: return "<written>"
            default: return value
            }
        }

        /// A date the simulator wrote today.
        static func isNow(_ text: String) -> Bool {
            guard let date = ISO8601DateFormatter().date(from: text) else { return false }
            return abs(date.timeIntervalSinceNow) < 3600
        }

        static func withoutHost(_ text: String) -> String {
            text.replacing(/http:\/\/127\.0\.0\.1(:[0-9]+)?/, with: "http://<host>")
        }

        mutating func learn(_ captured: String, _ generated: String) {
            guard captured != generated, captured.count == 32, generated.count == 32, ids[captured] == nil,
                !known.contains(captured)
            else { return }
            ids[captured] = generated
        }

        /// Ids at the same place in both bodies that differ: a resource the replay created under another id.
        mutating func learnIDs(_ expected: JSON, _ actual: JSON) {
            switch (expected, actual) {
            case (.object(let lhs), .object(let rhs)):
                for ((key, left), (otherKey, right)) in zip(lhs, rhs) where key == otherKey {
                    if case .string(let captured) = left, case .string(let generated) = right,
                        ["id", "file_id", "folder_id"].contains(key),
                        captured.wholeMatch(of: /[0-9a-f]{32}/) != nil
                    {
                        learn(captured, generated)
                    } else {
                        learnIDs(left, right)
                    }
                }
            case (.array(let lhs), .array(let rhs)):
                for (left, right) in zip(lhs, rhs) { learnIDs(left, right) }
            default:
                break
            }
        }
    }

    /// The body the capture sent, rebuilt from `request_body`: JSON as it was; multipart with the captured
    /// boundary, text parts as sent and file parts of the captured name, type and size (bytes from
    /// ``uploadedBytes`` where the capture shows them, else a repeated pattern).
    static func requestBody(_ fixture: Fixture) throws -> Data? {
        let meta = try Data(contentsOf: directory.appending(path: "\(fixture.name).meta.json"))
        guard let sent = JSON.parse(String(decoding: meta, as: UTF8.self))?["request_body"],
            case .object(let fields) = sent
        else { return nil }
        let type = fixture.requestHeaders["Content-Type"] ?? ""
        guard let boundary = type.firstMatch(of: /boundary=(.+)$/)?.1 else {
            return Data(sent.encoded().utf8)
        }
        var body = Data()
        var parts = fields
        if fixture.name == "w8_rest_upload_two_files" {
            // The capture's `request_body` keeps one of the two parts of the same name: README step 8 names the
            // other, "Teil A.txt"; its size is in `w8_folder_general_file_refs_after_rest_uploads`.
            parts.insert(
                ("multipart field 'file[]'", ["filename": "Teil A.txt", "content_type": "text/plain", "size": 100]),
                at: 0)
        }
        for (key, value) in parts {
            guard let field = key.firstMatch(of: /multipart field '(.*)'/)?.1 else { continue }
            body.append(Data("--\(boundary)\r\n".utf8))
            if case .string(let text) = value {
                body.append(Data("Content-Disposition: form-data; name=\"\(field)\"\r\n\r\n\(text)\r\n".utf8))
                continue
            }
            guard case .string(let fileName)? = value["filename"], case .int(let size)? = value["size"] else {
                continue
            }
            var contentType = "application/octet-stream"
            if case .string(let text)? = value["content_type"] { contentType = text }
            let bytes = try uploadedBytes[fixture.name].flatMap { try Fixture.named($0, in: directory).body }
            body.append(
                Data(
                    "Content-Disposition: form-data; name=\"\(field)\"; filename=\"\(fileName)\"\r\nContent-Type: \(contentType)\r\n\r\n"
                        .utf8))
            body.append(bytes ?? Data(repeating: UInt8(ascii: "a") &+ UInt8(size % 26), count: size))
            body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)--\r\n".utf8))
        return body
    }
}
