import AsyncHelpers
import ContentCache
import FUSEKit
import Foundation
import Glibc
import MetadataStore
import StudIPKit
import Synchronization
import Uploading

/// A mounted CampusFS: the store and the cache served through one FUSE session whose loop runs on a thread of
/// its own.
///
/// ```swift
/// let mount = try CampusMount(store: store, cacheDirectory: dir, downloader: downloader)
/// try mount.start(at: "/home/me/Uni")
/// mount.apply(report.summary)   // after each refresh
/// mount.stop()
/// ```
public final class CampusMount: Sendable {
    public enum MountError: Error, Sendable, CustomStringConvertible {
        case alreadyStarted
        case session(FUSEKitError)
        case cache(ContentCacheError)
        case threadStartFailed

        public var description: String {
            switch self {
            case .alreadyStarted: "this mount was started before"
            case .session(.mountFailed(_, let reason)) where reason.contains("/dev/fuse"):
                "\(reason) (the fuse3 package provides /dev/fuse and fusermount3; your user must be allowed to use them)"
            case .session(.mountFailed(_, let reason)) where !reason.isEmpty: reason
            case .session(.mountFailed): "the kernel refused the mount; see the daemon's log"
            case .session(let error): "FUSE: \(error)"
            case .cache(let error): "content cache: \(error)"
            case .threadStartFailed: "cannot start the FUSE loop's thread"
            }
        }
    }

    /// The kernel settings of docs/mount.md, "Caching model": READDIRPLUS always (attributes with every listing),
    /// OPENDIR skipped (listings cached until invalidated), cached symlinks, more background requests for readahead
    /// that waits on downloads. Not POSIX ACLs: the capability turns the kernel's `default_permissions` check on,
    /// which refuses a student's tags on a read-only document (only root passes it); without it every `ls -l` asks
    /// the daemon for `system.posix_acl_*`, which ``CampusFileSystem`` answers from memory.
    public static let kernelSettings = KernelSettings(
        readDirectoryPlus: .always, cacheSymlinks: true, posixACL: false, skipsOpenDirectory: true, maxBackground: 64)

    /// The kernel's readahead for the mount: 1 MiB READs instead of 256 KiB ones. Measured on a 1 GiB `cat` of a
    /// cached document with the page cache dropped: 0.63–0.77 s at the default 128 KiB, 0.38–0.56 s at 1,024 KiB,
    /// no better at 4,096 KiB (docs/performance.md).
    public static let readaheadKiB = 1024

    public let fileSystem: CampusFileSystem
    private let running = Mutex<(session: FUSESession, finished: DispatchSemaphore)?>(nil)

    /// `workspace`: writing is on (docs/writing.md): mutations change its overlay; without one every mutation
    /// answers `EROFS`.
    public init(fileSystem: CampusFileSystem, workspace: Workspace? = nil) {
        self.fileSystem = fileSystem
        if let workspace { fileSystem.write(through: workspace) }
    }

    /// A mount whose content cache lives in `cacheDirectory` and downloads through `downloader`.
    public convenience init(
        store: MetadataStore, cacheDirectory: String, downloader: any DocumentDownloader,
        cacheConfiguration: ContentCacheConfiguration = ContentCacheConfiguration(), workspace: Workspace? = nil
    ) throws(MountError) {
        // The kernel's readahead reads past a reader that follows a download's stream: those reads wait for the
        // stream rather than fetch ranges (docs/ranges.md, "In the cache").
        var configuration = cacheConfiguration
        configuration.streamWindow = max(
            configuration.streamWindow,
            ContentCacheConfiguration.streamWindow(readahead: Int64(Self.readaheadKiB) << 10))
        let cache: ContentCache
        do throws(ContentCacheError) {
            cache = try ContentCache(directory: cacheDirectory, downloader: downloader, configuration: configuration)
        } catch {
            throw .cache(error)
        }
        self.init(fileSystem: CampusFileSystem(store: store, cache: cache), workspace: workspace)
    }

    /// What reached the filesystem so far.
    public var counters: RequestCounters { fileSystem.counters }

