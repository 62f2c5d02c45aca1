import FUSEKit
import Foundation
import TestSupport
import Testing

/// Lazily unmounts `directory` if something is still mounted there, then removes it.
func removeMountpoint(_ directory: String) {
    if isMounted(directory) {
        _ = try? blockingShell("fusermount3 -u -z \(quoted(directory)) || umount -l \(quoted(directory))")
    }
    rmdir(directory)
}

/// The example filesystem mounted in this process, its loop on a thread of its own.
final class InProcessMount: Sendable {
    let directory: String
    let fileSystem = ExampleFileSystem()
    let session: FUSESession
    private let finished = DispatchSemaphore(value: 0)

    init(kernel: KernelSettings = KernelSettings(), prefix: String = "fusekit") throws {
        directory = try temporaryDirectory(prefix)
        do {
            session = try FUSESession(
                fileSystem: fileSystem,
                options: MountOptions(fileSystemName: "fusekit-test", subtype: "fusekittest", kernel: kernel))
            try session.mount(at: directory)
        } catch {
            removeMountpoint(directory)
            throw error
        }
        let thread = Thread { [session, finished] in
            do {
                try session.run(LoopConfiguration(maxThreads: 4))
            } catch {
                Issue.record(error)
            }
            finished.signal()
        }
        thread.start()
    }

    func path(_ name: String) -> String {
        directory + "/" + name
    }

    /// Ends the loop, which unmounts; never leaves a mount behind, even if the loop does not end. The wait runs
    /// on a thread of its own: blocking Swift's cooperative pool (two threads here) would starve the asynchronous
    /// replies the loop may still wait for, and every in-process server of the tests running beside this one.
    func close() async {
        let ended = await withCheckedContinuation { continuation in
            Thread { [self] in
                session.exit()
                let ended = finished.wait(timeout: .now() + 15) == .success
                removeMountpoint(directory)
                continuation.resume(returning: ended)
            }.start()
        }
        #expect(ended, "the loop did not end within 15 s")
        #expect(!isMounted(directory))
    }
}

/// Runs `body` against a fresh in-process mount and always cleans it up.
func withMount(
    kernel: KernelSettings = KernelSettings(), prefix: String = "fusekit",
    _ body: (InProcessMount) async throws -> Void
) async throws {
    let mount = try InProcessMount(kernel: kernel, prefix: prefix)
    do {
        try await body(mount)
    } catch {
        await mount.close()
        throw error
    }
    await mount.close()
}
