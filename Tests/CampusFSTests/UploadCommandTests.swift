import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// `campusfs upload` and `campusfs outbox` without a mount (issue 32, docs/writing.md, "The outbox"), against the
/// simulator's `fixtures-5.0.7-writes`: the command runs the outbox itself, and what it sends is checked as the
/// lecturer (`test_dozent`) sees it on Stud.IP.
@Suite struct UploadCommandTests {
    static let course = "SS 2022/12345 Test Lehrveranstaltung"
    static let general = course + "/Allgemeiner Dateiordner"
    static let generalID = "ca002fbae136b07e4df29e0136e3bd32"
    static let homeworkID = "ad8dc6a6162fb0fe022af4a62a15e309"
    static let dateFolder = course + "/13. Klausur am Wed., 07-27-22, 10:15 - 12:00"

    /// A home whose default profile is test_autor's on `sim`, refreshed once, with `settings` in its profile.
    static func home(_ sim: Simulator, _ settings: String = "uploads = true") async throws -> CLI {
        let cli = try CLI()
        try writeConfig(cli, sim, settings)
        let refresh = try await cli.run(["refresh"])
        #expect(refresh.status == 0, "\(refresh.stderr)")
        return cli
    }

    static func writeConfig(_ cli: CLI, _ sim: Simulator, _ settings: String) throws {
        try FileManager.default.createDirectory(
            at: cli.configFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("[profiles.default]\nurl = \"\(sim.baseURL)\"\nusername = \"test_autor\"\n\(settings)\n".utf8)
            .write(to: cli.configFile)
    }

    /// A file `name` with `text` in the home, outside the tree.
    static func file(_ cli: CLI, _ name: String, _ text: String) throws -> String {
        let url = cli.home.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// The lecturer's view of `folderID` on Stud.IP (JSON:API): each document's name, its terms of use and bytes.
    static func lecturersView(_ sim: Simulator, folder folderID: String) async throws -> [String: (
        terms: String?, bytes: String
    )] {
        let api = sim.baseURL + "/jsonapi.php/v1"
        let curl = "curl -sf -u test_dozent:testing -H 'Accept: application/vnd.api+json'"
        let listing = try await shell("\(curl) \(quoted(api + "/folders/\(folderID)/file-refs"))")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(listing.stdout.utf8)) as? [String: Any])
        var view: [String: (terms: String?, bytes: String)] = [:]
        for document in json["data"] as? [[String: Any]] ?? [] {
            let id = try #require(document["id"] as? String)
            let name = try #require((document["attributes"] as? [String: Any])?["name"] as? String)
            let terms = ((document["relationships"] as? [String: Any])?["terms-of-use"] as? [String: Any])
                .flatMap { ($0["data"] as? [String: Any])?["id"] as? String }
            let content = try await shell("\(curl) \(quoted(api + "/file-refs/\(id)/content"))")
            view[name] = (terms, content.stdout)
        }
        return view
    }

