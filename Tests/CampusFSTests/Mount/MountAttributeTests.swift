import ContentCache
import Daemon
import Foundation
import MetadataStore
import Refreshing
import TestSupport
import Testing

@testable import StudIPSimulator

/// The extended attributes (README.md, "Tags, highlights and pins") through a real mount, with the Linux xattr
/// protocol.
@Suite(.serialized)
struct MountAttributeTests {
    static let course = "WS 2026-27/INF-101 Einführung in die Informatik"
    static let readme = course + "/README.txt"
    static let sheets = course + "/Übungsblätter"

    /// Runs a Python script with the mount path of `relative` as its argument; its output, line by line.
    static func python(_ campus: MountedCampus, _ script: String, _ relative: String) async throws -> [String] {
        let result = try await shell(
            "python3 -c \(quoted(script)) \(campus.path(relative))", timeout: 60)
        #expect(result.status == 0, "\(result.stderr)")
        return result.lines
    }

    /// Every case of the protocol, with `os.*xattr` and, for the size probe and `ERANGE`, libc itself.
    @Test func theLinuxXattrProtocol() async throws {
        try await MountedCampus.with { campus in
            let readme = try #require(try campus.document(Self.readme))
            let script = """
                import ctypes, errno, os, sys
                path = sys.argv[1]
                libc = ctypes.CDLL(None, use_errno=True)
                def code(call):
                    try:
                        result = call()
                        return "ok" if result is None else repr(result)
                    except OSError as error:
                        return errno.errorcode[error.errno]
                def raw(name, size):
                    buffer = ctypes.create_string_buffer(max(size, 1))
                    length = libc.getxattr(path.encode(), name.encode(), buffer if size else None, size)
                    return str(length) if length >= 0 else errno.errorcode[ctypes.get_errno()]
                print(code(lambda: os.getxattr(path, "user.campusfs.id")))
                print(raw("user.campusfs.id", 0))
                print(raw("user.campusfs.id", 3))
                print(code(lambda: os.getxattr(path, "user.mime_type")))
                print(code(lambda: os.getxattr(path, "user.xdg.tags")))
                print(code(lambda: os.setxattr(path, "user.xdg.tags", b"exam,week 3")))
                print(code(lambda: os.getxattr(path, "user.xdg.tags")))
                print(code(lambda: os.setxattr(path, "user.xdg.tags", b"x", os.XATTR_CREATE)))
                print(code(lambda: os.setxattr(path, "user.baloo.rating", b"7", os.XATTR_REPLACE)))
                print(code(lambda: os.setxattr(path, "user.baloo.rating", b"7", os.XATTR_CREATE)))
                print(code(lambda: os.getxattr(path, "user.baloo.rating")))
                print(code(lambda: os.setxattr(path, "user.baloo.rating", b"11")))
                print(code(lambda: os.setxattr(path, "user.campusfs.id", b"forged")))
                print(code(lambda: os.setxattr(path, "user.campusfs.highlight", b"new")))
                print(code(lambda: os.setxattr(path, "user.anything", b"x")))
                print(code(lambda: os.setxattr(path, "trusted.x", b"x")))
                print(code(lambda: os.getxattr(path, "security.selinux")))
                print(code(lambda: os.getxattr(path, "user.unknown")))
                print(code(lambda: sorted(os.listxattr(path))))
                print(code(lambda: os.removexattr(path, "user.xdg.tags")))
                print(code(lambda: os.removexattr(path, "user.xdg.tags")))
                print(code(lambda: os.removexattr(path, "user.mime_type")))
                print(code(lambda: os.getxattr(path, "user.xdg.tags")))
                """
            let lines = try await Self.python(campus, script, Self.readme)
            let id = Array(readme.id.utf8)
            #expect(
                lines == [
                    "b'\(readme.id)'", "\(id.count)", "ERANGE", "b'\(readme.mimeType)'", "ENODATA", "ok",
                    "b'exam,week 3'", "EEXIST", "ENODATA", "ok", "b'7'", "EINVAL", "EPERM", "EINVAL", "ENOTSUP",
                    "ENOTSUP", "ENODATA", "ENODATA",
                    "['user.baloo.rating', 'user.xdg.comment', 'user.xdg.origin.url', 'user.xdg.tags']",
                    "ok", "ENODATA", "EPERM", "ENODATA",
                ])
        }
    }

    /// Semesters, courses and folders keep tags and ratings like documents; the root is no Stud.IP item.
    /// In-process: what the filesystem answers; the syscalls' way through the kernel is ``theLinuxXattrProtocol()``.
    @Test func foldersCoursesAndSemestersTooButNotTheRoot() async throws {
        try await DriverMode.inProcess.run { (fs) async throws in
            let semester = "WS 2026-27"
            for item in [semester, Self.course, Self.sheets] {
                #expect(try await fs.setxattr("user.xdg.tags", "wichtig", of: item) == 0, "\(item)")
                #expect(try await fs.setxattr("user.baloo.rating", "9", of: item) == 0, "\(item)")
                #expect(try await fs.attribute("user.xdg.tags", of: item) == "wichtig", "\(item)")
                #expect(try await fs.attribute("user.baloo.rating", of: item) == "9", "\(item)")
            }
            #expect(try await fs.setxattr("user.xdg.tags", "x", of: "") == EPERM)
            #expect(try await fs.setxattr("user.campusfs.highlight", "flagged", of: Self.sheets) == EINVAL)
            #expect(try await fs.attribute("user.campusfs.id", of: semester)?.isEmpty == false)
        }
    }

    /// What `getfattr -d` shows of a document and a folder (only what a copy may carry; CampusFS's own names
    /// answer by name); the `security.*` and `system.posix_acl_*` names `ls -l` asks for are answered without
    /// reading the store; the state turns `cached` once a read has committed the copy. In-process: no kernel cache
    /// stands between these calls and the filesystem.
    @Test func getfattrShowsTheAttributesAndSecurityLookupsStayInMemory() async throws {
        try await DriverMode.inProcess.run { fs in
            let readme = try #require(try fs.document(Self.readme))
            #expect(try await fs.setxattr("user.xdg.tags", "exam,week 3", of: Self.readme) == 0)
            let names = try await fs.listxattr(Self.readme).get()
            #expect(names.contains("user.xdg.tags"), "\(names)")
            #expect(try await fs.attribute("user.xdg.tags", of: Self.readme) == "exam,week 3")
            for item in [Self.readme, Self.course] {
                let listed = try await fs.listxattr(item).get()
                #expect(!listed.contains { $0.hasPrefix("user.campusfs.") }, "\(item): \(listed)")
                for name in listed {
                    if case .failure(let errno) = try await fs.getxattr(name, of: item) {
                        Issue.record("\(item): \(name) is listed but reads as \(errno)")
                    }
                }
            }
            #expect(try await fs.attribute("user.campusfs.id", of: Self.readme) == readme.id)
            #expect(try await fs.attribute("user.campusfs.state", of: Self.readme) == "remote")
            #expect(try await fs.attribute("user.mime_type", of: Self.readme) == readme.mimeType)
            let newBelow = try await fs.attribute("user.campusfs.new", of: Self.course)
            #expect(newBelow.flatMap { Int($0) } != nil, "a course folder counts its highlighted documents")

            let before = fs.fileSystem.counters.snapshot().attributeReads
            for item in ["", Self.course, Self.readme] {
                for name in ["security.selinux", "system.posix_acl_access", "system.posix_acl_default"] {
                    #expect(try await fs.getxattr(name, of: item) == .failure(Errno(ENODATA)), "\(item): \(name)")
                }
            }
            #expect(fs.fileSystem.counters.snapshot().attributeReads == before)

            // The copy is committed (fsync, sidecar) after its last byte arrived, so the read may end a moment before.
            #expect(try await fs.read(Self.readme) == .success(try await fs.campus.serverBytes(readme.id)))
            let state = try await MountHarness.settled(
                { try await fs.attribute("user.campusfs.state", of: Self.readme) }, until: { $0 != "downloading" })
            #expect(state == "cached")
        }
    }

    /// New after a refresh until read; changed after a new version; flagged survives reading; a folder's count
    /// follows. In-process: highlights are the store's and the scan detector's, which judges a burst of opens per
    /// process (a mounted scan by a real program's name is ``MountScanTests``).
    @Test func highlightsFollowTheStudAppRule() async throws {
        try await DriverMode.inProcess.run { fs in
            let readme = try #require(try fs.document(Self.readme))
            let added = Self.course + "/Neu.txt"
            try await fs.simulate(
                "POST", "documents", ["folder_id": readme.folderID, "name": "Neu.txt", "text": "neu"])
            try await fs.simulate("PATCH", "documents/" + readme.id, ["text": "zwei"])
            let before = try #require(try await fs.attribute("user.campusfs.new", of: Self.course).flatMap { Int($0) })
            try await fs.refresh()

            #expect(try await fs.attribute("user.campusfs.highlight", of: added) == "new")
            #expect(try await fs.attribute("user.campusfs.highlight", of: Self.readme) == "changed")
            #expect(try await fs.attribute("user.campusfs.new", of: Self.course) == "\(before + 2)")

            #expect(try await fs.setxattr("user.campusfs.highlight", "flagged", of: Self.readme) == 0)
            // One process reads both (as one `cat` does): two documents are no scan.
            let read = try await fs.read([added, Self.readme])
            #expect(read == [.success(Array("neu".utf8)), .success(Array("zwei".utf8))])
            // The highlights are cleared once the reader has been idle for a second.
            let after = try await MountHarness.settled(
                { try await fs.attribute("user.campusfs.highlight", of: added) }, until: { $0 == nil })
            #expect(after == nil, "Neu.txt was read")
            #expect(try await fs.attribute("user.campusfs.highlight", of: Self.readme) == "flagged")
            #expect(
                try await fs.attribute("user.campusfs.new", of: Self.course) == "\(before + 1)",
                "the flagged README still counts")
            #expect(try await fs.removexattr("user.campusfs.highlight", of: Self.readme) == 0)
            #expect(try await fs.getxattr("user.campusfs.highlight", of: Self.readme) == .failure(Errno(ENODATA)))
        }
    }

    /// Pinning a folder downloads its documents at once, and evictions under a tiny cache limit spare them.
    @Test func aPinnedFolderStaysCachedUnderEvictions() async throws {
        try await MountedCampus.with(cache: ContentCacheConfiguration(sizeLimit: 1)) { campus in
            let pinned = Self.course + "/Vorlesungsfolien"
            let files = try await shell("cd \(campus.path(pinned)) && find . -type f | cut -c3- | sort")
            #expect(files.lines.count >= 3)
            let pin = try await shell("setfattr -n user.campusfs.pinned -v 1 \(campus.path(pinned))")
            #expect(pin.status == 0, "\(pin.stderr)")

            let states = files.lines.map {
                "getfattr --only-values -n user.campusfs.state \(campus.path(pinned + "/" + $0)); echo"
            }.joined(separator: "; ")
            var cached = try await shell(states)
            for _ in 0..<100 where Set(cached.lines) != ["cached"] {
                try await Task.sleep(for: .milliseconds(50))
                cached = try await shell(states)
            }
            #expect(Set(cached.lines) == ["cached"], "a pin downloads at once: \(cached.lines)")

            // Reading other documents with a limit of one byte evicts everything that is not pinned or open.
            let others = try await shell(
                "cat \(campus.path(Self.readme)) \(campus.path(Self.sheets + "/diagramm.png")) >/dev/null && sleep 0.2 "
                    + "&& getfattr --only-values -n user.campusfs.state \(campus.path(Self.readme))")
            #expect(others.stdout == "remote", "the unpinned README should have been evicted")
            let still = try await shell(states)
            #expect(Set(still.lines) == ["cached"], "pinned documents are never evicted: \(still.lines)")

            // A document that appears below the pinned folder downloads with the refresh that brings it.
            let topLevel = try #require(files.lines.first { !$0.contains("/") })
            let sibling = try #require(try campus.document(pinned + "/" + topLevel))
            let add = try await shell(
                "curl -sf -X POST -d '{\"folder_id\": \"\(sibling.folderID)\", \"name\": \"Nachtrag.txt\", "
                    + "\"text\": \"neu\"}' \(quoted(campus.sim.controlURL + "/documents")) >/dev/null")
            #expect(add.status == 0, "\(add.stderr)")
            let report = try await Refresher(source: campus.source, store: campus.store, options: TreeOptions())
                .refresh()
            campus.mount.apply(report.summary)
            let added = "getfattr --only-values -n user.campusfs.state \(campus.path(pinned + "/Nachtrag.txt"))"
            var state = try await shell(added)
            for _ in 0..<100 where state.stdout != "cached" {
                try await Task.sleep(for: .milliseconds(50))
                state = try await shell(added)
            }
            #expect(state.stdout == "cached", "a new document below a pin downloads at once")

            let unpin = try await shell(
                "setfattr -x user.campusfs.pinned \(campus.path(pinned)) && "
                    + "getfattr -n user.campusfs.pinned \(campus.path(pinned))")
            #expect(unpin.stderr.contains("No such attribute"), "\(unpin.stderr)")
        }
    }
}
