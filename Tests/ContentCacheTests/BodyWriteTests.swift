import Glibc
import Testing

@testable import ContentCache

/// Issue 29: a download's chunks reach the disk in batches, not with a thread hop per chunk, and a reader waiting
/// for bytes still gets each chunk as soon as it arrived.
@Suite struct BodyWriteTests {
    /// 48 chunks of 64 KiB, a millisecond apart, that nobody reads while they arrive: at most one `pwrite` per MiB
    /// (3, and one for what a write left behind), where a write per chunk made 48.
    @Test func aDownloadNobodyReadsIsWrittenAMebibyteAtATime() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("doc", size: 3 << 20)
        fixture.downloader.configure {
            $0.chunkSize = 64 << 10
            $0.chunkDelay = .milliseconds(1)
        }
        let cache = try fixture.cache()
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        #expect((1...4).contains(cache.bodyWrites.count), "\(cache.bodyWrites.count) writes")
        #expect(try await cache.readAll(try await cache.open(document)) == bytes)
    }

    /// The server stops after 100 KiB, less than a batch: a reader waiting for the first bytes makes the writer
    /// write them at once, and so every chunk after.
    @Test func aWaitingReaderGetsChunksAsTheyArrive() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("doc", size: 1 << 20)
        fixture.downloader.configure {
            $0.chunkSize = 10 << 10
            $0.pauseAt = 100 << 10
        }
        let cache = try fixture.cache()
        let handle = try await cache.open(document)
        let first = try await within(.seconds(30)) { try await cache.read(handle, offset: 0, length: 4096) }
        #expect(first == Array(bytes[0..<4096]))
        try await within(.seconds(30)) {
            while !fixture.downloader.gate.hasWaiter { try await Task.sleep(for: .milliseconds(5)) }
        }
        let last = (100 << 10) - 4096
        let beforePause = try await within(.seconds(30)) {
            try await cache.read(handle, offset: Int64(last), length: 4096)
        }
        #expect(beforePause == Array(bytes[last..<(100 << 10)]))
        fixture.downloader.gate.open()
        #expect(try await within(.seconds(30)) { try await cache.readAll(handle) } == bytes)
    }
}
