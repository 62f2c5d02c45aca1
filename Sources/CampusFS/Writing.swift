import ContentCache
import FUSEKit
import Foundation
import Glibc
import MetadataStore
import Synchronization
import SystemSupport
import Uploading

/// The write path (docs/writing.md; docs/mount.md, "Writing"): with a ``Workspace`` (uploads on), `create`, `write`,
/// `setattr`, `rename`, `unlink`, `mkdir` and `rmdir` change its overlay, and the tree shows drafts beside the store's
/// nodes; without one, every mutation answers `EROFS` as before. Every handler here answers on the libfuse worker
/// (file I/O and synced store writes may block there, docs/threads.md), except an open for writing of a document
/// whose bytes must first be downloaded, which answers from a task.
final class Writing: Sendable {
    let workspace: Workspace
    /// Open drafts by handle. Handles have the top bit set, so they never meet the documents' (``CampusFileSystem``
    /// counts those from 1).
    private let handles = Mutex<(last: UInt64, open: [UInt64: DraftHandle])>((1 << 62, [:]))

    struct DraftHandle: Sendable {
        let descriptor: Int32
        let draftID: Int64
        let writes: Bool
    }

    init(workspace: Workspace) {
        self.workspace = workspace
    }

    /// `writes`: the open the workspace claimed for it (``Workspace/openForWriting(_:truncating:)``), which
    /// ``release(_:)`` ends.
    func register(_ descriptor: Int32, draft: Int64, writes: Bool) -> UInt64 {
        handles.withLock { state in
            state.last += 1
            state.open[state.last] = DraftHandle(descriptor: descriptor, draftID: draft, writes: writes)
            return state.last
        }
    }

    func handle(_ id: UInt64) -> DraftHandle? {
        handles.withLock { $0.open[id] }
    }

    func release(_ id: UInt64) -> Bool {
        guard let handle = handles.withLock({ $0.open.removeValue(forKey: id) }) else { return false }
        close(handle.descriptor)
        if handle.writes { workspace.closed(handle.draftID) }
        return true
    }
}

/// `utimensat`'s special nanoseconds (sys/stat.h), which Swift does not import.
private let utimeNow = (1 << 30) - 1
private let utimeOmit = (1 << 30) - 2

/// `renameat2`'s flags (linux/fs.h).
private let renameNoReplace: UInt32 = 1
private let renameExchange: UInt32 = 2

extension CampusFileSystem {
    /// Makes the mount writable through `workspace` (docs/writing.md, "When writing is on"); ``CampusMount`` calls it
    /// when it is given one.
    public func write(through workspace: Workspace) {
        writing.withLock { $0 = Writing(workspace: workspace) }
        workspace.contentETags { [cache] id, version in cache.cachedETag(of: CacheDocument(id: id, version: version)) }
        workspace.newVersionsMade { [cache] id in await cache.remove(documentIDs: [id]) }
        let logger = logger
        workspace.invalidations { [weak self] invalidation in
            guard let self, let session = self.session.withLock({ $0 }) else { return }
            // Outside any request: the outbox's or the settling task. A notification may block on /dev/fuse.
            BlockingPool.shared.submit {
                for name in invalidation.names {
                    _ = try? session.invalidateEntry(parent: Inode(name.parent), name: name.name)
                }
                for inode in invalidation.inodes {
                    do throws(FUSEKitError) {
                        try session.invalidateInode(Inode(inode))
                    } catch {
                        logger.debug("cannot invalidate inode \(inode): \(error)")
                    }
                }
            }
        }
    }

    var writer: Writing? { writing.withLock { $0 } }

    private func storing<T>(_ body: () throws(StoreError) -> T) throws(WorkspaceError) -> T {
        do throws(StoreError) {
            return try body()
        } catch {
            throw .store(error)
        }
    }

    /// Logs which rule refused a change and answers its errno.
    private func refuse<Kind>(_ reply: Reply<Kind>, _ operation: String, _ error: WorkspaceError) {
        switch error {
        case .refused(let errno, let rule) where errno == EACCES || errno == EROFS || errno == EXDEV:
            logger.notice("\(operation) refused: \(rule)")
        case .refused(_, let rule): logger.info("\(operation): \(rule)")
        default: logger.error("\(operation) failed: \(error)")
        }
        reply.error(error.errorNumber)
    }

    // MARK: - The overlay in the tree