    /// Mounts at `mountpoint` and starts serving; returns once the mount exists (requests that arrive before the
    /// loop runs wait in the kernel). With `exitOnSignals`, SIGINT, SIGTERM and SIGHUP unmount cleanly (one mount
    /// per process may own them: the daemon's). `whenStopping` runs once, on the thread that stops the mount (a
    /// signal's, ``stop(timeout:)``'s caller), before it unmounts. `allowOther` lets other users in (FUSE
    /// `allow_other`; a user's mount needs `user_allow_other` in /etc/fuse.conf): the command never asks for it,
    /// the tests do, to copy out of root's mount as an ordinary user where /dev/fuse is root's alone.
    public func start(
        at mountpoint: String, fileSystemName: String = "campusfs", exitOnSignals: Bool = false,
        allowOther: Bool = false, loop: LoopConfiguration = LoopConfiguration(maxThreads: 16),
        whenStopping: (@Sendable () -> Void)? = nil
    ) throws(MountError) {
        let session: FUSESession
        do throws(FUSEKitError) {
            session = try FUSESession(
                fileSystem: fileSystem,
                // No default_permissions: with it, the kernel lets only root set tags on a read-only document.
                options: MountOptions(
                    fileSystemName: fileSystemName, subtype: "campusfs", defaultPermissions: false,
                    allowOther: allowOther, kernel: Self.kernelSettings))
        } catch {
            throw .session(error)
        }
        let finished = DispatchSemaphore(value: 0)
        try running.withLock { running throws(MountError) in
            guard running == nil else { throw .alreadyStarted }
            do throws(FUSEKitError) {
                try session.mount(at: mountpoint)
                if let whenStopping { session.whenExiting(whenStopping) }
                if exitOnSignals { try session.exitOnTerminationSignals() }
            } catch {
                throw .session(error)
            }
            running = (session, finished)
        }
        fileSystem.attach(session)
        let logger = fileSystem.logger
        let thread = Thread {
            do {
                try session.run(loop)
            } catch {
                logger.error("the FUSE loop ended with \(error)")
            }
            // A latch: every waiter puts the signal back for the next one.
            finished.signal()
        }
        thread.name = "campusfs-fuse"
        thread.start()
        do throws(FUSEKitError) {
            try session.setReadahead(kibibytes: Self.readaheadKiB)
        } catch {
            logger.info(
                "readahead stays at the kernel's default: \(error); only root can raise it (docs/mount.md)")
        }
        do throws(StoreError) {
            try fileSystem.restorePins()
        } catch {
            logger.warning("cannot restore the pins; pinned documents may be evicted: \(error)")
        }
    }

    /// Unmounts and waits (up to `timeout`) for the loop to end. Clients still holding files get `ENOTCONN`.
    /// - Returns: whether the loop ended in time.
    @discardableResult
    public func stop(timeout: Duration = .seconds(5)) -> Bool {
        guard let (session, finished) = running.withLock({ $0 }) else { return true }
        session.exit()
        guard finished.wait(timeout: .now() + timeout.seconds) == .success else { return false }
        finished.signal()
        return true
    }

    /// Waits, without holding a Swift concurrency thread, until the loop has ended (``stop(timeout:)``, a signal,
    /// or an external unmount). Returns at once when the mount never started.
    public func waitUntilFinished() async {
        guard let finished = running.withLock({ $0?.finished }) else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                finished.wait()
                finished.signal()
                continuation.resume()
            }
            thread.name = "campusfs-wait"
            thread.start()
        }
    }

    /// Tells the kernel what a refresh changed (see ``CampusFileSystem/apply(_:session:)``); a no-op before
    /// ``start(at:fileSystemName:loop:)``.
    public func apply(_ summary: RefreshSummary) {
        guard let session = running.withLock({ $0?.session }) else { return }
        fileSystem.apply(summary, session: session)
        // Documents that appeared below a pinned folder, and new versions of pinned ones, download now.
        guard !summary.isEmpty else { return }
        do throws(StoreError) {
            try fileSystem.restorePins()
        } catch {
            fileSystem.logger.warning("cannot refresh the pins after a refresh: \(error)")
        }
    }
}
