import ContentCache
import Testing

@Suite struct EvictionTests {
    @Test func leastRecentlyUsedGoesFirstSkippingOpenAndPinnedDocuments() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let cache = try fixture.cache(sizeLimit: 4500)
        var documents: [String: CacheDocument] = [:]
        for id in ["a", "e", "b", "c", "d", "f"] { documents[id] = fixture.document(id, size: 1000).0 }
        func load(_ id: String) async throws { _ = try await cache.load(try #require(documents[id])) }
        func cached() async -> [String] {
            var ids: [String] = []
            for id in documents.keys.sorted() where await cache.state(of: id, currentVersion: "v1") == .cached {
                ids.append(id)
            }
            return ids
        }

        for id in ["a", "e", "b", "c", "a"] { try await load(id) }
        let openB = try await cache.open(try #require(documents["b"]))
        await cache.setPinned("c", true)
        #expect(await cached() == ["a", "b", "c", "e"])

        try await load("d")
        #expect(await cached() == ["a", "b", "c", "d"])
        try await load("f")
        #expect(await cached() == ["b", "c", "d", "f"])
        let usage = await cache.usage()
        #expect((usage.bytes, usage.count, usage.limit) == (4000, 4, 4500))
        cache.release(openB)
    }

    @Test func unpinningAndReleasingMakeDocumentsEvictableAgain() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let cache = try fixture.cache(minimumFreeSpace: .max)
        let (pinned, _) = fixture.document("pinned", size: 1000)
        let (open, _) = fixture.document("open", size: 1000)
        let (other, _) = fixture.document("other", size: 1000)
        await cache.setPinned("pinned", true)
        try await cache.prefetch(pinned)
        let handle = try await cache.open(open)
        _ = try await cache.readAll(handle)
        // Its bytes are read; its commit (fsync, rename, sidecar) may still run: wait for it, or it commits after the
        // next download's eviction and the count below is 2.
        try await cache.prefetch(open)
        _ = try await cache.load(other)
        #expect(await cache.usage().count == 3)
        #expect(await cache.evict() == 1)
        #expect(await cache.state(of: "other", currentVersion: "v1") == .remote)

        await cache.setPinned("pinned", false)
        #expect(await cache.evict() == 1)
        #expect(await cache.state(of: "pinned", currentVersion: "v1") == .remote)
        #expect(await cache.state(of: "open", currentVersion: "v1") == .cached)
        cache.release(handle)
        #expect(await cache.evict() == 1)
        #expect(await cache.usage().count == 0)
        #expect(fixture.files(in: "blobs").isEmpty)
    }
}