    /// The attributes of a draft, from its file; `inode`: the number the kernel knows it by.
    func attributes(ofDraft draft: DraftRecord, inode: Inode, workspace: Workspace) -> Attributes? {
        guard let id = draft.id else { return nil }
        var mode: mode_t = draft.isFolder ? S_IFDIR | 0o755 : S_IFREG | (draft.state == .handedIn ? 0o444 : 0o644)
        var size: Int64 = 0
        var time = timespec(tv_sec: Int(draft.modified.timeIntervalSince1970), tv_nsec: 0)
        if !draft.isFolder {
            var status = stat()
            guard stat(workspace.path(ofDraft: id), &status) == 0 else { return nil }
            size = Int64(status.st_size)
            time = status.st_mtim
            mode = S_IFREG | (draft.state == .handedIn ? 0o444 : 0o644)
        }
        return Attributes(
            inode: inode, mode: mode, linkCount: 1, userID: owner.user, groupID: owner.group, size: size,
            accessed: time, modified: time, changed: time)
    }

    /// A draft's entry: its attributes change with every write, so the kernel asks again after a second.
    func entry(ofDraft draft: DraftRecord, workspace: Workspace) -> Entry? {
        guard let id = draft.id,
            let attributes = attributes(
                ofDraft: draft, inode: Inode(Workspace.inode(ofDraft: id)), workspace: workspace)
        else { return nil }
        return Entry(attributes: attributes, entryTimeout: timeouts.entry, attributeTimeout: .seconds(1))
    }

    /// What the overlay answers a lookup with.
    enum Overlaid {
        case entry(Entry)
        /// Hidden here: renamed away or deleted locally. Not remembered by the kernel, since it may come back.
        case hidden
        case failed
        /// What the store has there, as the overlay looked it up (nil: nothing), so the lookup asks once.
        case store(Node?)
    }

    /// What the overlay answers a lookup with; nil: the store answers.
    func overlaidLookup(parent: Inode, name: String) throws(StoreError) -> Overlaid? {
        guard let workspace = writer?.workspace, !workspace.isEmpty else { return nil }
        switch workspace.item(parent: Int64(parent), name: name) {
        case .draft(let draft):
            return entry(ofDraft: draft, workspace: workspace).map { .entry($0) } ?? .failed
        case .document(let inode):
            guard let node = try store.node(inode: inode) else { return .hidden }
            return .entry(entry(for: node))
        case nil:
            let node = try store.lookup(parent: Int64(parent), name: name)
            return node.map(workspace.hides) == true ? .hidden : .store(node)
        }
    }

    /// The attributes of a draft's inode, or of a store document written over by a draft in its place.
    func overlaidAttributes(_ inode: Inode) throws(StoreError) -> Attributes? {
        guard let workspace = writer?.workspace, !workspace.isEmpty else { return nil }
        if let draft = workspace.draft(inode: Int64(inode)) {
            return attributes(ofDraft: draft, inode: inode, workspace: workspace)
        }
        // Only drafts of documents cover a store node (a handed-in homework copy never does): no second query.
        guard workspace.coversDocuments, let node = try store.node(inode: Int64(inode)), node.item == .document,
            let draft = workspace.draft(covering: node)
        else { return nil }
        return attributes(ofDraft: draft, inode: inode, workspace: workspace)
    }

    /// The overlay's entries in a directory: drafts, and the store's documents renamed or moved there.
    func overlaidEntries(of directory: Inode) throws(StoreError) -> [(name: String, entry: Entry)] {
        guard let workspace = writer?.workspace, !workspace.isEmpty else { return [] }
        var entries: [(String, Entry)] = []
        for (name, item) in workspace.items(in: Int64(directory)) {
            switch item {
            case .draft(let draft):
                if let entry = entry(ofDraft: draft, workspace: workspace) { entries.append((name, entry)) }
            case .document(let inode):
                if let node = try store.node(inode: inode) { entries.append((name, entry(for: node))) }
            }
        }
        return entries
    }

    /// Whether the store's `node` is not shown where the store has it.
    func isHidden(_ node: Node) -> Bool {
        guard let workspace = writer?.workspace, !workspace.isEmpty else { return false }
        return workspace.hides(node)
    }

    /// Whether `inode` is a folder made locally (listed from the overlay alone).
    func isLocalFolder(_ inode: Inode) -> Bool {
        writer?.workspace.draft(inode: Int64(inode))?.isFolder ?? false
    }

