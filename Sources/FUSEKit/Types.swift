import AsyncHelpers
import CFuse3
import Glibc

/// A kernel node id (`fuse_ino_t`). 1 is the root. A number must never be reused for a different object
/// while the kernel may still hold it (until its last `forget`), or bump ``Entry/generation`` on reuse.
public typealias Inode = UInt64

/// The root directory's inode (`FUSE_ROOT_ID`).
public let rootInode: Inode = 1

/// The attributes the kernel caches for an inode (the fields of `struct stat` a FUSE filesystem controls).
public struct Attributes: Sendable {
    public var inode: Inode
    /// File type and permission bits, e.g. `S_IFREG | 0o444`.
    public var mode: mode_t
    public var linkCount: Int
    public var userID: uid_t
    public var groupID: gid_t
    public var size: Int64
    /// Preferred I/O size reported to `stat`; 0 lets the kernel choose.
    public var blockSize: Int
    public var accessed: timespec
    public var modified: timespec
    public var changed: timespec

    public init(
        inode: Inode, mode: mode_t, linkCount: Int = 1, userID: uid_t = 0, groupID: gid_t = 0, size: Int64 = 0,
        blockSize: Int = 0, accessed: timespec = timespec(), modified: timespec = timespec(),
        changed: timespec = timespec()
    ) {
        self.inode = inode
        self.mode = mode
        self.linkCount = linkCount
        self.userID = userID
        self.groupID = groupID
        self.size = size
        self.blockSize = blockSize
        self.accessed = accessed
        self.modified = modified
        self.changed = changed
    }

    var stat: stat {
        var result = Glibc.stat()
        result.st_ino = ino_t(inode)
        result.st_mode = mode
        result.st_nlink = nlink_t(linkCount)
        result.st_uid = userID
        result.st_gid = groupID
        result.st_size = off_t(size)
        result.st_blksize = blksize_t(blockSize)
        result.st_blocks = blkcnt_t((size + 511) / 512)
        result.st_atim = accessed
        result.st_mtim = modified
        result.st_ctim = changed
        return result
    }
}

/// A `lookup`, `readdirplus` or `create` answer: the node plus how long the kernel may trust it.
///
/// The kernel keeps the name → inode mapping for `entryTimeout` and the attributes for `attributeTimeout`
/// without asking again. Long timeouts are safe when the filesystem invalidates explicitly after a change
/// (``FUSESession/invalidateEntry(parent:name:)``, ``FUSESession/invalidateInode(_:offset:length:)``).
public struct Entry: Sendable {
    public var attributes: Attributes
    /// Distinguishes objects that reused an inode number while the kernel still knew the old one.
    public var generation: UInt64
    public var entryTimeout: Duration
    public var attributeTimeout: Duration

    public init(attributes: Attributes, generation: UInt64 = 0, entryTimeout: Duration, attributeTimeout: Duration) {
        self.attributes = attributes
        self.generation = generation
        self.entryTimeout = entryTimeout
        self.attributeTimeout = attributeTimeout
    }

    var parameters: fuse_entry_param {
        var result = fuse_entry_param()
        result.ino = attributes.inode
        result.generation = generation
        result.attr = attributes.stat
        result.attr_timeout = attributeTimeout.seconds
        result.entry_timeout = entryTimeout.seconds
        return result
    }
}

/// What the handlers of file operations learn about the open file (a copy of `fuse_file_info`, which
/// libfuse frees when the callback returns).
public struct FileInfo: Sendable, Hashable {
    /// The `open(2)` flags (`O_RDONLY`, `O_WRONLY`, `O_TRUNC`, …).
    public var flags: Int32
    /// The handle the filesystem chose in its `open`/`opendir`/`create` reply.
    public var handle: UInt64

    public init(flags: Int32 = O_RDONLY, handle: UInt64 = 0) {
        self.flags = flags
        self.handle = handle
    }

    init(_ raw: UnsafeMutablePointer<fuse_file_info>?) {
        flags = raw?.pointee.flags ?? 0
        handle = raw?.pointee.fh ?? 0
    }
}

/// Who sent a request (`fuse_req_ctx`), copied when the request arrives.
public struct RequestContext: Sendable, Hashable {
    public var userID: uid_t
    public var groupID: gid_t
    public var processID: pid_t
    public var umask: mode_t

    public init(userID: uid_t = 0, groupID: gid_t = 0, processID: pid_t = 0, umask: mode_t = 0) {
        self.userID = userID
        self.groupID = groupID
        self.processID = processID
        self.umask = umask
    }
}

/// The answer to `statfs`.
public struct FileSystemStatistics: Sendable, Hashable {
    public var blockSize: UInt
    public var blocks: UInt
    public var freeBlocks: UInt
    public var availableBlocks: UInt
    public var files: UInt
    public var freeFiles: UInt
    public var maximumNameLength: UInt

