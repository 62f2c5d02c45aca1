import Foundation
import TestSupport
import Testing

@testable import FUSEKit

/// Issue 29: only the requests that can take an interrupt handler (open, opendir, read) are watched for the
/// kernel's INTERRUPT; the many others (lookup, getattr, getxattr, …) take no lock and no dictionary entry for it.
@Suite struct InterruptWatchTests {
    @Test func onlyOpenAndReadAreWatched() async throws {
        try await withMount { mount async throws in
            let interrupts = mount.session.core.interrupts
            let stat = try await shell(
                "stat -c %s '\(mount.path("hello.txt"))' && getfattr --only-values -n user.color "
                    + "'\(mount.path("hello.txt"))'")
            #expect(stat.stdout == "13\nblue", "\(stat.stderr)")
            #expect(mount.fileSystem.count("lookup") > 0)
            #expect(
                interrupts.registrations.load(ordering: .relaxed) == 0,
                "a lookup, a getattr and a getxattr are not watched")

            let cat = try await shell("cat '\(mount.path("slow.txt"))'")
            #expect(cat.stdout == ExampleFileSystem.slowText)
            #expect(mount.fileSystem.count("open") == 1 && mount.fileSystem.count("read") >= 1)
            #expect(
                interrupts.registrations.load(ordering: .relaxed) == mount.fileSystem.count("open")
                    + mount.fileSystem.count("read"))
        }
    }
}
