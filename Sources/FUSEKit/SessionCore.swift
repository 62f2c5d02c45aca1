import CFuse3
import Synchronization

/// The state every request reaches through `fuse_req_userdata`: the filesystem, the negotiated settings and
/// the count of replies not yet sent (the session may only be destroyed when it is 0).
final class SessionCore: Sendable {
    let fileSystem: any FileSystemOperations
    let settings: KernelSettings
    /// Set at INIT when ``KernelSettings/skipsOpenDirectory`` is on and the kernel supports it.
    let skipsOpenDirectory = Atomic<Bool>(false)
    let interrupts = InterruptWatch()
    private let outstanding = Atomic<Int>(0)

    init(fileSystem: any FileSystemOperations, settings: KernelSettings) {
        self.fileSystem = fileSystem
        self.settings = settings
    }

    func replyCreated() {
        outstanding.add(1, ordering: .relaxed)
    }

    func replyFinished() {
        outstanding.subtract(1, ordering: .releasing)
    }

    var outstandingReplies: Int {
        outstanding.load(ordering: .acquiring)
    }

    /// Applies ``KernelSettings`` to what libfuse proposes (its defaults already include async read,
    /// readdirplus, auto-invalidation of data on mtime changes, and parallel directory operations).
    func negotiate(_ connection: inout fuse_conn_info) {
        func use(_ capability: Int32, _ enabled: Bool) {
            let bit = UInt32(capability)
            if enabled, connection.capable & bit != 0 {
                connection.want |= bit
            } else {
                connection.want &= ~bit
            }
        }
        use(FUSE_CAP_ASYNC_READ, settings.asyncRead)
        use(FUSE_CAP_CACHE_SYMLINKS, settings.cacheSymlinks)
        use(FUSE_CAP_READDIRPLUS, settings.readDirectoryPlus != .off)
        use(FUSE_CAP_READDIRPLUS_AUTO, settings.readDirectoryPlus == .automatic)
        // Replies from a descriptor may splice; reading requests by splice only pays for write payloads, which
        // this kind of filesystem refuses.
        use(FUSE_CAP_SPLICE_WRITE, settings.spliceReplies)
        use(FUSE_CAP_SPLICE_READ, false)
        use(FUSE_CAP_SPLICE_MOVE, false)
        use(FUSE_CAP_POSIX_ACL, settings.posixACL)
        let noOpendir = UInt32(FUSE_CAP_NO_OPENDIR_SUPPORT)
        skipsOpenDirectory.store(
            settings.skipsOpenDirectory && connection.capable & noOpendir != 0, ordering: .releasing)
        if let maxReadahead = settings.maxReadahead {
            connection.max_readahead = UInt32(clamping: maxReadahead)
        }
        if let maxBackground = settings.maxBackground {
            connection.max_background = UInt32(clamping: maxBackground)
        }
        fileSystem.initialize(ConnectionInfo(connection))
    }
}
