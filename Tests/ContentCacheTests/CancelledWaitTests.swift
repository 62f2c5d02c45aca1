import Glibc
import Synchronization
import Testing

@testable import ContentCache

/// FUSE INTERRUPT at the cache (docs/mount.md, "Downloads and offline"): the filesystem cancels the task of an open or
/// read whose caller got a signal, and the wait ends with `.cancelled` (`EINTR`). Only the wait: the download belongs
/// to no opener, so it goes on for the others and completes into the cache.
@Suite struct CancelledWaitTests {
    /// Two opens of a document whose download waits for a download slot (the fake's gate, where the request waits
    /// as StudIPKit's waits for one of its slots): the cancelled one ends at once with EINTR, the other gets every
    /// byte once the slot frees, from the one download both joined. The cancelled open holds no claim: the blob is
    /// released with the other handle and is evictable then.
    @Test func aCancelledOpenWaitingForASlotEndsAndTheDownloadGoesOn() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("queued", size: 300_000)
        fixture.downloader.configure { $0.queuedAtTheGate = ["queued"] }
        let cache = try fixture.cache(startDeadline: .seconds(60))
        let patient = Task { try await cache.open(document) }
        let ended = Ended()
        let interrupted = Task {
            defer { ended.mark() }
            return try await cache.open(document)
        }
        try await eventually { fixture.downloader.requests.count == 1 }
        try await Task.sleep(for: .milliseconds(50))
        #expect(await cache.usage().downloadsInFlight == 1)

        interrupted.cancel()
        #expect(try await ended.within(.seconds(5)), "the cancelled open ends before the slot frees")
        #expect(await cache.usage().downloadsInFlight == 1, "the download goes on")
        #expect(fixture.downloader.gate.hasWaiter, "its request still waits for the slot")

        fixture.downloader.gate.open()
        let error = await #expect(throws: ContentCacheError.self) { try await interrupted.value }
        #expect(error == .cancelled && error?.errorNumber == EINTR)
        let handle = try await within(.seconds(30)) { try await patient.value }
        #expect(try await cache.readAll(handle) == bytes)
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        #expect(fixture.downloader.requests.count == 1, "one download for both opens")
        #expect(await cache.state(of: "queued", currentVersion: "v1") == .cached)
        // The interrupted open left no claim: once the patient one releases, the blob can go.
        cache.release(handle)
        #expect(await cache.usage() == CacheUsage(bytes: 300_000, count: 1, limit: 1 << 40, downloadsInFlight: 0))
        let cleaned = await cache.clean(CleanRequest())
        #expect(cleaned.freedDocuments == 1 && cleaned.keptOpen == 0)
    }

    /// A read waiting for bytes the stream has not brought yet, cancelled, ends with EINTR; a read of the same bytes
    /// through the same handle gets them once the stream goes on, and the download completes.
    @Test func aCancelledReadWaitingForBytesEndsAndTheStreamGoesOn() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("doc", size: 200_000)
        fixture.downloader.configure {
            $0.chunkSize = 8192
            $0.pauseAt = 16_384
        }
        let cache = try fixture.cache()
        let handle = try await cache.open(document)
        let ended = Ended()
        let interrupted = Task {
            defer { ended.mark() }
            return try await cache.read(handle, offset: 100_000, length: 4096)
        }
        let patient = Task { try await cache.read(handle, offset: 100_000, length: 4096) }
        try await eventually { fixture.downloader.gate.hasWaiter }
        interrupted.cancel()
        #expect(try await ended.within(.seconds(5)), "the cancelled read ends before its bytes arrive")

        fixture.downloader.gate.open()
        await #expect(throws: ContentCacheError.cancelled) { try await interrupted.value }
        #expect(try await within(.seconds(30)) { try await patient.value } == Array(bytes[100_000..<104_096]))
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        #expect(fixture.downloader.requests.count == 1)
        cache.release(handle)
        #expect(await cache.usage() == CacheUsage(bytes: 200_000, count: 1, limit: 1 << 40, downloadsInFlight: 0))
    }
}

/// Whether a task has ended, asked without awaiting it: a wait that ignored cancellation fails the test (and the gate
/// then opens) instead of hanging the run.
private final class Ended: Sendable {
    private let flag = Atomic(false)

    func mark() { flag.store(true, ordering: .releasing) }

    /// True once ``mark()`` ran, false if `limit` passed first.
    func within(_ limit: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while !flag.load(ordering: .acquiring), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        return flag.load(ordering: .acquiring)
    }
}
