import Foundation
import MetadataStore
import TestSupport
import Testing

@testable import StudIPSimulator

/// Issue 14.5/14.6: what Stud.IP removes leaves the tree at once, but its cached bytes and the user's tags stay for
/// `removal_grace` (7 days by default), so a listing that came back empty by mistake loses nothing; after that they
/// go, and so does every cached copy of a document the store does not know at all.
@Suite(.serialized)
struct RemovalGraceTests {
    typealias Setup = DaemonTests.Setup

    static func tags(_ setup: Setup, _ relative: String) async throws -> String {
        try await shell("getfattr --only-values -n user.xdg.tags \(setup.path(relative))").stdout
    }

    static func cachedDocuments(_ setup: Setup) async throws -> Int? {
        try await setup.status()["cachedDocuments"] as? Int
    }

    @Test func anEmptyListingLosesNoCachedCopyAndNoTag() async throws {
        try await DaemonTests.with { setup in
            #expect(try await setup.mount().status == 0)
            let readme = try setup.document(DaemonTests.readme)
            let original = try await shell("sha256sum < \(setup.path(DaemonTests.readme))").stdout
            #expect(
                try await shell("setfattr -n user.xdg.tags -v exam \(setup.path(DaemonTests.readme))")
                    .status == 0)
            let cached = try #require(try await Self.cachedDocuments(setup))

            // Every document listing answers "nothing here", also the per-folder ones 5.5 asks when a course's
            // list comes up short.
            let empty = #"{"meta":{"page":{"offset":0,"limit":1000,"total":0}},"links":{},"data":[]}"#
            setup.sim.faults.add(Fault(action: .body(empty), pathContains: "/file-refs"))
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            let listing = try await shell("ls \(setup.path(DaemonTests.course))")
            #expect(!listing.lines.contains("README.txt"), "the server's listing decides the tree: \(listing.stdout)")
            #expect(try await Self.cachedDocuments(setup) == cached, "the cached copy stays for the grace period")

            setup.sim.faults.clear()
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            let served = setup.sim.statistics.snapshot().downloadsCompleted[readme.id, default: 0]
            let again = try await shell("sha256sum < \(setup.path(DaemonTests.readme))").stdout
            #expect(again == original)
            #expect(
                setup.sim.statistics.snapshot().downloadsCompleted[readme.id, default: 0] == served,
                "it came back and opens from the cache, without a download")
            #expect(try await Self.tags(setup, DaemonTests.readme) == "exam")
        }
    }

    @Test func afterTheGracePeriodCopiesAndTagsGoAndOrphansAreCollected() async throws {
        try await DaemonTests.with { setup in
            try setup.configure(
                """
                url = "\(setup.sim.baseURL)"
                username = "test_autor"
                removal_grace = "1s"
                """)
            #expect(try await setup.campusfs(["mount", setup.mountpoint]).status == 0)
            let readme = try setup.document(DaemonTests.readme)
            let slides = try setup.document(DaemonTests.slides)
            _ = try await shell(
                "cat \(setup.path(DaemonTests.readme)) \(setup.path(DaemonTests.slides)) >/dev/null")
            #expect(
                try await shell("setfattr -n user.xdg.tags -v exam \(setup.path(DaemonTests.readme))")
                    .status == 0)
            #expect(try await setup.sqlite("SELECT COUNT(*) FROM user_tag") == "1")
            let cached = try #require(try await Self.cachedDocuments(setup))

            let deleted = try await shell(
                "curl -sf -X DELETE \(setup.sim.controlURL)/documents/\(readme.id)")
            #expect(deleted.status == 0)
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            try await Task.sleep(for: .milliseconds(1_200))
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            #expect(try await Self.cachedDocuments(setup) == cached - 1, "the removed document's copy is gone")
            #expect(try await setup.sqlite("SELECT COUNT(*) FROM user_tag") == "0", "and so are its tags")

            // A store that lost a document (a crash between a refresh and the cleanup, before departures):
            // its cached copy belongs to nothing and goes at the next start.
            #expect(try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30).status == 0)
            let forget =
                "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute('PRAGMA foreign_keys = ON'); db.execute(\"DELETE FROM node WHERE studip_id = ?\", (sys.argv[2],)); db.commit()"
            #expect(
                try await shell(
                    "python3 -c \(quoted(forget)) \(quoted(setup.cli.database().path)) \(slides.id)"
                ).status == 0)
            #expect(try await setup.campusfs(["mount", setup.mountpoint, "--offline"]).status == 0)
            var left = try await Self.cachedDocuments(setup)
            for _ in 0..<50 where left != cached - 2 {
                try await Task.sleep(for: .milliseconds(100))
                left = try await Self.cachedDocuments(setup)
            }
            #expect(left == cached - 2, "the orphaned copy was collected at start")
        }
    }
}
