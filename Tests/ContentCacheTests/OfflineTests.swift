import Glibc
import StudIPModel
import Testing

@testable import ContentCache

@Suite struct OfflineTests {
    @Test func anUnreachableServerFailsTheOpenAtOnce() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, _) = fixture.document("doc", size: 1000)
        let unreachable = StudIPError.unreachable(server: "studip.example", detail: "connection refused")
        fixture.downloader.configure { $0.behavior = .fail(unreachable) }
        let cache = try fixture.cache(startDeadline: .seconds(60))
        let error = try await openError(cache, document)
        #expect(error == .downloadFailed(documentID: "doc", unreachable))
        #expect(error.isOffline)
        #expect(error.errorNumber == ENETDOWN)
        #expect(await cache.state(of: "doc", currentVersion: "v1") == .remote)
        #expect(fixture.files(in: "tmp").isEmpty && fixture.files(in: "partial").isEmpty)
    }

    @Test func aHangingServerFailsTheOpenAtTheDeadline() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, _) = fixture.document("doc", size: 1000)
        fixture.downloader.configure { $0.behavior = .hang }
        let cache = try fixture.cache(startDeadline: .milliseconds(200))
        let error = try await openError(cache, document)
        #expect(error == .startTimedOut(documentID: "doc", after: .milliseconds(200)))
        #expect(error.errorNumber == ENETDOWN)
        // The deadline fails the open first and deletes the partial file after (a loaded clean-clone run saw it).
        for _ in 0..<500 where !fixture.files(in: "partial").isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        #expect(fixture.files(in: "tmp").isEmpty && fixture.files(in: "partial").isEmpty)
    }

    /// Issue 14.2: an open queued behind downloads that stream is waiting for a busy server, not an unreachable one.
    @Test func anOpenQueuedBehindStreamingDownloadsWaitsPastTheDeadline() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (big, _) = fixture.document("big", size: 100_000)
        let (queued, queuedBytes) = fixture.document("queued", size: 1000)
        fixture.downloader.configure {
            $0.pauseAt = 8192
            $0.queuedAtTheGate = ["queued"]
        }
        let cache = try fixture.cache(startDeadline: .milliseconds(200))
        let streaming = try await cache.open(big)
        let waiting = Task { try await cache.readAll(try await cache.open(queued)) }
        try await Task.sleep(for: .milliseconds(700))
        fixture.downloader.gate.open()
        #expect(try await waiting.value == queuedBytes)
        // Both downloads end before the fixture goes.
        try await within(.seconds(30)) { try await cache.prefetch(big) }
        try await within(.seconds(30)) { try await cache.prefetch(queued) }
        cache.release(streaming)
    }

    @Test func anOlderVersionIsServedWhenOffline() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (old, oldBytes) = fixture.document("doc", size: 1000, version: "v1", etag: "e1")
        let cache = try fixture.cache()
        _ = try await cache.load(old)
        fixture.downloader.configure { $0.behavior = .fail(.unreachable(server: "studip.example", detail: "down")) }
        let new = CacheDocument(id: "doc", size: 1200, version: "v2")
        let handle = try await cache.open(new)
        #expect(handle.version == "v1")
        #expect(try await cache.readAll(handle) == oldBytes)
        #expect(await cache.state(of: "doc", currentVersion: "v2") == .stale)
        await #expect(throws: ContentCacheError.self) { try await cache.prefetch(new) }
    }

    /// Issue 14.2: errnos say what happened; only an unreachable server is ENETDOWN.
    @Test func errnosTellOfflineFromBrokenFromBusy() {
        let cases: [(StudIPError, Int32)] = [
            (.unreachable(server: "s", detail: "refused"), ENETDOWN),
            (.brokeOff(what: "d", detail: "reset", stalled: false), EIO),
            (.brokeOff(what: "d", detail: "no data", stalled: true), ETIMEDOUT),
            (.serverError(status: 429, what: "d"), EAGAIN),
            (.serverError(status: 503, what: "d"), EIO),
        ]
        for (error, errno) in cases {
            #expect(ContentCacheError.downloadFailed(documentID: "d", error).errorNumber == errno, "\(error)")
        }
    }

    @Test func aForbiddenDocumentSaysSo() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, _) = fixture.document("doc", size: 1000)
        fixture.downloader.configure { $0.behavior = .fail(.forbidden(what: "document doc")) }
        let error = try await openError(try fixture.cache(), document)
        #expect(error == .downloadFailed(documentID: "doc", .forbidden(what: "document doc")))
        #expect(error.errorNumber == EACCES)
        #expect(!error.isOffline)
        #expect(error.description.contains("access denied"))
    }

    private func openError(_ cache: ContentCache, _ document: CacheDocument) async throws -> ContentCacheError {
        try await within(.seconds(10)) {
            do throws(ContentCacheError) {
                _ = try await cache.open(document)
                return ContentCacheError.cancelled
            } catch {
                return error
            }
        }
    }
}
