import Foundation
import Glibc
import StudIPModel
import Synchronization
import SystemSupport
import Testing

@testable import ContentCache

/// Issue 30: reads out of order fetch just their bytes by ranges while the stream goes on (docs/ranges.md, "In the
/// cache"). The fake's stream waits at its gate before its first chunk (`pauseAt = 0`) wherever a test needs the
/// stream held back, so the order is the test's, not the clock's. The tests run side by side (each takes a tenth of a
/// second since ``BodyWriter`` concatenates chunk by chunk; 10 runs of ContentCacheTests at a parallelization width of
/// 6 passed).
@Suite struct RangeReadTests {
    private static let pool = BlockingPool(threads: 2, name: "range-read-tests")
    private static let chunk = Int(RangeFetcher.chunk)

    /// A fake that serves ranges, with its stream held at byte 0.
    private static func heldStream(_ fixture: Fixture, servesRanges: Bool = true) {
        fixture.downloader.configure {
            $0.servesRanges = servesRanges
            $0.chunkSize = 64 << 10
            $0.pauseAt = 0
        }
    }

    /// A fixture with the document `id` of `size` bytes (``heldStream``) and a cache that has it open; the fixture is
    /// removed if the open fails, else by the caller.
    private static func openHeld(
        _ id: String, size: Int, etag: String? = nil, rangesWaitAtGate: Bool = false,
        revalidationInterval: Duration? = nil, streamWindow: Int64 = 1 << 20
    ) async throws -> (Fixture, CacheDocument, [UInt8], ContentCache, ContentHandle) {
        let fixture = Fixture()
        do {
            let (document, bytes) = fixture.document(id, size: size, etag: etag)
            heldStream(fixture)
            if rangesWaitAtGate { fixture.downloader.configure { $0.rangesWaitAtGate = true } }
            let cache = try fixture.cache(
                revalidationInterval: revalidationInterval, pool: pool, streamWindow: streamWindow)
            return (fixture, document, bytes, cache, try await cache.open(document))
        } catch {
            fixture.remove()
            throw error
        }
    }

    @Test func theEndOfAnUncached24MBDocumentComesFromOneRangeWhileTheStreamIsHeld() async throws {
        let size = 24_000_000
        let (fixture, document, bytes, cache, handle) = try await Self.openHeld("pdf", size: size)
        defer { fixture.remove() }
        let end = try await within(.seconds(30)) {
            try await cache.read(handle, offset: Int64(size - 4096), length: 4096)
        }
        #expect(end == Array(bytes[(size - 4096)...]))
        let aligned = Int64(size / Self.chunk * Self.chunk)
        #expect(fixture.downloader.rangeRequests.map(\.range) == [aligned..<Int64(size)], "one aligned chunk")
        #expect(fixture.downloader.rangeRequests.first?.documentSize == Int64(size))
        #expect(fixture.downloader.bytesSent == size - Int(aligned), "the stream, held, sent nothing")
        #expect(await cache.state(of: "pdf", currentVersion: "v1") == .downloading, "not cached while sparse")
        #expect(fixture.files(in: "blobs").isEmpty)
        fixture.downloader.gate.open()
        try await within(.seconds(60)) { try await cache.prefetch(document) }
        cache.release(handle)
    }

    @Test func oneRangeRequestPerSeek() async throws {
        let (fixture, document, bytes, cache, handle) = try await Self.openHeld("doc", size: 8 << 20)
        defer { fixture.remove() }
        for offset in [6 << 20, 3 << 20, (5 << 20) + 1000, (3 << 20) + 8192, 6 << 20] {
            let read = try await within(.seconds(30)) {
                try await cache.read(handle, offset: Int64(offset), length: 4096)
            }
            #expect(read == Array(bytes[offset..<offset + 4096]))
        }
        let starts = fixture.downloader.rangeRequests.map(\.range.lowerBound)
        #expect(starts == [6 << 20, 3 << 20, 5 << 20], "three seeks, each read again is present")
        #expect(fixture.downloader.rangeRequests.allSatisfy { $0.range.count == Self.chunk })
        // Bytes within the stream's window wait for it rather than costing a request.
        let nearTheStream = Task { try await cache.read(handle, offset: 100_000, length: 4096) }
        try await Self.waitUntil(handle, hasWaitingReads: 1)
        #expect(fixture.downloader.rangeRequests.count == 3)
        fixture.downloader.gate.open()
        #expect(try await nearTheStream.value == Array(bytes[100_000..<104_096]))
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        cache.release(handle)
    }

