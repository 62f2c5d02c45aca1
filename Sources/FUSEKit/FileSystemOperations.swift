import CFuse3
import Glibc

/// A filesystem served by a ``FUSESession``, addressed by inode numbers (libfuse's low-level API).
///
/// ## Answering
/// Every method gets a typed ``Reply`` and must answer it exactly once, either before returning or later
/// from any thread or task. Handlers run on libfuse's worker threads (at most
/// ``LoopConfiguration/maxThreads``), so a handler that waits on the network should start a `Task`, return,
/// and answer from there; a handler that only reads memory or a local database answers at once.
/// Arguments are copies, so they may be used after returning.
///
/// ## Interrupts
/// A process that gets a signal while the kernel waits for its request stays blocked until the answer, so the
/// kernel sends an INTERRUPT. A handler that waits (for the network, for a download slot) registers
/// ``Reply/onInterrupt(_:)`` to stop waiting, typically by cancelling its task, and answers `EINTR`. libfuse
/// calls the handler on the worker thread that read the INTERRUPT.
///
/// ## Testing
/// Replies are answered through a ``ReplySink``: the session's sends to the kernel; `FUSEKitTesting`'s
/// `RecordingReply` records the answer, so an implementation's operations can be called directly in unit tests,
/// interrupts included, and the kernel is needed only for what the kernel does (caching, permissions, signals).
///
/// ## The kernel's caches (what the answers control)
/// - **Names** (dentries): a ``EntryReply/entry(_:)`` is trusted for ``Entry/entryTimeout``, a
///   ``EntryReply/negative(timeout:)`` answer for its timeout. Drop one with
///   ``FUSESession/invalidateEntry(parent:name:)``.
/// - **Attributes**: trusted for ``Entry/attributeTimeout`` or the `timeout` of an attributes reply. Drop them
///   with ``FUSESession/invalidateInode(_:offset:length:)`` (offset -1 drops only attributes).
/// - **Content**: the page cache outlives a close only if `open` answers with `keepCache`; then a warm read
///   sends no READ at all. Drop it with ``FUSESession/invalidateInode(_:offset:length:)``.
/// - **Listings**: cached if `openDirectory` answers with `keepCache` and `cacheDirectory` (both are
///   needed), or always when ``KernelSettings/skipsOpenDirectory`` is set. Drop with `invalidateInode(dir)`.
///
/// A filesystem that knows when its data changes can therefore use timeouts of hours and invalidate
/// explicitly, from outside any request handler (see ``FUSESession``).
///
/// ## Defaults
/// Every method has a default: lookups fail with `ENOENT`, queries the filesystem must supply with
/// `ENOSYS` (as libfuse does for a missing handler), `open`/`release` succeed, and every mutation answers
/// `EROFS`, so a read-only filesystem overrides only what it serves.
public protocol FileSystemOperations: Sendable {
    /// The kernel connected; called once, before any request, with what was negotiated.
    func initialize(_ connection: ConnectionInfo)
    /// The session is being destroyed after unmounting.
    func destroy()

