import Foundation
import MetadataStore
import TestSupport
import Testing

@testable import StudIPSimulator

/// `campusfs refresh` end to end: request counts, changes on the server, broken items, a killed refresh.
@Suite("campusfs refresh")
struct RefreshCommandTests {
    private func refreshJSON(_ cli: CLI, _ arguments: [String]) async throws -> [String: Any] {
        let result = try await cli.run(["refresh", "--json"] + arguments)
        #expect(result.status == 0, "\(result.stderr)")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    private func count(_ json: [String: Any], _ key: String) -> Int {
        (json[key] as? [Any])?.count ?? -1
    }

    @Test func coldRefreshOfLargeStaysWithinTheRequestBoundAndASecondChangesNothing() async throws {
        try await withSimulator(.generated(.large, seed: 1)) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let login = ["--server", sim.baseURL, "--username", "test_autor"]
            let university = sim.university
            let courses = try #require(university.user(named: "test_autor")).id
            let courseCount = university.courses(of: courses).count
            // Per course its folders (3), announcements and dates (2); per semester its listing and timetable.
            let bound = 2 + 2 * university.orderedSemesters.count + 5 * courseCount

            let cold = try await refreshJSON(cli, login)
            #expect(sim.requestCount <= bound, "cold refresh: \(sim.requestCount) requests, bound \(bound)")
            #expect(cold["requests"] as? Int == sim.requestCount, "the reported count is the server's")
            #expect(count(cold, "new") > 8000)

            let before = sim.requestCount
            let warm = try await refreshJSON(cli, login)
            #expect(sim.requestCount - before <= bound)
            #expect(warm["requests"] as? Int == sim.requestCount - before)
            for key in ["changed", "moved", "removed"] {
                #expect(count(warm, key) == 0, "\(key) after nothing changed")
            }
            // Stud.IP 5.0: the second listing of each course looks in its next folder for documents the user may
            // not download (the rotation continues from the store, issue 28); only such documents may be new.
            let store = try MetadataStore(path: cli.database().path)
            for path in warm["new"] as? [String] ?? [] {
                let document = try store.document(inode: store.resolve(path: path).inode)
                #expect(document?.isDownloadable == false, "\(path) is new after nothing changed")
            }
        }
    }

    /// Issue 28: JSON:API on Stud.IP 5.0 looks in one folder of a course per listing for documents the user may not
    /// download, in rotation. `campusfs refresh` without a mount, a new process each time, continues the rotation
    /// the store records, so the restricted scan in INF-101's "Vorlesungsfolien" appears within F refreshes as in a
    /// mount; each process used to start over at the root and never found it.
    @Test func refreshesWithoutAMountRotateThroughTheFoldersLikeAMount() async throws {
        try await withSimulator(.generated(.small, seed: 1), flavour: .v50) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let login = ["--server", sim.baseURL, "--username", "test_autor"]
            let scan = "Lehrbuch Kapitel 3 (Scan).pdf"
            var foundAt: Int?
            var folders = 0
            for refresh in 1...12 {
                _ = try await refreshJSON(cli, login)
                let walked = try MetadataStore(path: cli.database().path).walk()
                let shown = walked.contains { $0.node.name == scan }
                if refresh == 1 {
                    folders = Self.folderCount(of: "INF-101 Einführung in die Informatik", in: walked)
                    #expect(!shown, "the first listing looks in the root")
                }
                if shown {
                    foundAt = refresh
                    break
                }
            }
            let found = try #require(foundAt, "the scan never appeared in 12 refreshes")
            #expect(found <= folders, "found after \(found) refreshes, the course has \(folders) folders")
        }
    }

    /// The readable folders of the course whose directory name ends with `name`, its root included.
    private static func folderCount(of name: String, in walked: [WalkEntry]) -> Int {
        let course = walked.first { $0.node.item == .course && $0.node.name.hasSuffix(name) }?.node.studipID
        return 1 + walked.count { $0.node.item == .folder && $0.node.courseID == course }
    }

    @Test func serverSideChangesShowUpAfterRefresh() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let login = ["--server", sim.baseURL, "--username", "test_autor"]
            _ = try await refreshJSON(cli, login)
            let course = "WS 2026-27/INF-101 Einführung in die Informatik"
            let store = try MetadataStore(path: cli.database().path)
            let readme = try store.resolve(path: "\(course)/README.txt")
            try store.setTags(["exam"], inode: readme.inode)

            let readmeID = "346b96b07721d0eb6363af88b43cb9e1"
            let blattID = "514fd500a2e4505f32aa939245044f6c"
            let leerID = "fabffffbef47c0077d96b5625c9e5c4d"
            let vorlesung = "642289635137e33b0c9539a51e405829"
            try sim.store.mutate { university in
                var readme = try #require(university.fileRefs[readmeID])
                readme.name = "LIESMICH.txt"
                readme.folderID = vorlesung
                readme.chdate += 60
                try university.update(readme)
                var blatt = try #require(university.fileRefs[blattID])
                blatt.fileID = "0123456789abcdef0123456789abcdef"
                blatt.size += 1
                blatt.content = .bytes(Data(repeating: 65, count: blatt.size))
                blatt.chdate += 60
                try university.update(blatt)
                try university.removeFileRef(leerID)
            }
            let changes = try await refreshJSON(cli, login)
            #expect(
                changes["changed"] as? [String] == ["\(course)/Übungsblätter/Übungsblatt 1 – Lösungen.txt"],
                "a rename and a move bump the chdate and nothing else: not a new version (issue 12)")
            #expect(changes["removed"] as? [String] == ["\(course)/Übungsblätter/leer.txt"])
            let moved = try #require(changes["moved"] as? [[String: String]])
            #expect(moved == [["from": "\(course)/README.txt", "to": "\(course)/Vorlesungsfolien/LIESMICH.txt"]])

            let renamed = try store.resolve(path: "\(course)/Vorlesungsfolien/LIESMICH.txt")
            #expect(renamed.inode == readme.inode, "a rename and move keeps the inode")
            #expect(try store.userState(inode: renamed.inode).tags == ["exam"], "and the tags")
            let listing = try await cli.run(["ls", "-l", "\(course)/Vorlesungsfolien"])
            let line = try #require(listing.lines.first { $0.contains("LIESMICH.txt") })
            #expect(line.contains("#exam") && !line.contains("changed"), "ls -l shows tags, no highlight: \(line)")
            let blatt = try await cli.run(["ls", "-l", "\(course)/Übungsblätter"])
            #expect(blatt.lines.contains { $0.contains("Übungsblatt 1 – Lösungen.txt") && $0.contains("changed") })
        }
    }

    @Test func oneBrokenFolderDoesNotStopTheCourse() async throws {
        try await withSimulator(.fixtures507, flavour: .v55) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let login = ["--server", sim.baseURL, "--username", "test_autor", "--api", "rest"]
            _ = try await refreshJSON(cli, login)
            sim.faults.add(Fault(action: .status(500), pathContains: "folder/4e107a3e74b5a1e14c92af681110bb03"))
            try sim.store.mutate { university in
                var readme = try #require(university.fileRefs["346b96b07721d0eb6363af88b43cb9e1"])
                readme.name = "README (neu).txt"
                readme.chdate += 60
                try university.update(readme)
            }
            let result = try await refreshJSON(cli, login)
            #expect(count(result, "problems") >= 1)
            #expect(count(result, "removed") == 0, "what was known below the broken folder stays")
            #expect(count(result, "moved") == 1, "the rest of the course refreshed")
            let tree = try await cli.run(["tree", "--paths", "WS 2026-27/INF-101 Einführung in die Informatik"])
            #expect(tree.lines.contains("Übungsblätter/daten (groß).bin"))
            #expect(tree.lines.contains("README (neu).txt"))
        }
    }

    @Test func killedDuringARefreshLeavesAConsistentStore() async throws {
        try await withSimulator(.generated(.large, seed: 2), settings: SimulatorSettings(latencyMilliseconds: 300)) {
            sim async throws in
            let cli = try CLI()
            let reference = try CLI()
            defer {
                cli.removeHome()
                reference.removeHome()
            }
            let login = ["--server", sim.baseURL, "--username", "test_autor"]
            let child = try cli.launch(["refresh"] + login)
            let courseListings = "jsonapi GET courses/{id}/file-refs"
            for _ in 0..<400 where (sim.statistics.snapshot().routes[courseListings] ?? 0) < 3 {
                try await Task.sleep(for: .milliseconds(25))
            }
            #expect((sim.statistics.snapshot().routes[courseListings] ?? 0) >= 3, "some courses were listed")
            #expect(!child.hasEnded, "the refresh must still be running when it is killed")
            child.kill(SIGKILL)
            while !child.hasEnded { try await Task.sleep(for: .milliseconds(20)) }
            child.reap()

            let partial = try await cli.run(["tree", "--paths"])
            #expect(partial.status == 0, "the store opens and lists after kill -9: \(partial.stderr)")
            #expect(!partial.lines.isEmpty)

            _ = sim.settings.update { $0.latencyMilliseconds = 0 }
            let resumed = try await cli.run(["refresh"] + login)
            #expect(resumed.status == 0, "\(resumed.stderr)")
            let clean = try await reference.run(["refresh"] + login)
            #expect(clean.status == 0)
            let resumedTree = try await cli.run(["tree", "--paths"])
            let cleanTree = try await reference.run(["tree", "--paths"])
            #expect(resumedTree.lines == cleanTree.lines, "the interrupted store converges to the clean one")
            #expect(resumedTree.lines.count > 10_000)
        }
    }
}
