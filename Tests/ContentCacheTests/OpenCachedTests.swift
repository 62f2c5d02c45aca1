import ContentCache
import Foundation
import Testing

/// `openCached`: the open a `grep -r` makes thousands of times — a cached current version — claimed on the calling
/// thread without the actor; everything that needs the server or one of the actor's decisions is left to it (nil).
@Suite struct OpenCachedTests {
    @Test func onlyACachedCurrentVersionOpensWithoutTheActor() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("doc", size: 5000)
        let cache = try fixture.cache()
        #expect(cache.openCached(document) == nil, "nothing is cached yet")
        _ = try await cache.load(document)

        let handle = try #require(cache.openCached(document))
        #expect(try await cache.read(handle, offset: 0, length: 6000) == bytes)
        #expect(handle.version == document.version)
        #expect(fixture.downloader.requests.count == 1, "the cached copy opened without asking the server")
        #expect(cache.openCached(CacheDocument(id: "doc", size: 5000, version: "v2")) == nil, "another version")
        cache.release(handle)
    }

    /// Past the revalidation interval, an open asks the server first (the actor's way); a scan does not.
    @Test func aCopyDueForRevalidationOpensSoOnlyForAScan() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, _) = fixture.document("doc", size: 5000, etag: "\"e1\"")
        let cache = try fixture.cache(revalidationInterval: .zero)
        _ = try await cache.load(document)
        #expect(cache.openCached(document) == nil)
        let scanned = try #require(cache.openCached(document, revalidate: false))
        cache.release(scanned)
    }

    /// A download of the document's new bytes (here: a revalidation that found them) is the actor's to join, so no
    /// open serves the old copy while it runs.
    @Test func aDownloadRunningForTheDocumentIsTheActors() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, _) = fixture.document("doc", size: 50_000)
        let cache = try fixture.cache()
        _ = try await cache.load(document)
        let (newer, newBytes) = fixture.document("doc", size: 50_000, version: "v2")
        fixture.downloader.configure { $0.pauseAt = 10_000 }
        let downloading = try await cache.open(newer)
        #expect(cache.openCached(newer) == nil, "v2 is still downloading")
        #expect(cache.openCached(document) == nil, "v1 is being replaced")
        fixture.downloader.gate.open()
        #expect(try await cache.readAll(downloading) == newBytes)
        try await cache.prefetch(newer)
        let handle = try #require(cache.openCached(newer))
        #expect(try await cache.read(handle, offset: 0, length: 60_000) == newBytes)
        cache.release(handle)
        cache.release(downloading)
    }

    /// Opened this way, a copy is open like any other: eviction and `cache clean` leave it until it is released.
    @Test func evictionAndCleanLeaveItUntilReleased() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let cache = try fixture.cache(minimumFreeSpace: .max)
        let (document, _) = fixture.document("doc", size: 1000)
        _ = try await cache.load(document)
        let handle = try #require(cache.openCached(document))
        #expect(await cache.evict() == 0)
        let cleaned = await cache.clean(CleanRequest())
        #expect(cleaned.freedDocuments == 0 && cleaned.keptOpen == 1)
        #expect(await cache.state(of: "doc", currentVersion: "v1") == .cached)
        cache.release(handle)
        cache.release(handle)
        #expect(await cache.evict() == 1)
        #expect(await cache.state(of: "doc", currentVersion: "v1") == .remote)
    }

    /// docs/architecture.md, "Paths": the cache directory may be emptied at any time. A blob deleted by hand is not
    /// served (nil); the actor's open then notices and downloads again.
    @Test func aBlobDeletedByHandIsNotServed() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("doc", size: 5000)
        let cache = try fixture.cache()
        _ = try await cache.load(document)
        for name in fixture.files(in: "blobs") { unlink(fixture.directory + "/blobs/" + name) }
        #expect(cache.openCached(document) == nil)
        #expect(try await cache.load(document) == bytes)
        #expect(fixture.downloader.bodies == 2)
        let handle = try #require(cache.openCached(document))
        cache.release(handle)
    }
}