    /// `access(W_OK)`: per folder and document, as Stud.IP allows (docs/writing.md, "When writing is on").
    func writeAccess(_ inode: Inode) -> Int32 {
        guard let workspace = writer?.workspace else { return EROFS }
        if let draft = workspace.draft(inode: Int64(inode)) { return draft.state == .handedIn ? EACCES : 0 }
        do throws(StoreError) {
            if let access = try store.folderAccess(inode: Int64(inode)) {
                return access.permissions.isWritable || access.permissions.isSubfolderAllowed ? 0 : EACCES
            }
            if let document = try store.document(inode: Int64(inode)) { return document.isWritable ? 0 : EACCES }
            return EROFS
        } catch {
            logger.error("metadata store: \(error)")
            return EIO
        }
    }

    // MARK: - Opening, reading and writing drafts

    /// Opens a draft, or one's own document for writing (a draft in its place); nil when the store's open answers
    /// (a read of a document without a draft).
    func openOverlaid(_ inode: Inode, file: FileInfo, reply: OpenReply) -> Bool {
        let writes = file.flags & O_ACCMODE != O_RDONLY
        guard let writer else {
            if writes || file.flags & O_TRUNC != 0 { reply.error(EROFS) }
            return writes || file.flags & O_TRUNC != 0
        }
        let workspace = writer.workspace
        let truncating = file.flags & O_TRUNC != 0
        // A read with nothing overlaid is the store's, without a second query.
        if !writes, !truncating, workspace.isEmpty { return false }
        do throws(WorkspaceError) {
            var draft = workspace.draft(inode: Int64(inode))
            var node: Node?
            if draft == nil {
                node = try storing { () throws(StoreError) in try store.node(inode: Int64(inode)) }
                if let node, node.item == .document { draft = workspace.draft(covering: node) }
            }
            if let found = draft {
                if writes || truncating { draft = try workspace.openForWriting(found, truncating: truncating) }
                guard let draft, let id = draft.id else { return false }
                openDraft(id, writes: writes, truncating: truncating, writer: writer, reply: reply)
                return true
            }
            guard writes || truncating else { return false }
            guard let node, node.item == .document else {
                throw .refused(
                    errno: EROFS, rule: "inode \(inode) is no Stud.IP document (generated files are read-only)")
            }
            if truncating {
                let made = try workspace.openForWriting(node, content: nil)
                guard let id = made.id else { return false }
                openDraft(id, writes: writes, truncating: false, writer: writer, reply: reply)
                return true
            }
            try openFromDownload(node, writes: writes, writer: writer, reply: reply)
            return true
        } catch {
            refuse(reply, "open of inode \(inode) for writing", error)
            return true
        }
    }

    /// Opens draft `id`; for writing or truncating the workspace claimed the open, which this hands to the handle
    /// (or ends, when the open fails).
    private func openDraft(_ id: Int64, writes: Bool, truncating: Bool, writer: Writing, reply: OpenReply) {
        let claimed = writes || truncating
        let path = writer.workspace.path(ofDraft: id)
        // `O_TRUNC` changes the bytes: marked before, as a write is (``Workspace/touched(_:)``).
        if truncating {
            do throws(WorkspaceError) {
                try writer.workspace.touched(id)
            } catch {
                writer.workspace.closed(id)
                return refuse(reply, "open of a draft", error)
            }
        }
        let descriptor = Glibc.open(path, (writes ? O_RDWR : O_RDONLY) | (truncating ? O_TRUNC : 0) | O_CLOEXEC)
        guard descriptor >= 0 else {
            let failure = errno
            if claimed { writer.workspace.closed(id) }
            // Dropped since the kernel looked it up (confirmed, and the store shows what Stud.IP made): `ESTALE`
            // makes the kernel look the name up again, as it does for a network filesystem's stale handle.
            if failure == ENOENT, writer.workspace.draft(inode: Workspace.inode(ofDraft: id)) == nil {
                return reply.error(ESTALE)
            }
            logger.error("cannot open the draft \(path): \(String(cString: strerror(failure)))")
            return reply.error(EIO)
        }
        let handle = writer.register(descriptor, draft: id, writes: claimed)
        if !reply.open(handle: handle) { _ = writer.release(handle) }
    }

