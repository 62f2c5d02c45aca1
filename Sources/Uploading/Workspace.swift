import Foundation
import Glibc
import Logging
import MetadataStore
import NamingRules
import StudIPModel
import Synchronization
import SystemSupport

/// The local side of writing (docs/writing.md, "Local first: drafts"): what the user wrote in the mount and Stud.IP
/// does not have yet. Drafts are real files in `<data directory>/drafts/` (never the cache, which may be emptied by
/// hand) with rows in the store, so they survive `kill -9` and restarts; renames and deletes of the store's
/// documents are rows too. The filesystem shows this overlay over the store's tree; once a change is closed, under a
/// final name and left alone for the settle time, it is reconciled into operations of the ``Outbox``.
///
/// Threads: every method but the asynchronous ones (``settle()``, ``run()``, ``settled(_:_:)``) blocks (file I/O, synced store writes) and is called
/// from libfuse's workers or ``BlockingPool`` (docs/threads.md). The overlay is kept in memory as well, so that the
/// filesystem's lookups ask no more of the store than without drafts.
public final class Workspace: Sendable {
    public struct Configuration: Sendable {
        /// How long a closed change under a final name is left alone before it is sent.
        public var settleTime: Duration
        /// The terms of use sent with uploads (nil: the installation's default).
        public var terms: String?
        /// Whether the API can move a document to another folder (legacy REST); JSON:API cannot: `EXDEV`. Asked at
        /// each move, on the FUSE thread (it must not block): with `api = auto` the answer is known only once
        /// connected.
        public var movesDocuments: @Sendable () -> Bool
        /// Whether the connection is online: only then does a draft over a document whose content `ETag` the
        /// cache did not know ask Stud.IP for it (``learnBaseETag(of:)``). Asked in a task.
        public var isOnline: @Sendable () async -> Bool

        public init(
            settleTime: Duration = .seconds(2), terms: String? = nil,
            movesDocuments: @escaping @Sendable () -> Bool = { false },
            isOnline: @escaping @Sendable () async -> Bool = { false }
        ) {
            self.settleTime = settleTime
            self.terms = terms
            self.movesDocuments = movesDocuments
            self.isOnline = isOnline
        }
    }

    /// Draft inodes are this plus the draft's id: far above any store node (AUTOINCREMENT rowids), so they never
    /// collide, and never reused (the draft ids are AUTOINCREMENT too).
    public static let inodeBase: Int64 = 1 << 56

    /// What the filesystem is told to drop from the kernel's caches after a change made outside a request.
    public struct Invalidation: Sendable, Hashable {
        public struct Name: Sendable, Hashable {
            public var parent: Int64
            public var name: String
        }

        public var names: [Name] = []
        public var inodes: [Int64] = []
    }

    struct State: Sendable {
        var drafts: [Int64: DraftRecord] = [:]
        /// By the document's store inode.
        var changes: [Int64: DocumentChangeRecord] = [:]
        /// Opens for writing, claimed by ``Workspace/create(parent:name:)`` and ``Workspace/openForWriting(_:truncating:)``
        /// and ended by ``Workspace/closed(_:)``.
        var openCount: [Int64: Int] = [:]
        /// Drafts whose bytes are being handed to the outbox: no open may claim them (it gets a new draft instead).
        var settling: Set<Int64> = []
        /// Drafts whose outbox entries a rename or delete is taking back: an open waits until that is decided.
        var withdrawing: Set<Int64> = []
        /// When each change not yet in the outbox was last touched.
        var quietSince: [Pending: ContinuousClock.Instant] = [:]
        /// Drafts Stud.IP confirmed, shown until a refresh of their course shows what it made.
        var confirmed: [Int64: Confirmation] = [:]

        /// The draft shown at `parent`/`name`: the newest of that name.
        func draft(parent: Int64, name: String) -> DraftRecord? {
            drafts.values.filter { $0.parent == parent && $0.name == name }.max { ($0.id ?? 0) < ($1.id ?? 0) }
        }

