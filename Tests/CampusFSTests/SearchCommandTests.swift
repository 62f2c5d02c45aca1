import Foundation
import MetadataStore
import StudIPModel
import TestSupport
import Testing

@testable import StudIPSimulator

/// `campusfs search` as users and scripts run it: on a profile refreshed from the simulator, with text indexed as
/// the daemon's extraction will (`indexContent`), mounted (daemon in a subprocess) and not.
@Suite(.serialized)
struct SearchCommandTests {
    static let course = DaemonTests.course
    static let otherCourse = "WS 2026-27/BS-202 Betriebssysteme & Dateisysteme"
    static let summerCourse = "SS 2026/VS-303 Seminar: Verteilte Systeme (Sommer)"
    static let readme = DaemonTests.readme
    static let grundlagen = "Vorlesungsfolien/Kapitel 2 - Grundlagen.pdf"
    static let einleitung = "Vorlesungsfolien/Kapitel 1 - Einleitung.pdf"

    /// One element of `--json`'s array.
    struct Hit: Decodable, Hashable {
        var path: String
        var state: String
        var snippet: String
        var part: Int?
        var partKind: String?
        var documentID: String
        var contentMatched: Bool
    }

    /// Text as the extraction stores it: pages of two PDFs, and the README without pages.
    static func indexText(database: URL) throws {
        let store = try MetadataStore(path: database.path)
        func index(_ path: String, _ kind: TextPartKind?, _ parts: [(number: Int?, text: String)]) throws {
            let document = try #require(try store.document(inode: try store.resolve(path: path).inode))
            try store.indexContent(
                documentID: document.id, version: document.version, extractor: 1, partKind: kind, parts: parts)
        }
        try index(
            course + "/" + grundlagen, .page, [(1, "Inhalt"), (2, "Ein B-Baum ist ein\nbalancierter Suchbaum.")])
        try index(readme, nil, [(nil, "Willkommen! Der B-Baum kommt in Woche 3.")])
        try index(
            otherCourse + "/" + einleitung, .page,
            [(1, "Organisatorisches"), (2, "Überblick"), (3, "Grundlagen der Prozesse \u{1B}[2J")])
    }

    /// Waits (up to 30 s) until the index holds the current version of the document at `path`.
    static func waitUntilIndexed(database: URL, _ path: String) async throws {
        let store = try MetadataStore(path: database.path)
        let document = try #require(try store.document(inode: try store.resolve(path: path).inode))
        var waited = 0
        while try store.indexingSubject(documentID: document.id)?.isIndexed != true, waited < 300 {
            try await Task.sleep(for: .milliseconds(100))
            waited += 1
        }
        #expect(waited < 300, "the daemon did not index \(path)")
    }

    static func hits(_ result: CLI.Result) throws -> [Hit] {
        #expect(result.status == 0, "\(result.stderr)")
        return try JSONDecoder().decode([Hit].self, from: Data(result.stdout.utf8))
    }

    static func downloads(_ sim: Simulator) -> Int {
        sim.statistics.snapshot().downloadsCompleted.values.reduce(0, +)
    }

    @Test func rankedHitsWithPagesAndStatesMountedAndNotWithoutDownloading() async throws {
        try await DaemonTests.with { setup in
            #expect(try await setup.mount().status == 0)
            #expect(try await shell("cat \(setup.path(Self.readme)) >/dev/null").status == 0)
            #expect(try await CacheCommandTests.waitForBlobs(setup, [Self.readme]))
            // The daemon indexes the cached README itself: wait for that, or its text can replace the test's (a clean
            // run's search found no "B-Baum" in it once).
            try await Self.waitUntilIndexed(database: setup.cli.database(), Self.readme)
            try Self.indexText(database: setup.cli.database())
            let highlights = try await setup.campusfs(["new"])
            setup.sim.statistics.reset()
            let mount = setup.mountpoint

            // Title matches first (bm25 over the metadata), then the document that matched only in its text.
            let ranked = try await setup.campusfs(["search", "grundlagen"])
            #expect(ranked.status == 0, "\(ranked.stderr)")
            let blocks = stride(from: 0, to: ranked.lines.count, by: 2).map {
                ranked.lines[$0..<min($0 + 2, ranked.lines.count)]
            }
            #expect(blocks.count == 4, "\(ranked.stdout)")
            #expect(
                Set(blocks.prefix(3).map(Array.init)) == [
                    [mount + "/" + Self.course + "/" + Self.grundlagen, "  remote: Kapitel 2 - Grundlagen.pdf"],
                    [mount + "/" + Self.otherCourse + "/" + Self.grundlagen, "  remote: Kapitel 2 - Grundlagen.pdf"],
                    [mount + "/" + Self.summerCourse + "/" + Self.grundlagen, "  remote: Kapitel 2 - Grundlagen.pdf"],
                ], "\(ranked.stdout)")
            #expect(
                blocks.last.map(Array.init) == [
                    mount + "/" + Self.otherCourse + "/" + Self.einleitung,
                    "  remote, page 3: Grundlagen der Prozesse [2J",
                ], "markers stripped off a terminal, the text's escape character too: \(ranked.stdout)")

