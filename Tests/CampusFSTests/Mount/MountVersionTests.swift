import ContentCache
import Daemon
import Foundation
import MetadataStore
import Refreshing
import StudIPKit
import TestSupport
import Testing

@testable import StudIPSimulator

/// Issue 12: the right bytes after a lecturer uploads a new version, whichever of Stud.IP 5.0.7's three upload
/// paths they use (fixtures-5.0.7-more Part 2), and renames and moves that are not new versions (Part 3).
@Suite(.serialized)
struct MountVersionTests {
    static let course = "WS 2026-27/INF-101 Einführung in die Informatik"
    static let readme = course + "/README.txt"

    /// JSON:API's content upload with another size changes only the size: the listing the filesystem has still says
    /// the old one. The open sees a body of the wrong length, refreshes the course and retries, so `cat` gets the
    /// new bytes and `stat` agrees — where it used to fail with EIO until the next refresh. Each upload path
    /// in-process (the retry is the filesystem's); one mounted, where the kernel had cached the old size.
    @Test(arguments: [
        ("jsonapi", DriverMode.mounted), ("jsonapi", .inProcess), ("web", .inProcess), ("rest", .inProcess),
    ])
    func anUncachedDocumentWithANewSizeOpensAfterARefreshOfItsCourse(via: String, mode: DriverMode) async throws {
        try await mode.run { fs in
            fs.refreshesOnDemand()
            let readme = try #require(try fs.document(Self.readme))
            #expect(try await fs.stat(Self.readme).get().size == readme.size)
            let text = String(repeating: "Neue Fassung, länger als die alte. ", count: 40)
            try await fs.simulate("PATCH", "documents/" + readme.id, ["text": text, "via": via])
            #expect(try await fs.read(Self.readme) == .success(Array(text.utf8)))
            #expect(try await fs.stat(Self.readme).get().size == Int64(text.utf8.count))
            #expect(try fs.document(Self.readme)?.size == Int64(text.utf8.count))
        }
    }

    /// The captured bug: after a JSON:API upload with another size and a refresh, `stat` said the new size while
    /// `cat` served the cached old bytes (the cache key was file id + the ref's chdate, and neither changed).
    @Test func aCachedDocumentWhoseSizeChangedIsFetchedAgainAfterARefresh() async throws {
        try await MountedCampus.with { campus in
            let before = try await shell("cat \(campus.path(Self.readme)) >/dev/null")
            #expect(before.status == 0)
            let readme = try #require(try campus.document(Self.readme))
            let text = "Version 2, JSON:API-Upload.\n"
            try await campus.simulate("PATCH", "documents/" + readme.id, ["text": text, "via": "jsonapi"])
            let report = try await campus.refresh()
            #expect(report.summary.changed.map(\.studipID) == [readme.id])
            #expect(try await campus.attribute("user.campusfs.state", of: Self.readme) == "stale")
            #expect(try await campus.attribute("user.campusfs.highlight", of: Self.readme) == "changed")
            let read = try await shell(
                "cat \(campus.path(Self.readme)); stat -c %s \(campus.path(Self.readme))")
            #expect(read.stdout == text + "\(text.utf8.count)\n")
        }
    }

    /// JSON:API's content upload at the same size changes nothing any listing shows — only the bytes and the
    /// content route's ETag. An open past the revalidation interval asks with `If-None-Match` and serves the new
    /// bytes; the kernel's page cache of the old ones is dropped (no `keep_cache`). Without revalidation the old
    /// bytes were served for ever.
    @Test func sameSizeNewBytesAreFoundByRevalidatingOnOpen() async throws {
        try await MountedCampus.with(cache: ContentCacheConfiguration(revalidationInterval: .zero)) { campus in
            let readme = try #require(try campus.document(Self.readme))
            let old = try await shell("cat \(campus.path(Self.readme))")
            #expect(old.status == 0 && old.stdout.utf8.count == Int(readme.size))
            let text = String(repeating: "x", count: Int(readme.size))
            try await campus.simulate("PATCH", "documents/" + readme.id, ["text": text, "via": "jsonapi"])
            let report = try await campus.refresh()
            #expect(report.summary.changed.isEmpty, "the listing shows no difference")
            let served = campus.sim.statistics.snapshot().downloadsCompleted[readme.id, default: 0]
            let new = try await shell("cat \(campus.path(Self.readme))")
            #expect(new.stdout == text)
            #expect(campus.sim.statistics.snapshot().downloadsCompleted[readme.id, default: 0] == served + 1)
            let again = try await shell("cat \(campus.path(Self.readme))")
            #expect(again.stdout == text, "a 304 keeps serving the new bytes")
            #expect(campus.sim.statistics.snapshot().downloadsCompleted[readme.id, default: 0] == served + 1)
        }
    }

