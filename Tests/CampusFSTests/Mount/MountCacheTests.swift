import Daemon
import Foundation
import MetadataStore
import Refreshing
import Synchronization
import TestSupport
import Testing

@testable import StudIPSimulator

/// What the kernel's caches and the content cache spare: requests to the filesystem and to the server.
@Suite(.serialized)
struct MountCacheTests {
    static let dataFile = "WS 2026-27/INF-101 Einführung in die Informatik/Übungsblätter/daten (groß).bin"
    static let readme = "WS 2026-27/INF-101 Einführung in die Informatik/README.txt"
    static let slides = "WS 2026-27/INF-101 Einführung in die Informatik/Vorlesungsfolien/Kapitel 1 - Einleitung.pdf"

    /// The kernel marks a directory's atime stale after listing it from the filesystem (`fuse_invalidate_atime`,
    /// skipped only on `ro` mounts, and this one stays read-write for tags), so the second `find` still sends one
    /// GETATTR per directory; the third sends nothing at all.
    ///
    /// This machine's host reclaims page cache while idle (about 100 MB in 20 s, measured with `free`), and a
    /// cached listing is page cache: a `find` that met such a reclaim sends READDIRs again. So each warm `find` is
    /// tried up to three times; a filesystem that does not let the kernel cache fails all three.
    @Test func aSecondFindIsAnsweredByTheKernel() async throws {
        try await MountedCampus.with { campus in
            let find = "find \(campus.path("")) -printf '%p %s %T@\\n'"
            let first = try await shell(find)
            #expect(first.status == 0, "\(first.stderr)")
            let counted = campus.mount.counters.snapshot()
            let served = campus.sim.statistics.snapshot().total
            let directories = try FixtureTreeTests.autorTree.filter {
                try campus.store.resolve(path: $0, followSymlinks: false).kind == .directory
            }
            var before = counted
            var after = counted
            for _ in 1...3 {
                before = campus.mount.counters.snapshot()
                let second = try await shell(find)
                #expect(second.stdout == first.stdout)
                after = campus.mount.counters.snapshot()
                if after.lookups == before.lookups, after.readdirs == before.readdirs { break }
            }
            #expect(after.lookups == before.lookups)
            #expect(after.readdirs == before.readdirs)
            #expect(after.getattrs - before.getattrs <= directories.count + 1)
            for _ in 1...3 {
                before = campus.mount.counters.snapshot()
                let third = try await shell(find)
                #expect(third.stdout == first.stdout)
                after = campus.mount.counters.snapshot()
                if after == before { break }
            }
            #expect(after == before, "a warm find should send nothing")
            #expect(campus.sim.statistics.snapshot().total == served, "find must not reach the server")
            #expect(counted.opens == 0 && counted.reads == 0, "find must not touch content")
        }
    }

    @Test func aWarmReadSendsNoRead() async throws {
        try await MountedCampus.with { campus in
            let first = try await shell("cat \(campus.path(Self.readme))")
            let reads = campus.mount.counters.snapshot().reads
            let second = try await shell("cat \(campus.path(Self.readme))")
            #expect(first.status == 0 && second.stdout == first.stdout)
            #expect(campus.mount.counters.snapshot().reads == reads, "keep_cache should serve the second cat")
        }
    }

    /// Thirty-two readers of one uncached document, each its own process, share one download. In-process: the
    /// single flight is the content cache's; real processes through the kernel are
    /// ``MountLargeTests/thirtyTwoReadersOfOneUncachedDocumentCauseOneDownload()``.
    @Test func concurrentReadersShareOneDownload() async throws {
        try await DriverMode.inProcess.run { fs in
            let document = try #require(try fs.document(Self.dataFile))
            let expected = try await fs.campus.serverBytes(document.id)
            // About a second per download, so the readers' opens overlap it.
            _ = fs.sim.settings.update { $0.bandwidthBytesPerSecond = Int(document.size) }
            let read = try await withThrowingTaskGroup(of: Result<[UInt8], Errno>.self) { group in
                for _ in 0..<32 { group.addTask { try await fs.read(Self.dataFile) } }
                var read: [Result<[UInt8], Errno>] = []
                for try await result in group { read.append(result) }
                return read
            }
            #expect(read.count == 32)
            #expect(read.allSatisfy { $0 == .success(expected) })
            #expect(fs.sim.statistics.snapshot().downloadsCompleted[document.id] == 1)
            #expect(fs.fileSystem.counters.snapshot().opens == 32)
        }
    }

