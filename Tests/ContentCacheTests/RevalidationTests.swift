import ContentCache
import Foundation
import StudIPKit
import Testing

@Suite struct RevalidationTests {
    @Test(arguments: [("e1", nil), (nil, Date(timeIntervalSince1970: 1_700_000_000))] as [(String?, Date?)])
    func notModifiedKeepsTheBytesWithoutASecondBody(etag: String?, lastModified: Date?) async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let bytes = content("doc", size: 5000)
        fixture.downloader.set("doc", bytes, etag: etag, lastModified: lastModified)
        let cache = try fixture.cache()
        _ = try await cache.load(CacheDocument(id: "doc", size: 5000, version: "v1"))
        #expect(await cache.state(of: "doc", currentVersion: "v2") == .stale)

        #expect(try await cache.load(CacheDocument(id: "doc", size: 5000, version: "v2")) == bytes)
        let revalidation = try #require(fixture.downloader.requests.last)
        #expect(revalidation.ifNoneMatch == etag)
        #expect(revalidation.ifModifiedSince == lastModified)
        #expect(fixture.downloader.requests.count == 2)
        #expect(fixture.downloader.bodies == 1)
        #expect(await cache.state(of: "doc", currentVersion: "v2") == .cached)
        _ = try await cache.load(CacheDocument(id: "doc", size: 5000, version: "v2"))
        #expect(fixture.downloader.requests.count == 2)
    }

    @Test func theVersionKeyFollowsTheFileIDAndTheChangeDate() {
        let changed = Date(timeIntervalSince1970: 1_700_000_000)
        let base = CacheDocument(id: "doc", version: DocumentVersion(changed: changed, fileID: "f1", size: 10))
        let reuploaded = CacheDocument(id: "doc", version: DocumentVersion(changed: changed, fileID: "f2", size: 10))
        let touched = CacheDocument(
            id: "doc", version: DocumentVersion(changed: changed.addingTimeInterval(1), fileID: "f1", size: 10))
        #expect(base.size == 10)
        #expect(Set([base.version, reuploaded.version, touched.version]).count == 3)
        #expect(base == CacheDocument(id: "doc", version: DocumentVersion(changed: changed, fileID: "f1", size: 10)))
    }

    @Test func newContentReplacesTheOldVersionAndItsValidator() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (old, oldBytes) = fixture.document("doc", size: 5000, version: "v1", etag: "e1")
        let cache = try fixture.cache()
        _ = try await cache.load(old)
        let oldHandle = try await cache.open(old)

        let (new, newBytes) = fixture.document("doc", size: 7000, version: "v2", etag: "e2")
        #expect(try await cache.load(new) == newBytes)
        #expect(fixture.downloader.requests.last?.ifNoneMatch == "e1")
        #expect(fixture.downloader.bodies == 2)
        #expect(fixture.files(in: "blobs").count == 2)
        #expect(try await cache.readAll(oldHandle) == oldBytes)
        #expect(await cache.usage().bytes == 7000)

        _ = try await cache.load(CacheDocument(id: "doc", size: 7000, version: "v3"))
        #expect(fixture.downloader.requests.last?.ifNoneMatch == "e2")
        #expect(fixture.downloader.bodies == 2)
    }
}