        /// `draft` as it is to be kept: one that follows a draft Stud.IP confirmed takes the document that one now
        /// names (what it made; after a conflict the document it was a version of) and waits for nothing; one that
        /// follows a refused draft waits for nothing either (it conflicts in turn, as a release would leave it).
        func resolved(_ draft: DraftRecord) -> DraftRecord {
            guard let earlier = draft.follows, let made = drafts[earlier] else { return draft }
            var draft = draft
            if made.state == .failed {
                draft.follows = nil
                return draft
            }
            guard confirmed[earlier] != nil else { return draft }
            draft.follows = nil
            if made.documentID != nil {
                draft.documentID = made.documentID
                draft.baseVersion = made.baseVersion
                draft.baseETag = made.baseETag
            }
            return draft
        }

        func change(parent: Int64, name: String) -> DocumentChangeRecord? {
            changes.values.first { $0.parent == parent && $0.name == name && !$0.isDeleted }
        }
    }

    /// When a confirmed draft's course is refreshed (again): at once, then after 15 s, doubling up to ten minutes
    /// (the outbox's own backoff) while the refreshes fail.
    struct Confirmation: Sendable {
        var retryAt: ContinuousClock.Instant
        var delay: Duration

        /// The next try at `retryAt`; the one after it 30 s later, and so on.
        init(retryAt: ContinuousClock.Instant) {
            self.retryAt = retryAt
            delay = .seconds(30)
        }

        mutating func schedule(after instant: ContinuousClock.Instant) {
            retryAt = instant + delay
            delay = min(delay * 2, .seconds(600))
        }
    }

    enum Pending: Hashable, Sendable {
        case draft(Int64)
        case change(Int64)
    }

    let store: MetadataStore
    let outbox: Outbox
    /// `<data directory>/drafts`.
    public let directory: String
    let configuration: Configuration
    let now: @Sendable () -> ContinuousClock.Instant
    let state: Mutex<State>
    /// Held while a draft's record is written (the store, then the overlay): one change of a draft at a time.
    let writes = Mutex(())
    let logger: Logger
    private let hooks = Mutex<Hooks>(Hooks())

    struct Hooks: Sendable {
        var refreshCourse: (@Sendable (String) async -> Bool)?
        var invalidate: (@Sendable (Invalidation) -> Void)?
        var contentETag: (@Sendable (_ documentID: String, _ version: DocumentVersion) -> String?)?
        var newVersionMade: (@Sendable (_ documentID: String) async -> Void)?
    }

