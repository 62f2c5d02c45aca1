import Foundation
import MetadataStore
import TestSupport
import Testing

@testable import StudIPSimulator

/// `campusfs cache`, `cache clean` and `pin`'s progress line against a daemon in a subprocess (``DaemonTests``'s
/// setup) and, after `unmount`, against the cache directory alone.
@Suite(.serialized)
struct CacheCommandTests {
    static let course = DaemonTests.course
    static let folder = course + "/Vorlesungsfolien"
    static let readme = DaemonTests.readme
    static let slides = DaemonTests.slides
    static let dataFile = DaemonTests.dataFile
    static let solutions = course + "/Übungsblätter/Übungsblatt 1 – Lösungen.txt"

    /// `campusfs cache --json` as a dictionary.
    static func report(_ setup: DaemonTests.Setup) async throws -> [String: Any] {
        let result = try await setup.campusfs(["cache", "--json"], timeout: 20)
        #expect(result.status == 0, "\(result.stderr)")
        let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
        return try #require(object as? [String: Any], "\(result.stdout)")
    }

    /// `campusfs cache clean ARGUMENTS --json` as a dictionary.
    static func clean(_ setup: DaemonTests.Setup, _ arguments: [String] = []) async throws -> [String: Int64] {
        let result = try await setup.campusfs(["cache", "clean", "--json"] + arguments, timeout: 30)
        #expect(result.status == 0, "\(result.stderr)")
        let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return try #require(object?.compactMapValues(number), "\(result.stdout)")
    }

    /// A number in what JSONSerialization returns.
    static func number(_ value: Any?) -> Int64? { (value as? NSNumber)?.int64Value }

    /// Whether the document at `relative` reads as the server's bytes (fetched with curl).
    static func readsAsOnTheServer(_ setup: DaemonTests.Setup, _ relative: String) async throws -> Bool {
        let id = try setup.document(relative).id
        let copy = quoted(setup.cli.home.appendingPathComponent("server-copy").path)
        let compared = try await shell(
            "curl -sf -o \(copy) \(setup.sim.controlURL)/documents/\(id)/content && cmp \(setup.path(relative)) \(copy)"
        )
        return compared.status == 0
    }