    /// In-process: mounted, the second read of the cached README could come from the kernel's page cache
    /// (`keep_cache`) and prove nothing about the filesystem offline.
    @Test func offlineUncachedOpensFailFastAndCachedOnesStillRead() async throws {
        try await DriverMode.inProcess.run { fs in
            let cached = try await fs.read(Self.readme)
            #expect(try cached.get().isEmpty == false)
            await fs.sim.stop()
            let start = ContinuousClock.now
            #expect(try await fs.read(Self.slides) == .failure(Errno(ENETDOWN)))
            #expect(ContinuousClock.now - start < .seconds(5))
            #expect(try await fs.read(Self.readme) == cached)
            #expect(try await fs.list("WS 2026-27").get().count == 2, "the tree stays browsable offline")
        }
    }

    /// Long kernel timeouts stay correct because a refresh's summary drops exactly what changed.
    @Test func aRefreshShowsNewVersionsAndNamesOnceApplied() async throws {
        try await MountedCampus.with { campus in
            let readme = try #require(try campus.document(Self.readme))
            let renamed = "WS 2026-27/INF-101 Einführung in die Informatik/Übungsblätter/leer.txt"
            let empty = try #require(try campus.document(renamed))
            let before = try await shell(
                "stat -c %s \(campus.path(Self.readme)); cat \(campus.path(Self.readme)) >/dev/null; "
                    + "stat -c %s \(campus.path(renamed))")
            #expect(before.lines == ["\(readme.size)", "0"])

            let text = "A new version of the README.\n"
            let change = try await shell(
                "curl -sf -X PATCH -d \(quoted("{\"text\": \"A new version of the README.\\n\"}")) "
                    + quoted(campus.sim.controlURL + "/documents/" + readme.id) + " >/dev/null && "
                    + "curl -sf -X PATCH -d '{\"name\": \"Umbenannt.txt\"}' "
                    + quoted(campus.sim.controlURL + "/documents/" + empty.id) + " >/dev/null")
            #expect(change.status == 0, "\(change.stderr)")
            let report = try await Refresher(source: campus.source, store: campus.store, options: TreeOptions())
                .refresh()
            let cached = try await shell("stat -c %s \(campus.path(Self.readme))")
            #expect(cached.stdout == "\(readme.size)\n", "the kernel should trust its cache until told")

            campus.mount.apply(report.summary)
            let readmeInode = try campus.store.resolve(path: Self.readme).inode
            #expect(try campus.store.info(inode: readmeInode)?.highlight == .changed)
            let after = try await shell(
                "stat -c %s \(campus.path(Self.readme)); cat \(campus.path(Self.readme)); "
                    + "ls \(campus.path("WS 2026-27/INF-101 Einführung in die Informatik/Übungsblätter"))")
            #expect(after.stdout.hasPrefix("\(text.utf8.count)\n" + text), "\(after.stdout)")
            #expect(after.lines.contains("Umbenannt.txt") && !after.lines.contains("leer.txt"))
            let gone = try await shell("stat \(campus.path(renamed))")
            #expect(gone.status != 0)

            let highlight = try await MountHarness.settled(
                { try campus.store.info(inode: readmeInode)?.highlight }, until: { $0 == nil })
            #expect(highlight == nil, "reading a changed document clears its highlight")
        }
    }
    /// Stale-while-revalidate: a course listing older than the TTL is answered from the store at once and asks for
    /// a refresh of that course; a fresh one asks for nothing. In-process: the listing reaches the filesystem
    /// whether or not a kernel sits in between (the first `ls` of a directory is never cached).
    @Test func aStaleListingIsAnsweredAndRevalidated() async throws {
        try await DriverMode.inProcess.run { fs in
            let stale = CourseRecorder()
            fs.fileSystem.refreshCourses(
                with: .init(listingTTL: .zero, inBackground: { stale.record($0) }, now: { _ in }))
            let listing = try await fs.list("WS 2026-27/INF-101 Einführung in die Informatik")
            #expect(try listing.get().contains("README.txt"), "answered from the store at once")
            let readme = try #require(try fs.document(Self.readme))
            #expect(stale.courseIDs == [readme.courseID])

            let fresh = CourseRecorder()
            fs.fileSystem.refreshCourses(
                with: .init(listingTTL: .seconds(3600), inBackground: { fresh.record($0) }, now: { _ in }))
            #expect(try await fs.list("WS 2026-27/BS-202 Betriebssysteme & Dateisysteme").get().isEmpty == false)
            #expect(fresh.courseIDs.isEmpty, "a listing refreshed within the TTL needs no refresh")
        }
    }
}

/// The course ids a filesystem asked to refresh.
final class CourseRecorder: Sendable {
    private let ids = Mutex<[String]>([])

    var courseIDs: [String] { ids.withLock { $0 } }

    func record(_ courseID: String) { ids.withLock { $0.append(courseID) } }
}
