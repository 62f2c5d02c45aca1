import ContentCache
import Foundation
import Testing

@Suite struct CleanTests {
    /// The daemon's clean keeps pinned (by the cache or the request), open and recently used copies, and reports
    /// what it did; the removed ones download again.
    @Test func cleanKeepsPinnedOpenAndRecentCopies() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let cache = try fixture.cache()
        var documents: [String: CacheDocument] = [:]
        for (id, size) in [("free", 1000), ("pinned", 2000), ("store-pinned", 3000), ("open", 4000), ("other", 500)] {
            documents[id] = fixture.document(id, size: size).0
            _ = try await cache.load(try #require(documents[id]))
        }
        await cache.setPinned("pinned", true)
        let handle = try await cache.open(try #require(documents["open"]))
        let inventory = await cache.inventory()
        #expect(inventory.bytes == 10_500)
        #expect(inventory.cachedBytes(of: try #require(documents["open"])) == 4000)
        #expect(inventory.cachedBytes(of: CacheDocument(id: "open", size: 4000, version: "v2")) == 0)

        let recent = await cache.clean(CleanRequest(unusedFor: .seconds(3600)))
        #expect(recent.keptRecent == 3 && recent.freedDocuments == 0)
        let result = await cache.clean(
            CleanRequest(documentIDs: ["free", "pinned", "store-pinned", "open"], pinned: ["store-pinned"]))
        #expect(result.freedBytes == 1000 && result.freedDocuments == 1)
        #expect((result.keptPinned, result.keptOpen, result.keptRecent) == (2, 1, 0))
        #expect(await cache.state(of: "free", currentVersion: "v1") == .remote)
        #expect(await cache.state(of: "other", currentVersion: "v1") == .cached, "outside the request")
        #expect(await cache.usage().bytes == 9500)
        cache.release(handle)
        #expect(try await cache.load(try #require(documents["free"])) == fixture.document("free", size: 1000).1)
    }

    /// `campusfs pin`'s progress counts a download in flight with the bytes received (on disk or gathered for the
    /// next write), and an older version as nothing.
    @Test func progressCountsPartialDownloads() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let cache = try fixture.cache()
        let (done, _) = fixture.document("done", size: 1000)
        _ = try await cache.load(done)
        let (partial, _) = fixture.document("partial", size: 100_000)
        fixture.downloader.configure {
            $0.chunkSize = 10_000
            $0.pauseAt = 30_000
        }
        let handle = try await cache.open(partial)
        try await within(.seconds(10)) {
            while !fixture.downloader.gate.hasWaiter { try await Task.sleep(for: .milliseconds(5)) }
        }
        let older = CacheDocument(id: "done", size: 1000, version: "v0")
        let progress = await cache.inventory().progress(of: [done, partial, older])
        #expect((progress.cachedBytes, progress.cachedDocuments) == (1000 + 30_000, 1))
        fixture.downloader.gate.open()
        try await cache.prefetch(partial)
        #expect(await cache.inventory().progress(of: [done, partial]).cachedBytes == 101_000)
        cache.release(handle)
    }

    /// Without a daemon: the directory is read as it is, and cleaned by the blobs' modification times.
    @Test func aDirectoryNoDaemonServesIsReadAndCleaned() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        #expect(ContentCache.inventory(directory: fixture.directory, limit: 7).copies.isEmpty)
        do {
            let cache = try fixture.cache()
            for id in ["old", "new", "pinned"] { _ = try await cache.load(fixture.document(id, size: 100).0) }
        }
        let old = try #require(fixture.files(in: "blobs").first { $0.hasPrefix("6f6c64.") && !$0.hasSuffix(".json") })
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSinceNow: -86_400 * 40)],
            ofItemAtPath: fixture.directory + "/blobs/" + old)

        let inventory = ContentCache.inventory(directory: fixture.directory, limit: 7)
        #expect(inventory.bytes == 300 && inventory.limit == 7)
        #expect(try #require(inventory.copies["old"]).lastUsed < Date(timeIntervalSinceNow: -86_400 * 39))
        let result = try ContentCache.clean(
            directory: fixture.directory, CleanRequest(pinned: ["pinned"], unusedFor: .seconds(86_400 * 30)))
        #expect((result.freedDocuments, result.freedBytes, result.keptRecent, result.keptPinned) == (1, 100, 1, 1))
        #expect(!fixture.files(in: "blobs").contains { $0.hasPrefix("6f6c64.") })
        #expect(
            ContentCache.inventory(directory: fixture.directory, limit: 7).copies.keys.sorted() == ["new", "pinned"])
    }
}
