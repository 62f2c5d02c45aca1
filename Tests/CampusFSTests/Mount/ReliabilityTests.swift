import Foundation
import MetadataStore
import TestSupport
import Testing

@testable import StudIPSimulator

/// Issue 14's kept suite: crashes, load and other users against a real mount. Each case states what CampusFS
/// promises; docs/reliability.md lists them all with the tests that show them.
@Suite(.serialized)
struct ReliabilityTests {
    typealias Setup = DaemonTests.Setup

    /// Every document of the fixtures' first course: path in the tree and the server's sha256.
    static func documents(_ setup: Setup) async throws -> [(path: String, sha: String)] {
        let store = try MetadataStore(path: setup.cli.database().path)
        let course = try store.resolve(path: DaemonTests.course)
        var result: [(String, String)] = []
        for entry in try store.walk(from: course.inode) where entry.node.kind == .file {
            guard let document = try store.document(inode: entry.node.inode), document.isDownloadable else { continue }
            let sha = try await shell(
                "curl -sf \(setup.sim.controlURL)/documents/\(document.id)/content | sha256sum")
            result.append((entry.path, sha.stdout))
        }
        return result
    }

    /// `kill -9` while the course's downloads stream, three times at random moments (printed with any failure):
    /// after `unmount` and a new mount every document reads exactly the server's bytes (no partial blob is ever
    /// served), the store is intact and a tag set before survives.
    @Test func aKillDuringDownloadsServesNoWrongByteAndKeepsTags() async throws {
        try await DaemonTests.with { setup in
            #expect(try await setup.mount().status == 0)
            let documents = try await Self.documents(setup)
            #expect(documents.count >= 6)
            #expect(
                try await shell("setfattr -n user.xdg.tags -v keep \(setup.path(DaemonTests.readme))")
                    .status == 0)
            for round in 1...3 {
                let delay = Int.random(in: 50...900)
                let pid = try #require(try await setup.status()["pid"] as? Int)
                _ = setup.sim.settings.update { $0.bandwidthBytesPerSecond = 64_000 }
                var readers: [pid_t] = []
                for document in documents {
                    readers.append(try await MountHarness.background("cat \(setup.path(document.path)) >/dev/null"))
                }
                try await Task.sleep(for: .milliseconds(delay))
                kill(pid_t(pid), SIGKILL)
                for reader in readers { kill(reader, SIGKILL) }
                _ = setup.sim.settings.update { $0.bandwidthBytesPerSecond = nil }
                let killed = "round \(round), killed after \(delay) ms"
                #expect(try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30).status == 0, "\(killed)")
                #expect(try await setup.sqlite("PRAGMA integrity_check") == "ok", "\(killed)")

                #expect(try await setup.mount().status == 0, "\(killed)")
                for document in documents.shuffled().prefix(3) {
                    let read = try await shell("sha256sum < \(setup.path(document.path))", timeout: 60)
                    #expect(read.stdout == document.sha, "\(document.path), \(killed)")
                }
            }
            for document in documents {
                let read = try await shell("sha256sum < \(setup.path(document.path))", timeout: 60)
                #expect(read.stdout == document.sha, "\(document.path)")
            }
            let tags = try await shell(
                "getfattr --only-values -n user.xdg.tags \(setup.path(DaemonTests.readme))")
            #expect(tags.stdout == "keep")
        }
    }

    /// `kill -9` in the middle of a refresh that applies changes, three times at random moments (printed with any
    /// failure): the store stays intact, a tag set before survives, and the next mount's refresh serves the
    /// server's tree and bytes, changes of every round included.
    @Test func aKillDuringARefreshLeavesAnIntactStore() async throws {
        try await DaemonTests.with { setup in
            #expect(try await setup.mount().status == 0)
            let readme = try setup.document(DaemonTests.readme)
            let control = setup.sim.controlURL
            #expect(
                try await shell("setfattr -n user.xdg.tags -v keep \(setup.path(DaemonTests.readme))")
                    .status == 0)
            for round in 1...3 {
                let pid = try #require(try await setup.status()["pid"] as? Int)
                let changes = try await shell(
                    """
                    curl -sf -X PATCH -d '{"text": "Version \(round).\\n"}' \(control)/documents/\(readme.id) >/dev/null &&
                    for i in $(seq 10); do
                      curl -sf -X POST -d "{\\"folder_id\\": \\"\(readme.folderID)\\", \\"name\\": \\"neu-\(round)-$i.txt\\", \\"text\\": \\"neu $i\\"}" \\
                        \(control)/documents >/dev/null || exit 1
                    done
                    """, timeout: 60)
                #expect(changes.status == 0, "\(changes.stderr)")
                let delay = Int.random(in: 20...600)
                _ = setup.sim.settings.update { $0.latencyMilliseconds = 40 }
                let refresh = try await MountHarness.background(
                    setup.shellExports + "exec \(quoted(CLI.binary.path)) refresh >/dev/null 2>&1")
                try await Task.sleep(for: .milliseconds(delay))
                #expect(kill(refresh, 0) == 0, "round \(round): the refresh ended within \(delay) ms, before the kill")
                kill(pid_t(pid), SIGKILL)
                kill(refresh, SIGKILL)
                _ = setup.sim.settings.update { $0.latencyMilliseconds = 0 }
                let killed = "round \(round), killed after \(delay) ms"
                #expect(try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30).status == 0, "\(killed)")
                #expect(try await setup.sqlite("PRAGMA integrity_check") == "ok", "\(killed)")

                #expect(try await setup.mount().status == 0, "\(killed)")
                #expect(try await setup.campusfs(["refresh"]).status == 0, "\(killed)")
                let readmeNow = try await shell("cat \(setup.path(DaemonTests.readme))")
                #expect(readmeNow.stdout == "Version \(round).\n", "\(killed)")
                let listing = try await shell("ls \(setup.path(DaemonTests.course)) | grep -c '^neu-'")
                #expect(listing.stdout == "\(10 * round)\n", "\(killed)")
                let tags = try await shell(
                    "getfattr --only-values -n user.xdg.tags \(setup.path(DaemonTests.readme))")
                #expect(tags.stdout == "keep", "\(killed)")
            }
        }
    }

    /// 64 readers at once while refreshes run, with a cache limit far below what they read: no false error,
    /// every byte the server's, and the daemon's memory bounded.
    @Test func sixtyFourReadersDuringRefreshesWithATinyCache() async throws {
        try await DaemonTests.with { setup in
            try setup.configure(#"cache_limit = "1M""#)
            #expect(try await setup.mount().status == 0)
            let documents = try await Self.documents(setup)
            let pid = try #require(try await setup.status()["pid"] as? Int)
            let output = setup.cli.home.appendingPathComponent("readers").path
            try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
            var script = ""
            for reader in 0..<64 {
                let document = documents[reader % documents.count]
                script +=
                    "(sha256sum < \(setup.path(document.path)) > \(output)/\(reader) 2>&1 || echo failed >> \(output)/\(reader)) &\n"
            }
            script += "for i in 1 2 3; do \(quoted(CLI.binary.path)) refresh >/dev/null 2>&1; done; wait\n"
            let run = try await shell(setup.shellExports + script, timeout: 180)
            #expect(run.status == 0, "\(run.stderr)")
            for reader in 0..<64 {
                let result = try String(contentsOfFile: "\(output)/\(reader)", encoding: .utf8)
                #expect(result == documents[reader % documents.count].sha, "reader \(reader): \(result)")
            }
            let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
            let rss =
                status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
                .flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? .max
            #expect(rss < 400_000, "daemon RSS \(rss) kB")
        }
    }

    /// Another user gets nothing from the mount, not even a listing (it is not mounted with allow_other).
    @Test func anotherUserCannotLookIntoTheMount() async throws {
        try await DaemonTests.with { setup in
            chmod(setup.mountpoint, 0o755)
            let parent = (setup.mountpoint as NSString).deletingLastPathComponent
            chmod(parent, 0o1777)
            #expect(try await setup.mount().status == 0)
            let other = "setpriv --reuid=65534 --regid=65534 --clear-groups"
            let listing = try await shell("\(other) ls \(setup.path("")) 2>&1")
            #expect(listing.status != 0)
            #expect(listing.stdout.contains("Permission denied"), "\(listing.stdout)")
            let read = try await shell("\(other) cat \(setup.path(DaemonTests.readme)) 2>&1")
            #expect(read.stdout.contains("Permission denied"), "\(read.stdout)")
            let own = try await shell("ls \(setup.path(""))")
            #expect(own.status == 0)
        }
    }
}
