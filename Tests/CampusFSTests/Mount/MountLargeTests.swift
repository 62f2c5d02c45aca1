import Daemon
import Foundation
import MetadataStore
import Refreshing
import TestSupport
import Testing

@testable import StudIPSimulator

/// The `large` university (~8,000 documents) with 20 ms of latency per request: what the kernel's caches spare,
/// one download for many readers, and bytes served while their download still runs.
@Suite(.serialized)
struct MountLargeTests {
    @Test func aSecondFindSendsNothingToTheDaemonOrTheServer() async throws {
        try await MountedCampus.with(.generated(.large, seed: 1), flavour: .v55) { campus in
            _ = campus.sim.settings.update { $0.latencyMilliseconds = 20 }
            let find = "find \(campus.path("")) -printf '%y %p %s %T@\\n'"
            let first = try await shell(find, timeout: 120)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(first.lines.count > 7_000, "large should list its thousands of documents")
            let counted = campus.mount.counters.snapshot()
            let served = campus.sim.statistics.snapshot().total

            let second = try await shell(find, timeout: 120)
            #expect(second.stdout == first.stdout)
            let afterSecond = campus.mount.counters.snapshot()
            // Run alone, nothing reaches the daemon. Beside the rest of the suite the kernel re-reads a few listings
            // (measured: 5 of 2,365 directories; under the load of a full run 26, 28 and 46 — reclaim takes some
            // of the cached listings, the cause is not pinned down further). A broken cache would re-read them all:
            // 5 % tells them apart.
            let directories = first.lines.filter { $0.hasPrefix("d ") }.count
            #expect(afterSecond.lookups - counted.lookups <= directories / 20, "LOOKUPs reached the daemon")
            #expect(afterSecond.readdirs - counted.readdirs <= directories / 20, "READDIRs reached the daemon")
            // The kernel marks a listed directory's atime stale (see MountCacheTests): at most one GETATTR each.
            #expect(afterSecond.getattrs - counted.getattrs <= directories + 1)
            #expect(campus.sim.statistics.snapshot().total == served, "a second find must cause 0 HTTP requests")
            #expect(counted.opens == 0 && counted.reads == 0, "find must not touch content")
        }
    }

    @Test func thirtyTwoReadersOfOneUncachedDocumentCauseOneDownload() async throws {
        try await MountedCampus.with(.generated(.large, seed: 1), flavour: .v55) { campus in
            let (path, document) = try await Self.downloadableDocument(in: campus, minimumSize: 100_000)
            _ = campus.sim.settings.update {
                $0.latencyMilliseconds = 20
                $0.bandwidthBytesPerSecond = Int(document.size)
            }
            let readers = (0..<32).map { _ in "cat \(campus.path(path)) | sha256sum &" }
            let result = try await shell(readers.joined(separator: "\n") + "\nwait", timeout: 60)
            let expected = try await shell(
                "curl -sf \(quoted(campus.contentURL(document.id))) | sha256sum")
            #expect(result.lines.count == 32)
            #expect(Set(result.lines) == [expected.stdout.trimmingCharacters(in: .newlines)])
            // The simulator counts a download once its response has ended, which can be just after the readers
            // have the last byte (seen once in a clean-clone run): wait for the count, then check it.
            for _ in 0..<100 where campus.sim.statistics.snapshot().downloadsCompleted[document.id] == nil {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(campus.sim.statistics.snapshot().downloadsCompleted[document.id] == 1)
        }
    }

    /// Streaming, not download-then-serve: at 8 MB/s a 64 MiB document takes eight seconds, and its first 4 KiB
    /// arrive while the simulator still reports the download in progress.
    @Test func theFirstBytesOfALargeDocumentArriveWhileItDownloads() async throws {
        try await MountedCampus.with(.generated(.large, seed: 1), flavour: .v55) { campus in
            let (sibling, anyDocument) = try await Self.downloadableDocument(in: campus, minimumSize: 1)
            let folder = (sibling as NSString).deletingLastPathComponent
            let size = 64 << 20
            let add = try await shell(
                "curl -sf -X POST -d '{\"folder_id\": \"\(anyDocument.folderID)\", \"name\": \"Aufzeichnung.bin\", "
                    + "\"size\": \(size)}' \(quoted(campus.sim.controlURL + "/documents"))")
            #expect(add.status == 0, "\(add.stderr)")
            let report = try await Refresher(source: campus.source, store: campus.store, options: TreeOptions())
                .refresh()
            campus.mount.apply(report.summary)
            let path = folder + "/Aufzeichnung.bin"
            let document = try #require(try campus.document(path))
            #expect(document.size == Int64(size))

            _ = campus.sim.settings.update {
                $0.latencyMilliseconds = 20
                $0.bandwidthBytesPerSecond = 8_000_000
            }
            let head = try await shell("head -c 4096 \(campus.path(path)) | wc -c", timeout: 30)
            let statistics = campus.sim.statistics.snapshot()
            #expect(head.stdout == "4096\n", "\(head.stderr)")
            #expect(statistics.downloadsInProgress[document.id] != nil, "the download should still be running")
            #expect(statistics.downloadsCompleted[document.id] == nil, "the first 4 KiB came only after all 64 MiB")

            let whole = try await shell(
                "sha256sum < \(campus.path(path)); curl -sf \(quoted(campus.contentURL(document.id))) "
                    + "| sha256sum", timeout: 60)
            #expect(whole.lines.count == 2 && whole.lines[0] == whole.lines[1], "\(whole.stderr)")
            #expect(campus.sim.statistics.snapshot().downloadsCompleted[document.id] == 1)
        }
    }

    /// A document test_autor may download, of at least `minimumSize` bytes, and its path in the mount.
    static func downloadableDocument(
        in campus: MountedCampus, minimumSize: Int64
    ) async throws -> (path: String, document: DocumentInfo) {
        let files = try await shell(
            "cd \(campus.path("")) && find . -type f -size +\(minimumSize - 1)c | cut -c3- | sort", timeout: 120)
        for path in files.lines {
            if let document = try campus.document(path), document.isDownloadable, !document.isLink {
                return (path, document)
            }
        }
        throw MountHarness.Failure.noSuchDocument
    }
}