    /// Off unless the profile says so; never into a folder Stud.IP does not let the student write to; otherwise the
    /// lecturer sees the bytes, under the licence for a student's own work, and the user's file stays where it was.
    @Test func uploadSendsACopyTheLecturerSeesAndRefusesWhereItMayNot() async throws {
        try await withSimulator(.fixtures507Writes) { sim async throws in
            let cli = try await Self.home(sim, "")
            defer { cli.removeHome() }
            let notes = try Self.file(cli, "Protokoll Sitzung 4.txt", "Anwesend: alle\nBeschlüsse: keine\n")

            let off = try await cli.run(["upload", notes, Self.general])
            #expect(off.status == 1, "\(off.stderr)")
            #expect(off.stderr.contains("uploads are off for \"default\": add uploads = true"), "\(off.stderr)")

            try Self.writeConfig(cli, sim, "uploads = true")
            let closed = try await cli.run(["upload", notes, Self.dateFolder])
            #expect(closed.status == 1, "\(closed.stderr)")
            #expect(closed.stderr.contains("Stud.IP does not let you add files to"), "\(closed.stderr)")
            #expect(try await Self.lecturersView(sim, folder: Self.generalID)["Protokoll Sitzung 4.txt"] == nil)

            let upload = try await cli.run(["upload", notes, Self.general])
            #expect(upload.status == 0, "\(upload.stderr)")
            #expect(upload.stdout.contains("uploaded Protokoll Sitzung 4.txt to \(Self.general)"), "\(upload.stdout)")
            #expect(!upload.stderr.contains("info"), "the outbox logs to the profile's log file: \(upload.stderr)")
            let view = try await Self.lecturersView(sim, folder: Self.generalID)
            let seen = try #require(view["Protokoll Sitzung 4.txt"], "\(view.keys)")
            #expect(seen.bytes == "Anwesend: alle\nBeschlüsse: keine\n")
            #expect(seen.terms == "SELFMADE_NONPUB", "own, unpublished work, not Stud.IP's UNDEF_LICENSE")
            #expect(FileManager.default.fileExists(atPath: notes), "the user's file stays")

            // A homework folder: Stud.IP's 201 is the confirmation, since a student cannot read hand-ins back.
            let homework = try await cli.run(["upload", notes, Self.course + "/Hausaufgaben"])
            #expect(homework.status == 0, "\(homework.stderr)")
            #expect(
                homework.stdout.contains("handed in Protokoll Sitzung 4.txt to \(Self.course)/Hausaufgaben"),
                "\(homework.stdout)")
            let handedIn = try await Self.lecturersView(sim, folder: Self.homeworkID)["Protokoll Sitzung 4.txt"]
            #expect(handedIn?.bytes == "Anwesend: alle\nBeschlüsse: keine\n", "the lecturer sees it")

            let outbox = try await cli.run(["outbox"])
            #expect(outbox.status == 0 && outbox.stdout.isEmpty, "\(outbox.stdout)\(outbox.stderr)")
            let log = try String(
                contentsOf: cli.home.appendingPathComponent("state/campusfs/default.log"), encoding: .utf8)
            #expect(log.contains("outbox"), "\(log)")
        }
    }

    /// What Stud.IP refuses stays in the outbox with its reason (exit 4); offline it waits there (exit 3). `outbox`
    /// lists both, `retry` queues again, and `discard` drops only after a yes at the terminal (a script must pass
    /// --yes).
    @Test func refusedAndWaitingUploadsStayInTheOutboxUntilRetriedOrDiscarded() async throws {
        try await withSimulator(.fixtures507Writes) { sim async throws in
            let cli = try await Self.home(sim)
            defer { cli.removeHome() }
            let program = try Self.file(cli, "Setup.exe", "MZ")
            let refused = try await cli.run(["upload", program, Self.general])
            #expect(refused.status == 4, "\(refused.stderr)")
            #expect(refused.stderr.contains("does not accept .exe files"), "\(refused.stderr)")
            #expect(refused.stderr.contains("it stays in the outbox"), "\(refused.stderr)")

            sim.faults.add(Fault(action: .status(503)))
            let notes = try Self.file(cli, "Notizen.txt", "offline geschrieben\n")
            let offline = try await cli.run(["upload", notes, Self.general])
            sim.faults.clear()
            #expect(offline.status == 3, "\(offline.stderr)")
            #expect(offline.stderr.contains("Notizen.txt waits in the outbox"), "\(offline.stderr)")

            let listed = try await cli.run(["outbox"])
            #expect(listed.status == 0, "\(listed.stderr)")
            let rows = listed.lines.map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
            try #require(rows.count == 2, "\(listed.stdout)")
            #expect(rows[0][1...4] == ["failed", "upload", "Setup.exe", "folder \(Self.generalID)"], "\(rows[0])")
            #expect(rows[0][5].contains("does not accept .exe files"), "\(rows[0])")
            #expect(rows[1][1...3] == ["waiting", "upload", "Notizen.txt"], "\(rows[1])")
            let failedID = rows[0][0]

            let json = try await cli.run(["outbox", "--json"])
            let entries = try #require(
                try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])
            #expect(entries.map { $0["state"] as? String } == ["failed", "waiting"], "\(json.stdout)")
            #expect(entries.first?["bytes"] as? Int == 2)

            let unasked = try await cli.run(["outbox", "discard", failedID])
            #expect(unasked.status == 1, "\(unasked.stderr)")
            #expect(unasked.stderr.contains("pass --yes"), "\(unasked.stderr)")
            let retried = try await cli.run(["outbox", "retry", failedID])
            #expect(retried.status == 0, "\(retried.stderr)")
            #expect(retried.stdout.contains("goes to Stud.IP at the next mount"), "\(retried.stdout)")
            #expect(try await cli.run(["outbox"]).lines.first?.contains("\tqueued\t") == true)

            // At a terminal it asks; only a yes drops the bytes.
            let question = "What it would send is deleted. [y/N] "
            let kept = try await cli.converse(["outbox", "discard", failedID], [.init(prompt: question, answer: "n")])
            #expect(kept.status == 0 && kept.output.contains("kept entry \(failedID)"), "\(kept.output)")
            #expect(try await cli.run(["outbox"]).lines.count == 2)
            let discarded = try await cli.converse(
                ["outbox", "discard", failedID], [.init(prompt: question, answer: "y")])
            #expect(discarded.status == 0, "\(discarded.output)")
            #expect(discarded.output.contains("discarded the upload of Setup.exe"), "\(discarded.output)")
            let left = try await cli.run(["outbox"])
            #expect(left.lines.count == 1 && left.lines.first?.contains("Notizen.txt") == true, "\(left.stdout)")
            #expect(try await Self.lecturersView(sim, folder: Self.generalID)["Setup.exe"] == nil)
        }
    }
}