    func lookup(parent: Inode, name: String, reply: EntryReply)
    /// The kernel dropped `lookups` references to `inode` (each entry reply and readdirplus entry added one).
    /// The inode number may be reused once its count reaches 0. No reply: the kernel does not wait.
    func forget(_ inode: Inode, lookups: UInt64)
    /// `file` is set when the kernel asks about an open file (`fstat`).
    func getAttributes(_ inode: Inode, file: FileInfo?, reply: AttributesReply)
    func readLink(_ inode: Inode, reply: LinkReply)
    func open(_ inode: Inode, file: FileInfo, reply: OpenReply)
    /// Reads at most `reply.size` bytes at `offset`; a shorter answer means end of file.
    func read(_ inode: Inode, offset: Int64, file: FileInfo, reply: DataReply)
    /// The last reference to an open file is gone (its error is ignored by the kernel).
    func release(_ inode: Inode, file: FileInfo, reply: StatusReply)
    func openDirectory(_ inode: Inode, file: FileInfo, reply: OpenReply)
    /// Lists `inode` from `offset` (0 or a `nextOffset` handed out before).
    func readDirectory(_ inode: Inode, offset: Int64, file: FileInfo, reply: DirectoryReply)
    /// Like `readDirectory`, with a full entry per name (enabled by ``KernelSettings/readDirectoryPlus``).
    func readDirectoryPlus(_ inode: Inode, offset: Int64, file: FileInfo, reply: DirectoryPlusReply)
    func releaseDirectory(_ inode: Inode, file: FileInfo, reply: StatusReply)
    func statistics(_ inode: Inode, reply: StatisticsReply)
    /// `access(2)` (and `chdir`) for `mask` (`R_OK`, `W_OK`, `X_OK`); asked only of a mount without
    /// ``MountOptions/defaultPermissions``, where the kernel checks nothing itself.
    func access(_ inode: Inode, mask: Int32, reply: StatusReply)

    /// Every name reaches the filesystem (`security.*` and `system.*` too, on every `ls -l`), so refuse
    /// namespaces it does not serve without expensive work. Answering `ENOSYS` disables getxattr for the
    /// whole mount.
    func getExtendedAttribute(_ inode: Inode, name: String, reply: ExtendedAttributeReply)
    func listExtendedAttributes(_ inode: Inode, reply: ExtendedAttributeNamesReply)
    func setExtendedAttribute(
        _ inode: Inode, name: String, value: [UInt8], mode: ExtendedAttributeMode, reply: StatusReply)
    func removeExtendedAttribute(_ inode: Inode, name: String, reply: StatusReply)

    func setAttributes(_ inode: Inode, changes: AttributeChanges, file: FileInfo?, reply: AttributesReply)
    func makeNode(parent: Inode, name: String, mode: mode_t, device: dev_t, reply: EntryReply)
    func makeDirectory(parent: Inode, name: String, mode: mode_t, reply: EntryReply)
    func unlink(parent: Inode, name: String, reply: StatusReply)
    func removeDirectory(parent: Inode, name: String, reply: StatusReply)
    func symlink(target: String, parent: Inode, name: String, reply: EntryReply)
    func rename(parent: Inode, name: String, newParent: Inode, newName: String, flags: UInt32, reply: StatusReply)
    func link(_ inode: Inode, newParent: Inode, newName: String, reply: EntryReply)
    func write(_ inode: Inode, data: [UInt8], offset: Int64, file: FileInfo, reply: WriteReply)
    func create(parent: Inode, name: String, mode: mode_t, file: FileInfo, reply: CreateReply)
    /// Every `close(2)` of a descriptor of an open file (there may be several per open, after `dup`): where a
    /// filesystem reports a write error to the closing process. ``release(_:file:reply:)`` follows the last one.
    func flush(_ inode: Inode, file: FileInfo, reply: StatusReply)
    /// `fsync(2)`/`fdatasync(2)` (`dataOnly`): the file's data must be on disk before the answer.
    func synchronize(_ inode: Inode, dataOnly: Bool, file: FileInfo, reply: StatusReply)
}

extension FileSystemOperations {
    public func initialize(_ connection: ConnectionInfo) {}
    public func destroy() {}

