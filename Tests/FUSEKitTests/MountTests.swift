import FUSEKit
import Foundation
import TestSupport
import Testing

/// Real kernel mounts of ``ExampleFileSystem``, served in this process and used by client commands in child
/// processes under `timeout`.
@Suite struct MountTests {
    /// `/proc/self/mounts` writes a space in a mountpoint as `\040`: the tests' `isMounted` must still find it,
    /// or their cleanup would leave such a mount behind.
    @Test func mountpointWithASpaceCountsAsMounted() async throws {
        try await withMount(prefix: "fusekit with space") { mount async throws in
            #expect(mount.directory.contains(" "))
            #expect(isMounted(mount.directory))
        }
    }

    @Test func listsNamesAndReportsAttributes() async throws {
        try await withMount { mount async throws in
            let listing = try await shell("ls -a1 '\(mount.directory)'")
            #expect(
                listing.stdout.split(separator: "\n")
                    == [".", "..", "dropped.txt", "hello.txt", "link", "many", "mutable.txt", "slow.txt"])
            let stat = try await shell("stat -c '%s %a %F' '\(mount.path("hello.txt"))' '\(mount.path("many"))'")
            #expect(stat.stdout == "13 644 regular file\n0 755 directory\n")
            #expect(try await shell("readlink '\(mount.path("link"))'").stdout == "hello.txt\n")
        }
    }

    @Test func listsALargeDirectoryInSeveralChunks() async throws {
        try await withMount { mount async throws in
            let listing = try await shell("ls -1 '\(mount.path("many"))'")
            let names = listing.stdout.split(separator: "\n")
            #expect(names.count == ExampleFileSystem.manyCount)
            #expect(Set(names).count == ExampleFileSystem.manyCount)
            #expect(mount.fileSystem.count("readdirplus") + mount.fileSystem.count("readdir") > 2)
        }
    }

    @Test func warmListingsSendNoRequestsWithoutOpendir() async throws {
        let kernel = KernelSettings(readDirectoryPlus: .always, skipsOpenDirectory: true)
        try await withMount(kernel: kernel) { mount async throws in
            let first = try await shell("ls -1 '\(mount.path("many"))' | wc -l")
            #expect(first.stdout == "\(ExampleFileSystem.manyCount)\n")
            #expect(mount.fileSystem.count("readdirplus") > 1)
            // Seen in two of six full parallel runs: the kernel dropped the cached listing between two `ls` (the cause was
            // not found: not memory, not the attributes). A cache that works serves one of three warm listings.
            var cached = false
            for _ in 0..<3 where !cached {
                let listed = mount.fileSystem.count("readdirplus")
                let again = try await shell("ls -1 '\(mount.path("many"))' | wc -l")
                #expect(again.stdout == first.stdout)
                cached = mount.fileSystem.count("readdirplus") == listed
            }
            #expect(cached, "no warm listing came from the cache")
            #expect(mount.fileSystem.count("readdir") == 0)
        }
    }

    @Test func readsFileBytes() async throws {
        try await withMount { mount async throws in
            #expect(try await shell("cat '\(mount.path("link"))'").stdout == ExampleFileSystem.helloText)
            let pread = try await shell(
                "python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); "
                    + "sys.stdout.write(os.pread(fd, 5, 7).decode())' '\(mount.path("hello.txt"))'")
            #expect(pread.stdout == "FUSE!")
        }
    }

    @Test func refusesMutationsWithEROFS() async throws {
        try await withMount { mount async throws in
            let script = """
                import errno, os, sys
                root = sys.argv[1]
                def code(action):
                    try:
                        action()
                        return "ok"
                    except OSError as error:
                        return errno.errorcode[error.errno]
                print(code(lambda: os.close(os.open(root + "/new", os.O_CREAT | os.O_WRONLY))))
                print(code(lambda: os.mkdir(root + "/dir")))
                print(code(lambda: os.unlink(root + "/hello.txt")))
                print(code(lambda: os.rename(root + "/hello.txt", root + "/moved.txt")))
                print(code(lambda: os.symlink("x", root + "/symlink")))
                print(code(lambda: os.truncate(root + "/hello.txt", 0)))
                """
            let result = try await shell("python3 -c '\(script)' '\(mount.directory)'")
            #expect(result.stdout.split(separator: "\n") == ["EROFS", "EROFS", "EROFS", "EROFS", "EROFS", "EROFS"])
            let touch = try await shell("touch '\(mount.path("touched"))'")
            #expect(touch.status != 0)
            #expect(touch.stderr.contains("Read-only file system"))
        }
    }

    @Test func extendedAttributesFollowTheProtocol() async throws {
        try await withMount { mount async throws in
            let script = """
                import ctypes, errno, os, sys
                path = sys.argv[1]
                libc = ctypes.CDLL(None, use_errno=True)
                def code(action):
                    try:
                        return repr(action())
                    except OSError as error:
                        return errno.errorcode[error.errno]
                print(code(lambda: os.getxattr(path, "user.color")))
                print(libc.getxattr(path.encode(), b"user.color", None, 0))
                buffer = ctypes.create_string_buffer(2)
                print(libc.getxattr(path.encode(), b"user.color", buffer, 2), errno.errorcode[ctypes.get_errno()])
                print(code(lambda: os.getxattr(path, "user.missing")))
                print(code(lambda: os.setxattr(path, "user.tags", b"exam,week-3")))
                print(code(lambda: os.setxattr(path, "user.tags", b"x", os.XATTR_CREATE)))
                print(code(lambda: os.setxattr(path, "user.other", b"x", os.XATTR_REPLACE)))
                print(code(lambda: os.setxattr(path, "trusted.x", b"x")))
                print(code(lambda: sorted(os.listxattr(path))))
                print(code(lambda: os.removexattr(path, "user.tags")))
                print(code(lambda: os.getxattr(path, "user.tags")))
                """
            let result = try await shell("python3 -c '\(script)' '\(mount.path("hello.txt"))'")
            #expect(
                result.stdout.split(separator: "\n") == [
                    "b'blue'", "4", "-1 ERANGE", "ENODATA", "None", "EEXIST", "ENODATA", "ENOTSUP",
                    "['user.color', 'user.tags']", "None", "ENODATA",
                ])
            let getfattr = try await shell("getfattr -n user.color --only-values '\(mount.path("hello.txt"))'")
            #expect(getfattr.stdout == "blue")
        }
    }

    @Test func answersFromAnotherTaskLater() async throws {
        try await withMount { mount async throws in
            let result = try await shell(
                "for i in 1 2 3 4 5 6 7 8; do cat '\(mount.path("slow.txt"))' & done; wait")
            #expect(result.stdout == String(repeating: ExampleFileSystem.slowText, count: 8), "\(result.stderr)")
        }
    }

    @Test func aDroppedReplyAnswersEIO() async throws {
        try await withMount { mount async throws in
            let result = try await shell("cat '\(mount.path("dropped.txt"))'")
            #expect(result.status == 1)
            #expect(result.stderr.contains("Input/output error"))
        }
    }

    @Test func invalidationShowsAChangedSizeDespiteLongTimeouts() async throws {
        try await withMount { mount async throws in
            let file = mount.path("mutable.txt")
            #expect(try await shell("stat -c %s '\(file)'; cat '\(file)'").stdout == "5\n12345")
            mount.fileSystem.mutableContent.withLock { $0 = "1234567890" }
            #expect(try await shell("stat -c %s '\(file)'").stdout == "5\n", "the kernel should still trust its cache")
            #expect(try mount.session.invalidateInode(ExampleFileSystem.mutable))
            #expect(try await shell("stat -c %s '\(file)'; cat '\(file)'").stdout == "10\n1234567890")
        }
    }

    @Test func entryInvalidationDropsANegativeDentry() async throws {
        try await withMount { mount async throws in
            let missing = mount.path("missing")
            for _ in 0..<3 { _ = try await shell("stat '\(missing)'") }
            #expect(mount.fileSystem.count("lookup") == 1, "the negative entry should be cached")
            #expect(try mount.session.invalidateEntry(parent: rootInode, name: "missing"))
            _ = try await shell("stat '\(missing)'")
            #expect(mount.fileSystem.count("lookup") == 2)
        }
    }

    /// The kernel lets a daemon only lower readahead at INIT; raising it is a sysfs write that needs root.
    @Test func readaheadIsRaisedThroughTheMountsBDI() async throws {
        try await withMount { mount async throws in
            let file = "/sys/class/bdi/$(mountpoint -d '\(mount.directory)')/read_ahead_kb"
            let before = try await shell("cat \(file)").stdout
            let outcome = await withCheckedContinuation { continuation in
                Thread { [session = mount.session] in
                    continuation.resume(
                        returning: Result { () throws(FUSEKitError) in
                            try session.setReadahead(kibibytes: 1024)
                        })
                }.start()
            }
            let after = try await shell("cat \(file)").stdout
            if geteuid() == 0 {
                #expect(throws: Never.self) { try outcome.get() }
                #expect(before != "1024\n")
                #expect(after == "1024\n")
            } else {
                #expect(throws: FUSEKitError.self) { try outcome.get() }
                #expect(after == before)
            }
        }
    }

    @Test func notificationsAfterUnmountAreRefused() async throws {
        let mount = try InProcessMount()
        await mount.close()
        #expect(throws: FUSEKitError.notMounted) { try mount.session.invalidateInode(ExampleFileSystem.hello) }
    }
}
