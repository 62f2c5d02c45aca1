import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

@Suite("Control API: mutations, settings, downloads in progress, hosting elsewhere")
struct ControlAPITests {
    private let auth = [HTTP.basic("test_autor"), HTTP.jsonAPIAccept]

    private func names(in folderID: String, _ sim: Simulator) async throws -> [String] {
        let page = try await HTTP.get("\(sim.baseURL)/jsonapi.php/v1/folders/\(folderID)/file-refs", headers: auth)
        let data = (try page.json() as? [String: Any])?["data"] as? [[String: Any]] ?? []
        return data.compactMap { ($0["attributes"] as? [String: Any])?["name"] as? String }
    }

    private func object(_ result: HTTPResult) throws -> [String: Any] {
        try #require(try result.json() as? [String: Any])
    }

    @Test func documentLifecycleBumpsDatesAndETags() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let added = try object(
                try await HTTP.control(
                    .POST, "\(sim.controlURL)/documents",
                    #"{"folder_id": "\#(Scenario.slidesFolderID)", "name": "Blatt 2.txt", "text": "Aufgabe 1"}"#))
            let id = try #require(added["id"] as? String)
            #expect(try await names(in: Scenario.slidesFolderID, sim).contains("Blatt 2.txt"))
            let content = "\(sim.baseURL)/jsonapi.php/v1/file-refs/\(id)/content"
            let first = try await HTTP.get(content, headers: [HTTP.basic("test_autor")])
            #expect(first.text == "Aufgabe 1")
            let etag = try #require(first.header("ETag"))

            let changed = try object(
                try await HTTP.control(
                    .PATCH, "\(sim.controlURL)/documents/\(id)", #"{"text": "Aufgabe 1 (korrigiert)"}"#))
            #expect((changed["chdate"] as? Int ?? 0) > (added["chdate"] as? Int ?? 0))
            #expect(changed["file_id"] as? String != added["file_id"] as? String)
            let stale = try await HTTP.get(content, headers: [HTTP.basic("test_autor"), ("If-None-Match", etag)])
            #expect(stale.status == 200, "a new version must not match the old ETag")
            #expect(stale.text == "Aufgabe 1 (korrigiert)")
            #expect(stale.header("ETag") != etag)

            _ = try await HTTP.control(
                .PATCH, "\(sim.controlURL)/documents/\(id)",
                #"{"name": "Blatt 2 (neu).txt", "folder_id": "\#(Scenario.rootFolderID)"}"#)
            #expect(try await names(in: Scenario.rootFolderID, sim) == ["Blatt 2 (neu).txt"])
            #expect(!(try await names(in: Scenario.slidesFolderID, sim).contains("Blatt 2.txt")))

            #expect(try await HTTP.control(.DELETE, "\(sim.controlURL)/documents/\(id)").status == 200)
            #expect(try await HTTP.get(content, headers: [HTTP.basic("test_autor")]).status == 404)
            #expect(try await HTTP.control(.DELETE, "\(sim.controlURL)/documents/\(id)").status == 409)
        }
    }

    /// Issue 28: `new_version` without content made a PDF random bytes (evince: "File type unknown"). A new version
    /// of generated slides is again a PDF (pdfinfo reads it) about the same lecture (pdftotext finds its heading),
    /// with other bytes; a captured PDF's new version is a PDF too.
    @Test(.enabled(if: Tool.installed("/usr/bin/pdfinfo"), "needs poppler-utils"))
    func aNewVersionOfAPDFIsAPDFOfTheSameSubject() async throws {
        func info(_ bytes: Data) async throws -> CommandResult {
            let directory = try Tool.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = directory.appendingPathComponent("document.pdf")
            try bytes.write(to: url)
            return try await runTool("/usr/bin/pdfinfo", [url.path])
        }
        for (dataset, generated) in [(Dataset.generated(.demo, seed: 1), true), (.fixtures507, false)] {
            try await withSimulator(dataset, flavour: .v55) { sim async throws in
                let pdfs = sim.university.fileRefs.values.filter { $0.mimeType == "application/pdf" }
                let document = try #require(pdfs.min { $0.id < $1.id })
                let content = "\(sim.baseURL)/jsonapi.php/v1/file-refs/\(document.id)/content"
                let auth = [HTTP.basic("test_autor")]
                let before = try await HTTP.get(content, headers: auth)
                #expect(before.status == 200)
                let changed = try await HTTP.control(
                    .PATCH, "\(sim.controlURL)/documents/\(document.id)", #"{"new_version": true}"#)
                #expect(changed.status == 200, "\(changed.text)")
                let after = try await HTTP.get(content, headers: auth)
                #expect(after.status == 200)
                #expect(after.body != before.body, "a new version has other bytes")
                #expect(after.body.starts(with: Array("%PDF-".utf8)), "\(generated): \(after.text.prefix(300))")
                let read = try await info(after.body)
                #expect(read.status == 0, "\(read.stderr)")
                #expect(read.stdout.contains("Pages:"), "\(read.stdout)")
                if case .generated(.pdf, let seed, _) = document.content {
                    let text = try await Tool.pdftotext(Array(after.body))
                    let title = ContentGenerator.title(seed: seed)
                    #expect(
                        text.stdout.contains(title), "the new version is about \(title): \(text.stdout.prefix(300))")
                } else {
                    #expect(!generated, "the demo's PDFs are generated")
                }
            }
        }
    }

    @Test func folderLifecycleAndNewCourses() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let folder = try object(
                try await HTTP.control(
                    .POST, "\(sim.controlURL)/folders",
                    #"{"parent_id": "\#(Scenario.rootFolderID)", "name": "Klausur"}"#))
            let folderID = try #require(folder["id"] as? String)
            _ = try await HTTP.control(
                .POST, "\(sim.controlURL)/documents", #"{"folder_id": "\#(folderID)", "name": "alt.pdf", "size": 5000}"#
            )
            _ = try await HTTP.control(
                .PATCH, "\(sim.controlURL)/folders/\(folderID)",
                #"{"name": "Klausuren", "parent_id": "\#(Scenario.slidesFolderID)"}"#)
            let moved = try await HTTP.get("\(sim.baseURL)/jsonapi.php/v1/folders/\(folderID)", headers: auth)
            #expect(moved.text.contains("Klausuren"))
            #expect(sim.university.folders[folderID]?.parentID == Scenario.slidesFolderID)
            let cycle = try await HTTP.control(
                .PATCH, "\(sim.controlURL)/folders/\(Scenario.slidesFolderID)", #"{"parent_id": "\#(folderID)"}"#)
            #expect(cycle.status == 409, "a folder cannot move below itself")

            #expect(try await HTTP.control(.DELETE, "\(sim.controlURL)/folders/\(folderID)").status == 200)
            #expect(sim.university.folders[folderID] == nil)
            #expect(
                sim.university.fileRefs.values.allSatisfy { $0.folderID != folderID }, "contents go with the folder")

            let course = try object(
                try await HTTP.control(
                    .POST, "\(sim.controlURL)/courses",
                    #"{"title": "Neu", "semester_ids": ["\#(Scenario.semesterID)"], "members": {"test_autor": "autor"}}"#
                ))
            let courseID = try #require(course["id"] as? String)
            let userID = try #require(sim.university.user(named: "test_autor")?.id)
            let courses = try await HTTP.get("\(sim.baseURL)/jsonapi.php/v1/users/\(userID)/courses", headers: auth)
            #expect(courses.text.contains(courseID))
        }
    }

    @Test func downloadInProgressIsVisibleWhileBandwidthIsCapped() async throws {
        try await withSimulator(
            Scenario.start(settings: SimulatorSettings(bandwidthBytesPerSecond: 512 << 10), bigSize: 2 << 20)
        ) { sim in
            let download = Task {
                try await HTTP.get(
                    "\(sim.baseURL)/jsonapi.php/v1/file-refs/\(Scenario.bigID)/content",
                    headers: [HTTP.basic("test_autor")]
                )
            }
            var inProgress: Int?
            // Counted from before the first write, at 0 bytes: wait for some.
            for _ in 0..<100 where (inProgress ?? 0) == 0 {
                try await Task.sleep(for: .milliseconds(50))
                let stats = try object(try await HTTP.get("\(sim.controlURL)/stats"))
                inProgress = ((stats["downloads"] as? [String: Any])?["in_progress"] as? [String: Int])?[Scenario.bigID]
            }
            let sent = try #require(inProgress, "the download must be reported while it runs")
            #expect(sent > 0 && sent < 2 << 20)
            let result = try await download.value
            let expected = try await HTTP.get("\(sim.controlURL)/documents/\(Scenario.bigID)/content")
            #expect(result.body == expected.body)
            #expect(result.body.count == 2 << 20)
        }
    }

    @Test func elsewhereHostedDocumentsNeverSeeCredentials() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let redirect = try await HTTP.get(
                "\(sim.baseURL)/jsonapi.php/v1/file-refs/\(Scenario.linkID)/content",
                headers: [HTTP.basic("test_autor")])
            #expect(redirect.status == 302)
            let location = try #require(redirect.header("Location"))
            #expect(location.hasPrefix(sim.externalBaseURL))

            let document = try await HTTP.get(location)
            let expected = try await HTTP.get("\(sim.controlURL)/documents/\(Scenario.linkID)/content")
            #expect(document.status == 200)
            #expect(document.body == expected.body)
            #expect(document.body.count == 3000)
            var external = try object(try await HTTP.get("\(sim.controlURL)/stats"))["external"] as? [String: Int]
            #expect(external == ["requests": 1, "with_credentials": 0])

            _ = try await HTTP.get(location, headers: [HTTP.basic("test_autor")])
            external = try object(try await HTTP.get("\(sim.controlURL)/stats"))["external"] as? [String: Int]
            #expect(external?["with_credentials"] == 1, "the external host notices forwarded credentials")
        }
    }

    @Test func settingsRoundTrip() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let updated = try object(
                try await HTTP.control(
                    .PUT, "\(sim.controlURL)/settings", #"{"latency_ms": 20, "bandwidth_bytes_per_second": 1000000}"#))
            #expect(updated["latency_ms"] as? Int == 20)
            #expect(updated["bandwidth_bytes_per_second"] as? Int == 1_000_000)
            let cleared = try object(
                try await HTTP.control(.PUT, "\(sim.controlURL)/settings", #"{"bandwidth_bytes_per_second": null}"#))
            #expect(cleared["bandwidth_bytes_per_second"] is NSNull)
            #expect(try await HTTP.control(.GET, "\(sim.controlURL)/nothing").status == 404)
        }
    }
}