    @Test func concurrentReadsOfOneChunkShareOneRequest() async throws {
        let (fixture, document, bytes, cache, handle) = try await Self.openHeld(
            "doc", size: 8 << 20, rangesWaitAtGate: true)
        defer { fixture.remove() }
        let base = 5 << 20
        let reads = (0..<8).map { index in
            Task { try await cache.read(handle, offset: Int64(base + index * 15_000), length: 10_000) }
        }
        try await Self.waitUntil(handle, hasWaitingReads: 8)
        // The fetch runs in a task of its own: wait for it to ask.
        try await eventually { !fixture.downloader.rangeRequests.isEmpty }
        #expect(fixture.downloader.rangeRequests.count == 1)
        // A read that is interrupted (FUSE) does not cancel the fetch the others wait for.
        reads[0].cancel()
        fixture.downloader.rangeGate.open()
        for (index, read) in reads.enumerated().dropFirst() {
            let offset = base + index * 15_000
            #expect(try await read.value == Array(bytes[offset..<offset + 10_000]))
        }
        #expect(fixture.downloader.rangeRequests.count == 1)
        fixture.downloader.gate.open()
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        cache.release(handle)
    }

    /// A read interrupted by a signal (FUSE's interrupt cancels its task) leaves the fetch it started running: the next
    /// read of those bytes gets them from it, without a second request.
    @Test func anInterruptedReadLeavesItsFetchRunning() async throws {
        let (fixture, document, bytes, cache, handle) = try await Self.openHeld(
            "doc", size: 4 << 20, rangesWaitAtGate: true)
        defer { fixture.remove() }
        let interrupted = Task { try await cache.read(handle, offset: 3 << 20, length: 4096) }
        try await Self.waitUntil(handle, hasWaitingReads: 1)
        interrupted.cancel()
        await #expect(throws: ContentCacheError.cancelled) { try await interrupted.value }
        fixture.downloader.rangeGate.open()
        let again = try await within(.seconds(30)) { try await cache.read(handle, offset: 3 << 20, length: 4096) }
        #expect(again == Array(bytes[(3 << 20)..<(3 << 20) + 4096]))
        #expect(fixture.downloader.rangeRequests.count == 1)
        fixture.downloader.gate.open()
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        cache.release(handle)
    }

    @Test func aSequentialReaderFetchesMoreEachTime() async throws {
        let (fixture, document, bytes, cache, handle) = try await Self.openHeld("video", size: 16 << 20)
        defer { fixture.remove() }
        let start = 2 << 20
        let end = start + (256 + 512 + 1024 + 2048) * 1024
        for offset in stride(from: start, to: end, by: 64 << 10) {
            let read = try await within(.seconds(30)) {
                try await cache.read(handle, offset: Int64(offset), length: 64 << 10)
            }
            #expect(read == Array(bytes[offset..<offset + (64 << 10)]))
        }
        let sizes = fixture.downloader.rangeRequests.map(\.range.count)
        #expect(sizes == [256 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20], "\(sizes)")
        #expect(fixture.downloader.rangeRequests.first?.range.lowerBound == Int64(start))
        fixture.downloader.gate.open()
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        cache.release(handle)
    }

