import CampusFS
import Foundation
import MetadataStore
import TestSupport
import Testing

@testable import StudIPSimulator

/// The fixtures' tree through a real mount: names, attributes and bytes, and nothing writable.
@Suite(.serialized)
struct MountTreeTests {
    /// The paths below the mount that are documents.
    static func documentPaths(_ campus: MountedCampus) throws -> [String] {
        try FixtureTreeTests.autorTree.filter { try campus.store.resolve(path: $0).kind == .file }
    }

    @Test func findListsExactlyTheDesignedTree() async throws {
        try await MountedCampus.with { campus in
            let find = try await shell("cd \(campus.path("")) && find . -mindepth 1 | cut -c3-")
            #expect(find.status == 0, "\(find.stderr)")
            #expect(find.lines.sorted() == FixtureTreeTests.autorTree.sorted())
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

    @Test func everyDocumentReadsAsTheServersBytes() async throws {
        try await MountedCampus.with { campus in
            for path in try Self.documentPaths(campus) {
                let document = try #require(try campus.document(path))
                let url = quoted(campus.contentURL(document.id))
                let hashes = try await shell(
                    "cat \(campus.path(path)) | sha256sum; curl -sf \(url) | sha256sum")
                #expect(hashes.status == 0, "\(path): \(hashes.stderr)")
                #expect(hashes.lines.count == 2 && hashes.lines[0] == hashes.lines[1], "\(path)")
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

    @Test func statShowsTheMetadata() async throws {
        try await MountedCampus.with { campus in
            let uid = getuid()
            for path in FixtureTreeTests.autorTree {
                let node = try campus.store.resolve(path: path, followSymlinks: false)
                let stat = try await shell("stat -c '%s %Y %a %u %F' \(campus.path(path))")
                let (mode, type) =
                    switch node.kind {
                    case .directory: ("755", "directory")
                    case .file: ("644", node.size == 0 ? "regular empty file" : "regular file")
                    case .symlink: ("777", "symbolic link")
                    }
                let mtime = Int(node.mtime.timeIntervalSince1970.rounded(.down))
                let expected = "\(node.size) \(mtime) \(mode) \(uid) \(type)"
                #expect(stat.stdout == expected + "\n", "\(path)")
            }
        }
    }

    @Test func mutationsFailWithEROFS() async throws {
        try await MountedCampus.with { campus in
            let script = """
                import errno, os, sys
                root, course = sys.argv[1], sys.argv[1] + "/" + sys.argv[2]
                def code(action):
                    try:
                        action()
                        return "ok"
                    except OSError as error:
                        return errno.errorcode[error.errno]
                print(code(lambda: os.close(os.open(course + "/new.txt", os.O_CREAT | os.O_WRONLY))))
                print(code(lambda: os.close(os.open(course + "/README.txt", os.O_WRONLY))))
                print(code(lambda: os.mkdir(course + "/dir")))
                print(code(lambda: os.unlink(course + "/README.txt")))
                print(code(lambda: os.rmdir(course + "/Leerer Ordner")))
                print(code(lambda: os.rename(course + "/README.txt", course + "/moved.txt")))
                print(code(lambda: os.symlink("x", course + "/link")))
                print(code(lambda: os.truncate(course + "/README.txt", 0)))
                """
            let course = "WS 2026-27/INF-101 Einführung in die Informatik"
            let result = try await shell(
                "python3 -c \(quoted(script)) \(campus.path("")) \(quoted(course))")
            #expect(result.lines == Array(repeating: "EROFS", count: 8), "\(result.stderr)")
            let touch = try await shell(
                "touch \(campus.path(course + "/README.txt")); mv \(campus.path(course + "/README.txt")) "
                    + "\(campus.path(course + "/x.txt")); echo hi > \(campus.path(course + "/README.txt"))")
            #expect(touch.stderr.components(separatedBy: "Read-only file system").count == 4, "\(touch.stderr)")
        }
    }

    /// A document the user may not download shows mode 0000 (its neighbours 0444), and opening it fails with
    /// `EACCES`, from the daemon (the kernel checks no permission bits on this mount).
    @Test func aDocumentThatMayNotBeDownloadedGivesEACCES() async throws {
        try await MountedCampus.with(.generated(.small, seed: 1), flavour: .v55) { campus in
            let tree = try campus.store.walk()
            let scan = try #require(tree.first { $0.node.name == "Lehrbuch Kapitel 3 (Scan).pdf" })
            let neighbour = try #require(
                tree.first { $0.node.parentInode == scan.node.parentInode && $0.node.kind == .file && $0 != scan })
            let opensBefore = campus.mount.counters.snapshot().opens
            let result = try await shell(
                "python3 -c 'import errno, os, sys\ntry:\n os.open(sys.argv[1], os.O_RDONLY)\n print(\"ok\")\n"
                    + "except OSError as e:\n print(errno.errorcode[e.errno])\n"
                    + "print(os.access(sys.argv[1], os.R_OK), os.access(sys.argv[2], os.R_OK))' "
                    + "\(campus.path(scan.path)) \(campus.path(neighbour.path))")
            #expect(result.stdout == "EACCES\nFalse True\n", "access(2) agrees: \(result.stderr)")
            #expect(campus.mount.counters.snapshot().opens > opensBefore)
            let stat = try await shell(
                "stat -c '%s %a' \(campus.path(scan.path)) \(campus.path(neighbour.path))")
            #expect(stat.lines == ["\(scan.node.size) 0", "\(neighbour.node.size) 644"], "\(stat.stderr)")
        }
    }
}