    public func lookup(parent: Inode, name: String, reply: EntryReply) { reply.error(ENOENT) }
    public func forget(_ inode: Inode, lookups: UInt64) {}
    public func getAttributes(_ inode: Inode, file: FileInfo?, reply: AttributesReply) { reply.error(ENOSYS) }
    public func readLink(_ inode: Inode, reply: LinkReply) { reply.error(ENOSYS) }
    public func open(_ inode: Inode, file: FileInfo, reply: OpenReply) { reply.open() }
    public func read(_ inode: Inode, offset: Int64, file: FileInfo, reply: DataReply) { reply.error(ENOSYS) }
    public func release(_ inode: Inode, file: FileInfo, reply: StatusReply) { reply.ok() }
    public func openDirectory(_ inode: Inode, file: FileInfo, reply: OpenReply) { reply.open() }
    public func readDirectory(_ inode: Inode, offset: Int64, file: FileInfo, reply: DirectoryReply) {
        reply.error(ENOSYS)
    }
    public func readDirectoryPlus(_ inode: Inode, offset: Int64, file: FileInfo, reply: DirectoryPlusReply) {
        reply.error(ENOSYS)
    }
    public func releaseDirectory(_ inode: Inode, file: FileInfo, reply: StatusReply) { reply.ok() }
    public func statistics(_ inode: Inode, reply: StatisticsReply) {
        reply.statistics(FileSystemStatistics(blockSize: 512))
    }
    /// Read-only like the other defaults: writing is refused, reading and searching allowed.
    public func access(_ inode: Inode, mask: Int32, reply: StatusReply) {
        if mask & W_OK != 0 { reply.error(EROFS) } else { reply.ok() }
    }

    public func getExtendedAttribute(_ inode: Inode, name: String, reply: ExtendedAttributeReply) {
        reply.error(ENOSYS)
    }
    public func listExtendedAttributes(_ inode: Inode, reply: ExtendedAttributeNamesReply) { reply.error(ENOSYS) }
    public func setExtendedAttribute(
        _ inode: Inode, name: String, value: [UInt8], mode: ExtendedAttributeMode, reply: StatusReply
    ) { reply.error(EROFS) }
    public func removeExtendedAttribute(_ inode: Inode, name: String, reply: StatusReply) { reply.error(EROFS) }

    public func setAttributes(_ inode: Inode, changes: AttributeChanges, file: FileInfo?, reply: AttributesReply) {
        reply.error(EROFS)
    }
    public func makeNode(parent: Inode, name: String, mode: mode_t, device: dev_t, reply: EntryReply) {
        reply.error(EROFS)
    }
    public func makeDirectory(parent: Inode, name: String, mode: mode_t, reply: EntryReply) { reply.error(EROFS) }
    public func unlink(parent: Inode, name: String, reply: StatusReply) { reply.error(EROFS) }
    public func removeDirectory(parent: Inode, name: String, reply: StatusReply) { reply.error(EROFS) }
    public func symlink(target: String, parent: Inode, name: String, reply: EntryReply) { reply.error(EROFS) }
    public func rename(
        parent: Inode, name: String, newParent: Inode, newName: String, flags: UInt32, reply: StatusReply
    ) { reply.error(EROFS) }
    public func link(_ inode: Inode, newParent: Inode, newName: String, reply: EntryReply) { reply.error(EROFS) }
    public func write(_ inode: Inode, data: [UInt8], offset: Int64, file: FileInfo, reply: WriteReply) {
        reply.error(EROFS)
    }
    public func create(parent: Inode, name: String, mode: mode_t, file: FileInfo, reply: CreateReply) {
        reply.error(EROFS)
    }
    /// Nothing was written, so nothing can fail at close.
    public func flush(_ inode: Inode, file: FileInfo, reply: StatusReply) { reply.ok() }
    /// Nothing was written, so nothing is left to sync.
    public func synchronize(_ inode: Inode, dataOnly: Bool, file: FileInfo, reply: StatusReply) { reply.ok() }
}

/// What the kernel and libfuse agreed on at INIT.
public struct ConnectionInfo: Sendable, Hashable {
    public var protocolMajor: UInt32
    public var protocolMinor: UInt32
    /// `FUSE_CAP_*` bits the kernel offers and the ones in use.
    public var capable: UInt32
    public var wanted: UInt32
    public var maxReadahead: UInt32
    public var maxBackground: UInt32

    init(_ connection: fuse_conn_info) {
        protocolMajor = connection.proto_major
        protocolMinor = connection.proto_minor
        capable = connection.capable
        wanted = connection.want
        maxReadahead = connection.max_readahead
        maxBackground = connection.max_background
    }
}
