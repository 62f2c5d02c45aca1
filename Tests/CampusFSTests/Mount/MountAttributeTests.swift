import ContentCache
import Daemon
import Foundation
import MetadataStore
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
    @Test func foldersCoursesAndSemestersTooButNotTheRoot() async throws {
        try await MountedCampus.with { campus in
            let semester = "WS 2026-27"
            let result = try await shell(
                """
                for item in \(campus.path(semester)) \(campus.path(Self.course)) \(campus.path(Self.sheets)); do
                  setfattr -n user.xdg.tags -v wichtig "$item" && setfattr -n user.baloo.rating -v 9 "$item" &&
                  getfattr --only-values -n user.xdg.tags "$item" && getfattr --only-values -n user.baloo.rating "$item" &&
                  echo
                done
                setfattr -n user.xdg.tags -v x \(campus.path("")) 2>&1 | grep -c 'Operation not permitted'
                setfattr -n user.campusfs.highlight -v flagged \(campus.path(Self.sheets)) 2>&1 | grep -c 'Invalid argument'
                """)
            #expect(result.lines == ["wichtig9", "wichtig9", "wichtig9", "1", "1"], "\(result.stderr)")
            let semesterID = try await shell(
                "getfattr --only-values -n user.campusfs.id \(campus.path(semester))")
            #expect(!semesterID.stdout.isEmpty)
        }
    }

    /// `getfattr -d` on a document and a folder; `security.*` lookups of `ls -l` never reach the store.
    @Test func getfattrShowsTheAttributesAndSecurityLookupsStayInMemory() async throws {
        try await MountedCampus.with { campus in
            let readme = try #require(try campus.document(Self.readme))
            let set = try await shell(
                "setfattr -n user.xdg.tags -v 'exam,week 3' \(campus.path(Self.readme)) && "
                    + "getfattr -d --absolute-names \(campus.path(Self.readme)) \(campus.path(Self.course))")
            #expect(set.status == 0, "\(set.stderr)")
            let text = set.stdout
            #expect(text.contains("user.xdg.tags=\"exam,week 3\""), "\(text)")
            // CampusFS's own attributes are not listed (a copy must not carry them) but answer by name.
            #expect(!text.contains("user.campusfs."), "\(text)")
            let named = try await shell(
                ["user.campusfs.id", "user.campusfs.state", "user.mime_type"].map {
                    "getfattr --absolute-names -n \($0) \(campus.path(Self.readme)) && "
                }.joined() + "getfattr --absolute-names -n user.campusfs.new \(campus.path(Self.course))")
            #expect(named.stdout.contains("user.campusfs.id=\"\(readme.id)\""), "\(named.stdout)")
            #expect(named.stdout.contains("user.campusfs.state=\"remote\""))
            #expect(named.stdout.contains("user.mime_type=\"\(readme.mimeType)\""))
            #expect(named.stdout.contains("user.campusfs.new=\""), "a course folder counts its highlighted documents")

            let before = campus.mount.counters.snapshot().attributeReads
            let listing = try await shell(
                "ls -lR \(campus.path("")) >/dev/null && getfattr -n security.selinux \(campus.path(Self.readme))")
            #expect(listing.stderr.contains("No such attribute"), "\(listing.stderr)")
            #expect(campus.mount.counters.snapshot().attributeReads == before)

            // The copy is committed (fsync, sidecar) after its last byte arrived, so `cat` may end a moment before.
            let read = try await shell(
                "cat \(campus.path(Self.readme)) >/dev/null; for i in $(seq 100); do "
                    + "state=$(getfattr --only-values -n user.campusfs.state \(campus.path(Self.readme))); "
                    + "[ \"$state\" = downloading ] || break; sleep 0.05; done; echo \"$state\"")
            #expect(read.stdout == "cached\n", "\(read.stderr)")
        }
    }

    /// New after a refresh until read; changed after a new version; flagged survives reading; a folder's count
    /// follows.
    @Test func highlightsFollowTheStudAppRule() async throws {
        try await MountedCampus.with { campus in
            let readme = try #require(try campus.document(Self.readme))
            let add = try await shell(
                "curl -sf -X POST -d '{\"folder_id\": \"\(readme.folderID)\", \"name\": \"Neu.txt\", \"text\": \"neu\"}' "
                    + "\(quoted(campus.sim.controlURL + "/documents")) >/dev/null && "
                    + "curl -sf -X PATCH -d '{\"text\": \"zwei\"}' "
                    + "\(quoted(campus.sim.controlURL + "/documents/" + readme.id)) >/dev/null")
            #expect(add.status == 0, "\(add.stderr)")
            let countBefore = try await shell(
                "getfattr --only-values -n user.campusfs.new \(campus.path(Self.course))")
            let report = try await Refresher(source: campus.source, store: campus.store, options: TreeOptions())
                .refresh()
            campus.mount.apply(report.summary)

            let highlight = "getfattr --only-values -n user.campusfs.highlight"
            let fresh = try await shell(
                "\(highlight) \(campus.path(Self.course + "/Neu.txt")); echo; \(highlight) \(campus.path(Self.readme)); "
                    + "echo; getfattr --only-values -n user.campusfs.new \(campus.path(Self.course))")
            let before = Int(countBefore.stdout) ?? -100
            #expect(fresh.lines == ["new", "changed", "\(before + 2)"], "\(fresh.stderr)")

            let flag = try await shell(
                "setfattr -n user.campusfs.highlight -v flagged \(campus.path(Self.readme)) && "
                    + "cat \(campus.path(Self.course + "/Neu.txt")) \(campus.path(Self.readme)) >/dev/null")
            #expect(flag.status == 0, "\(flag.stderr)")
            // The highlights are cleared once cat has been idle for a second (its two documents are no scan).
            var after = try await shell(
                "\(highlight) \(campus.path(Self.course + "/Neu.txt")); echo; \(highlight) \(campus.path(Self.readme))")
            for _ in 0..<200 where !after.stdout.hasPrefix("\n") {
                try await Task.sleep(for: .milliseconds(20))
                after = try await shell(
                    "\(highlight) \(campus.path(Self.course + "/Neu.txt")); echo; "
                        + "\(highlight) \(campus.path(Self.readme))")
            }
            #expect(after.stdout == "\nflagged", "Neu.txt was read, the flagged README too: \(after.stderr)")
            let count = try await shell(
                "getfattr --only-values -n user.campusfs.new \(campus.path(Self.course))")
            #expect(count.stdout == "\(before + 1)", "the flagged README still counts")
            let unflag = try await shell(
                "setfattr -x user.campusfs.highlight \(campus.path(Self.readme)) && "
                    + "getfattr -n user.campusfs.highlight \(campus.path(Self.readme))")
            #expect(unflag.stderr.contains("No such attribute"), "\(unflag.stderr)")
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