    /// Opens the workspace of a profile: its drafts directory below `dataDirectory` (created 0700), and the drafts
    /// and changes the store kept; a draft the outbox already holds (a crash between the two writes) is marked so,
    /// never sent twice. `now` is the clock settling reads (tests drive their own).
    public init(
        store: MetadataStore, outbox: Outbox, dataDirectory: String, configuration: Configuration = Configuration(),
        now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now },
        logger: Logger = Logger(label: "campusfs.workspace")
    ) async throws(WorkspaceError) {
        self.store = store
        self.outbox = outbox
        self.directory = dataDirectory + "/drafts"
        self.configuration = configuration
        self.now = now
        self.logger = logger
        let entries: [OutboxEntry]
        do throws(OutboxError) {
            entries = try await outbox.entries()
        } catch {
            throw .outbox(error)
        }
        // A refused or unconfirmed entry is not what its draft is now once the draft was edited again.
        let open = entries.filter { !Self.endedUnsent($0.state) }
        let queued = Dictionary(
            open.compactMap { entry in entry.draftID.map { ($0, entry.id) } }, uniquingKeysWith: max)
        let started = now()
        let directory = directory
        let loaded = try await BlockingPool.shared.run { () throws(WorkspaceError) -> State in
            guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
                throw .file(path: directory, operation: "create", errno: errno)
            }
            var state = State()
            do throws(StoreError) {
                for var draft in try store.drafts() {
                    guard let id = draft.id else { continue }
                    if draft.state == .editing, let entry = queued[id] {
                        draft.state = .queued
                        draft.outboxID = entry
                        try store.saveDraft(draft)
                    } else if draft.state == .editing, draft.isBeingWritten {
                        // The daemon stopped while a program wrote it (kill -9, a power loss): its bytes may be a
                        // `cp` cut short, which must never reach a course.
                        draft.state = .failed
                        draft.detail = Self.tornDetail
                        draft.isBeingWritten = false
                        try store.saveDraft(draft)
                    }
                    state.drafts[id] = draft
                    if draft.state == .editing { state.quietSince[.draft(id)] = started }
                    // Confirmed, and the daemon stopped before its course's refresh showed what Stud.IP made.
                    if draft.state == .queued, !entries.contains(where: { $0.id == draft.outboxID }) {
                        state.confirmed[id] = Confirmation(retryAt: started)
                    }
                    if !draft.isFolder, access(Self.path(directory, id), F_OK) != 0 {
                        // The row was written and the file not yet: an empty draft.
                        close(Glibc.open(Self.path(directory, id), O_WRONLY | O_CREAT | O_CLOEXEC, 0o600))
                    }
                }
                for var change in try store.documentChanges() {
                    if change.outboxID == nil, let entry = entries.last(where: { Self.sends(change, $0.operation) }) {
                        change.outboxID = entry.id
                        try store.saveDocumentChange(change)
                    }
                    state.changes[change.inode] = change
                    if change.outboxID == nil { state.quietSince[.change(change.inode)] = started }
                }
            } catch {
                throw .store(error)
            }
            return state
        }
        state = Mutex(loaded)
        // Edited again before a crash let ``openForWriting(_:truncating:)`` discard them.
        for entry in entries where Self.endedUnsent(entry.state) {
            if let id = entry.draftID, loaded.drafts[id]?.state == .editing { await discard(superseded: entry.id) }
        }
    }

    /// Why a draft found being written at a start is held back (``DraftRecord/State/failed``, in the log and
    /// `campusfs status`).
    static let tornDetail =
        "the daemon stopped while it was being written, so it may be incomplete; not sent: save or copy it again"

    /// Why a draft whose outbox entry the user discarded stays failed: their choice, no failure to report.
    static let discardedDetail = "discarded from the outbox"

    /// Whether `draft` is held back without an outbox entry (a write into it failed, or the daemon stopped while it
    /// was written) until it is saved again or deleted: what `campusfs status` counts as failed beside the
    /// outbox's refused `entries`.
    public static func isHeldBack(_ draft: DraftRecord, entries: [OutboxEntry]) -> Bool {
        guard draft.state == .failed, draft.detail != discardedDetail, let id = draft.id else { return false }
        return !entries.contains { $0.draftID == id }
    }

    /// Refused by Stud.IP, or interrupted where its outcome cannot be checked: waits for the user in the outbox.
    static func endedUnsent(_ state: OutboxState) -> Bool { state == .failed || state == .unconfirmed }

    /// Drops the refused or unconfirmed outbox entries of draft `id`, which the user replaced or deleted, from a
    /// task: the caller is a request handler.
    func discardEntries(ofDraft id: Int64) {
        Task {
            let entries: [OutboxEntry]
            do throws(OutboxError) {
                entries = try await outbox.entries()
            } catch {
                logger.error("cannot read the outbox to drop the entries of draft \(id): \(error)")
                return
            }
            for entry in entries where entry.draftID == id && Self.endedUnsent(entry.state) {
                await discard(superseded: entry.id)
            }
        }
    }

    /// Drops an outbox entry a draft edited again replaced, so that `campusfs outbox retry` cannot send the old
    /// bytes beside the new ones.
    func discard(superseded entry: Int64) async {
        do throws(OutboxError) {
            try await outbox.discard(entry)
            logger.info("outbox entry \(entry) was edited again; the new save replaces it")
        } catch {
            logger.error("cannot discard outbox entry \(entry), which a new save replaces: \(error)")
        }
    }

    /// Whether `operation` is the last one a change queues: found in the outbox for a change not marked queued,
    /// the workspace stopped between the two writes and the change is not queued again.
    static func sends(_ change: DocumentChangeRecord, _ operation: OutboxOperation) -> Bool {
        switch operation {
        case .delete(let id): change.isDeleted && id == change.documentID
        case .rename(let id, let name): !change.isDeleted && id == change.documentID && name == change.name
        case .move(let id, _): !change.isDeleted && id == change.documentID
        default: false
        }
    }

    /// How the workspace asks the daemon to refresh a course (by Stud.IP id) and waits for it; `true`: the refresh
    /// worked. A confirmed draft stays until one did, so the tree never shows neither it nor what Stud.IP made.
    public func refreshCourses(with refresh: @escaping @Sendable (String) async -> Bool) {
        hooks.withLock { $0.refreshCourse = refresh }
    }

    /// How the filesystem drops the kernel's entries after changes made outside a request (``CampusFS``).
    public func invalidations(_ invalidate: @escaping @Sendable (Invalidation) -> Void) {
        hooks.withLock { $0.invalidate = invalidate }
    }

    /// How the workspace learns the content `ETag` of a document's version the content cache holds (nil: not
    /// cached, or none): a draft saved over that version carries it, so that a replacement at the same size is told
    /// from it (docs/writing.md, "The outbox"). Asked on libfuse's workers: it must not block.
    public func contentETags(
        from lookup: @escaping @Sendable (_ documentID: String, _ version: DocumentVersion) -> String?
    ) {
        hooks.withLock { $0.contentETag = lookup }
    }

    /// How the workspace tells the content cache that Stud.IP confirmed one's own new version of a document: what
    /// the cache holds of it is the content before, and at the same size JSON:API keeps the file id, so the cached
    /// bytes and `ETag` would still pass for the current version's (a false conflict at the next save over it).
    public func newVersionsMade(_ made: @escaping @Sendable (_ documentID: String) async -> Void) {
        hooks.withLock { $0.newVersionMade = made }
    }

    var newVersionMade: (@Sendable (String) async -> Void)? { hooks.withLock { $0.newVersionMade } }

    /// The base of a new version of `info`: its version, and its content `ETag` where the cache knows it.
    func base(of info: DocumentInfo) -> (version: DocumentVersion, etag: String?) {
        (info.version, hooks.withLock { $0.contentETag }?(info.id, info.version))
    }

    /// A draft made over a document whose content `ETag` the cache did not know (an `O_TRUNC` save, `cp` over it,
    /// an atomic save over a version never read through the mount): one `HEAD` of the document's content through the
    /// outbox's writer, kept in the draft if it still has none, so that a lecturer's replacement at the same size is
    /// told from the version the save started from (docs/writing.md, "The outbox": "Conflicts"). In a task, and only
    /// online: the open never waits for the network; the store write runs on ``BlockingPool``.
    func learnBaseETag(of draft: DraftRecord) {
        guard let id = draft.id, let documentID = draft.documentID, let base = draft.baseVersion,
            draft.baseETag == nil, draft.follows == nil, !draft.isFolder
        else { return }
        let isOnline = configuration.isOnline
        Task {
            guard await isOnline(), let etag = await outbox.contentETag(of: documentID) else { return }
            @Sendable func lacking(_ draft: DraftRecord?) -> Bool {
                draft?.state == .editing && draft?.baseETag == nil && draft?.documentID == documentID
                    && draft?.baseVersion == base
            }
            guard lacking(state.withLock({ $0.drafts[id] })) else { return }
            do {
                try await BlockingPool.shared.run { () throws(WorkspaceError) in
                    try self.update(id) { draft in if lacking(draft) { draft.baseETag = etag } }
                }
            } catch {
                logger.error("cannot record the content ETag of document \(documentID) in draft \(id): \(error)")
            }
        }
    }

    var refreshCourse: (@Sendable (String) async -> Bool)? { hooks.withLock { $0.refreshCourse } }

    func invalidate(_ invalidation: Invalidation) {
        hooks.withLock { $0.invalidate }?(invalidation)
    }

    static func path(_ directory: String, _ id: Int64) -> String { directory + "/" + String(id) }

    /// The file holding a draft's bytes.
    public func path(ofDraft id: Int64) -> String { Self.path(directory, id) }

    public static func inode(ofDraft id: Int64) -> Int64 { inodeBase + id }

    // MARK: - The overlay

    /// What the overlay shows at a name.
    public enum Item: Sendable, Hashable {
        /// A draft (``DraftRecord/id`` set).
        case draft(DraftRecord)
        /// A store document renamed or moved here locally.
        case document(inode: Int64)
    }

    /// Whether nothing is overlaid: then the filesystem serves the store alone.
    public var isEmpty: Bool { state.withLock { $0.drafts.isEmpty && $0.changes.isEmpty } }

    /// Whether some draft is a document's new content: only then may a store document's inode show a draft.
    public var coversDocuments: Bool {
        state.withLock { $0.drafts.values.contains { !$0.isFolder && $0.documentID != nil } }
    }

    /// What the overlay shows at `parent`/`name`; nil: whatever the store has, unless ``hides(_:)`` says otherwise.
    public func item(parent: Int64, name: String) -> Item? {
        state.withLock { state in
            if let draft = state.draft(parent: parent, name: name) { return .draft(draft) }
            return state.change(parent: parent, name: name).map { .document(inode: $0.inode) }
        }
    }

    /// Whether the store's `node` is not shown where the store has it: renamed, moved or deleted locally, or
    /// covered by a draft of the same name.
    public func hides(_ node: Node) -> Bool {
        state.withLock { state in
            if state.changes[node.inode] != nil { return true }
            guard let parent = node.parentInode else { return false }
            return state.draft(parent: parent, name: node.name) != nil
        }
    }

    /// The overlay's entries in the directory `parent`, by name.
    public func items(in parent: Int64) -> [(name: String, item: Item)] {
        state.withLock { state in
            var items: [String: Item] = [:]
            for change in state.changes.values where change.parent == parent && !change.isDeleted {
                items[change.name] = .document(inode: change.inode)
            }
            for name in Set(state.drafts.values.filter { $0.parent == parent }.map(\.name)) {
                if let draft = state.draft(parent: parent, name: name) { items[name] = .draft(draft) }
            }
            return items.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
    }

    /// The draft of a draft inode.
    public func draft(inode: Int64) -> DraftRecord? {
        guard inode > Self.inodeBase else { return nil }
        return state.withLock { $0.drafts[inode - Self.inodeBase] }
    }

    /// The draft shown over the store's document `node`, in its place: what an open of the document's inode (which
    /// the kernel keeps while the draft is written through it) reads and writes. None once the document was renamed
    /// or deleted locally: that inode is then the document's old bytes under its new name (`cp --backup`'s
    /// `notes.txt~`), and the draft in its old place is another file.
    public func draft(covering node: Node) -> DraftRecord? {
        guard let parent = node.parentInode, let id = node.studipID else { return nil }
        return state.withLock { state in
            guard state.changes[node.inode] == nil else { return nil }
            return state.draft(parent: parent, name: node.name).flatMap { $0.documentID == id ? $0 : nil }
        }
    }

    // MARK: - Open files

    /// Bytes or length of the draft change (call it before they do): its settle time starts again. The first change
    /// marks it changed, and, while an open for writing is claimed, being written, in the store (one synced write,
    /// before the bytes), so that it becomes an operation once it settles, and a start after the daemon's death
    /// before the last close holds it back instead (``closed(_:)`` clears it).
    public func touched(_ id: Int64) throws(WorkspaceError) {
        let unmarked = state.withLock { state -> Bool in
            guard let draft = state.drafts[id], draft.state == .editing else { return false }
            state.quietSince[.draft(id)] = now()
            return !draft.isChanged || (!draft.isBeingWritten && state.openCount[id] != nil)
        }
        guard unmarked else { return }
        try update(id) { draft in
            draft.isChanged = true
            if state.withLock({ $0.openCount[id] != nil }) { draft.isBeingWritten = true }
        }
    }

    /// A write into draft `id` failed (`code`: a full disk, an I/O error): its bytes are not what the program meant
    /// to write, and a half-written file must never reach a course. It is not sent: `failed`, with why, until it is
    /// saved again (an open with `O_TRUNC` makes a new draft), or deleted. Kept in the overlay even when the store
    /// cannot take the change (the same full disk); a restart before its last close then holds it back as torn.
    public func writeFailed(_ id: Int64, errno code: Int32) {
        let reason = "a write into it failed (\(String(cString: strerror(code)))); not sent: save or copy it again"
        let marked = writes.withLock { _ -> DraftRecord? in
            let marked = state.withLock { state -> DraftRecord? in
                guard var draft = state.drafts[id], draft.state == .editing else { return nil }
                draft.state = .failed
                draft.detail = reason
                state.drafts[id] = draft
                state.quietSince[.draft(id)] = nil
                return draft
            }
            if let marked { _ = try? store.saveDraft(marked) }
            return marked
        }
        if let marked { logger.warning("\(marked.name) is not sent to Stud.IP: \(reason)") }
    }

    /// An open for writing that ``create(parent:name:)`` or ``openForWriting(_:truncating:)`` claimed ended (once
    /// per claim): when the last is gone, the settle time starts.
    /// The last close of a draft being written clears that mark (one synced write); if the store does not take it,
    /// the next start holds the draft back, which loses nothing.
    public func closed(_ id: Int64) {
        let written = state.withLock { state -> Bool in
            let count = (state.openCount[id] ?? 1) - 1
            state.openCount[id] = count > 0 ? count : nil
            if state.drafts[id]?.state == .editing { state.quietSince[.draft(id)] = now() }
            return count <= 0 && state.drafts[id]?.isBeingWritten == true
        }
        guard written else { return }
        do throws(WorkspaceError) {
            try update(id) { draft in
                // Opened again meanwhile: that open's last close clears it.
                if state.withLock({ $0.openCount[id] == nil }) { draft.isBeingWritten = false }
            }
        } catch {
            logger.error("cannot record that draft \(id) was closed: \(error); it is held back at the next start")
        }
    }
}

/// Why the workspace refused a change or could not make it.
public enum WorkspaceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Not allowed; `errno` is what the filesystem answers (`EACCES`, `EROFS`, `EXDEV`, `EEXIST`, …), `rule` says
    /// which rule refused it (docs/writing.md, "When writing is on"), for the log.
    case refused(errno: Int32, rule: String)
    case store(StoreError)
    case outbox(OutboxError)
    case file(path: String, operation: String, errno: Int32)

    /// What the filesystem answers.
    public var errorNumber: Int32 {
        switch self {
        case .refused(let errno, _): errno
        // A full disk under the store refuses a new file or its first change before any byte lands: the program
        // is told as a full disk under the draft would tell it (a soak saw `cp` fail with EIO there).
        case .store(.diskFull): ENOSPC
        case .store, .outbox: EIO
        case .file(_, _, let errno): errno == ENOSPC || errno == EDQUOT ? errno : EIO
        }
    }

    public var description: String {
        switch self {
        case .refused(_, let rule): rule
        case .store(let error): "\(error)"
        case .outbox(let error): "\(error)"
        case .file(let path, let operation, let errno):
            "cannot \(operation) the draft \(path): \(String(cString: strerror(errno)))"
        }
    }
}
