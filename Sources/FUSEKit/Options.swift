/// How the filesystem is mounted (the `-o` options of `fuse_session_new`).
public struct MountOptions: Sendable, Hashable {
    /// Shown as the source in `/proc/mounts` and `df` (`fsname=`).
    public var fileSystemName: String
    /// Makes the type `fuse.<subtype>` (`subtype=`), so `mount -t fuse.<subtype>` finds the mount.
    public var subtype: String?
    /// Let the kernel check permission bits, so the filesystem need not implement `access`. The kernel then also
    /// refuses `setxattr` of `user.*` attributes to anyone but root on a file without a write bit (the VFS asks for
    /// write permission on the inode): a read-only filesystem with writable attributes turns it off and answers
    /// ``FileSystemOperations/access(_:mask:reply:)`` and every mutation itself.
    public var defaultPermissions: Bool
    /// Let users other than the mounting one in (needs `user_allow_other` in /etc/fuse.conf for non-root).
    public var allowOther: Bool
    /// Mount read-only in the VFS. Off by default: a VFS-level `ro` also refuses `setxattr`, so a filesystem
    /// with writable extended attributes stays read-write and answers `EROFS` itself (the default for every
    /// mutating operation).
    public var readOnly: Bool
    /// libfuse prints every request and reply to stderr.
    public var debug: Bool
    public var kernel: KernelSettings
    /// Further `-o` options, passed through unchanged.
    public var additionalOptions: [String]

    public init(
        fileSystemName: String = "fusekit", subtype: String? = nil, defaultPermissions: Bool = true,
        allowOther: Bool = false, readOnly: Bool = false, debug: Bool = false,
        kernel: KernelSettings = KernelSettings(),
        additionalOptions: [String] = []
    ) {
        self.fileSystemName = fileSystemName
        self.subtype = subtype
        self.defaultPermissions = defaultPermissions
        self.allowOther = allowOther
        self.readOnly = readOnly
        self.debug = debug
        self.kernel = kernel
        self.additionalOptions = additionalOptions
    }

    /// The `-o` list, with libfuse's escaping of commas and backslashes inside values.
    var optionString: String {
        func escaped(_ value: String) -> String {
            String(value.flatMap { $0 == "," || $0 == "\\" ? ["\\", $0] : [$0] })
        }
        var options = ["fsname=" + escaped(fileSystemName)]
        if let subtype { options.append("subtype=" + escaped(subtype)) }
        if defaultPermissions { options.append("default_permissions") }
        if allowOther { options.append("allow_other") }
        if readOnly { options.append("ro") }
        if debug { options.append("debug") }
        return (options + additionalOptions).joined(separator: ",")
    }
}

/// Capabilities negotiated with the kernel at INIT (docs/mount.md, "Caching model"). Timeouts are not here: the
/// low-level API sets them per reply.
public struct KernelSettings: Sendable, Hashable {
    /// How directory listings carry attributes.
    public enum ReadDirectoryPlus: Sendable, Hashable {
        /// Plain READDIR only; every name then costs a LOOKUP.
        case off
        /// The kernel chooses per call (libfuse's default): READDIRPLUS for the first listing, READDIR after.
        case automatic
        /// Always READDIRPLUS; the filesystem need only implement `readDirectoryPlus`.
        case always
    }

    public var readDirectoryPlus: ReadDirectoryPlus
    /// The kernel caches symlink targets in the page cache (`FUSE_CAP_CACHE_SYMLINKS`).
    public var cacheSymlinks: Bool
    /// Several READs of one file may be in flight at once (`FUSE_CAP_ASYNC_READ`).
    public var asyncRead: Bool
    /// The kernel caches "no ACL" per inode, sparing the `system.posix_acl_*` getxattrs of every `ls -l`
    /// (`FUSE_CAP_POSIX_ACL`; implies default permission checks).
    public var posixACL: Bool
    /// Answer OPENDIR with `ENOSYS` when the kernel supports that (`FUSE_CAP_NO_OPENDIR_SUPPORT`, 5.1+): it
    /// then never sends OPENDIR/RELEASEDIR again and caches every listing until `invalidateInode(dir)`.
    /// `openDirectory` and `releaseDirectory` are then not called.
    public var skipsOpenDirectory: Bool
    /// Upper bound for readahead per file in bytes; the per-mount BDI `read_ahead_kb` also caps it.
    public var maxReadahead: Int?
    /// Background requests (readahead, async reads) the kernel keeps in flight (libfuse: 12).
    public var maxBackground: Int?
    /// Replies from a descriptor (``Reply/data(descriptor:offset:count:)``) move the file's pages into `/dev/fuse`
    /// with `splice(2)` (`FUSE_CAP_SPLICE_WRITE`) instead of a `pread` into a buffer and a `writev`. Pages are
    /// copied, never moved (`FUSE_CAP_SPLICE_MOVE` stays off: the pages belong to the page cache of the source file).
    public var spliceReplies: Bool

    public init(
        readDirectoryPlus: ReadDirectoryPlus = .automatic, cacheSymlinks: Bool = true, asyncRead: Bool = true,
        posixACL: Bool = false, skipsOpenDirectory: Bool = false,
        maxReadahead: Int? = nil, maxBackground: Int? = nil, spliceReplies: Bool = true
    ) {
        self.readDirectoryPlus = readDirectoryPlus
        self.cacheSymlinks = cacheSymlinks
        self.asyncRead = asyncRead
        self.posixACL = posixACL
        self.skipsOpenDirectory = skipsOpenDirectory
        self.maxReadahead = maxReadahead
        self.maxBackground = maxBackground
        self.spliceReplies = spliceReplies
    }
}

/// The multi-threaded loop (`fuse_session_loop_mt`).
public struct LoopConfiguration: Sendable, Hashable {
    /// Worker threads reading `/dev/fuse`. Handlers that answer asynchronously free their worker at once, so
    /// a few threads serve many concurrent slow requests.
    public var maxThreads: Int
    /// Idle workers kept; nil keeps libfuse 3.14's default (never reap).
    public var maxIdleThreads: Int?
    /// One `/dev/fuse` descriptor per worker instead of a shared one.
    public var cloneFD: Bool
    /// After unmounting, how long to wait for asynchronous replies still in flight before giving up on
    /// destroying the session (it is then leaked, because a late reply would touch freed memory).
    public var replyGracePeriod: Duration

    public init(
        maxThreads: Int = 16, maxIdleThreads: Int? = nil, cloneFD: Bool = false,
        replyGracePeriod: Duration = .seconds(2)
    ) {
        self.maxThreads = maxThreads
        self.maxIdleThreads = maxIdleThreads
        self.cloneFD = cloneFD
        self.replyGracePeriod = replyGracePeriod
    }
}
