import CampusFS
import ContentCache
import Foundation
import MetadataStore
import StudIPKit
import Synchronization
import Testing

@testable import StudIPSimulator

/// Real kernel mounts of ``CampusFileSystem`` served in this process, filled by a refresh against the simulator.
/// Every client command runs in a child process under `timeout`: the serving process never touches its own mount.
enum MountHarness {
    struct Output: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String

        var lines: [String] { stdout.split(separator: "\n").map(String.init) }
    }

    enum Failure: Error {
        case noDownloader
        case temporaryDirectory
        case backgroundJob(String)
        case noSuchDocument
    }

    /// Runs `command` with `sh -c` under `timeout` on a thread of its own: blocking a Swift concurrency thread
    /// while the mount's `open`/`read` tasks need one could deadlock a small pool.
    static func shell(_ command: String, timeout: Int = 20) async throws -> Output {
        try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try runBlocking(command, timeout: timeout) })
            }.start()
        }
    }

    private static func runBlocking(_ command: String, timeout: Int) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["-k", "1", String(timeout), "/bin/sh", "-c", command]
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let errors = Thread.detachedRead(err)
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self),
            stderr: String(decoding: errors.wait(), as: UTF8.self))
    }

    /// Starts `sh -c command` in the background and returns its pid; the caller kills it. Python starts it, with
    /// every inherited descriptor closed: a background job of ``shell(_:timeout:)`` would inherit the socket
    /// Foundation's `Process` watches, and the shell would not count as finished until the job ends.
    static func background(_ command: String) async throws -> pid_t {
        let script = """
            import subprocess, sys
            child = subprocess.Popen(["sh", "-c", sys.argv[1]], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True)
            print(child.pid)
            """
        let started = try await shell("python3 -c \(quoted(script)) \(quoted(command))")
        guard let pid = pid_t(started.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw Failure.backgroundJob(started.stderr)
        }
        return pid
    }

    /// Opens `path` (already quoted for the shell) for reading and closes it: "ok", or the errno's name ("EACCES").
    static func openResult(_ path: String, timeout: Int = 30) async throws -> String {
        let script = """
            import errno, os, sys
            try:
                os.close(os.open(sys.argv[1], os.O_RDONLY))
                print("ok")
            except OSError as error:
                print(errno.errorcode[error.errno])
            """
        let result = try await shell("python3 -c \(quoted(script)) \(path)", timeout: timeout)
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether anything is mounted at `directory`, from the kernel's own table.
    static func isMounted(_ directory: String) -> Bool {
        // Read to the end: `String(contentsOfFile:)` stops after one page of a /proc file (4,076 of 10,815 bytes of
        // /proc/self/maps here), so with many mounts the newest were missed.
        let bytes = FileHandle(forReadingAtPath: "/proc/self/mounts").flatMap { try? $0.readToEnd() }
        let table = bytes.map { String(decoding: $0, as: UTF8.self) } ?? ""
        return table.split(separator: "\n").contains {
            $0.split(separator: " ").dropFirst().first == Substring(directory)
        }
    }

    /// A fresh directory under the system's temporary directory (`mktemp -d`).
    static func temporaryDirectory(_ prefix: String) throws -> String {
        var template = Array((NSTemporaryDirectory() + prefix + "-XXXXXX").utf8CString)
        guard let pointer = mkdtemp(&template) else { throw Failure.temporaryDirectory }
        return String(cString: pointer)
    }

    /// Quotes `text` for `sh`.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

extension Thread {
    /// Reads a pipe to its end on another thread, so a child filling both pipes cannot block.
    fileprivate static func detachedRead(_ pipe: Pipe) -> PendingRead {
        let pending = PendingRead()
        Thread { pending.finish(pipe.fileHandleForReading.readDataToEndOfFile()) }.start()
        return pending
    }
}

/// The result of ``Thread/detachedRead(_:)``.
private final class PendingRead: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let data = Mutex(Data())

    func finish(_ value: Data) {
        data.withLock { $0 = value }
        done.signal()
    }

    func wait() -> Data {
        done.wait()
        return data.withLock { $0 }
    }
}

/// A simulator, a refreshed store and CampusFS mounted on them.
struct MountedCampus: Sendable {
    let campus: Campus
    let mount: CampusMount
    let directory: String
    let cacheDirectory: String

    var sim: Simulator { campus.sim }
    var source: any DocumentSource { campus.source }
    var store: MetadataStore { campus.store }

    /// The path of `relative` inside the mount, quoted for `sh`.
    func path(_ relative: String) -> String {
        MountHarness.quoted(directory + "/" + relative)
    }

    /// The document at `relative` (a path below the mount).
    func document(_ relative: String) throws -> DocumentInfo? {
        try campus.document(relative)
    }

    func contentURL(_ documentID: String) -> String {
        campus.contentURL(documentID)
    }

    /// Starts everything, runs `body`, and always unmounts, checking that no mount is left behind.
    static func with(
        _ dataset: Dataset = .fixtures507, flavour: Flavour = .v50, user: String = "test_autor",
        cache: ContentCacheConfiguration = ContentCacheConfiguration(), _ body: (MountedCampus) async throws -> Void
    ) async throws {
        try await Campus.with(dataset, flavour: flavour, user: user) { campus in
            let directory = try MountHarness.temporaryDirectory("campusfs-mount")
            let cacheDirectory = try MountHarness.temporaryDirectory("campusfs-cache")
            defer {
                rmdir(directory)
                try? FileManager.default.removeItem(atPath: cacheDirectory)
            }
            guard let downloader = campus.source.downloader else { throw MountHarness.Failure.noDownloader }
            let mount = try CampusMount(
                store: campus.store, cacheDirectory: cacheDirectory, downloader: downloader, cacheConfiguration: cache)
            try mount.start(at: directory)
            let mounted = MountedCampus(
                campus: campus, mount: mount, directory: directory, cacheDirectory: cacheDirectory)
            do {
                try await body(mounted)
            } catch {
                await mounted.unmount()
                throw error
            }
            await mounted.unmount()
        }
    }

    private func unmount() async {
        // On a thread of its own: the loop may wait for reply tasks that need Swift's cooperative pool.
        let stopped = await withCheckedContinuation { continuation in
            Thread { [mount] in continuation.resume(returning: mount.stop(timeout: .seconds(15))) }.start()
        }
        #expect(stopped, "the FUSE loop did not end within 15 s")
        if MountHarness.isMounted(directory) {
            let quoted = MountHarness.quoted(directory)
            _ = try? await MountHarness.shell("fusermount3 -u -z \(quoted) || umount -l \(quoted)")
        }
        #expect(!MountHarness.isMounted(directory), "a mount was left behind at \(directory)")
    }
}