            let bBaum = [
                Hit(
                    path: mount + "/" + Self.course + "/" + Self.grundlagen, state: "remote",
                    snippet: "Ein B-Baum ist ein balancierter Suchbaum.", part: 2, partKind: "page",
                    documentID: try setup.document(Self.course + "/" + Self.grundlagen).id, contentMatched: true),
                Hit(
                    path: mount + "/" + Self.readme, state: "cached",
                    snippet: "Willkommen! Der B-Baum kommt in Woche 3.",
                    part: nil, partKind: nil, documentID: try setup.document(Self.readme).id, contentMatched: true),
            ]
            let json = try await setup.campusfs(["search", "b-baum", "--json"])
            let mounted = try Self.hits(json)
            #expect(Set(mounted) == Set(bBaum), "\(json.stdout)")
            let objects = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
            #expect(objects?.allSatisfy { $0.keys.count == 7 } == true, "null part and partKind are written")

            let text = try await setup.campusfs(["search", "b-baum"])
            var expectedText: [String] = []
            for hit in mounted {
                let place = hit.part.map { ", page \($0)" } ?? ""
                expectedText += [hit.path, "  \(hit.state)\(place): \(hit.snippet)"]
            }
            #expect(text.lines == expectedText)
            let paths = try await setup.campusfs(["search", "b-baum", "--paths"])
            #expect(Data(paths.stdout.utf8) == Data(mounted.map { $0.path + "\n" }.joined().utf8))
            let nul = try await setup.campusfs(["search", "-0", "b-baum"])
            #expect(Data(nul.stdout.utf8) == Data(mounted.map { $0.path + "\0" }.joined().utf8))
            #expect(try await setup.campusfs(["new"]).stdout == highlights.stdout, "highlights stay as they were")

