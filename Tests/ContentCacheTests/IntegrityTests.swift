import Foundation
import Glibc
import Testing

@testable import ContentCache

@Suite struct IntegrityTests {
    @Test(arguments: [(900, true), (900, false), (1100, true), (1100, false)])
    func aBodyOfTheWrongSizeIsNeverCached(actualSize: Int, sendsLength: Bool) async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        fixture.downloader.set("doc", content("doc", size: actualSize))
        fixture.downloader.configure {
            $0.sendsLength = sendsLength
            $0.chunkSize = 100
        }
        let cache = try fixture.cache()
        let document = CacheDocument(id: "doc", size: 1000, version: "v1")
        await #expect {
            try await cache.prefetch(document)
        } throws: { error in
            guard case .sizeMismatch(documentID: "doc", expected: 1000, let received) = error as? ContentCacheError
            else { return false }
            return actualSize < 1000 ? received == Int64(actualSize) : received > 1000
        }
        #expect(await cache.state(of: "doc", currentVersion: "v1") == .remote)
        #expect(await cache.usage().count == 0)
        #expect(fixture.files(in: "blobs").isEmpty)
        #expect(fixture.files(in: "tmp").isEmpty && fixture.files(in: "partial").isEmpty)
    }

    /// Size 0 means unknown (a document hosted elsewhere), so the host's length is taken, but never beyond the
    /// cache's size limit: told by `Content-Length` or found while streaming, the download fails with EFBIG and
    /// leaves nothing behind; up to the limit it is cached.
    @Test(arguments: [true, false])
    func aBodyOfUnknownSizeStopsAtTheCacheLimit(sendsLength: Bool) async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        fixture.downloader.set("big", content("big", size: 1001))
        fixture.downloader.set("fits", content("fits", size: 1000))
        fixture.downloader.configure {
            $0.sendsLength = sendsLength
            $0.chunkSize = 100
        }
        let cache = try fixture.cache(sizeLimit: 1000)
        let big = CacheDocument(id: "big", size: 0, version: "v1")
        await #expect {
            try await cache.prefetch(big)
        } throws: { error in
            guard case .tooLarge(documentID: "big", limit: 1000, let received) = error as? ContentCacheError else {
                return false
            }
            return received > 1000 && (error as? ContentCacheError)?.errorNumber == EFBIG
        }
        #expect(await cache.state(of: "big", currentVersion: "v1") == .remote)
        #expect(fixture.files(in: "tmp").isEmpty && fixture.files(in: "partial").isEmpty)
        try await cache.prefetch(CacheDocument(id: "fits", size: 0, version: "v1"))
        #expect(cache.cachedSize(of: "fits") == 1000)
        #expect(await cache.usage().count == 1)
    }

    @Test func aBrokenTransferServesWhatArrivedAndFailsBeyond() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("doc", size: 50_000)
        fixture.downloader.configure {
            $0.chunkSize = 1000
            $0.pauseAt = 10_000
            $0.failAfter = 10_000
        }
        let cache = try fixture.cache()
        let handle = try await cache.open(document)
        #expect(try await cache.read(handle, offset: 0, length: 4096) == Array(bytes[0..<4096]))
        fixture.downloader.gate.open()
        await #expect(throws: ContentCacheError.self) {
            try await cache.read(handle, offset: 20_000, length: 10)
        }
        #expect(await cache.state(of: "doc", currentVersion: "v1") == .remote)
        #expect(fixture.files(in: "tmp").isEmpty && fixture.files(in: "partial").isEmpty)
        #expect(fixture.files(in: "blobs").isEmpty)
    }

    @Test func leftoversOfACrashedProcessAreNeverServed() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (kept, keptBytes) = fixture.document("kept", size: 3000)
        let (partial, partialBytes) = fixture.document("partial", size: 3000)
        _ = try await fixture.cache().load(kept)

        let partialKey = try CacheLayout.key(for: "partial")
        let shortKey = try CacheLayout.key(for: "short")
        let blobs = fixture.directory + "/blobs/"
        try write(Array(partialBytes[0..<1000]), to: fixture.directory + "/tmp/\(partialKey).1.partial")
        try write(partialBytes, to: blobs + "\(partialKey).2")
        try write(Array(repeating: 0, count: 10), to: blobs + "\(shortKey).3")
        let sidecar = #"{"documentID":"short","version":"v1","size":3000,"blob":"\#(shortKey).3"}"#
        try write(Array(sidecar.utf8), to: blobs + "\(shortKey).json")
        try write(Array("{garbage".utf8), to: blobs + "\(try CacheLayout.key(for: "junk")).json")

        let cache = try fixture.cache()
        #expect(fixture.files(in: "tmp").isEmpty && fixture.files(in: "partial").isEmpty)
        #expect(fixture.files(in: "blobs").count == 2)
        #expect(await cache.state(of: "kept", currentVersion: "v1") == .cached)
        #expect(await cache.state(of: "partial", currentVersion: "v1") == .remote)
        #expect(await cache.state(of: "short", currentVersion: "v1") == .remote)
        #expect(try await cache.load(kept) == keptBytes)
        #expect(fixture.downloader.requests.count == 1)
        #expect(try await cache.load(partial) == partialBytes)
        #expect(fixture.downloader.requests.map(\.documentID) == ["kept", "partial"])
    }

    @Test func directoriesAre0700AndFiles0600() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, _) = fixture.document("doc", size: 100)
        let cache = try fixture.cache()
        _ = try await cache.load(document)
        let root = fixture.directory
        for directory in [root, root + "/blobs", root + "/tmp", (root as NSString).deletingLastPathComponent] {
            #expect(fixture.mode(directory) == 0o700, "\(directory)")
        }
        let files = fixture.files(in: "blobs")
        #expect(files.count == 2)
        for file in files { #expect(fixture.mode(root + "/blobs/" + file) == 0o600, "\(file)") }
    }

    @Test func aFullDiskFailsTheWriteWithAnActionableError() throws {
        let full = try Descriptor.open("/dev/full", flags: O_WRONLY)
        #expect(throws: ContentCacheError.diskFull(path: "/dev/full")) { try full.write([1, 2, 3], at: 0) }
        #expect(ContentCacheError.diskFull(path: "/x").description.contains("disk full"))
        #expect(ContentCacheError.diskFull(path: "/x").errorNumber == ENOSPC)
    }

    @Test func removedDocumentsLoseTheirBlobAndTheirDownload() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (cachedDocument, _) = fixture.document("cached", size: 1000)
        let (streamingDocument, _) = fixture.document("streaming", size: 100_000)
        let cache = try fixture.cache()
        _ = try await cache.load(cachedDocument)
        fixture.downloader.configure {
            $0.chunkSize = 1000
            $0.pauseAt = 10_000
        }
        let handle = try await cache.open(streamingDocument)
        await cache.remove(documentIDs: ["cached", "streaming"])
        await #expect(throws: ContentCacheError.cancelled) {
            try await cache.read(handle, offset: 50_000, length: 10)
        }
        fixture.downloader.gate.open()
        #expect(await cache.state(of: "cached", currentVersion: "v1") == .remote)
        #expect(await cache.state(of: "streaming", currentVersion: "v1") == .remote)
        #expect(await cache.usage() == CacheUsage(bytes: 0, count: 0, limit: 1 << 40, downloadsInFlight: 0))
        #expect(fixture.files(in: "blobs").isEmpty)
        #expect(fixture.files(in: "tmp").isEmpty && fixture.files(in: "partial").isEmpty)
    }

    private func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}
