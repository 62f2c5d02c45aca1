import ContentCache
import Glibc
import SystemSupport
import Testing

@Suite struct ReadTests {
    /// Threads live as long as the process, so one pool for the suite.
    private static let pool = BlockingPool(threads: 2, name: "read-tests")

    @Test func randomReadsFromSeveralTasksMatchDuringAndAfterTheDownload() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("doc", size: 256 * 1024)
        fixture.downloader.configure {
            $0.chunkSize = 3000
            $0.chunkDelay = .milliseconds(1)
        }
        let cache = try fixture.cache()
        let streaming = try await cache.open(document)
        #expect(await cache.state(of: "doc", currentVersion: "v1") == .downloading)
        try await checkRandomReads(cache, streaming, bytes)
        try await cache.prefetch(document)
        #expect(await cache.state(of: "doc", currentVersion: "v1") == .cached)
        let cached = try await cache.open(document)
        try await checkRandomReads(cache, cached, bytes)
        try await checkRandomReads(cache, streaming, bytes)
        #expect(fixture.downloader.requests.count == 1)
    }

    @Test func thirtyTwoConcurrentOpensShareOneDownload() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("doc", size: 100_000)
        fixture.downloader.configure { $0.startDelay = .milliseconds(50) }
        let cache = try fixture.cache()
        try await withThrowingTaskGroup(of: [UInt8].self) { group in
            for _ in 0..<32 {
                group.addTask { try await cache.readAll(try await cache.open(document)) }
            }
            for try await read in group { #expect(read == bytes) }
        }
        #expect(fixture.downloader.requests.count == 1)
    }

    /// The 30 s bounds only stop a hang. The cache writes and reads on a pool of its own: on
    /// ``BlockingPool/shared`` they waited behind other tests' store writes and fsyncs in the full suite (10 s was
    /// missed there twice on 2026-11-24).
    @Test func firstBytesArriveWhileTheDownloadIsPausedMidDocument() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("big", size: 4 << 20)
        fixture.downloader.configure {
            $0.chunkSize = 64 * 1024
            $0.pauseAt = 1 << 20
        }
        let cache = try fixture.cache(pool: Self.pool)
        let handle = try await cache.open(document)
        let first = try await within(.seconds(30)) { try await cache.read(handle, offset: 0, length: 4096) }
        #expect(first == Array(bytes[0..<4096]))
        try await within(.seconds(30)) {
            while !fixture.downloader.gate.hasWaiter { try await Task.sleep(for: .milliseconds(5)) }
        }
        let end = Int64(bytes.count - 4096)
        await #expect(throws: TimedOut.self) {
            try await within(.milliseconds(100)) { try await cache.read(handle, offset: end, length: 4096) }
        }
        #expect(await cache.state(of: "big", currentVersion: "v1") == .downloading)
        // What a FUSE worker gets: the descriptor for the bytes written so far, nothing for the rest.
        #expect(cache.withAvailableRange(handle, offset: end, length: 4096) { _, _ in true } == nil)
        #expect(
            cache.withAvailableRange(handle, offset: 4096, length: 4096, Self.pread(at: 4096))
                == Array(bytes[4096..<8192]))
        fixture.downloader.gate.open()
        let last = try await within(.seconds(30)) { try await cache.read(handle, offset: end, length: 4096) }
        #expect(last == Array(bytes[Int(end)...]))
        #expect(
            cache.withAvailableRange(handle, offset: end, length: 8192, Self.pread(at: end))
                == Array(bytes[Int(end)...]))
        #expect(cache.withAvailableRange(handle, offset: Int64(bytes.count), length: 10) { $1 } == 0, "end of file")
    }

    /// Reads what ``ContentCache/withAvailableRange(_:offset:length:_:)`` lends, as libfuse would.
    private static func pread(at offset: Int64) -> (Int32, Int) -> [UInt8] {
        { descriptor, count in
            [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                initialized = max(0, Glibc.pread(descriptor, buffer.baseAddress, count, off_t(offset)))
            }
        }
    }

    @Test(arguments: [false, true])
    func readsPastTheEndComeBackShort(whileDownloading: Bool) async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("doc", size: 1000)
        fixture.downloader.configure { $0.chunkDelay = .milliseconds(whileDownloading ? 5 : 0) }
        let cache = try fixture.cache()
        if !whileDownloading { try await cache.prefetch(document) }
        let handle = try await cache.open(document)
        #expect(try await cache.read(handle, offset: 990, length: 100) == Array(bytes[990...]))
        #expect(try await cache.read(handle, offset: 1000, length: 10).isEmpty)
        #expect(try await cache.read(handle, offset: 5000, length: 10).isEmpty)
        #expect(try await cache.read(handle, offset: 0, length: 0).isEmpty)
    }

    private func checkRandomReads(_ cache: ContentCache, _ handle: ContentHandle, _ bytes: [UInt8]) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var random = SeededGenerator(seed: UInt64(task))
                    for _ in 0..<20 {
                        let offset = Int.random(in: 0..<bytes.count, using: &random)
                        let length = Int.random(in: 1...20_000, using: &random)
                        let read = try await cache.read(handle, offset: Int64(offset), length: length)
                        #expect(read == Array(bytes[offset..<min(offset + length, bytes.count)]))
                    }
                }
            }
            try await group.waitForAll()
        }
    }
}