    /// The blobs in the profile's cache directory: file name → size (sidecars left out).
    static func blobs(_ setup: DaemonTests.Setup) throws -> [String: Int64] {
        let directory = setup.cli.home.appendingPathComponent("cache/campusfs/default/blobs").path
        var sizes: [String: Int64] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) where !name.hasSuffix(".json") {
            let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/" + name)
            sizes[name] = (attributes[.size] as? NSNumber)?.int64Value
        }
        return sizes
    }

    /// Whether a blob of `documentID` is on disk (blob names start with the id in hex, ``CacheLayout``).
    static func hasBlob(_ setup: DaemonTests.Setup, _ documentID: String) throws -> Bool {
        let key = documentID.utf8.map { String(format: "%02x", $0) }.joined()
        return try blobs(setup).keys.contains { $0.hasPrefix(key + ".") }
    }

    /// Waits until the documents at `paths` are committed to the cache: a moment after a reader got the last byte.
    static func waitForBlobs(_ setup: DaemonTests.Setup, _ paths: [String]) async throws -> Bool {
        let ids = try paths.map { try setup.document($0).id }
        for _ in 0..<100 {
            if try ids.allSatisfy({ try hasBlob(setup, $0) }) { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    static func sizes(_ setup: DaemonTests.Setup, _ paths: [String]) throws -> Int64 {
        try paths.reduce(0) { $0 + (try setup.document($1).size) }
    }

    /// The downloadable documents below the pinned folder, by path.
    static func pinnedDocuments(_ setup: DaemonTests.Setup) throws -> [String] {
        let store = try MetadataStore(path: setup.cli.database().path)
        return try store.walk(from: try store.resolve(path: folder).inode).filter { $0.node.kind == .file }.map(\.path)
    }

    @Test func cacheShowsUseLimitAndPinsWithAndWithoutADaemon() async throws {
        try await DaemonTests.with { setup in
            try setup.configure(#"cache_limit = "2G""#)
            #expect(try await setup.mount().status == 0)
            let read = try await shell(
                "cat \(setup.path(Self.readme)) \(setup.path(Self.slides)) >/dev/null")
            #expect(read.status == 0, "\(read.stderr)")
            #expect(try await Self.waitForBlobs(setup, [Self.readme, Self.slides]))
            let pin = try await setup.campusfs(["pin", setup.mountpoint + "/" + Self.folder], timeout: 60)
            #expect(pin.status == 0, "\(pin.stderr)")

            let pinned = try Self.pinnedDocuments(setup)
            let pinnedBytes = try Self.sizes(setup, pinned)
            let blobs = try Self.blobs(setup)
            // README, and the three slides (one of them read before the pin).
            #expect(blobs.count == 4)
            for mounted in [true, false] {
                let report = try await Self.report(setup)
                #expect(Self.number(report["bytes"]) == blobs.values.reduce(0, +), "mounted: \(mounted)")
                #expect(Self.number(report["limit"]) == 2 << 30)
                #expect(Self.number(report["documents"]) == Int64(blobs.count))
                let pins = try #require(report["pins"] as? [[String: Any]])
                #expect(pins.count == 1)
                #expect(pins.first?["path"] as? String == Self.folder)
                let numbers = pins.first?.compactMapValues(Self.number)
                #expect(
                    numbers == [
                        "bytes": pinnedBytes, "cachedBytes": pinnedBytes, "documents": Int64(pinned.count),
                        "cachedDocuments": Int64(pinned.count),
                    ], "mounted: \(mounted)")

                let text = try await setup.campusfs(["cache"], timeout: 20)
                #expect(
                    text.lines.first == "cache: \(ByteText.format(blobs.values.reduce(0, +))) of 2 GB in 4 document(s)")
                #expect(
                    text.lines.contains(
                        "  \(Self.folder): \(ByteText.format(pinnedBytes)) of \(ByteText.format(pinnedBytes)) cached "
                            + "(\(pinned.count) of \(pinned.count) documents)"), "\(text.stdout)")
                if mounted {
                    #expect(try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30).status == 0)
                }
            }
        }
    }

    @Test func cleanFreesWhatIsNeitherPinnedNorOpenAndItDownloadsAgain() async throws {
        try await DaemonTests.with { setup in
            #expect(try await setup.mount().status == 0)
            let pin = try await setup.campusfs(["pin", setup.mountpoint + "/" + Self.folder], timeout: 60)
            #expect(pin.status == 0, "\(pin.stderr)")
            let read = try await shell(
                "cat \(setup.path(Self.readme)) \(setup.path(Self.dataFile)) \(setup.path(Self.solutions)) >/dev/null")
            #expect(read.status == 0, "\(read.stderr)")
            #expect(try await Self.waitForBlobs(setup, [Self.readme, Self.dataFile, Self.solutions]))
            let holder = try await MountHarness.background("exec 3<\(setup.path(Self.solutions)); exec sleep 60")
            defer { kill(holder, SIGKILL) }
            for _ in 0..<100
            where (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(holder)/fd/3"))
                == nil
            {
                try await Task.sleep(for: .milliseconds(50))
            }
            let before = try #require(Self.number(try await Self.report(setup)["bytes"]))

            let cleaned = try await Self.clean(setup)
            let freed = try Self.sizes(setup, [Self.readme, Self.dataFile])
            #expect(
                cleaned == [
                    "freedBytes": freed, "freedDocuments": 2,
                    "keptPinned": Int64(try Self.pinnedDocuments(setup).count), "keptOpen": 1, "keptRecent": 0,
                ])
            let readme = try setup.document(Self.readme)
            #expect(try !Self.hasBlob(setup, readme.id))
            #expect(try !Self.hasBlob(setup, try setup.document(Self.dataFile).id))
            #expect(try Self.hasBlob(setup, try setup.document(Self.solutions).id), "an open document is kept")
            #expect(try Self.hasBlob(setup, try setup.document(Self.slides).id), "a pinned document is kept")
            #expect(Self.number(try await Self.report(setup)["bytes"]) == before - freed)
            let text = try await setup.campusfs(["cache", "clean"], timeout: 30)
            #expect(text.stdout.hasPrefix("freed 0 bytes (0 document(s)); kept 3 pinned, 1 open"), "\(text.stdout)")

            // Still in the tree; the next open downloads it again, with the same bytes.
            let served = setup.sim.statistics.snapshot().downloadsCompleted[readme.id, default: 0]
            #expect(try await Self.readsAsOnTheServer(setup, Self.readme))
            #expect(setup.sim.statistics.snapshot().downloadsCompleted[readme.id, default: 0] == served + 1)
            // Committed once the body is on disk, a moment after `cmp` has read the last byte.
            for _ in 0..<100 where try !Self.hasBlob(setup, readme.id) { try await Task.sleep(for: .milliseconds(50)) }
            #expect(try await Self.waitForBlobs(setup, [Self.readme]))
        }
    }

    @Test func olderThanKeepsRecentlyUsedCopiesAlsoWithoutADaemon() async throws {
        try await DaemonTests.with { setup in
            #expect(try await setup.mount().status == 0)
            let old = try await shell(
                "cat \(setup.path(Self.readme)) \(setup.path(Self.dataFile)) >/dev/null; sleep 3; "
                    + "cat \(setup.path(Self.slides)) >/dev/null")
            #expect(old.status == 0, "\(old.stderr)")
            #expect(try await Self.waitForBlobs(setup, [Self.readme, Self.dataFile, Self.slides]))
            let cleaned = try await Self.clean(setup, ["--older-than", "2s"])
            #expect(cleaned["freedDocuments"] == 2 && cleaned["keptRecent"] == 1, "\(cleaned)")
            #expect(try Self.hasBlob(setup, try setup.document(Self.slides).id))

            // Without a daemon: the blob's modification time is its last use.
            let readme = try setup.document(Self.readme)
            #expect(try await shell("cat \(setup.path(Self.readme)) >/dev/null").status == 0)
            #expect(try await Self.waitForBlobs(setup, [Self.readme]))
            #expect(try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30).status == 0)
            let key = readme.id.utf8.map { String(format: "%02x", $0) }.joined()
            let blobs = setup.cli.home.appendingPathComponent("cache/campusfs/default/blobs").path
            let touched = try await shell(
                "touch -d '40 days ago' \(quoted(blobs))/\(key).*[!n]")
            #expect(touched.status == 0, "\(touched.stderr)")
            let offline = try await Self.clean(setup, ["--older-than", "30d"])
            #expect(offline["freedDocuments"] == 1 && offline["keptRecent"] == 1, "\(offline)")
            #expect(try !Self.hasBlob(setup, readme.id))
            // Pins recorded without a mount are kept, too.
            #expect(try await setup.campusfs(["pin", Self.folder]).status == 0)
            let pinned = try await Self.clean(setup)
            #expect(pinned["freedDocuments"] == 0 && pinned["keptPinned"] == 1, "\(pinned)")
            #expect(Self.number(try await Self.report(setup)["documents"]) == 1)

            #expect(try await setup.mount().status == 0)
            #expect(try await Self.readsAsOnTheServer(setup, Self.readme))
        }
    }

    @Test func pinShowsBytesRateAndTimeLeft() async throws {
        try await DaemonTests.with { setup in
            #expect(try await setup.mount().status == 0)
            let folderID = try setup.document(Self.slides).folderID
            let control = setup.sim.controlURL
            let added = try await shell(
                """
                curl -sf -X POST -d '{"folder_id": "\(folderID)", "name": "Groß 1.bin", "size": 300000}' \
                  \(control)/documents >/dev/null &&
                curl -sf -X POST -d '{"folder_id": "\(folderID)", "name": "Groß 2.bin", "size": 300000}' \
                  \(control)/documents >/dev/null
                """)
            #expect(added.status == 0, "\(added.stderr)")
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            let slow = try await shell(
                "curl -sf -X PUT -d '{\"bandwidth_bytes_per_second\": 200000}' \(control)/settings >/dev/null")
            #expect(slow.status == 0)

            let pin = try await setup.campusfs(["pin", setup.mountpoint + "/" + Self.folder], timeout: 60)
            #expect(pin.status == 0, "\(pin.stderr)")
            let documents = try Self.pinnedDocuments(setup)
            #expect(documents.count == 5)
            let total = ByteText.format(try Self.sizes(setup, documents))
            let lines = pin.stderr.split(separator: "\n").map(String.init)
            #expect(lines.allSatisfy { $0.hasPrefix("pinning: ") && $0.contains(" of \(total) (") }, "\(pin.stderr)")
            let rate = #/, [0-9.]+ [kKMG]?B/s, about [0-9]+ s left — [0-4] of 5 documents$/#
            #expect(lines.contains { $0.contains(rate) }, "a line while downloading: \(pin.stderr)")
            #expect(lines.last?.contains("(100.0%), ") == true, "\(pin.stderr)")
            #expect(lines.last?.hasSuffix("/s, done — 5 of 5 documents") == true, "\(pin.stderr)")
            #expect(pin.stdout == "pinned 1 item(s): 5 document(s) cached\n")
        }
    }
}

/// The command's size format (`ByteText` in `campusfs`, which tests cannot import): binary units, "0 bytes".
enum ByteText {
    static func format(_ count: Int64) -> String {
        count == 0 ? "0 bytes" : ByteCountFormatter.string(fromByteCount: count, countStyle: .binary)
    }
}
