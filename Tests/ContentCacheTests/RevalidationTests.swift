import ContentCache
import Foundation
import StudIPKit
import StudIPModel
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

    /// A rename or a move bumps the file-ref's chdate on Stud.IP and changes nothing else: the key must not follow
    /// it. A new upload changes the file id (web UI, REST) or the size (JSON:API).
    @Test func theVersionKeyFollowsTheFileIDAndTheSize() {
        let base = CacheDocument(id: "doc", version: DocumentVersion(fileID: "f1", size: 10))
        let reuploaded = CacheDocument(id: "doc", version: DocumentVersion(fileID: "f2", size: 10))
        let resized = CacheDocument(id: "doc", version: DocumentVersion(fileID: "f1", size: 11))
        #expect(base.size == 10 && resized.size == 11)
        #expect(Set([base.version, reuploaded.version, resized.version]).count == 3)
        #expect(base == CacheDocument(id: "doc", version: DocumentVersion(fileID: "f1", size: 10)))
    }

    /// JSON:API's content upload at the same size changes nothing a listing shows, only the bytes and the ETag:
    /// an open past the revalidation interval asks with `If-None-Match` and gets the new bytes under a new
    /// content id; a 304 keeps the blob and its content id.
    @Test func anOpenRevalidatesAndFindsBytesTheListingDoesNotShow() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, oldBytes) = fixture.document("doc", size: 5000, etag: "\"1 100 5000\"")
        let cache = try fixture.cache(revalidationInterval: .zero)
        let first = try await cache.open(document)
        #expect(try await cache.readAll(first) == oldBytes)
        cache.release(first)

        let confirmed = try await cache.open(document)
        cache.release(confirmed)
        #expect(fixture.downloader.requests.last?.ifNoneMatch == "\"1 100 5000\"")
        #expect(fixture.downloader.bodies == 1, "a 304 sends no body")
        #expect(confirmed.contentID == first.contentID)

        let newBytes = content("same size, new bytes", size: 5000)
        fixture.downloader.set("doc", newBytes, etag: "\"1 101 5000\"")
        let replaced = try await cache.open(document)
        #expect(try await cache.readAll(replaced) == newBytes)
        #expect(replaced.contentID != first.contentID)
        #expect(replaced.version == document.version)
        cache.release(replaced)
        #expect(try await cache.load(document) == newBytes)
        #expect(fixture.downloader.bodies == 2)
    }

    /// `campusfs refresh` makes the next open of the refreshed documents' cached copies ask once, however recently
    /// they were confirmed (same size, new bytes: nothing in a listing shows it); others and scans do not ask.
    @Test func afterRequiringRevalidationTheNextOpenAsksOnce() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (slides, _) = fixture.document("slides", size: 5000, etag: "\"1 100 5000\"")
        let (other, _) = fixture.document("other", size: 100, etag: "e1")
        let cache = try fixture.cache(revalidationInterval: .seconds(600))
        _ = try await cache.load(slides)
        _ = try await cache.load(other)
        let newBytes = content("fixed slides", size: 5000)
        fixture.downloader.set("slides", newBytes, etag: "\"1 101 5000\"")
        #expect(try await cache.load(slides) != newBytes, "within the interval nothing asks")

        cache.requireRevalidation(of: ["slides"])
        let scanned = try #require(cache.openCached(slides, revalidate: false))
        cache.release(scanned)
        #expect(fixture.downloader.requests.count == 2, "a scan's open does not ask")
        #expect(cache.openCached(slides) == nil, "a person's open goes to the server")
        #expect(try await cache.load(slides) == newBytes)
        #expect(fixture.downloader.requests.count == 3)
        #expect(fixture.downloader.requests.last?.ifNoneMatch == "\"1 100 5000\"")
        #expect(try await cache.load(slides) == newBytes)
        _ = try await cache.load(other)
        #expect(fixture.downloader.requests.count == 3, "asked once; other documents not at all")

        cache.requireRevalidation(of: nil)
        _ = try await cache.load(other)
        #expect(fixture.downloader.requests.last?.documentID == "other")
        #expect(fixture.downloader.requests.count == 4)
    }

    @Test func withinTheIntervalAnOpenAsksNothing() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("doc", size: 100, etag: "e1")
        let cache = try fixture.cache(revalidationInterval: .seconds(600))
        _ = try await cache.load(document)
        #expect(try await cache.load(document) == bytes)
        #expect(fixture.downloader.requests.count == 1)
    }

    /// After a restart nothing is known about when the bytes were confirmed: the first open asks.
    @Test func aRestartedCacheRevalidatesOnce() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("doc", size: 100, etag: "e1")
        _ = try await fixture.cache(revalidationInterval: .seconds(600)).load(document)
        let restarted = try fixture.cache(revalidationInterval: .seconds(600))
        #expect(try await restarted.load(document) == bytes)
        #expect(try await restarted.load(document) == bytes)
        #expect(fixture.downloader.requests.map(\.ifNoneMatch) == [nil, "e1"])
    }

    /// Offline, revalidation never delays or fails an open: known unavailable, the server is not asked; failing
    /// to reach it, a server error or a refused login, the cached bytes are served.
    @Test(arguments: [
        (true, StudIPError.cancelled), (false, .unreachable(server: "fake", detail: "refused")),
        (false, .serverError(status: 503, what: "document")), (false, .authenticationFailed(server: "fake")),
    ])
    func revalidationFallsBackToTheCachedBytes(knownUnavailable: Bool, failure: StudIPError) async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("doc", size: 100, etag: "e1")
        let cache = try fixture.cache(revalidationInterval: .zero)
        _ = try await cache.load(document)
        fixture.downloader.configure {
            $0.knownUnavailable = knownUnavailable
            $0.behavior = .fail(failure)
        }
        #expect(try await within(.seconds(10)) { try await cache.load(document) } == bytes)
        // Known unavailable: not asked. Otherwise asked at least once; on a loaded machine a third request was seen
        // in two clean-clone runs (the test then took 22 s; not yet explained), which serves the same cached bytes.
        if knownUnavailable {
            #expect(fixture.downloader.requests.count == 1)
        } else {
            #expect(fixture.downloader.requests.count >= 2)
        }
    }

    /// Documents without an ETag (legacy REST) are never revalidated: Stud.IP answers 200 to every conditional
    /// request there, so asking would download the document again on every open.
    @Test func withoutAnETagNothingIsRevalidated() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, _) = fixture.document("doc", size: 100)
        let cache = try fixture.cache(revalidationInterval: .zero)
        _ = try await cache.load(document)
        _ = try await cache.load(document)
        #expect(fixture.downloader.requests.count == 1)
    }

    /// A `Content-Length` that contradicts the metadata fails the open itself, before it answers, so the caller
    /// can refresh the metadata and try again; nothing is cached.
    @Test func aLengthThatContradictsTheMetadataFailsTheOpen() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let bytes = content("doc", size: 20_034)
        fixture.downloader.set("doc", bytes, etag: "e2")
        let cache = try fixture.cache()
        await #expect(throws: ContentCacheError.sizeMismatch(documentID: "doc", expected: 594, received: 20_034)) {
            _ = try await cache.open(CacheDocument(id: "doc", size: 594, version: "f1/594"))
        }
        #expect(await cache.usage().count == 0)
        #expect(try await cache.load(CacheDocument(id: "doc", size: 20_034, version: "f1/20034")) == bytes)
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
        // The old version's files go after the new one's commit, on the blocking pool: on a loaded machine a moment
        // after `load` returned (a clean-clone run saw 3 files here).
        var blobs = fixture.files(in: "blobs")
        for _ in 0..<250 where blobs.count != 2 {
            try await Task.sleep(for: .milliseconds(20))
            blobs = fixture.files(in: "blobs")
        }
        #expect(blobs.count == 2, "\(blobs)")
        #expect(try await cache.readAll(oldHandle) == oldBytes)
        #expect(await cache.usage().bytes == 7000)

        _ = try await cache.load(CacheDocument(id: "doc", size: 7000, version: "v3"))
        #expect(fixture.downloader.requests.last?.ifNoneMatch == "e2")
        #expect(fixture.downloader.bodies == 2)
    }
}