    /// A reader that follows the stream behind a mount: it waits in a read at the stream, and the kernel's readahead
    /// (1 MiB, async) reads up to three windows past the stream meanwhile, in any order. Those reads wait for the
    /// stream with the window the mount sets; with a window of 1 MiB they fetched ranges and the whole document went
    /// by ranges (MountLargeTests).
    @Test func readsThatFollowTheStreamThreeMiBAheadFetchNoRange() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let size = 8 << 20
        let held = 2 << 20
        let (document, bytes) = fixture.document("video", size: size)
        fixture.downloader.configure {
            $0.servesRanges = true
            $0.chunkSize = 64 << 10
            $0.pauseAt = held
        }
        let cache = try fixture.cache(
            pool: Self.pool, streamWindow: ContentCacheConfiguration.streamWindow(readahead: 1 << 20))
        let handle = try await cache.open(document)
        // The stream has received this far (its writer may still hold the last chunks: nobody waits yet).
        try await eventually { handle.transfer?.received == Int64(held) }
        // The reader's own read at the stream, then the kernel's readahead windows past it, the farthest first.
        let atTheStream = Task { try await cache.read(handle, offset: Int64(held), length: 1 << 20) }
        try await Self.waitUntil(handle, hasWaitingReads: 1)
        let ahead = [held + (3 << 20), held + (2 << 20), held + (1 << 20)].map { offset in
            Task { try await cache.read(handle, offset: Int64(offset), length: 1 << 20) }
        }
        try await Self.waitUntil(handle, hasWaitingReads: 4)
        #expect(fixture.downloader.rangeRequests.isEmpty)
        fixture.downloader.gate.open()
        #expect(try await within(.seconds(30)) { try await atTheStream.value } == Array(bytes[held..<held + (1 << 20)]))
        for (index, read) in ahead.enumerated() {
            let offset = held + (3 - index) << 20
            #expect(
                try await within(.seconds(30)) { try await read.value } == Array(bytes[offset..<offset + (1 << 20)]))
        }
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        cache.release(handle)
        #expect(fixture.downloader.rangeRequests.isEmpty, "\(fixture.downloader.rangeRequests.map(\.range))")
        #expect(fixture.downloader.bodies == 1 && fixture.downloader.bytesSent == size)
    }

    /// A viewer's read near the end of a 4 MB document on the mount: no reader follows the stream there, so the read
    /// fetches its bytes by a range instead of waiting for the whole download (a window measured from the stream
    /// alone, four readahead windows, made it wait).
    @Test func aReadNearTheEndOfAFourMBDocumentFetchesARange() async throws {
        let size = 4_000_000
        let (fixture, document, bytes, cache, handle) = try await Self.openHeld(
            "slides", size: size, streamWindow: ContentCacheConfiguration.streamWindow(readahead: 1 << 20))
        defer { fixture.remove() }
        let tail = try await within(.seconds(30)) {
            try await cache.read(handle, offset: Int64(size - 4096), length: 4096)
        }
        #expect(tail == Array(bytes[(size - 4096)...]))
        #expect(fixture.downloader.rangeRequests.count == 1)
        fixture.downloader.gate.open()
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        cache.release(handle)
    }

    /// Ranges ask for the stream's version (`If-Range` with its ETag): when the document changes on the server while
    /// it downloads, a range fails rather than bring the new version's bytes, and the read gets the stream's.
    @Test func rangesAskForTheStreamsVersion() async throws {
        let size = 4 << 20
        let (fixture, document, bytes, cache, handle) = try await Self.openHeld("doc", size: size, etag: "\"e1\"")
        defer { fixture.remove() }
        let end = try await within(.seconds(30)) {
            try await cache.read(handle, offset: Int64(size - 4096), length: 4096)
        }
        #expect(end == Array(bytes[(size - 4096)...]))
        #expect(fixture.downloader.rangeRequests.map(\.ifRange) == ["\"e1\""])
        // Replaced on the server: the stream under way still sends the old version.
        fixture.downloader.set("doc", content("changed", size: size), etag: "\"e2\"")
        let middle = Task { try await cache.read(handle, offset: 2 << 20, length: 4096) }
        try await Self.waitUntilRangesFailed(handle)
        #expect(fixture.downloader.rangeRequests.map(\.ifRange) == ["\"e1\"", "\"e1\""])
        fixture.downloader.gate.open()
        #expect(try await within(.seconds(30)) { try await middle.value } == Array(bytes[(2 << 20)..<(2 << 20) + 4096]))
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        #expect(try await cache.readAll(handle) == bytes)
        cache.release(handle)
    }

    /// What evince and mupdf do (issue 30): the end first, then the first pages, then on to the end. One stream, one
    /// range, and the stream stops where the range begins.
    @Test func theViewerPatternFetchesAtMostFivePercentMore() async throws {
        let size = 24_000_000
        let (fixture, document, bytes, cache, handle) = try await Self.openHeld(
            "pdf", size: size, etag: "\"e1\"", revalidationInterval: .zero)
        defer { fixture.remove() }
        let end = try await within(.seconds(30)) {
            try await cache.read(handle, offset: Int64(size - 4096), length: 4096)
        }
        #expect(end == Array(bytes[(size - 4096)...]))
        fixture.downloader.gate.open()
        var read: [UInt8] = []
        read.reserveCapacity(size)
        while read.count < size {
            let offset = Int64(read.count)
            read += try await within(.seconds(30)) { try await cache.read(handle, offset: offset, length: 128 << 10) }
        }
        #expect(read == bytes)
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        cache.release(handle)
        #expect(await cache.state(of: "pdf", currentVersion: "v1") == .cached)
        #expect(fixture.downloader.bodies == 1 && fixture.downloader.rangeRequests.count == 1)
        let sent = fixture.downloader.bytesSent
        #expect(Double(sent) <= 1.05 * Double(size), "\(sent) bytes sent")
        #expect(sent < size + Self.chunk, "the stream stopped at the range's bytes")
        // Committed with the stream's ETag although the stream stopped early: the next open revalidates with it.
        let again = try await cache.open(document)
        cache.release(again)
        #expect(fixture.downloader.requests.last?.ifNoneMatch == "\"e1\"")
    }

    @Test func theStreamStopsWhenTheRestIsPresent() async throws {
        let size = 4 << 20
        let (fixture, document, bytes, cache, handle) = try await Self.openHeld("doc", size: size)
        defer { fixture.remove() }
        // Everything from 1 MiB on by ranges (1 MiB is just outside the stream's window at byte 0).
        var offset = 1 << 20
        while offset < size {
            let position = Int64(offset)
            let read = try await within(.seconds(30)) {
                try await cache.read(handle, offset: position, length: 128 << 10)
            }
            #expect(read == Array(bytes[offset..<min(offset + (128 << 10), size)]))
            offset += 128 << 10
        }
        let ranged = fixture.downloader.bytesSent
        #expect(ranged == size - (1 << 20))
        fixture.downloader.gate.open()
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        #expect(fixture.downloader.bytesSent == size, "the stream stopped at 1 MiB")
        #expect(try await cache.readAll(handle) == bytes)
        #expect(await cache.state(of: "doc", currentVersion: "v1") == .cached)
        cache.release(handle)
    }

    @Test func theStreamStopsAtBytesPresentAndRangesFetchTheGaps() async throws {
        let size = 8 << 20
        let (fixture, document, bytes, cache, handle) = try await Self.openHeld("doc", size: size)
        defer { fixture.remove() }
        for offset in [1 << 20, 6 << 20] {
            _ = try await within(.seconds(30)) { try await cache.read(handle, offset: Int64(offset), length: 4096) }
        }
        fixture.downloader.gate.open()
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        #expect(try await cache.readAll(handle) == bytes)
        #expect(fixture.downloader.bodies == 1)
        #expect(fixture.downloader.bytesSent == size, "no byte twice")
        let gaps = fixture.downloader.rangeRequests.dropFirst(2).map(\.range)
        let chunk = Int64(Self.chunk)
        #expect(gaps == [(1 << 20) + chunk..<6 << 20, (6 << 20) + chunk..<Int64(size)], "\(gaps)")
        cache.release(handle)
    }

    /// A stream stopped at bytes present is dropped (which cancels it) before the gaps are fetched, not kept arriving
    /// meanwhile.
    @Test func aStoppedStreamIsDroppedWhileTheGapsAreFetched() async throws {
        let size = 4 << 20
        let (fixture, document, bytes, cache, handle) = try await Self.openHeld("doc", size: size)
        defer { fixture.remove() }
        _ = try await within(.seconds(30)) { try await cache.read(handle, offset: 2 << 20, length: 4096) }
        fixture.downloader.configure { $0.rangesWaitAtGate = true }
        fixture.downloader.gate.open()
        try await eventually { fixture.downloader.rangeRequests.count >= 2 }
        #expect(fixture.downloader.liveBodies == 0, "the stream's body is still held while the gaps are fetched")
        fixture.downloader.rangeGate.open()
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        #expect(try await cache.readAll(handle) == bytes)
        #expect(fixture.downloader.bytesSent == size)
        cache.release(handle)
    }

    /// The stream reaches bytes a range fetch is still getting: it stops there rather than fetch them twice, and the
    /// gaps after the fetch are fetched by ranges once it has ended.
    @Test func theStreamStopsAtBytesBeingFetched() async throws {
        let size = 4 << 20
        let (fixture, document, bytes, cache, handle) = try await Self.openHeld(
            "doc", size: size, rangesWaitAtGate: true)
        defer { fixture.remove() }
        let read = Task { try await cache.read(handle, offset: 1 << 20, length: 4096) }
        try await Self.waitUntil(handle, hasWaitingReads: 1)
        fixture.downloader.gate.open()
        try await eventually { handle.transfer?.present.contains(0..<(1 << 20)) == true }
        fixture.downloader.rangeGate.open()
        #expect(try await within(.seconds(30)) { try await read.value } == Array(bytes[(1 << 20)..<(1 << 20) + 4096]))
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        #expect(try await cache.readAll(handle) == bytes)
        #expect(fixture.downloader.bytesSent == size, "no byte twice")
        cache.release(handle)
    }

    /// A stream-only installation: one range request learns it, for every document, and reads wait for the stream.
    @Test func rangesUnavailableWaitsForTheStreamAndIsRemembered() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let size = 4 << 20
        let (first, firstBytes) = fixture.document("first", size: size)
        let (second, secondBytes) = fixture.document("second", size: size)
        Self.heldStream(fixture, servesRanges: false)
        let cache = try fixture.cache(pool: Self.pool)
        let handle = try await cache.open(first)
        let other = try await cache.open(second)
        let end = Task { try await cache.read(handle, offset: Int64(size - 4096), length: 4096) }
        try await Self.waitUntil(handle, hasWaitingReads: 1)
        try await Self.waitUntilRangesFailed(handle)
        #expect(fixture.downloader.rangeRequests.count == 1)
        #expect(cache.withAvailableRange(handle, offset: Int64(size - 4096), length: 4096) { _, _ in true } == nil)
        let otherEnd = Task { try await cache.read(other, offset: Int64(size - 4096), length: 4096) }
        try await Self.waitUntil(other, hasWaitingReads: 1)
        #expect(fixture.downloader.rangeRequests.count == 1, "not asked again for another document")
        fixture.downloader.gate.open()
        #expect(try await within(.seconds(30)) { try await end.value } == Array(firstBytes[(size - 4096)...]))
        #expect(try await within(.seconds(30)) { try await otherEnd.value } == Array(secondBytes[(size - 4096)...]))
        #expect(fixture.downloader.rangeRequests.count == 1)
        #expect(fixture.downloader.bodies == 2)
        // Both downloads end before the fixture goes.
        try await within(.seconds(30)) { try await cache.prefetch(first) }
        try await within(.seconds(30)) { try await cache.prefetch(second) }
        cache.release(handle)
        cache.release(other)
    }

    @Test func aRangeThatFailsOtherwiseStillGetsTheStreamsBytes() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let size = 4 << 20
        let (document, bytes) = fixture.document("doc", size: size)
        let (other, otherBytes) = fixture.document("other", size: size)
        Self.heldStream(fixture)
        fixture.downloader.configure { $0.rangeFailure = .serverError(status: 500, what: "sendfile.php") }
        let cache = try fixture.cache(pool: Self.pool)
        let handle = try await cache.open(document)
        let otherHandle = try await cache.open(other)
        let end = Task { try await cache.read(handle, offset: Int64(size - 4096), length: 4096) }
        try await Self.waitUntil(handle, hasWaitingReads: 1)
        try await Self.waitUntilRangesFailed(handle)
        // This document reads its stream only now.
        let middle = Task { try await cache.read(handle, offset: 2 << 20, length: 4096) }
        try await Self.waitUntil(handle, hasWaitingReads: 2)
        #expect(fixture.downloader.rangeRequests.count == 1)
        // Another document still uses ranges: the failure was not the installation's.
        fixture.downloader.configure { $0.rangeFailure = nil }
        let read = try await within(.seconds(30)) { try await cache.read(otherHandle, offset: 3 << 20, length: 4096) }
        #expect(read == Array(otherBytes[(3 << 20)..<(3 << 20) + 4096]))
        #expect(fixture.downloader.rangeRequests.count == 2)
        fixture.downloader.gate.open()
        #expect(try await within(.seconds(30)) { try await end.value } == Array(bytes[(size - 4096)...]))
        #expect(try await within(.seconds(30)) { try await middle.value } == Array(bytes[(2 << 20)..<(2 << 20) + 4096]))
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        #expect(await cache.state(of: "doc", currentVersion: "v1") == .cached)
        try await within(.seconds(30)) { try await cache.prefetch(other) }
        cache.release(handle)
        cache.release(otherHandle)
    }

    /// One range fails, so the stream runs to the end through the bytes another range is still getting: the
    /// download ends that fetch before it fsyncs and renames the file, so nothing writes into the blob after.
    @Test func aFetchStillRunningIsEndedBeforeTheFileIsCommitted() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let size = 4 << 20
        let (document, bytes) = fixture.document("doc", size: size)
        Self.heldStream(fixture)
        fixture.downloader.configure { $0.rangesWaitAtGate = true }
        // Range bodies alive when the blob is committed: the held fetch must have ended before.
        let atCommit = Mutex<Int?>(nil)
        let downloader = fixture.downloader
        let cache = try ContentCache(
            directory: fixture.directory, downloader: downloader,
            configuration: ContentCacheConfiguration(
                minimumFreeSpace: 0, revalidationInterval: nil,
                committed: { _ in atCommit.withLock { $0 = downloader.liveRangeBodies } }, pool: Self.pool))
        let handle = try await cache.open(document)
        let held = Task { try await cache.read(handle, offset: 3 << 20, length: 4096) }
        try await Self.waitUntil(handle, hasWaitingReads: 1)
        #expect(fixture.downloader.rangeRequests.count == 1)
        fixture.downloader.configure { $0.rangeFailure = .serverError(status: 500, what: "sendfile.php") }
        let failed = Task { try await cache.read(handle, offset: 2 << 20, length: 4096) }
        try await Self.waitUntilRangesFailed(handle)
        fixture.downloader.gate.open()
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        #expect(atCommit.withLock { $0 } == 0, "the held range still ran when the blob was committed")
        fixture.downloader.rangeGate.open()
        #expect(try await within(.seconds(30)) { try await held.value } == Array(bytes[(3 << 20)..<(3 << 20) + 4096]))
        #expect(try await within(.seconds(30)) { try await failed.value } == Array(bytes[(2 << 20)..<(2 << 20) + 4096]))
        #expect(await cache.state(of: "doc", currentVersion: "v1") == .cached)
        #expect(try await cache.readAll(handle) == bytes)
        cache.release(handle)
    }

    /// The stream stopped at bytes a range brought, and the range for the gap after them fails: the document is
    /// streamed again from byte 0 and committed with the server's bytes.
    @Test func aGapRangeThatFailsStreamsTheDocumentAgain() async throws {
        let size = 4 << 20
        let (fixture, document, bytes, cache, handle) = try await Self.openHeld("doc", size: size)
        defer { fixture.remove() }
        let read = try await within(.seconds(30)) { try await cache.read(handle, offset: 2 << 20, length: 4096) }
        #expect(read == Array(bytes[(2 << 20)..<(2 << 20) + 4096]))
        fixture.downloader.configure { $0.rangeFailure = .serverError(status: 500, what: "sendfile.php") }
        fixture.downloader.gate.open()
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        #expect(await cache.state(of: "doc", currentVersion: "v1") == .cached)
        #expect(try await cache.readAll(handle) == bytes)
        #expect(fixture.downloader.bodies == 2, "the stream, stopped at the range's bytes, then again")
        #expect(fixture.downloader.rangeRequests.count == 2, "the read's range, then the gap's that failed")
        cache.release(handle)
    }

    /// A removal while a range fetch is under way (and the stream held) ends the read, the fetch and the download, and
    /// leaves no file behind.
    @Test func aRemovalDuringARangeFetchEndsEverything() async throws {
        let size = 4 << 20
        let (fixture, _, _, cache, handle) = try await Self.openHeld("doc", size: size, rangesWaitAtGate: true)
        defer { fixture.remove() }
        let read = Task { try await cache.read(handle, offset: 3 << 20, length: 4096) }
        try await eventually { fixture.downloader.liveRangeBodies != 0 }
        try await within(.seconds(30)) { await cache.remove(documentIDs: ["doc"]) }
        await #expect(throws: ContentCacheError.self) { try await within(.seconds(30)) { try await read.value } }
        cache.release(handle)
        // The stream's body waits at a gate that ignores cancellation: let it go, then nothing may be left.
        fixture.downloader.gate.open()
        try await eventually { fixture.downloader.liveRangeBodies + fixture.downloader.liveBodies <= 0 }
        #expect(fixture.files(in: "partial").isEmpty)
        #expect(fixture.files(in: "blobs").isEmpty)
        #expect(await cache.state(of: "doc", currentVersion: "v1") == .remote)
    }

    /// Waits (bounded) until a range fetch of `handle`'s download has failed and it reads its stream only.
    private static func waitUntilRangesFailed(_ handle: ContentHandle) async throws {
        try await eventually { handle.transfer?.rangesWork == false }
    }

    /// Waits (bounded) until `count` reads of `handle` wait for bytes: they have decided what to fetch.
    private static func waitUntil(_ handle: ContentHandle, hasWaitingReads count: Int) async throws {
        try await eventually { handle.transfer?.waitingReads == count }
    }
}