    /// A scan does not wait for the server to confirm every cached document (a `grep -r` after a restart would pay
    /// a round trip per document); a person's open of one still asks.
    @Test func aScanDoesNotRevalidateAPersonsOpenDoes() async throws {
        try await MountedCampus.with(cache: ContentCacheConfiguration(revalidationInterval: .zero)) { campus in
            let course = campus.path(Self.course)
            let first = try await shell("grep -r -c '' \(course)")
            #expect(!first.lines.isEmpty, "\(first.stderr)")
            let served = campus.sim.statistics.snapshot().total
            let again = try await shell("grep -r -c '' \(course)")
            #expect(again.lines == first.lines)
            #expect(campus.sim.statistics.snapshot().total == served, "grep -r sent revalidations")
            _ = try await shell("cat \(campus.path(Self.readme)) >/dev/null")
            #expect(campus.sim.statistics.snapshot().total == served + 1, "a person's open asks once")
        }
    }

    /// Within the revalidation interval an open of a cached document asks the server nothing. In-process: every
    /// open reaches the filesystem, mounted or not.
    @Test func withinTheIntervalACachedOpenSendsNoRequest() async throws {
        try await DriverMode.inProcess.run { fs in
            let first = try await fs.read(Self.readme)
            let served = fs.sim.statistics.snapshot().total
            #expect(try await fs.read(Self.readme) == first)
            #expect(fs.sim.statistics.snapshot().total == served)
        }
    }

    /// A rename and a move bump the file-ref's chdate on Stud.IP and change nothing else: the refresh reports a
    /// move only, the highlight stays as it was, and the cached bytes stay valid (no second download).
    /// In-process: the verdict is the refresh's and the cache's; that the kernel then sees the new names is
    /// ``MountCacheTests/aRefreshShowsNewVersionsAndNamesOnceApplied()``.
    @Test func renamesAndMovesAreNotNewVersions() async throws {
        try await DriverMode.inProcess.run { fs in
            let readme = try #require(try fs.document(Self.readme))
            #expect(try await fs.read(Self.readme).get().count == Int(readme.size))
            let folder = try #require(try fs.store.resolve(path: Self.course + "/Übungsblätter").studipID)
            try await fs.simulate("PATCH", "documents/" + readme.id, ["name": "LIESMICH.txt"])
            var report = try await fs.refresh()
            #expect(report.summary.changed.isEmpty)
            #expect(report.summary.moved.map(\.to) == [Self.course + "/LIESMICH.txt"])
            try await fs.simulate("PATCH", "documents/" + readme.id, ["folder_id": folder])
            report = try await fs.refresh()
            #expect(report.summary.changed.isEmpty)
            let moved = Self.course + "/Übungsblätter/LIESMICH.txt"
            #expect(report.summary.moved.map(\.to) == [moved])
            #expect(try await fs.attribute("user.campusfs.state", of: moved) == "cached")
            #expect(try await fs.attribute("user.campusfs.highlight", of: moved) == nil)
            let served = fs.sim.statistics.snapshot().downloadsCompleted[readme.id, default: 0]
            #expect(try await fs.read(moved).get().count == Int(readme.size))
            #expect(fs.sim.statistics.snapshot().downloadsCompleted[readme.id, default: 0] == served)
        }
    }

    /// An empty document is never read (the kernel sends no READ for it): opening it clears `new`.
    @Test func openingAnEmptyDocumentClearsNew() async throws {
        try await MountedCampus.with { campus in
            let folder = try #require(try campus.store.resolve(path: Self.course + "/Übungsblätter").studipID)
            try await campus.simulate("POST", "documents", ["folder_id": folder, "name": "Leer.txt", "text": ""])
            _ = try await campus.refresh()
            let empty = Self.course + "/Übungsblätter/Leer.txt"
            #expect(try await campus.attribute("user.campusfs.highlight", of: empty) == "new")
            let read = try await shell("cat \(campus.path(empty)) | wc -c")
            #expect(read.stdout == "0\n")
            let highlight = try await MountHarness.settled(
                { try await campus.attribute("user.campusfs.highlight", of: empty) }, until: { $0 == nil })
            #expect(highlight == nil)
        }
    }
}

extension MountedCampus {
    /// Refreshes as the daemon does: the store, then the kernel.
    @discardableResult
    func refresh(courseIDs: Set<String>? = nil) async throws -> Refresher.Report {
        let report = try await Refresher(source: source, store: store, options: TreeOptions())
            .refresh(courseIDs: courseIDs)
        mount.apply(report.summary)
        return report
    }

    /// Calls the simulator's control API (`/__sim/<path>`) from a child process, as a lecturer's browser would.
    func simulate(_ method: String, _ path: String, _ input: [String: String]) async throws {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: input), as: UTF8.self)
        let answer = try await shell(
            "curl -sf -X \(method) -d \(quoted(body)) "
                + quoted(sim.controlURL + "/" + path) + " >/dev/null")
        #expect(answer.status == 0, "\(method) \(path): \(answer.stderr)")
    }

    /// An extended attribute's value through the mount, nil when the file does not have it.
    func attribute(_ name: String, of relative: String) async throws -> String? {
        let read = try await shell("getfattr --only-values -n \(name) \(path(relative)) 2>/dev/null")
        return read.status == 0 ? read.stdout : nil
    }
}
