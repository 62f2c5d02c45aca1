import Foundation
import Glibc
import SystemSupport
import Testing

@testable import ContentCache

/// Issue 30: a partial download's range map survives a kill -9 and the next open of the same version resumes it
/// (docs/ranges.md, "In the cache").
@Suite struct ResumeTests {
    private static let pool = BlockingPool(threads: 2, name: "resume-tests")

    /// Range fetches, then a "kill -9": the directory is copied while the cache runs and a new cache opens the copy.
    /// It serves the bytes present without asking and fetches only the gaps: by ranges, or (stream-only) by the
    /// stream from byte 0, which stops where the rest is present.
    @Test(arguments: [true, false])
    func aKilledCacheResumesFromItsRangeMap(servesRanges: Bool) async throws {
        let size = 8 << 20
        let chunk = Int(RangeFetcher.chunk)
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("doc", size: size, etag: "\"e1\"")
        fixture.downloader.configure {
            $0.servesRanges = true
            $0.chunkSize = 64 << 10
            $0.pauseAt = 0
        }
        let cache = try fixture.cache(pool: Self.pool)
        let handle = try await cache.open(document)
        for offset in [size - 4096, 4 << 20] {
            _ = try await within(.seconds(30)) { try await cache.read(handle, offset: Int64(offset), length: 4096) }
        }
        let present = ByteRanges([(4 << 20)..<(4 << 20) + Int64(chunk), Int64(size - chunk)..<Int64(size)])
        let mapPath = fixture.directory + "/partial/" + (try #require(handle.transfer?.blob)) + ".json"
        try await eventually {
            (try? JSONDecoder().decode(PartialMap.self, from: Data(contentsOf: URL(fileURLWithPath: mapPath))))
                .map({ ByteRanges($0.ranges) }) == present
        }
        let restarted = try Fixture(copyOf: fixture)
        defer { restarted.remove() }
        fixture.downloader.gate.open()
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        cache.release(handle)

        restarted.downloader.set("doc", bytes, etag: "\"e1\"")
        restarted.downloader.configure {
            $0.servesRanges = servesRanges
            $0.chunkSize = 64 << 10
            $0.pauseAt = 0
            $0.rangesWaitAtGate = true
        }
        let resumed = try restarted.cache(pool: Self.pool)
        #expect(await resumed.state(of: "doc", currentVersion: "v1") == .remote, "not cached: bytes are missing")
        #expect(await resumed.inventory().downloading["doc"]?.bytes == present.count)
        #expect(restarted.files(in: "blobs").isEmpty)
        let again = try await within(.seconds(30)) { try await resumed.open(document) }
        // Present bytes are served at once, while the gaps' answers are held.
        let end = resumed.withAvailableRange(again, offset: Int64(size - 4096), length: 4096) { descriptor, count in
            [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                initialized = max(0, pread(descriptor, buffer.baseAddress, count, off_t(size - 4096)))
            }
        }
        #expect(end == Array(bytes[(size - 4096)...]))
        let middle = try await within(.seconds(30)) { try await resumed.read(again, offset: 4 << 20, length: 4096) }
        #expect(middle == Array(bytes[(4 << 20)..<(4 << 20) + 4096]))
        restarted.downloader.rangeGate.open()
        restarted.downloader.gate.open()
        try await within(.seconds(30)) { try await resumed.prefetch(document) }
        #expect(try await resumed.readAll(again) == bytes)
        resumed.release(again)
        #expect(await resumed.state(of: "doc", currentVersion: "v1") == .cached)
        if servesRanges {
            #expect(
                restarted.downloader.rangeRequests.map(\.range)
                    == [0..<(4 << 20), (4 << 20) + Int64(chunk)..<Int64(size - chunk)])
            #expect(restarted.downloader.requests.isEmpty, "no stream")
            #expect(restarted.downloader.bytesSent == size - Int(present.count))
        } else {
            #expect(restarted.downloader.rangeRequests.count == 1, "one request learns there are no ranges")
            #expect(restarted.downloader.requests.count == 1)
            #expect(restarted.downloader.bytesSent == size - chunk, "the stream stops where the rest is present")
        }
        #expect(restarted.files(in: "partial").isEmpty)
    }

