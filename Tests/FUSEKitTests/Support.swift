import FUSEKit
import Foundation
import Testing

/// The result of a client command run against a mount.
struct CommandResult: Sendable {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `command` with `sh -c` under `timeout`, in a child process: the serving process must never touch
/// its own mount, or a request it waits on could need the thread it blocks. The wait happens on a thread of its
/// own: on Linux Swift's tasks run on the same dispatch worker threads as `DispatchQueue.global()`, so blocking
/// one of those (or the cooperative pool) would starve the asynchronous replies and the in-process servers of
/// every other test running in parallel.
func shell(_ command: String, timeout: Int = 30) async throws -> CommandResult {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(with: Result { try blockingShell(command, timeout: timeout) })
        }.start()
    }
}

/// ``shell(_:timeout:)`` for cleanup paths that cannot suspend.
func blockingShell(_ command: String, timeout: Int = 30) throws -> CommandResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
    process.arguments = ["-k", "1", String(timeout), "/bin/sh", "-c", command]
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    try process.run()
    let stdout = out.fileHandleForReading.readDataToEndOfFile()
    let stderr = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CommandResult(
        status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
        stderr: String(decoding: stderr, as: UTF8.self))
}

/// Whether anything is mounted at `directory`, from the kernel's own table.
func isMounted(_ directory: String) -> Bool {
    // Read to the end: `String(contentsOfFile:)` stops after one page of a /proc file (4,076 of 10,815 bytes of
    // /proc/self/maps here), so with many mounts the newest were missed.
    let bytes = FileHandle(forReadingAtPath: "/proc/self/mounts").flatMap { try? $0.readToEnd() }
    let table = bytes.map { String(decoding: $0, as: UTF8.self) } ?? ""
    return table.split(separator: "\n").contains { $0.split(separator: " ").dropFirst().first == Substring(directory) }
}

/// A fresh directory under the system's temporary directory (`mktemp -d`).
func makeTemporaryDirectory() throws -> String {
    var template = Array((NSTemporaryDirectory() + "fusekit-XXXXXX").utf8CString)
    guard let pointer = mkdtemp(&template) else { throw POSIXError(.EIO) }
    return String(cString: pointer)
}

/// Lazily unmounts `directory` if something is still mounted there, then removes it.
func removeMountpoint(_ directory: String) {
    if isMounted(directory) {
        _ = try? blockingShell("fusermount3 -u -z '\(directory)' || umount -l '\(directory)'")
    }
    rmdir(directory)
}

/// The example filesystem mounted in this process, its loop on a thread of its own.
final class InProcessMount: Sendable {
    let directory: String
    let fileSystem = ExampleFileSystem()
    let session: FUSESession
    private let finished = DispatchSemaphore(value: 0)

    init(kernel: KernelSettings = KernelSettings()) throws {
        directory = try makeTemporaryDirectory()
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
func withMount(kernel: KernelSettings = KernelSettings(), _ body: (InProcessMount) async throws -> Void) async throws {
    let mount = try InProcessMount(kernel: kernel)
    do {
        try await body(mount)
    } catch {
        await mount.close()
        throw error
    }
    await mount.close()
}
