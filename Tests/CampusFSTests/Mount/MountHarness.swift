import CampusFS
import ContentCache
import Daemon
import Foundation
import MetadataStore
import StudIPKit
import TestSupport
import Testing

@testable import StudIPSimulator

/// Real kernel mounts of ``CampusFileSystem`` served in this process, filled by a refresh against the simulator.
/// Every client command runs in a child process under `timeout`: the serving process never touches its own mount.
enum MountHarness {
    enum Failure: Error {
        case noDownloader
        case backgroundJob(String)
        case noSuchDocument
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

    /// Polls `value` until `done` holds or `limit` has passed, and returns the last value: for what the daemon or
    /// the filesystem finishes behind a returned command (a highlight clears a quiet second after a burst of opens,
    /// a failed course shows in `status`). On a loaded 2-core CI machine a highlight once took more than 4 s, so
    /// the limit is generous; a passing test still returns as soon as the value settles.
    static func settled<T>(
        within limit: Duration = .seconds(20), _ value: () async throws -> T, until done: (T) -> Bool
    ) async throws -> T {
        let deadline = ContinuousClock.now + limit
        var current = try await value()
        while !done(current), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            current = try await value()
        }
        return current
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
        quoted(directory + "/" + relative)
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
        cache: ContentCacheConfiguration = ContentCacheConfiguration(), allowOther: Bool = false,
        _ body: (MountedCampus) async throws -> Void
    ) async throws {
        try await Campus.with(dataset, flavour: flavour, user: user) { campus in
            let directory = try temporaryDirectory("campusfs-mount")
            let cacheDirectory = try temporaryDirectory("campusfs-cache")
            defer {
                rmdir(directory)
                try? FileManager.default.removeItem(atPath: cacheDirectory)
            }
            guard let downloader = campus.source.downloader else { throw MountHarness.Failure.noDownloader }
            let mount = try CampusMount(
                store: campus.store, cacheDirectory: cacheDirectory, downloader: downloader, cacheConfiguration: cache)
            try mount.start(at: directory, allowOther: allowOther)
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
        if isMounted(directory) {
            _ = try? await shell("fusermount3 -u -z \(quoted(directory)) || umount -l \(quoted(directory))")
        }
        #expect(!isMounted(directory), "a mount was left behind at \(directory)")
    }
}