    /// A stream-only download records its progress every 8 MiB: a kill -9 after that leaves a map of the prefix on
    /// disk, whose bytes the next run serves before its stream has sent anything.
    @Test func theStreamCheckpointsItsRangeMap() async throws {
        let size = 10 << 20
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("doc", size: size)
        fixture.downloader.configure {
            $0.chunkSize = 64 << 10
            $0.pauseAt = 9 << 20
        }
        let cache = try fixture.cache(pool: Self.pool)
        let handle = try await cache.open(document)
        let mapPath = fixture.directory + "/partial/" + (try #require(handle.transfer?.blob)) + ".json"
        let claimed = try await within(.seconds(30)) {
            while true {
                if let data = FileManager.default.contents(atPath: mapPath),
                    let map = try? JSONDecoder().decode(PartialMap.self, from: data)
                {
                    return ByteRanges(map.ranges)
                }
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        let restarted = try Fixture(copyOf: fixture)
        defer { restarted.remove() }
        fixture.downloader.gate.open()
        try await within(.seconds(30)) { try await cache.prefetch(document) }
        cache.release(handle)
        #expect(claimed.ranges.count == 1 && claimed.ranges.first?.lowerBound == 0, "\(claimed.ranges)")
        let prefix = Int(claimed.ranges.first?.upperBound ?? 0)
        try #require(prefix >= 4096, "a map of what was written by the first 8 MiB received")

        restarted.downloader.set("doc", bytes)
        restarted.downloader.configure {
            $0.chunkSize = 64 << 10
            $0.pauseAt = 0
        }
        let resumed = try restarted.cache(pool: Self.pool)
        #expect(await resumed.inventory().downloading["doc"]?.bytes == Int64(prefix))
        let again = try await within(.seconds(30)) { try await resumed.open(document) }
        let offset = prefix - 4096
        let read = try await within(.seconds(30)) { try await resumed.read(again, offset: Int64(offset), length: 4096) }
        #expect(read == Array(bytes[offset..<prefix]))
        #expect(restarted.downloader.bytesSent == 0, "served before the stream sent anything")
        restarted.downloader.gate.open()
        try await within(.seconds(30)) { try await resumed.prefetch(document) }
        #expect(try await resumed.readAll(again) == bytes)
        resumed.release(again)
    }

    /// A map that claims more than its file holds is clipped to the file; a torn map, a file without a map and a
    /// map of another version are deleted. Nothing wrong is served.
    @Test func aMapIsBelievedOnlyForWhatItsFileHolds() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (short, shortBytes) = fixture.document("short", size: 5000)
        let (torn, tornBytes) = fixture.document("torn", size: 5000)
        let (newer, newerBytes) = fixture.document("newer", size: 5000, version: "v2")
        _ = try fixture.cache()
        let partial = fixture.directory + "/partial/"
        let shortKey = try CacheLayout.key(for: "short")
        let tornKey = try CacheLayout.key(for: "torn")
        let newerKey = try CacheLayout.key(for: "newer")
        try Self.write(Array(shortBytes[0..<1000]), to: partial + shortKey + ".1.partial")
        try Self.write(
            Self.map("short", file: shortKey + ".1", ranges: "[[0,5000]]"), to: partial + shortKey + ".1.json")
        try Self.write(Array(repeating: 0xEE, count: 5000), to: partial + tornKey + ".2.partial")
        try Self.write(Array(#"{"documentID":"torn","version":"v1","size":50"#.utf8), to: partial + tornKey + ".2.json")
        try Self.write(Array(repeating: 0xEE, count: 5000), to: partial + newerKey + ".3.partial")
        try Self.write(
            Self.map("newer", file: newerKey + ".3", ranges: "[[0,5000]]"), to: partial + newerKey + ".3.json")
        try Self.write([1, 2, 3], to: partial + shortKey + ".4.partial")
        fixture.downloader.configure { $0.servesRanges = true }

        let cache = try fixture.cache()
        #expect(
            fixture.files(in: "partial")
                == [newerKey + ".3.partial", newerKey + ".3.json", shortKey + ".1.partial", shortKey + ".1.json"]
                .sorted())
        let inventory = await cache.inventory()
        #expect(inventory.downloading["short"]?.bytes == 1000, "clipped to the file's 1000 bytes")
        #expect(inventory.downloading["torn"] == nil)
        #expect(try await cache.load(short) == shortBytes)
        #expect(fixture.downloader.rangeRequests.map(\.range) == [1000..<5000])
        #expect(try await cache.load(torn) == tornBytes)
        #expect(try await cache.load(newer) == newerBytes, "v1's partial is not v2's")
        #expect(fixture.downloader.rangeRequests.count == 1 && fixture.downloader.requests.count == 2)
        #expect(fixture.files(in: "partial").isEmpty)
    }

    /// Range maps are named per file: a crash can leave a superseded download's map beside the newer one's. The start
    /// keeps the one with more bytes and deletes the other with its file; the open resumes the one kept.
    @Test func ofTwoMapsOfOneDocumentTheLargerIsKept() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("doc", size: 5000)
        _ = try fixture.cache()
        _ = try Self.leave(bytes[0..<1000], of: "doc", file: 1, in: fixture)
        let key = try Self.leave(bytes[0..<3000], of: "doc", file: 2, in: fixture)
        fixture.downloader.configure { $0.servesRanges = true }
        let cache = try fixture.cache()
        #expect(fixture.files(in: "partial") == [key + ".2.json", key + ".2.partial"])
        #expect(try await within(.seconds(30)) { try await cache.load(document) } == bytes)
        #expect(fixture.downloader.rangeRequests.map(\.range) == [3000..<5000])
    }

    /// The document changed on the server under the same version (its ETag differs from the one the partial's bytes
    /// came with): the range (If-Range) fails, and the stream's ETag differs too, so the download is abandoned with
    /// its partial rather than mix the two; the next open downloads the new bytes whole.
    @Test func aResumedPartialOfAnotherETagIsAbandonedNotMixed() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("doc", size: 5000, etag: "e2")
        let key = try CacheLayout.key(for: "doc")
        let partial = fixture.directory + "/partial/"
        _ = try fixture.cache()
        try Self.write(Array(content("old", size: 5000)[0..<3000]), to: partial + key + ".1.partial")
        try Self.write(
            Self.map("doc", file: key + ".1", ranges: "[[0,3000]]", etag: "e1"), to: partial + key + ".1.json")
        fixture.downloader.configure { $0.servesRanges = true }
        let cache = try fixture.cache()
        await #expect {
            try await cache.open(document)
        } throws: {
            guard case ContentCacheError.interrupted(documentID: "doc", _) = $0 else { return false }
            return true
        }
        #expect(fixture.downloader.rangeRequests.map(\.ifRange) == ["e1"])
        #expect(fixture.files(in: "partial").isEmpty)
        #expect(fixture.files(in: "blobs").isEmpty)
        #expect(try await within(.seconds(30)) { try await cache.load(document) } == bytes)
        #expect(fixture.downloader.bodies == 2)
    }