    /// Opening one's own document for writing without `O_TRUNC`: its bytes come through the content cache (a
    /// download if need be) into the draft, then the open answers, from a task.
    private func openFromDownload(_ node: Node, writes: Bool, writer: Writing, reply: OpenReply) throws(WorkspaceError)
    {
        guard
            let document = try storing({ () throws(StoreError) in
                try store.document(inode: node.inode)
            })
        else { throw .refused(errno: EROFS, rule: "\(node.name) is no Stud.IP document") }
        guard document.isWritable else {
            throw .refused(
                errno: EACCES, rule: "Stud.IP does not let you change document \(document.id) (is-writable is off)")
        }
        let workspace = writer.workspace
        let staging = workspace.directory + "/download-\(node.inode)-\(UUID().uuidString)"
        let task = Task { [cache, logger] in
            do {
                let handle = try await cache.open(CacheDocument(id: document.id, version: document.version))
                defer { cache.release(handle) }
                let output = try await BlockingPool.shared.run { () throws(WorkspaceError) -> Int32 in
                    let descriptor = Glibc.open(staging, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
                    guard descriptor >= 0 else { throw .file(path: staging, operation: "create", errno: errno) }
                    return descriptor
                }
                defer { close(output) }
                var offset: Int64 = 0
                while offset < handle.size {
                    let bytes = try await cache.read(handle, offset: offset, length: 1 << 20)
                    guard !bytes.isEmpty else { break }
                    let at = offset
                    try await BlockingPool.shared.run { () throws(WorkspaceError) in
                        let written = bytes.withUnsafeBytes { pwrite(output, $0.baseAddress, $0.count, off_t(at)) }
                        guard written == bytes.count else {
                            throw .file(path: staging, operation: "write", errno: errno)
                        }
                    }
                    offset += Int64(bytes.count)
                }
                // The bytes' own ETag: an offline open may have served an older version than the store names.
                let etag = handle.etag
                let draft = try await BlockingPool.shared.run { () throws(WorkspaceError) -> DraftRecord in
                    defer { Glibc.unlink(staging) }
                    return try workspace.openForWriting(node, content: staging, contentETag: etag)
                }
                guard let id = draft.id else { return reply.error(EIO) }
                await BlockingPool.shared.run {
                    self.openDraft(id, writes: writes, truncating: false, writer: writer, reply: reply)
                }
            } catch {
                await BlockingPool.shared.run { _ = Glibc.unlink(staging) }
                switch error {
                case let error as WorkspaceError: self.refuse(reply, "open of \(node.name) for writing", error)
                case let error as ContentCacheError:
                    logger.warning("open of \(node.name) for writing: its bytes could not be fetched: \(error)")
                    reply.error(error.errorNumber)
                default:
                    logger.error("open of \(node.name) for writing failed: \(error)")
                    reply.error(EIO)
                }
            }
        }
        reply.onInterrupt { task.cancel() }
    }

    func readDraft(_ handle: UInt64, offset: Int64, reply: DataReply) -> Bool {
        guard let open = writer?.handle(handle) else { return false }
        var status = stat()
        guard fstat(open.descriptor, &status) == 0 else {
            reply.error(EIO)
            return true
        }
        let count = max(0, min(Int64(reply.size), Int64(status.st_size) - offset))
        reply.data(descriptor: open.descriptor, offset: offset, count: Int(count))
        return true
    }

    func releaseDraft(_ handle: UInt64) -> Bool {
        writer?.release(handle) ?? false
    }

    public func write(_ inode: Inode, data: [UInt8], offset: Int64, file: FileInfo, reply: WriteReply) {
        guard let writer else { return reply.error(EROFS) }
        guard let open = writer.handle(file.handle), open.writes else { return reply.error(EBADF) }
        // Before the bytes: the mark that the draft is being written is durable before any of them land.
        do throws(WorkspaceError) {
            try writer.workspace.touched(open.draftID)
        } catch {
            return refuse(reply, "write of draft \(open.draftID)", error)
        }
        let written = data.withUnsafeBytes { pwrite(open.descriptor, $0.baseAddress, $0.count, off_t(offset)) }
        guard written >= 0 else {
            let error = errno
            logger.error("cannot write to draft \(open.draftID): \(String(cString: strerror(error)))")
            writer.workspace.writeFailed(open.draftID, errno: error)
            return reply.error(error == ENOSPC || error == EDQUOT ? error : EIO)
        }
        reply.written(written)
    }

    /// Writes go to the draft's file at once, so a close has nothing left to report.
    public func flush(_ inode: Inode, file: FileInfo, reply: StatusReply) {
        reply.ok()
    }

    /// The draft's bytes on disk before the answer (an editor's `fsync` before its rename).
    public func synchronize(_ inode: Inode, dataOnly: Bool, file: FileInfo, reply: StatusReply) {
        guard let open = writer?.handle(file.handle) else { return reply.ok() }
        let result = dataOnly ? fdatasync(open.descriptor) : fsync(open.descriptor)
        reply.error(result == 0 ? 0 : EIO)
    }

    /// Truncation and times change the draft's file; modes and owners are ignored (a draft is the user's, and
    /// `cp -p`/`rsync -a` set them on every copy); a store document's times likewise. Truncating one's own document
    /// to nothing makes an empty draft of it (as `open` with `O_TRUNC` does).
    public func setAttributes(_ inode: Inode, changes: AttributeChanges, file: FileInfo?, reply: AttributesReply) {
        guard let writer else { return reply.error(EROFS) }
        let workspace = writer.workspace
        do throws(WorkspaceError) {
            var draft = workspace.draft(inode: Int64(inode))
            let node = try storing { () throws(StoreError) in try store.node(inode: Int64(inode)) }
            if draft == nil, let node, node.item == .document { draft = workspace.draft(covering: node) }
            let handle = file.map { writer.handle($0.handle) } ?? nil
            // A length changed without an open (`truncate(2)`) opens the draft for that moment, as an open would.
            var claimed: Int64?
            defer { if let claimed { workspace.closed(claimed) } }
            if draft == nil, let size = changes.size, let node, node.item == .document {
                guard size == 0 else {
                    throw .refused(errno: EACCES, rule: "a document is truncated only to nothing outside an open")
                }
                draft = try workspace.openForWriting(node, content: nil)
                claimed = draft?.id
            } else if let found = draft, changes.size != nil, handle == nil {
                draft = try workspace.openForWriting(found, truncating: false)
                claimed = draft?.id
            }
            guard let current = draft, let id = current.id else {
                // Times and modes of the store's nodes are not kept; accepted where one may write, refused elsewhere.
                guard let node else { return reply.error(ENOENT) }
                let allowed = writeAccess(inode)
                guard allowed == 0 else { throw .refused(errno: allowed, rule: "\(node.name) is not yours to change") }
                return reply.attributes(attributes(of: node), timeout: timeouts.attributes)
            }
            // Times alone are no change of the bytes (`gio copy` sets them after the close, `cp -a` on the open file).
            if current.state == .editing {
                // Marked first, as a write is (``Workspace/touched(_:)``).
                if changes.size != nil { try workspace.touched(current.id ?? id) }
                try change(current, changes, handle: handle, workspace: workspace)
            }
            let shown = Inode(
                current.id.map { inode > Workspace.inodeBase ? Workspace.inode(ofDraft: $0) : Int64(inode) }
                    ?? Int64(inode))
            guard let attributes = attributes(ofDraft: current, inode: shown, workspace: workspace) else {
                return reply.error(EIO)
            }
            reply.attributes(attributes, timeout: .seconds(1))
        } catch {
            refuse(reply, "setattr of inode \(inode)", error)
        }
    }

    private func change(
        _ draft: DraftRecord, _ changes: AttributeChanges, handle: Writing.DraftHandle?, workspace: Workspace
    ) throws(WorkspaceError) {
        guard let id = draft.id, !draft.isFolder else { return }
        let path = workspace.path(ofDraft: id)
        if let size = changes.size {
            let result =
                handle.map { ftruncate($0.descriptor, off_t(size)) } ?? truncate(path, off_t(size))
            guard result == 0 else { throw .file(path: path, operation: "truncate", errno: errno) }
        }
        guard changes.accessed != nil || changes.modified != nil else { return }
        func time(_ change: AttributeChanges.TimeChange?) -> timespec {
            switch change {
            case nil: timespec(tv_sec: 0, tv_nsec: utimeOmit)
            case .now: timespec(tv_sec: 0, tv_nsec: utimeNow)
            case .at(let seconds, let nanoseconds): timespec(tv_sec: seconds, tv_nsec: nanoseconds)
            }
        }
        var times = [time(changes.accessed), time(changes.modified)]
        guard utimensat(AT_FDCWD, path, &times, 0) == 0 else {
            throw .file(path: path, operation: "set the times of", errno: errno)
        }
    }

    /// With writing on, the free space is the drafts' (file managers refuse to copy into a filesystem that reports
    /// none); the data directory's filesystem holds every byte written here until Stud.IP confirmed it.
    func draftSpace() -> FileSystemStatistics? {
        guard let writer else { return nil }
        var space = statvfs()
        guard statvfs(writer.workspace.directory, &space) == 0 else { return nil }
        return FileSystemStatistics(
            blockSize: UInt(space.f_frsize), blocks: UInt(space.f_blocks), freeBlocks: UInt(space.f_bfree),
            availableBlocks: UInt(space.f_bavail), maximumNameLength: 255)
    }

    /// Stud.IP has no hard links (gio's `--backup` asks for one): `EPERM`, as filesystems without them answer.
    public func link(_ inode: Inode, newParent: Inode, newName: String, reply: EntryReply) {
        guard writer != nil else { return reply.error(EROFS) }
        logger.notice("link of \(newName) refused: Stud.IP has no hard links")
        reply.error(EPERM)
    }

    // MARK: - Names

    public func create(parent: Inode, name: String, mode: mode_t, file: FileInfo, reply: CreateReply) {
        guard let writer else { return reply.error(EROFS) }
        guard mode & S_IFMT == S_IFREG || mode & S_IFMT == 0 else { return reply.error(EPERM) }
        do throws(WorkspaceError) {
            let draft = try writer.workspace.create(parent: Int64(parent), name: name)
            guard let id = draft.id else { return reply.error(EIO) }
            guard let entry = entry(ofDraft: draft, workspace: writer.workspace) else {
                writer.workspace.closed(id)
                return reply.error(EIO)
            }
            let path = writer.workspace.path(ofDraft: id)
            let descriptor = Glibc.open(path, O_RDWR | O_CLOEXEC)
            guard descriptor >= 0 else {
                let failure = errno
                writer.workspace.closed(id)
                throw .file(path: path, operation: "open", errno: failure)
            }
            let handle = writer.register(descriptor, draft: id, writes: true)
            if !reply.created(entry, handle: handle) { _ = writer.release(handle) }
        } catch {
            refuse(reply, "create of \(name)", error)
        }
    }

    public func unlink(parent: Inode, name: String, reply: StatusReply) {
        guard let writer else { return reply.error(EROFS) }
        do throws(WorkspaceError) {
            try writer.workspace.remove(parent: Int64(parent), name: name)
            reply.ok()
        } catch {
            refuse(reply, "unlink of \(name)", error)
        }
    }

    public func makeDirectory(parent: Inode, name: String, mode: mode_t, reply: EntryReply) {
        guard let writer else { return reply.error(EROFS) }
        do throws(WorkspaceError) {
            let draft = try writer.workspace.makeFolder(parent: Int64(parent), name: name)
            guard let entry = entry(ofDraft: draft, workspace: writer.workspace) else { return reply.error(EIO) }
            reply.entry(entry)
        } catch {
            refuse(reply, "mkdir of \(name)", error)
        }
    }

    public func removeDirectory(parent: Inode, name: String, reply: StatusReply) {
        guard let writer else { return reply.error(EROFS) }
        do throws(WorkspaceError) {
            try writer.workspace.removeFolder(parent: Int64(parent), name: name)
            reply.ok()
        } catch {
            refuse(reply, "rmdir of \(name)", error)
        }
    }

    /// `RENAME_NOREPLACE` is honoured; `RENAME_EXCHANGE` has no Stud.IP counterpart (`EINVAL`, so `mv --exchange`
    /// says it is not supported).
    public func rename(
        parent: Inode, name: String, newParent: Inode, newName: String, flags: UInt32, reply: StatusReply
    ) {
        guard let writer else { return reply.error(EROFS) }
        guard flags & renameExchange == 0 else { return reply.error(EINVAL) }
        do throws(WorkspaceError) {
            try writer.workspace.rename(
                parent: Int64(parent), name: name, to: Int64(newParent), newName,
                noReplace: flags & renameNoReplace != 0)
            reply.ok()
        } catch {
            refuse(reply, "rename of \(name) to \(newName)", error)
        }
    }
}