    public init(
        blockSize: UInt = 4096, blocks: UInt = 0, freeBlocks: UInt = 0, availableBlocks: UInt = 0, files: UInt = 0,
        freeFiles: UInt = 0, maximumNameLength: UInt = 255
    ) {
        self.blockSize = blockSize
        self.blocks = blocks
        self.freeBlocks = freeBlocks
        self.availableBlocks = availableBlocks
        self.files = files
        self.freeFiles = freeFiles
        self.maximumNameLength = maximumNameLength
    }

    var statvfs: statvfs {
        var result = Glibc.statvfs()
        result.f_bsize = blockSize
        result.f_frsize = blockSize
        result.f_blocks = fsblkcnt_t(blocks)
        result.f_bfree = fsblkcnt_t(freeBlocks)
        result.f_bavail = fsblkcnt_t(availableBlocks)
        result.f_files = fsfilcnt_t(files)
        result.f_ffree = fsfilcnt_t(freeFiles)
        result.f_favail = fsfilcnt_t(freeFiles)
        result.f_namemax = maximumNameLength
        return result
    }
}

/// How a `setxattr` call wants an existing attribute treated (`XATTR_CREATE`, `XATTR_REPLACE`).
public enum ExtendedAttributeMode: Sendable, Hashable {
    /// Create or replace.
    case any
    /// Fail with `EEXIST` if the attribute exists.
    case create
    /// Fail with `ENODATA` if the attribute does not exist.
    case replace

    init(flags: Int32) {
        if flags & Int32(XATTR_CREATE) != 0 {
            self = .create
        } else if flags & Int32(XATTR_REPLACE) != 0 {
            self = .replace
        } else {
            self = .any
        }
    }
}

/// The attributes a `setattr` request wants changed (`FUSE_SET_ATTR_*`); nil means unchanged.
public struct AttributeChanges: Sendable, Hashable {
    public var mode: mode_t?
    public var userID: uid_t?
    public var groupID: gid_t?
    public var size: Int64?
    /// The access and modification times `utimensat(2)`/`touch` set.
    public var accessed: TimeChange?
    public var modified: TimeChange?

    /// A time a `setattr` sets: a given one, or the time of the request (`UTIME_NOW`).
    public enum TimeChange: Sendable, Hashable {
        case now
        case at(seconds: Int, nanoseconds: Int)
    }

    public init(
        mode: mode_t? = nil, userID: uid_t? = nil, groupID: gid_t? = nil, size: Int64? = nil,
        accessed: TimeChange? = nil, modified: TimeChange? = nil
    ) {
        self.mode = mode
        self.userID = userID
        self.groupID = groupID
        self.size = size
        self.accessed = accessed
        self.modified = modified
    }

    init(_ attributes: UnsafeMutablePointer<stat>?, mask: Int32) {
        let value = attributes?.pointee ?? stat()
        func time(_ set: Int32, _ now: Int32, _ value: timespec) -> TimeChange? {
            if mask & now != 0 { return .now }
            return mask & set != 0 ? .at(seconds: value.tv_sec, nanoseconds: value.tv_nsec) : nil
        }
        self.init(
            mode: mask & FUSE_SET_ATTR_MODE != 0 ? value.st_mode : nil,
            userID: mask & FUSE_SET_ATTR_UID != 0 ? value.st_uid : nil,
            groupID: mask & FUSE_SET_ATTR_GID != 0 ? value.st_gid : nil,
            size: mask & FUSE_SET_ATTR_SIZE != 0 ? Int64(value.st_size) : nil,
            accessed: time(FUSE_SET_ATTR_ATIME, FUSE_SET_ATTR_ATIME_NOW, value.st_atim),
            modified: time(FUSE_SET_ATTR_MTIME, FUSE_SET_ATTR_MTIME_NOW, value.st_mtim))
    }
}

/// Errors of the session itself; filesystem operations answer with errno values instead.
public enum FUSEKitError: Error, Hashable {
    /// `fuse_session_new` refused the options (libfuse logged why).
    case sessionCreationFailed
    /// `reason`: what libfuse or `fusermount3` wrote to standard error, e.g. "fuse: failed to open /dev/fuse:
    /// Permission denied".
    case mountFailed(mountpoint: String, reason: String)
    /// The session is not mounted (not yet, or no longer).
    case notMounted
    /// `run` was called while the loop was already running, or after it finished.
    case notRunnable
    /// The loop ended with this errno.
    case loopFailed(errno: Int32)
    /// A notification was refused with this errno.
    case notifyFailed(errno: Int32)
    /// Installing the termination signal handlers failed with this errno.
    case signalSetupFailed(errno: Int32)
    /// The readahead of the mount could not be set: `path` failed with this errno (`EACCES` without root).
    case readaheadFailed(path: String, errno: Int32)
}

/// Writes one line through libfuse's logger (stderr unless the application installed `fuse_set_log_func`).
func log(_ level: fuse_log_level, _ message: String) {
    cfuse_log(level, "fusekit: " + message)
}