    /// An open of a resumed partial while the server cannot be reached fails as any uncached open does, and keeps the
    /// partial: the next open, online, fetches only its gaps.
    @Test func anOfflineOpenKeepsThePartial() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("doc", size: 5000)
        _ = try fixture.cache()
        let key = try Self.leave(bytes[0..<3000], of: "doc", file: 1, in: fixture)
        fixture.downloader.configure {
            $0.servesRanges = true
            $0.behavior = .fail(.unreachable(server: "fake", detail: "down"))
            $0.rangeFailure = .unreachable(server: "fake", detail: "down")
        }
        let cache = try fixture.cache()
        await #expect(throws: ContentCacheError.self) { try await cache.open(document) }
        #expect(fixture.files(in: "partial") == [key + ".1.json", key + ".1.partial"])
        #expect(await cache.inventory().downloading["doc"]?.bytes == 3000)
        fixture.downloader.configure {
            $0.behavior = .serve
            $0.rangeFailure = nil
        }
        #expect(try await cache.load(document) == bytes)
        #expect(fixture.downloader.rangeRequests.last?.range == 3000..<5000)
        #expect(fixture.downloader.bodies == 0, "no stream")
    }

    /// The same when the server does not answer within the start deadline: the job that outlives the open leaves the
    /// kept partial alone.
    @Test func anOpenPastTheStartDeadlineKeepsThePartial() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (document, bytes) = fixture.document("doc", size: 5000)
        _ = try fixture.cache()
        _ = try Self.leave(bytes[0..<3000], of: "doc", file: 1, in: fixture)
        fixture.downloader.configure {
            $0.servesRanges = true
            $0.queuedAtTheGate = ["doc"]
        }
        let cache = try fixture.cache(startDeadline: .milliseconds(200))
        await #expect(throws: ContentCacheError.startTimedOut(documentID: "doc", after: .milliseconds(200))) {
            try await cache.open(document)
        }
        fixture.downloader.configure { $0.queuedAtTheGate = [] }
        fixture.downloader.gate.open()
        #expect(try await within(.seconds(30)) { try await cache.load(document) } == bytes)
        #expect(fixture.downloader.rangeRequests.map(\.range) == [3000..<5000, 3000..<5000])
        #expect(fixture.downloader.bodies == 0, "no stream")
    }

    /// `campusfs cache clean` (with and without a daemon) and eviction delete a partial a previous run left.
    @Test func cleanAndEvictionDeleteKeptPartials() async throws {
        let fixture = Fixture()
        defer { fixture.remove() }
        let (_, bytes) = fixture.document("doc", size: 5000)
        func leave() throws { _ = try Self.leave(bytes[0..<3000], of: "doc", file: 1, in: fixture) }
        _ = try fixture.cache()
        try leave()
        #expect(ContentCache.inventory(directory: fixture.directory, limit: 1).downloading["doc"]?.bytes == 3000)
        #expect(try ContentCache.clean(directory: fixture.directory, CleanRequest()).freedBytes == 3000)
        #expect(fixture.files(in: "partial").isEmpty)

        try leave()
        let cleaning = try fixture.cache()
        #expect(await cleaning.clean(CleanRequest(pinned: ["doc"])).freedBytes == 0, "pinned")
        #expect(await cleaning.clean(CleanRequest()).freedBytes == 3000)
        #expect(fixture.files(in: "partial").isEmpty)

        try leave()
        let evicting = try fixture.cache(sizeLimit: 1000)
        #expect(await evicting.inventory().downloading["doc"]?.bytes == 3000)
        await evicting.evict()
        #expect(fixture.files(in: "partial").isEmpty)
        #expect(await evicting.inventory().downloading.isEmpty)
    }

    /// What a previous run left of `id` (a version "v1" of 5000 bytes): `bytes` from byte 0 in the partial file
    /// numbered `file`, and its map. Returns the document's key.
    private static func leave(_ bytes: ArraySlice<UInt8>, of id: String, file: Int, in fixture: Fixture) throws
        -> String
    {
        let key = try CacheLayout.key(for: id)
        let name = fixture.directory + "/partial/" + key + ".\(file)"
        try write(Array(bytes), to: name + ".partial")
        try write(map(id, file: key + ".\(file)", ranges: "[[0,\(bytes.count)]]"), to: name + ".json")
        return key
    }

    private static func map(
        _ id: String, version: String = "v1", file: String, ranges: String, etag: String? = nil
    ) -> [UInt8] {
        let etag = etag.map { #","etag":"\#($0)""# } ?? ""
        return Array(
            #"{"documentID":"\#(id)","version":"\#(version)","size":5000,"file":"\#(file)","ranges":\#(ranges)\#(etag)}"#
                .utf8)
    }

    private static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }
}
