import CampusFS
import ContentCache
import ControlProtocol
import FUSEKit
import FUSEKitTesting
import Foundation
import MetadataStore
import StudIPKit
import Synchronization
import Testing

@testable import Daemon
@testable import StudIPSimulator

/// The daemon's answers to each control request (``ControlHandler``), without a socket or a mount: the requests as
/// `campusfs` sends them, the answers as it reads them.
@Suite struct ControlHandlerTests {
    static let course = DaemonTests.course
    static let other = RefreshCoordinatorTests.other

    @Test func statusNamesTheProfileTheServerAndTheCache() async throws {
        try await DaemonParts.with { parts in
            _ = try await parts.cache(DaemonTests.readme)
            _ = await parts.refreshes.refresh()
            let status = try #require(await parts.handler().handle(.status).status)
            #expect(status.profile == "test")
            #expect(status.mountpoint == DaemonParts.mountpoint)
            #expect(status.serverURL == parts.sim.baseURL)
            #expect(status.server == .online)
            #expect(status.pid == getpid())
            #expect(status.cachedDocuments == 1)
            #expect(status.lastRefreshError == nil)
            #expect(status.lastRefresh != nil)
            #expect(status.refreshing == nil)
            #expect(status.index != nil)
        }
    }

    /// `campusfs refresh PATH`: only the courses below PATH are read, and the next open of each of their cached
    /// documents asks the server once (a same-size new version shows in no listing, issue 28); the other
    /// courses' cached documents are not asked, and their news waits for a full refresh.
    @Test func aRefreshOfAPathReadsItsCoursesAndRevalidatesTheirCachedDocuments() async throws {
        try await DaemonParts.with { parts in
            let readme = try #require(try parts.campus.document(DaemonTests.readme))
            let there = try #require(try parts.campus.document(Self.other + "/README.txt"))
            _ = try await parts.cache(DaemonTests.readme)
            let otherBytes = try await parts.cache(Self.other + "/README.txt")
            let text = String(repeating: "y", count: Int(readme.size))
            try await parts.change("PATCH", "/documents/\(readme.id)", #"{"text": "\#(text)", "via": "jsonapi"}"#)
            try await parts.addDocument("Hier.txt", folder: readme.folderID)
            try await parts.addDocument("Dort.txt", folder: there.folderID)
            #expect(try await parts.read(DaemonTests.readme) != Array(text.utf8), "within the interval nothing asks")

            let response = await parts.handler().handle(.refresh(path: Self.course))
            let outcome = try #require(response.refresh, "\(response)")
            #expect(outcome.new == [Self.course + "/Hier.txt"])
            #expect(throws: StoreError.self) { try parts.store.resolve(path: Self.other + "/Dort.txt") }

            let before = parts.sim.statistics.snapshot().total
            #expect(try await parts.read(DaemonTests.readme) == Array(text.utf8))
            #expect(parts.sim.statistics.snapshot().total == before + 1, "one conditional request")
            #expect(try await parts.read(DaemonTests.readme) == Array(text.utf8))
            #expect(try await parts.read(Self.other + "/README.txt") == otherBytes)
            #expect(parts.sim.statistics.snapshot().total == before + 1, "asked once, and not in the other course")

            let all = try #require(await parts.handler().handle(.refresh(path: nil)).refresh)
            #expect(all.new == [Self.other + "/Dort.txt"])
            let after = parts.sim.statistics.snapshot().total
            // A refresh of everything asks about every cached document at its next open.
            #expect(try await parts.read(Self.other + "/README.txt") == otherBytes)
            #expect(parts.sim.statistics.snapshot().total == after + 1, "the other course's document asked once")
        }
    }

    @Test func aRefreshOfAPathTheTreeLacksFailsWithExitCode1() async throws {
        try await DaemonParts.with { parts in
            let response = await parts.handler().handle(.refresh(path: "WS 2026-27/Gibt es nicht"))
            #expect(response.exitCode == 1)
            #expect(response.error?.hasPrefix("WS 2026-27/Gibt es nicht: ") == true, "\(response)")
            #expect(parts.effects.calls.isEmpty, "nothing refreshed")
        }
    }

    /// `campusfs cache`: the cache's use, and each pin with how much of it is on disk.
    @Test func cacheReportsPinsAndWhatOfThemIsCached() async throws {
        try await DaemonParts.with { parts in
            let pinned = try parts.store.resolve(path: Self.course + "/Vorlesungsfolien")
            try parts.store.setPinned(true, inode: pinned.inode)
            let slides = try #require(try parts.campus.document(DaemonTests.slides))
            _ = try await parts.cache(DaemonTests.slides)
            let report = try #require(await parts.handler().handle(.cache).cache)
            #expect(report.documents == 1)
            #expect(report.bytes >= slides.size)
            let pin = try #require(report.pins.first)
            #expect(report.pins.count == 1)
            #expect(pin.path == Self.course + "/Vorlesungsfolien")
            #expect(pin.cachedDocuments == 1)
            #expect(pin.cachedBytes == slides.size)
            #expect(pin.documents > 1)
        }
    }

    /// `campusfs cache clean PATH`: the cached copies below PATH go, pinned ones and the rest of the tree stay.
    @Test func cleanCacheRemovesWhatIsBelowThePathButNotPinned() async throws {
        try await DaemonParts.with { parts in
            let readme = try #require(try parts.campus.document(DaemonTests.readme))
            let slides = try #require(try parts.campus.document(DaemonTests.slides))
            let there = try #require(try parts.campus.document(Self.other + "/README.txt"))
            try parts.store.setPinned(true, inode: try parts.store.resolve(path: DaemonTests.slides).inode)
            for path in [DaemonTests.readme, DaemonTests.slides, Self.other + "/README.txt"] {
                _ = try await parts.cache(path)
            }
            let response = await parts.handler().handle(.cleanCache(path: "/" + Self.course, olderThan: nil))
            let clean = try #require(response.clean, "\(response)")
            #expect(clean.freedDocuments == 1)
            #expect(clean.keptPinned == 1)
            let left = Set(await parts.fs.cache.inventory().copies.keys)
            #expect(left == [slides.id, there.id], "\(readme.id) should be gone")

            let missing = await parts.handler().handle(.cleanCache(path: "Gibt es nicht", olderThan: nil))
            #expect(missing.exitCode == 1)
        }
    }

    /// `campusfs pin`'s progress line: how much of the listed documents is on disk.
    @Test func progressCountsTheCachedOnesOfTheListedDocuments() async throws {
        try await DaemonParts.with { parts in
            let readme = try #require(try parts.campus.document(DaemonTests.readme))
            let slides = try #require(try parts.campus.document(DaemonTests.slides))
            _ = try await parts.cache(DaemonTests.readme)
            let documents = [readme, slides].map { CacheDocument(id: $0.id, version: $0.version) }
            let progress = try #require(await parts.handler().handle(.progress(documents: documents)).progress)
            #expect(progress.cachedDocuments == 1)
            #expect(progress.cachedBytes == readme.size)
        }
    }

    /// `campusfs index`: the index's state; with `--rebuild`, every cached document's text is extracted again.
    @Test func indexRebuildExtractsTheCachedDocuments() async throws {
        try await DaemonParts.with { parts in
            _ = try await parts.cache(DaemonTests.readme)
            let before = try #require(await parts.handler().handle(.index(rebuild: false)).index)
            #expect(before.documents == 0, "nothing told the indexer of the download")
            #expect(before.indexBytes != nil, "`campusfs index` measures the index")
            #expect(await parts.handler().handle(.index(rebuild: true)).index != nil)
            #expect(
                try await eventually {
                    try #require(await parts.handler().handle(.index(rebuild: false)).index).documents == 1
                }, "the rebuild extracted the cached README")
        }
    }

