import CampusFS
import Foundation
import MetadataStore
import TestSupport
import Testing

@testable import StudIPSimulator

/// The fixtures' tree: names, attributes and bytes, in-process and, where the kernel has a part, through a real mount
/// (docs/testing.md).
@Suite(.serialized)
struct MountTreeTests {
    /// The names of the designed tree and each one's size, mtime, mode and owner from the store. Mounted too: the
    /// kernel's READDIRPLUS and `stat` see libfuse's encoding of the same answers.
    @Test(arguments: DriverMode.allCases)
    func theTreeHasTheDesignedNamesAndAttributes(_ mode: DriverMode) async throws {
        try await mode.run { fs in
            let tree = try await fs.find("").get()
            #expect(tree.keys.sorted() == FixtureTreeTests.autorTree.sorted())
            for (path, status) in tree {
                let node = try fs.store.resolve(path: path, followSymlinks: false)
                let (type, permissions): (mode_t, mode_t) =
                    switch node.kind {
                    case .directory: (S_IFDIR, 0o755)
                    case .file: (S_IFREG, 0o644)
                    case .symlink: (S_IFLNK, 0o777)
                    }
                let mtime = Int(node.mtime.timeIntervalSince1970.rounded(.down))
                let expected = PathStatus(mode: type | permissions, size: node.size, modified: mtime, userID: getuid())
                #expect(status == expected, "\(path)")
            }
        }
    }

    /// 1 MiB READs instead of 256 KiB ones make a cold read of a cached document a third faster (root only:
    /// the kernel keeps the BDI's sysfs file to root).
    @Test(.enabled(if: geteuid() == 0)) func theMountReadsAheadOneMebibyte() async throws {
        try await MountedCampus.with { campus in
            let readahead = try await shell(
                "cat /sys/class/bdi/$(mountpoint -d \(campus.path("")))/read_ahead_kb")
            #expect(readahead.stdout == "\(CampusMount.readaheadKiB)\n", "\(readahead.stderr)")
        }
    }

    /// In-process: which bytes a read gets is the filesystem's answer; the kernel's part of a read is covered by
    /// ``concurrentPreadsAndMmapReadTheSameBytes()`` and every mounted `cat`.
    @Test func everyDocumentReadsAsTheServersBytes() async throws {
        try await DriverMode.inProcess.run { fs in
            for path in try FixtureTreeTests.autorTree.filter({ try fs.store.resolve(path: $0).kind == .file }) {
                let document = try #require(try fs.document(path))
                #expect(try await fs.read(path) == .success(try await fs.campus.serverBytes(document.id)), "\(path)")
            }
        }
    }

    @Test func concurrentPreadsAndMmapReadTheSameBytes() async throws {
        try await MountedCampus.with { campus in
            let path = "WS 2026-27/INF-101 Einführung in die Informatik/Übungsblätter/daten (groß).bin"
            let document = try #require(try campus.document(path))
            let script = """
                import mmap, os, random, sys, threading, urllib.request
                expected = urllib.request.urlopen(sys.argv[2]).read()
                fd = os.open(sys.argv[1], os.O_RDONLY)
                failures = []
                def worker(seed):
                    rng = random.Random(seed)
                    for _ in range(200):
                        offset = rng.randrange(0, len(expected) + 10)
                        length = rng.randrange(1, 70000)
                        if os.pread(fd, length, offset) != expected[offset:offset + length]:
                            failures.append((offset, length))
                threads = [threading.Thread(target=worker, args=(seed,)) for seed in range(8)]
                for thread in threads: thread.start()
                for thread in threads: thread.join()
                with mmap.mmap(fd, 0, prot=mmap.PROT_READ) as mapped:
                    print("mmap", mapped[:] == expected)
                print("size", len(expected) == os.fstat(fd).st_size)
                print("failures", len(failures))
                """
            let result = try await shell(
                "python3 -c \(quoted(script)) \(campus.path(path)) "
                    + quoted(campus.contentURL(document.id)), timeout: 60)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.lines == ["mmap True", "size True", "failures 0"])
            #expect(document.size > 100_000, "the file should span many reads")
        }
    }

    /// A document the user may not download shows mode 0000 (its neighbours 0644), and opening it fails with
    /// `EACCES`, from the filesystem (the kernel checks no permission bits on this mount, so `access(2)` is answered
    /// by the filesystem too: in-process).
    @Test func aDocumentThatMayNotBeDownloadedGivesEACCES() async throws {
        try await DriverMode.inProcess.run(.generated(.small, seed: 1), flavour: .v55) { fs in
            let tree = try fs.store.walk()
            let scan = try #require(tree.first { $0.node.name == "Lehrbuch Kapitel 3 (Scan).pdf" })
            let neighbour = try #require(
                tree.first { $0.node.parentInode == scan.node.parentInode && $0.node.kind == .file && $0 != scan })
            let opensBefore = fs.fileSystem.counters.snapshot().opens
            #expect(try await fs.read(scan.path) == .failure(Errno(EACCES)))
            #expect(try await fs.access(scan.path, R_OK) == EACCES)
            #expect(try await fs.access(neighbour.path, R_OK) == 0, "access(2) agrees")
            #expect(fs.fileSystem.counters.snapshot().opens > opensBefore)
            let scanStatus = try await fs.stat(scan.path).get()
            let neighbourStatus = try await fs.stat(neighbour.path).get()
            #expect(scanStatus.size == scan.node.size && scanStatus.mode == S_IFREG)
            #expect(neighbourStatus.size == neighbour.node.size && neighbourStatus.mode == S_IFREG | 0o644)
        }
    }
}