            // Without a mount: the same hits, below ~/Uni, where `campusfs mount` mounts by default.
            #expect(try await setup.campusfs(["unmount", mount], timeout: 30).status == 0)
            let unmounted = try Self.hits(try await setup.campusfs(["search", "b-baum", "--json"]))
            let home = setup.cli.home.appendingPathComponent("Uni").path
            var moved = mounted
            for index in moved.indices { moved[index].path = home + mounted[index].path.dropFirst(mount.count) }
            #expect(unmounted == moved)
            #expect(Self.downloads(setup.sim) == 0, "search never downloads")
        }
    }

    @Test func filtersNarrowTheHits() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let refresh = try await cli.run(["refresh", "--server", sim.baseURL, "--username", "test_autor"])
            #expect(refresh.status == 0, "\(refresh.stderr)")
            try Self.indexText(database: cli.database())
            let root = cli.home.appendingPathComponent("Uni").path + "/"
            func paths(_ arguments: [String]) async throws -> [String] {
                let result = try await cli.run(["search", "grundlagen", "--paths"] + arguments)
                #expect(result.status == 0, "\(arguments): \(result.stderr)")
                return result.lines.map { String($0.dropFirst(root.count)) }
            }

            #expect(try await paths(["--course", "inf-101"]) == [Self.course + "/" + Self.grundlagen])
            #expect(try await paths(["--semester", "SS 2026"]) == [Self.summerCourse + "/" + Self.grundlagen])
            #expect(
                Set(try await paths(["--semester", "WS 2026-27"])) == [
                    Self.course + "/" + Self.grundlagen, Self.otherCourse + "/" + Self.grundlagen,
                    Self.otherCourse + "/" + Self.einleitung,
                ])
            #expect(
                try await paths(["--semester", "WS 2026/27", "--course", "BS-202", "--limit", "1"]).count == 1)
            let tagged = try await cli.run(["tag", Self.summerCourse + "/" + Self.grundlagen, "+Klausur"])
            #expect(tagged.status == 0, "\(tagged.stderr)")
            #expect(try await paths(["--tag", "klausur"]) == [Self.summerCourse + "/" + Self.grundlagen])

            // --new: the first sync marks only what changed in the last week; a document added later is new.
            let store = try MetadataStore(path: cli.database().path)
            let readme = try #require(try store.document(inode: try store.resolve(path: Self.readme).inode))
            let body = #"{"folder_id": "\#(readme.folderID)", "name": "Grundlagen Nachtrag.txt", "text": "x"}"#
            let added = try await shell("curl -sf -X POST -d \(quoted(body)) \(sim.controlURL)/documents")
            #expect(added.status == 0, "\(added.stderr)")
            let again = try await cli.run(["refresh", "--server", sim.baseURL, "--username", "test_autor"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(try await paths(["--new"]) == [Self.course + "/Grundlagen Nachtrag.txt"])
            #expect(Self.downloads(sim) == 0)
        }
    }

    /// Search opens the store read-only (issue 31): not a byte of it changes and no WAL is written, where a
    /// writing open created a WAL, committed a transaction to it and checkpointed it into the file on exit.
    @Test func searchWritesNothingToTheStore() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let refresh = try await cli.run(["refresh", "--server", sim.baseURL, "--username", "test_autor"])
            #expect(refresh.status == 0, "\(refresh.stderr)")
            try Self.indexText(database: cli.database())
            let found = try await cli.runLeavingTheStoreAlone(["search", "grundlagen", "--paths"])
            #expect(found.status == 0 && found.lines.count == 4, "\(found)")
        }
    }

    /// The read-only open is for a current schema only; an older store is left to the migrating open.
    @Test func theReadOnlyOpenRefusesAnOlderSchema() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let refresh = try await cli.run(["refresh", "--server", sim.baseURL, "--username", "test_autor"])
            #expect(refresh.status == 0, "\(refresh.stderr)")
            let database = cli.database().path
            let current = try #require(try MetadataStore.readOnly(path: database))
            #expect(try current.search("grundlagen").count == 3)
            let script = """
                import sqlite3, sys
                db = sqlite3.connect(sys.argv[1])
                db.execute("DELETE FROM grdb_migrations WHERE rowid = (SELECT max(rowid) FROM grdb_migrations)")
                db.commit()
                """
            #expect(try await shell("python3 -c \(quoted(script)) \(quoted(database))").status == 0)
            #expect(try MetadataStore.readOnly(path: database) == nil)
        }
    }

    @Test func exitStatusesColoursAndMalformedQueries() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let unknown = try await cli.run(["search", "grundlagen"])
            #expect(unknown.status == 2)
            #expect(unknown.stderr.contains("run `campusfs refresh` first"), "\(unknown.stderr)")
            let refresh = try await cli.run(["refresh", "--server", sim.baseURL, "--username", "test_autor"])
            #expect(refresh.status == 0, "\(refresh.stderr)")
            try Self.indexText(database: cli.database())

            let nothing = try await cli.run(["search", "zzqx"])
            #expect(nothing.status == 1 && nothing.stdout.isEmpty && nothing.stderr.isEmpty, "\(nothing)")
            #expect(try await cli.run(["search", "zzqx", "--json"]).stdout == "[]\n")
            for (query, message) in [
                ("\"unclosed", "a quote is not closed"), ("AND", "it contains no word"), ("NOT b-baum", "NOT needs"),
            ] {
                let result = try await cli.run(["search", query])
                #expect(result.status == 2, "\(query)")
                #expect(
                    result.stderr.hasPrefix("campusfs: cannot search for \"\(query)\": \(message)"), "\(result.stderr)")
                #expect(!result.stderr.lowercased().contains("sqlite") && !result.stderr.contains("fts5"))
            }
            #expect(try await cli.run(["search", "x", "--limit", "0"]).status == 2)
            #expect(try await cli.run(["search"]).status == 2)

            let terminal = try await cli.runInTerminal(["search", "balancierter"])
            #expect(terminal.status == 0)
            #expect(
                terminal.output.contains("Ein B-Baum ist ein \u{1B}[1;31mbalancierter\u{1B}[0m Suchbaum."),
                "\(terminal.output)")
            #expect(Self.downloads(sim) == 0)
        }
    }
}