    /// `campusfs logout` and `login` while mounted: the status after each; a login that works refreshes at once;
    /// an incomplete or refused one says why.
    @Test func logoutLoginAndCheckLogin() async throws {
        try await DaemonParts.with { parts in
            let handler = parts.handler()
            _ = await parts.refreshes.refresh()
            let loggedOut = try #require(await handler.handle(.logout).status)
            #expect(loggedOut.server == .loginNeeded)
            #expect(loggedOut.serverDetail?.contains("logged out") == true, "\(loggedOut)")

            var incomplete = LoginCredentials(.basic(username: "test_autor", password: "x"))
            incomplete.secret = nil
            #expect(await handler.handle(.login(credentials: incomplete)).exitCode == 4)
            let refused = await handler.handle(
                .login(credentials: LoginCredentials(.basic(username: "test_autor", password: "falsch"))))
            #expect(refused.exitCode == 2, "\(refused)")

            let refreshes = parts.effects.invalidated.count
            let login = await handler.handle(
                .login(credentials: LoginCredentials(.basic(username: "test_autor", password: "testing"))))
            #expect(try #require(login.status, "\(login)").server == .online)
            #expect(
                await eventually { parts.effects.invalidated.count == refreshes + 1 }, "a new login refreshes at once")

            let asked = parts.sim.statistics.snapshot().total
            let checked = try #require(await handler.handle(.checkLogin).status)
            #expect(checked.server == .online)
            #expect(parts.sim.statistics.snapshot().total > asked, "--check asks the server")
        }
    }

    @Test func unmountAnswersAndEndsTheMount() async throws {
        try await DaemonParts.with { parts in
            let asked = Atomic<Int>(0)
            let response = await parts.handler { asked.add(1, ordering: .relaxed) }.handle(.unmount)
            #expect(response == .ok)
            #expect(asked.load(ordering: .relaxed) == 1)
        }
    }
}

extension DaemonParts {
    /// Opens, reads and releases the document at `path` through the filesystem; returns its bytes once the cache
    /// holds them.
    @discardableResult
    func cache(_ path: String) async throws -> [UInt8] {
        let bytes = try await read(path)
        let document = try #require(try campus.document(path))
        let cached = await eventually {
            let wanted = CacheDocument(id: document.id, version: document.version)
            return await fs.cache.state(of: wanted.id, currentVersion: wanted.version) == .cached
        }
        #expect(cached, "\(path) was not cached")
        return bytes
    }

    /// The bytes an open and reads of `path` give (a person's open, not a scan's).
    func read(_ path: String) async throws -> [UInt8] {
        let inode = Inode(try store.resolve(path: path).inode)
        let open = try await FileSystemOperationsTests.answer { fs.open(inode, file: FileInfo(), reply: $0) }
        let file = FileInfo(handle: try open.opened.handle)
        let bytes = try await FileSystemOperationsTests.readAll(fs, inode, file)
        _ = try await FileSystemOperationsTests.answer { fs.release(inode, file: file, reply: $0) }
        return bytes
    }
}
