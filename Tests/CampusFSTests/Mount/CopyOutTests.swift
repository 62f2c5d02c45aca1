import Foundation
import TestSupport
import Testing

/// Issue 28, "Copying out of the mount": what `cp -a`, `rsync -aX` and a file manager's copy (`gio copy`) make of a
/// course, done by an ordinary user (`nobody`, through `setpriv`) — root may delete anything, so only a user shows
/// whether the copy is an ordinary tree. /dev/fuse is root's alone here, so root mounts with `allow_other` and the
/// user copies out of that mount into a directory of their own.
@Suite(.serialized)
struct CopyOutTests {
    static let course = "WS 2026-27/INF-101 Einführung in die Informatik"
    static let readme = course + "/README.txt"
    static let user = "setpriv --reuid=65534 --regid=65534 --clear-groups"
    /// The attributes a copy may carry (docs/mount.md, "Copying out of the mount").
    static let travelling: Set<String> = [
        "user.xdg.tags", "user.baloo.rating", "user.xdg.comment", "user.xdg.origin.url",
    ]

    /// The copies are deletable with `rm -r` and carry the user's tags and rating and Stud.IP's description and
    /// origin, never CampusFS's own attributes; the mount itself still refuses every write.
    @Test func copiesAreOrdinaryTreesWithTheAttributesThatMeanSomethingThere() async throws {
        try await MountedCampus.with(allowOther: true) { campus in
            let tag = try await shell(
                "setfattr -n user.xdg.tags -v exam \(campus.path(Self.readme)) && "
                    + "setfattr -n user.baloo.rating -v 8 \(campus.path(Self.readme)) && "
                    + "setfattr -n user.campusfs.pinned -v 1 \(campus.path(Self.course + "/Übungsblätter"))")
            #expect(tag.status == 0, "\(tag.stderr)")
            let destination = try temporaryDirectory("campusfs-copy")
            defer { try? FileManager.default.removeItem(atPath: destination) }
            #expect(chown(destination, 65534, 65534) == 0)
            let course = campus.path(Self.course)
            let copied = quoted(destination)
            // Each copy: the attribute names it carries, the README's tags, and whether `rm -r` removes it.
            let script = """
                attributes() { getfattr -R -d -m - --absolute-names "$1" 2>/dev/null | grep -o '^[a-z]*\\.[^=]*' | sort -u | tr '\\n' ' '; echo; }
                check() { attributes "$1"; getfattr --only-values -n user.xdg.tags "$2"; echo; rm -r "$1" && echo removed; }
                cp -a \(course) \(copied)/cp 2>/dev/null
                check \(copied)/cp \(copied)/cp/README.txt
                rsync -aX \(course)/ \(copied)/rsync 2>/dev/null
                check \(copied)/rsync \(copied)/rsync/README.txt
                gio copy \(campus.path(Self.readme)) \(copied)/gio.txt
                check \(copied)/gio.txt \(copied)/gio.txt
                gio copy --preserve \(campus.path(Self.readme)) \(copied)/gio-preserve.txt
                check \(copied)/gio-preserve.txt \(copied)/gio-preserve.txt
                """
            let result = try await shell(
                "cd \(copied) && \(Self.user) env -i PATH=/usr/bin:/bin HOME=\(copied) bash -c \(quoted(script))",
                timeout: 120)
            let lines = result.lines
            #expect(lines.count == 12, "\(result.stdout) \(result.stderr)")
            for copy in 0..<min(lines.count / 3, 4) {
                let names = Set(lines[3 * copy].split(separator: " ").map(String.init))
                #expect(names.isSubset(of: Self.travelling), "copy \(copy): \(names)")
                #expect(names.contains("user.xdg.tags") && names.contains("user.baloo.rating"), "copy \(copy)")
                #expect(lines[3 * copy + 1] == "exam", "copy \(copy)")
                #expect(lines[3 * copy + 2] == "removed", "copy \(copy): \(result.stderr)")
            }
            let left = try FileManager.default.contentsOfDirectory(atPath: destination)
            #expect(Set(left).isDisjoint(with: ["cp", "rsync", "gio.txt", "gio-preserve.txt"]), "\(left)")
        }
    }

    /// The modes say "yours to change" so that copies are; the mount refuses every change all the same, to the
    /// user as to root: each mutating syscall (create, mkdir, unlink, rename, chmod, append, truncating and plain
    /// truncate, rmdir, symlink) reaches FUSEKit's handler through the kernel and libfuse and fails with `EROFS`.
    @Test func theMountStaysReadOnly() async throws {
        try await MountedCampus.with(allowOther: true) { campus in
            let course = campus.path(Self.course)
            let readme = campus.path(Self.readme)
            let empty = campus.path(Self.course + "/Leerer Ordner")
            let script = """
                stat -c %a \(readme) \(course)
                test -w \(readme) || echo not writable
                test -w \(course) || echo folder not writable
                try() { "$@" 2>&1 | sed 's/.*: //'; }
                try touch \(course)/new.txt
                try mkdir \(course)/new
                try rm -f \(readme)
                try mv \(readme) \(course)/moved.txt
                try chmod 600 \(readme)
                try sh -c 'echo x >> \(readme)'
                try sh -c 'echo x > \(readme)'
                try truncate -s 0 \(readme)
                try rmdir \(empty)
                try ln -s x \(course)/link
                """
            for who in ["", Self.user] {
                let result = try await shell("\(who) bash -c \(quoted(script))", timeout: 60)
                #expect(
                    result.lines == ["644", "755", "not writable", "folder not writable"]
                        + Array(repeating: "Read-only file system", count: 10), "\(who): \(result.stderr)")
            }
            #expect(try await shell("cat \(readme)").status == 0)
        }
    }
}
