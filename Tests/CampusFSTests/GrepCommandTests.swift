import Foundation
import MetadataStore
import StudIPModel
import TestSupport
import Testing

@testable import StudIPSimulator

/// `campusfs grep` end to end: a profile refreshed from the simulator, text put into its store's index the way the
/// daemon's indexing will, and the built binary; unmounted and with a daemon serving the mount.
@Suite(.serialized)
struct GrepCommandTests {
    static let course = DaemonTests.course
    static let slides = DaemonTests.slides
    static let readme = DaemonTests.readme
    static let solutions = course + "/Übungsblätter/Übungsblatt 1 – Lösungen.txt"
    static let otherReadme = "WS 2026-27/BS-202 Betriebssysteme & Dateisysteme/README.txt"

    /// Text for four documents (a PDF with two pages), a failed extraction for the image; the rest stays
    /// undownloaded. Returns how many documents have no text: what the note on stderr counts.
    static func index(_ database: URL) throws -> Int {
        let store = try MetadataStore(path: database.path)
        func put(_ path: String, _ kind: TextPartKind?, _ parts: [(number: Int?, text: String)]) throws {
            let document = try #require(try store.document(inode: try store.resolve(path: path).inode))
            try store.indexContent(
                documentID: document.id, version: document.version, extractor: 1, partKind: kind, parts: parts)
        }
        try put(
            slides, .page, [(1, "Einleitung\nDer B-Baum ist ein Suchbaum\n"), (2, "Rekursion\nB-Baum: Einfügen\n")])
        try put(readme, nil, [(nil, "Willkommen zur Übung\nKein Baum hier\n")])
        try put(solutions, nil, [(nil, "Lösung: B-Baum der Ordnung 3\n")])
        try put(otherReadme, nil, [(nil, "Betriebssysteme\nB-Baum im Dateisystem\n")])
        let image = try #require(
            try store.document(inode: try store.resolve(path: course + "/Übungsblätter/diagramm.png").inode))
        try store.recordExtractionFailure(
            documentID: image.id, version: image.version, extractor: 1, reason: "an image")
        return try store.grepMissing(below: Node.rootInode).count
    }

    static func noDownloads(_ sim: Simulator) -> Bool {
        let stats = sim.statistics.snapshot()
        return stats.downloadsCompleted.isEmpty && stats.downloadsInProgress.isEmpty
    }

    @Test func searchesStoredTextWithoutAMount() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let login = ["--server", sim.baseURL, "--username", "test_autor"]
            #expect(try await cli.run(["refresh"] + login).status == 0)
            // A new version of the README on the server: after the refresh it is highlighted "changed".
            let store = try MetadataStore(path: cli.database().path)
            let readmeID = try #require(try store.document(inode: try store.resolve(path: Self.readme).inode)).id
            let patch = try await shell(
                "curl -sf -X PATCH -d '{\"text\": \"Version zwei.\\n\"}' \(sim.controlURL)/documents/\(readmeID)")
            #expect(patch.status == 0, "\(patch.stderr)")
            #expect(try await cli.run(["refresh"] + login).status == 0)
            let notSearched = try Self.index(cli.database())
            let highlights = try store.highlightedDocuments()
            #expect(highlights.contains { $0.path == Self.readme && $0.highlight == .changed })

            let all = try await cli.run(["grep", "B-Baum"])
            #expect(all.status == 0, "\(all.stderr)")
            #expect(
                all.lines == [
                    "\(Self.otherReadme):B-Baum im Dateisystem",
                    "\(Self.slides):page 1:Der B-Baum ist ein Suchbaum",
                    "\(Self.slides):page 2:B-Baum: Einfügen",
                    "\(Self.solutions):Lösung: B-Baum der Ordnung 3",
                ])
            #expect(
                all.stderr
                    == "campusfs grep: \(notSearched) document(s) not searched: not downloaded yet, or their text not "
                    + "indexed yet (`campusfs pin PATH` downloads)\n")
            #expect(notSearched > 10)

            let numbered = try await cli.run(["grep", "-n", "-C1", "B-Baum", Self.course + "/"])
            #expect(
                numbered.lines == [
                    "\(Self.slides)-page 1-1-Einleitung",
                    "\(Self.slides):page 1:2:Der B-Baum ist ein Suchbaum",
                    "--",
                    "\(Self.slides)-page 2-1-Rekursion",
                    "\(Self.slides):page 2:2:B-Baum: Einfügen",
                    "--",
                    "\(Self.solutions):1:Lösung: B-Baum der Ordnung 3",
                ], "\(numbered.stderr)")
            let files = try await cli.run(["grep", "-l", "B-Baum", Self.course])
            #expect(files.lines == [Self.slides, Self.solutions])
            let without = try await cli.run(["grep", "-L", "B-Baum", Self.course])
            #expect(without.lines == [Self.readme])
            #expect(without.status == 0, "a line was selected, as grep -L says")
            let counts = try await cli.run(["grep", "-c", "-w", "Suchbaum", Self.course])
            #expect(counts.lines == ["\(Self.readme):0", "\(Self.slides):1", "\(Self.solutions):0"])
            let single = try await cli.run(["grep", "-i", "ÜBUNG", Self.readme])
            #expect(single.lines == ["Willkommen zur Übung"])
            #expect(single.stderr.isEmpty)
            let included = try await cli.run(["grep", "-h", "--include=*.pdf", "Baum"])
            #expect(included.lines == ["page 1:Der B-Baum ist ein Suchbaum", "page 2:B-Baum: Einfügen"])
            let colored = try await cli.run(["grep", "--color=always", "-F", "Suchbaum", Self.course])
            #expect(
                colored.lines == [
                    "\u{1B}[35m\u{1B}[K\(Self.slides)\u{1B}[m\u{1B}[K\u{1B}[36m\u{1B}[K:\u{1B}[m\u{1B}[K"
                        + "\u{1B}[32m\u{1B}[Kpage 1\u{1B}[m\u{1B}[K\u{1B}[36m\u{1B}[K:\u{1B}[m\u{1B}[K"
                        + "Der B-Baum ist ein \u{1B}[01;31m\u{1B}[KSuchbaum\u{1B}[m\u{1B}[K"
                ])
            let plain = try await cli.run(["grep", "--color", "-F", "Suchbaum", Self.course])
            #expect(plain.lines == ["\(Self.slides):page 1:Der B-Baum ist ein Suchbaum"], "not a terminal")

            let none = try await cli.run(["grep", "Nirgendwo"])
            #expect(none.status == 1)
            #expect(none.stdout.isEmpty)
            let quiet = try await cli.run(["grep", "-q", "Suchbaum"])
            #expect(quiet.status == 0)
            #expect(quiet.stdout.isEmpty && quiet.stderr.isEmpty)
            let badPattern = try await cli.run(["grep", "a\\(", Self.course])
            #expect(badPattern.status == 2)
            #expect(badPattern.stderr.hasPrefix("campusfs grep: invalid pattern \"a\\(\": "), "\(badPattern.stderr)")
            let unknownPath = try await cli.run(["grep", "B-Baum", "WS 2026-27/Gibt es nicht", Self.course])
            #expect(unknownPath.status == 2, "an error, even with lines selected, as in grep")
            #expect(unknownPath.lines.count == 3)
            #expect(unknownPath.stderr.contains("WS 2026-27/Gibt es nicht"))
            let badFlag = try await cli.run(["grep", "--frobnicate", "B-Baum"])
            #expect(badFlag.status == 2)

            #expect(Self.noDownloads(sim), "grep never downloads")
            #expect(try store.highlightedDocuments() == highlights)
        }
    }

    /// A profile refreshed from the simulator's fixtures with ``index(_:)``'s text in its store, for `body`.
    static func withIndexedProfile(_ body: (inout CLI) async throws -> Void) async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            var cli = try CLI()
            defer { cli.removeHome() }
            let refresh = try await cli.run(["refresh", "--server", sim.baseURL, "--username", "test_autor"])
            #expect(refresh.status == 0, "\(refresh.stderr)")
            _ = try index(cli.database())
            try await body(&cli)
        }
    }

    /// grep opens the store read-only: neither the database nor its WAL changes (the migrating open wrote a WAL
    /// and checkpointed it on close).
    @Test func grepWritesNothingToTheStore() async throws {
        try await Self.withIndexedProfile { cli async throws in
            let found = try await cli.runLeavingTheStoreAlone(["grep", "-c", "B-Baum", Self.course])
            #expect(found.status == 0 && found.lines.count == 3, "\(found)")
        }
    }

    /// grep's process keeps no SQLite memory statistics (MetadataStore turns them off before the store opens: with
    /// them on, every SQLite allocation of grep's reading threads takes one process-wide mutex, docs/search.md). A
    /// library preloaded into the real binary prints SQLite's own peak of counted memory at exit; Python's sqlite3
    /// (the same libsqlite3, statistics left on) shows that the probe does count. The Swift toolchain's clang builds it.
    @Test func grepKeepsNoSQLiteMemoryStatistics() async throws {
        try await Self.withIndexedProfile { cli async throws in
            let probe = cli.home.appendingPathComponent("memory-probe")
            try """
            #include <sqlite3.h>
            #include <stdio.h>
            __attribute__((destructor)) static void report(void) {
                fprintf(stderr, "sqlite-memory-highwater=%lld\\n", (long long)sqlite3_memory_highwater(0));
            }
            """.write(to: probe.appendingPathExtension("c"), atomically: true, encoding: .utf8)
            let compiled = try await shell(
                "clang -shared -fPIC -o \(quoted(probe.path + ".so")) \(quoted(probe.path + ".c")) -lsqlite3")
            #expect(compiled.status == 0, "\(compiled.stderr)")
            let python = try await shell(
                "LD_PRELOAD=\(quoted(probe.path + ".so")) python3 -c "
                    + quoted("import sqlite3; sqlite3.connect(':memory:').execute('select 1')"))
            #expect(Self.memoryPeaks(python.stderr).contains { $0 > 0 }, "\(python.stderr)")
            cli.environment["LD_PRELOAD"] = probe.path + ".so"
            let found = try await cli.run(["grep", "-c", "B-Baum", Self.course])
            #expect(found.status == 0 && found.lines.count == 3, "\(found)")
            let peaks = Self.memoryPeaks(found.stderr)
            #expect(!peaks.isEmpty && peaks.allSatisfy { $0 == 0 }, "\(found.stderr)")
        }
    }

    /// grep without a PATH does not ask the profile's daemon for its status (a round trip to the daemon at every
    /// grep, docs/search.md): the mountpoint only translates PATHs inside the mount. A listener on the control
    /// socket's path counts the connections (and closes each: no daemon answers); grep with a PATH still asks.
    @Test func grepWithoutAPathAsksNoDaemon() async throws {
        try await Self.withIndexedProfile { cli async throws in
            let runtime = cli.home.appendingPathComponent("run/campusfs")
            try FileManager.default.createDirectory(
                at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let count = cli.home.appendingPathComponent("connections")
            let script = """
                import socket, sys
                listener = socket.socket(socket.AF_UNIX)
                listener.bind(sys.argv[1])
                listener.listen(8)
                open(sys.argv[2], "w").write("0")
                connections = 0
                while True:
                    connection, _ = listener.accept()
                    connections += 1
                    connection.close()
                    open(sys.argv[2], "w").write(str(connections))
                """
            let started = try await shell(
                "timeout 120 python3 -c \(quoted(script)) \(quoted(runtime.appendingPathComponent("default.sock").path)) "
                    + "\(quoted(count.path)) >/dev/null 2>&1 & echo $!")
            let listener = try #require(Int32(started.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            defer { kill(listener, SIGTERM) }
            for _ in 0..<100 where !FileManager.default.fileExists(atPath: count.path) {
                try await Task.sleep(for: .milliseconds(50))
            }
            let connections = { try String(contentsOf: count, encoding: .utf8) }
            #expect(try connections() == "0")
            let all = try await cli.run(["grep", "-c", "B-Baum"])
            #expect(all.status == 0, "\(all.stderr)")
            #expect(try connections() == "0")
            let below = try await cli.run(["grep", "-c", "B-Baum", Self.course])
            #expect(below.status == 0 && below.lines.count == 3, "\(below)")
            #expect(try connections() == "1")
        }
    }

    /// What the probe of ``grepKeepsNoSQLiteMemoryStatistics()`` printed, one number a process that loaded it.
    static func memoryPeaks(_ stderr: String) -> [Int] {
        stderr.split(separator: "\n").compactMap { line in
            line.hasPrefix("sqlite-memory-highwater=") ? Int(line.dropFirst("sqlite-memory-highwater=".count)) : nil
        }
    }

    @Test func searchesWhileMountedWithoutTouchingTheMount() async throws {
        try await DaemonTests.with { setup in
            #expect(try await setup.mount().status == 0)
            let readme = try setup.document(Self.readme)
            let patch = try await shell(
                "curl -sf -X PATCH -d '{\"text\": \"Version zwei.\\n\"}' \(setup.sim.controlURL)/documents/\(readme.id)"
            )
            #expect(patch.status == 0, "\(patch.stderr)")
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            _ = try Self.index(setup.cli.database())
            let highlights = try MetadataStore(path: setup.cli.database().path).highlightedDocuments()
            #expect(highlights.contains { $0.path == Self.readme && $0.highlight == .changed })

            let inMount = setup.mountpoint + "/" + Self.course
            let mounted = try await setup.campusfs(["grep", "-n", "Baum", inMount], timeout: 30)
            #expect(mounted.status == 0, "\(mounted.stderr)")
            #expect(
                mounted.lines == [
                    "\(inMount)/README.txt:2:Kein Baum hier",
                    "\(inMount)/Vorlesungsfolien/Kapitel 1 - Einleitung.pdf:page 1:2:Der B-Baum ist ein Suchbaum",
                    "\(inMount)/Vorlesungsfolien/Kapitel 1 - Einleitung.pdf:page 2:2:B-Baum: Einfügen",
                    "\(inMount)/Übungsblätter/Übungsblatt 1 – Lösungen.txt:1:Lösung: B-Baum der Ordnung 3",
                ])
            let relative = try await setup.campusfs(["grep", "-l", "Dateisystem", "WS 2026-27"], timeout: 30)
            #expect(relative.lines == [Self.otherReadme])
            // A highlight clears a second after a person's open ends: give it the chance it must not take.
            try await Task.sleep(for: .milliseconds(1500))
            #expect(Self.noDownloads(setup.sim), "grep never downloads")
            #expect(try MetadataStore(path: setup.cli.database().path).highlightedDocuments() == highlights)
            let attribute = try await shell(
                "getfattr --only-values -n user.campusfs.highlight \(setup.path(Self.readme))")
            #expect(attribute.stdout == "changed")
        }
    }
}
