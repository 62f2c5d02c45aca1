import Daemon
import Foundation
import MetadataStore
import TestSupport
import Testing

@testable import StudIPSimulator

/// The tag view (issue 16) through a real mount: `Tags/<tag>/` holds symlinks to the tagged documents, shows a tag
/// change at once, follows refreshes, and is invisible to `find` and `grep -r` as a second copy.
@Suite(.serialized)
struct TagViewMountTests {
    static let course = "WS 2026-27/INF-101 Einführung in die Informatik"
    static let readme = course + "/README.txt"

    /// Downloads the simulator finished or started: ls, stat and readlink of links must not add any.
    static func downloads(_ campus: MountedCampus) -> Int {
        let statistics = campus.sim.statistics.snapshot()
        return statistics.downloadsCompleted.values.reduce(0, +) + statistics.downloadsInProgress.count
    }

    @Test func taggedDocumentsAreLinksThatShowAtOnceAndAreSeenOnce() async throws {
        try await MountedCampus.with { campus in
            let readme = try #require(try campus.document(Self.readme))
            let root = campus.path("")
            let link = campus.path("Tags/exam/README.txt")
            // The kernel caches the root's listing and the missing `Tags` (a negative entry) before the change.
            let before = try await shell("ls \(root); ls \(campus.path("Tags")) 2>/dev/null; echo $?")
            #expect(!before.lines.contains("Tags") && before.lines.last == "2")
            let downloadsBefore = Self.downloads(campus)

            let tagged = try await shell(
                "setfattr -n user.xdg.tags -v exam \(campus.path(Self.readme)) && ls \(root) && ls \(campus.path("Tags/exam"))"
            )
            #expect(tagged.status == 0, "\(tagged.stderr)")
            #expect(tagged.lines.contains("Tags") && tagged.lines.last == "README.txt")

            let looked = try await shell("readlink \(link); stat -c '%F %s' \(link); ls -l \(campus.path("Tags/exam"))")
            let target = "../../" + Self.readme
            #expect(looked.lines.prefix(2) == [target, "symbolic link \(target.utf8.count)"])
            #expect(looked.lines.last?.hasSuffix("README.txt -> " + target) == true)
            #expect(Self.downloads(campus) == downloadsBefore, "ls, stat and readlink of a link download nothing")

            let read = try await shell("cat \(link)")
            let served = try await campus.campus.serverBytes(readme.id)
            #expect(read.status == 0 && Array(read.stdout.utf8) == served)

            // Each document once: find and grep -r do not follow the links.
            let documents = try campus.store.walk().filter { $0.node.kind == .file }.map {
                campus.directory + "/" + $0.path
            }
            let found = try await shell("find \(root) -type f")
            #expect(found.lines.sorted() == documents.sorted())
            #expect(
                try await shell("find \(root) -type l -path '*/Tags/*'").lines == [
                    campus.directory + "/Tags/exam/README.txt"
                ])
            let grepped = try await shell("grep -r -c '' \(root) 2>/dev/null", timeout: 120)
            let files = grepped.lines.map { $0.split(separator: ":").dropLast().joined(separator: ":") }
            #expect(!files.isEmpty && Set(files).count == files.count, "no document read twice")
            #expect(Set(files).isSubset(of: documents), "nothing read through Tags")
            #expect(files.filter { $0 == campus.directory + "/" + Self.readme }.count == 1)

            // Read-only like the rest of the tree.
            let script = """
                import errno, os, sys
                def code(call):
                    try:
                        call()
                        return "ok"
                    except OSError as error:
                        return errno.errorcode[error.errno]
                tags = sys.argv[1]
                print(code(lambda: os.mkdir(tags + "/new")))
                print(code(lambda: os.unlink(tags + "/exam/README.txt")))
                print(code(lambda: os.rmdir(tags + "/exam")))
                print(code(lambda: os.setxattr(tags + "/exam", "user.xdg.tags", b"x")))
                print(code(lambda: os.setxattr(tags, "user.xdg.tags", b"x")))
                """
            let refused = try await shell("python3 -c \(quoted(script)) \(campus.path("Tags"))")
            #expect(refused.lines == ["EROFS", "EROFS", "EROFS", "EPERM", "EPERM"], "\(refused.stderr)")

            // Removing the last tag removes the view, at once.
            let untagged = try await shell(
                "setfattr -x user.xdg.tags \(campus.path(Self.readme)) && ls \(root) && ls \(campus.path("Tags"))")
            #expect(untagged.status != 0 && !untagged.lines.contains("Tags"))
        }
    }

    /// A tagged document's link follows its renames, moves and deletion on the server. In both modes: in-process
    /// the view's answers, mounted also that each refresh drops what the kernel cached of the link (same link,
    /// same name, another target).
    @Test(arguments: DriverMode.allCases)
    func linksFollowRenamesMovesAndDeletionsOnTheServer(_ mode: DriverMode) async throws {
        try await mode.run { fs in
            let readme = try #require(try fs.document(Self.readme))
            let sheets = try #require(try fs.store.resolve(path: Self.course + "/Übungsblätter").studipID)
            #expect(try await fs.setxattr("user.xdg.tags", "exam", of: Self.readme) == 0)
            #expect(try await fs.readLink("Tags/exam/README.txt") == .success("../../" + Self.readme))

            try await fs.simulate("PATCH", "documents/" + readme.id, ["name": "LIESMICH.txt"])
            try await fs.refresh()
            #expect(try await fs.list("Tags/exam") == .success(["LIESMICH.txt"]))
            #expect(
                try await fs.readLink("Tags/exam/LIESMICH.txt") == .success("../../" + Self.course + "/LIESMICH.txt"))

            try await fs.simulate("PATCH", "documents/" + readme.id, ["folder_id": sheets])
            try await fs.refresh()
            let moved = "../../" + Self.course + "/Übungsblätter/LIESMICH.txt"
            #expect(try await fs.readLink("Tags/exam/LIESMICH.txt") == .success(moved))
            #expect(try await fs.read("Tags/exam/LIESMICH.txt").get().count == Int(readme.size))

            try await fs.simulate("DELETE", "documents/" + readme.id, [:])
            try await fs.refresh()
            #expect(try await fs.list("Tags/exam") == .failure(Errno(ENOENT)))
            #expect(try await !fs.list("").get().contains("Tags"))
        }
    }
}
