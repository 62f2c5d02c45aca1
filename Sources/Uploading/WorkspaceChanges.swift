import Foundation
import Glibc
import MetadataStore
import StudIPModel

/// The changes the filesystem makes in the overlay (docs/writing.md, "Local first: drafts"). Each checks what Stud.IP
/// allows (docs/writing.md, "When writing is on"), writes its row (synced) and file, and answers with the draft or
/// a ``WorkspaceError/refused(errno:rule:)``. They block: libfuse's workers call them.
extension Workspace {
    /// Where a change goes: a Stud.IP folder (or a course's root folder), or a folder made locally.
    enum Place {
        case folder(FolderAccess)
        case local(DraftRecord)
    }

    /// What is shown at a name.
    enum Existing {
        case draft(DraftRecord)
        case document(Node, DocumentInfo)
        case other(Node)
        case none
    }

    func place(_ inode: Int64) throws(WorkspaceError) -> Place {
        if let draft = draft(inode: inode) {
            guard draft.isFolder else { throw .refused(errno: ENOTDIR, rule: "\(draft.name) is a file") }
            return .local(draft)
        }
        guard let access = try storing({ () throws(StoreError) in try store.folderAccess(inode: inode) }) else {
            throw .refused(
                errno: EROFS,
                rule: "inode \(inode) is no Stud.IP folder (the semester level, generated files and the tag view "
                    + "are read-only)")
        }
        return .folder(access)
    }

    /// Refuses unless files may be created in `place`.
    func requireWritable(_ place: Place) throws(WorkspaceError) {
        guard case .folder(let access) = place, !access.permissions.isWritable else { return }
        throw .refused(
            errno: EACCES, rule: "Stud.IP does not let you write into folder \(access.folderID) (is-writable is off)")
    }

    func existing(parent: Int64, name: String) throws(WorkspaceError) -> Existing {
        switch item(parent: parent, name: name) {
        case .draft(let draft): return .draft(draft)
        case .document(let inode):
            return try storing { () throws(StoreError) in
                guard let node = try store.node(inode: inode), let info = try store.document(inode: inode) else {
                    return .none
                }
                return .document(node, info)
            }
        case nil:
            return try storing { () throws(StoreError) in
                guard let node = try store.lookup(parent: parent, name: name), !hides(node) else { return .none }
                guard let info = try store.document(inode: node.inode) else { return .other(node) }
                return .document(node, info)
            }
        }
    }

    // MARK: - Files

    /// `create`: a new draft at `parent`/`name`. It becomes a new version of the document that stood there when an
    /// editor renamed that away first (vim without `backupcopy`), or follows a draft of that name still in the
    /// outbox.
    public func create(parent: Int64, name: String) throws(WorkspaceError) -> DraftRecord {
        let place = try place(parent)
        try requireWritable(place)
        var draft = DraftRecord(parent: parent, name: name, modified: Date())
        if let renamedAway = try renamedAwayDocument(parent: parent, name: name) {
            draft.documentID = renamedAway.id
            (draft.baseVersion, draft.baseETag) = base(of: renamedAway)
        }
        var pinned: Int64?
        defer { if let pinned { closed(pinned) } }
        if let earlier = state.withLock({ $0.draft(parent: parent, name: name) }) {
            pinned = try adopt(earlier, into: &draft)
        }
        return try insert(draft, copying: nil, opening: true)
    }

    /// Opening the store's document `node` for writing: a draft in its place, a new version of it. `content`: the
    /// file to start from (the cached bytes), nil for an empty draft (`O_TRUNC`); `contentETag`: the `ETag` those
    /// bytes came with (nil: whatever the cache holds for the document's version).
    public func openForWriting(_ node: Node, content: String?, contentETag: String? = nil) throws(WorkspaceError)
        -> DraftRecord
    {
        guard let parent = node.parentInode,
            let info = try storing({ () throws(StoreError) in try store.document(inode: node.inode) })
        else { throw .refused(errno: EROFS, rule: "\(node.name) is no Stud.IP document") }
        guard info.isWritable else {
            throw .refused(
                errno: EACCES, rule: "Stud.IP does not let you change document \(info.id) (is-writable is off)")
        }
        let base = base(of: info)
        let draft = DraftRecord(
            parent: parent, name: node.name, documentID: info.id, baseVersion: base.version,
            baseETag: contentETag ?? base.etag, isChanged: content == nil, modified: Date())
        guard let content else { return try insert(draft, copying: nil, opening: true) }
        let source = Glibc.open(content, O_RDONLY | O_CLOEXEC)
        guard source >= 0 else { throw .file(path: content, operation: "read", errno: errno) }
        defer { close(source) }
        return try insert(draft, copying: source, opening: true)
    }

    /// Opening a draft for writing, an open the caller ends with ``closed(_:)``: the draft itself while it is being
    /// edited. Once its bytes go to the outbox (settling, queued) or sit there refused (the outbox holds the same
    /// file), a new draft in its place, starting from its bytes unless `truncating`: the bytes sent never change.
    public func openForWriting(_ draft: DraftRecord, truncating: Bool) throws(WorkspaceError) -> DraftRecord {
        guard let id = draft.id else { return draft }
        // Claimed under the lock settling claims a draft under: an open never meets its draft's bytes on their way.
        // One it does not write itself is pinned until the new draft that replaces it is in place: not dropped
        // meanwhile (``dropConfirmed(_:movingChildrenTo:)``), so its bytes are there to copy and the new draft finds
        // it when it is registered (``State/resolved(_:)``).
        // A rename or delete taking its outbox entry back is waited for (``whenDecided(_:_:)``): no new draft
        // follows one that goes back to being edited.
        let (found, onItsWay) = whenDecided(id) { state -> (DraftRecord?, Bool) in
            guard let current = state.drafts[id] else { return (nil, false) }
            let onItsWay = current.state == .queued || state.settling.contains(id)
            if current.state != .handedIn { state.openCount[id, default: 0] += 1 }
            return (current, onItsWay)
        }
        // Dropped since the kernel looked it up: it looks the name up again and finds what the store shows now.
        guard let current = found else { throw .refused(errno: ESTALE, rule: "\(draft.name) was replaced") }
        if current.state == .handedIn {
            throw .refused(errno: EACCES, rule: "\(draft.name) was handed in; the copy is kept read-only")
        }
        if current.state == .editing, !onItsWay { return current }
        defer { closed(id) }
        var next = DraftRecord(parent: current.parent, name: current.name, isChanged: truncating, modified: Date())
        next.documentID = current.documentID
        next.baseVersion = current.baseVersion
        next.baseETag = current.baseETag
        // One on its way is waited for: its outcome says what this one becomes (at once, if it is known already).
        if onItsWay { next.follows = id }
        var source: Int32?
        if !truncating {
            let descriptor = Glibc.open(path(ofDraft: id), O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw .file(path: path(ofDraft: id), operation: "read", errno: errno) }
            source = descriptor
        }
        defer { if let source { close(source) } }
        let made = try insert(next, copying: source, opening: true)
        if !onItsWay { try drop(current) }
        return made
    }

    /// `next` replaces `earlier` under its name: it becomes a new version of the same document, and waits for the
    /// outcome of `earlier` while that is on its way to the outbox or in it (pinned, as an open pins it: end it with
    /// ``closed(_:)`` once `next` is saved). An `earlier` still being edited is dropped. Returns the pinned draft.
    private func adopt(_ earlier: DraftRecord, into next: inout DraftRecord) throws(WorkspaceError) -> Int64? {
        guard let id = earlier.id else { return nil }
        if earlier.documentID != nil {
            next.documentID = earlier.documentID
            next.baseVersion = earlier.baseVersion
            next.baseETag = earlier.baseETag
        }
        // Decided under the lock settling claims drafts under: one whose bytes are on their way is waited for, and
        // so is a rename or delete taking its entry back (``whenDecided(_:_:)``), as an open waits.
        let onItsWay = whenDecided(id) { state -> Bool in
            if state.drafts[id]?.state == .queued || state.settling.contains(id) {
                state.openCount[id, default: 0] += 1
                return true
            }
            return false
        }
        guard onItsWay else {
            try drop(earlier)
            return nil
        }
        next.follows = id
        return id
    }

    /// Keeps `draft` from settling while a rename or delete changes it, as an open does (end it with
    /// ``release(_:)``); returns its current record. A file whose bytes are in the outbox, queued or refused, is
    /// taken back from it first where that is certain to be safe (``withdraw(_:)``): then it is a draft being edited
    /// again. `EBUSY` otherwise, and for the moment its bytes are handed to the outbox, if that does not end within
    /// a second.
    @discardableResult
    private func hold(_ draft: DraftRecord) throws(WorkspaceError) -> DraftRecord {
        guard let id = draft.id else { return draft }
        let busy = WorkspaceError.refused(
            errno: EBUSY, rule: "\(draft.name) is in the outbox (`campusfs outbox` discards it)")
        for _ in 0..<Self.settlingWaits {
            let claim = state.withLock { state -> Claim in
                guard let current = state.drafts[id] else { return .held(draft) }
                guard !state.settling.contains(id) else { return .settling }
                let entered = current.state == .queued || current.state == .failed
                if entered {
                    // Confirmed (its entry is gone), a folder (entries into it name its entry), pinned or followed by
                    // a draft that waits for its outcome: it stays as it is. A failed one may have no entry at all
                    // (a folder whose entry was discarded, a write that failed): the store says.
                    guard state.confirmed[id] == nil, !current.isFolder, state.openCount[id] == nil,
                        !state.drafts.values.contains(where: { $0.follows == id })
                    else {
                        guard current.state == .failed else { return .busy }
                        state.openCount[id, default: 0] += 1
                        return .heldUnlessInOutbox(current)
                    }
                    state.withdrawing.insert(id)
                }
                state.openCount[id, default: 0] += 1
                return entered ? .withdraw(current) : .held(current)
            }
            switch claim {
            case .held(let current): return current
            case .heldUnlessInOutbox(let current):
                // Pinned, it cannot be handed to the outbox meanwhile.
                let inOutbox: Bool
                do throws(WorkspaceError) {
                    inOutbox = try storing { () throws(StoreError) in
                        try store.outboxRows().contains { $0.draftID == id }
                    }
                } catch {
                    closed(id)
                    throw error
                }
                guard !inOutbox else {
                    closed(id)
                    throw busy
                }
                return current
            case .busy: throw busy
            case .settling: usleep(1000)
            case .withdraw(let current):
                defer { _ = state.withLock { $0.withdrawing.remove(id) } }
                do throws(WorkspaceError) {
                    guard let editing = try withdraw(current) else {
                        // Refused and never in the outbox (held back): it stays failed, as before.
                        if current.state == .failed { return current }
                        throw busy
                    }
                    return editing
                } catch {
                    closed(id)
                    throw error
                }
            }
        }
        throw busy
    }

    private enum Claim {
        case held(DraftRecord)
        /// Failed, and pinned, followed or a folder: held if the outbox has no entry of it, else `EBUSY`.
        case heldUnlessInOutbox(DraftRecord)
        case withdraw(DraftRecord)
        case settling
        case busy
    }

    /// `body` under the state lock once no rename or delete is taking draft `id`'s outbox entries back (a synced
    /// write decides it): an open waits that long rather than follow a draft that goes back to being edited.
    private func whenDecided<T>(_ id: Int64, _ body: (inout State) -> T) -> T {
        while true {
            let result = state.withLock { state -> T? in state.withdrawing.contains(id) ? nil : body(&state) }
            if let result { return result }
            usleep(1000)
        }
    }

    /// How many milliseconds a rename or delete waits for a draft being handed to the outbox.
    private static let settlingWaits = 1000

    /// Takes the outbox entries of `draft` (queued or refused, pinned by ``hold(_:)``) back and makes it a draft
    /// being edited again, in one store transaction and then the overlay, under the lock every draft write takes.
    /// Nil, with nothing changed: it has no entry (a refused draft held back without one, or a queued one Stud.IP
    /// confirmed meanwhile). `EBUSY` when an entry may not be taken back: being sent, or an attempt may have arrived.
    private func withdraw(_ draft: DraftRecord) throws(WorkspaceError) -> DraftRecord? {
        guard let id = draft.id else { return nil }
        return try writes.withLock { _ throws(WorkspaceError) -> DraftRecord? in
            guard var editing = state.withLock({ $0.drafts[id] }) else { return nil }
            editing.state = .editing
            editing.outboxID = nil
            editing.detail = nil
            let withdrawn: [Int64]?
            do throws(OutboxError) {
                withdrawn = try outbox.withdraw(editing)
            } catch {
                throw .outbox(error)
            }
            guard let withdrawn else {
                throw .refused(
                    errno: EBUSY,
                    rule: "\(draft.name) is being sent to Stud.IP, or may have arrived there (`campusfs outbox`)")
            }
            if withdrawn.isEmpty { return nil }
            state.withLock { state in
                state.drafts[id] = editing
                state.quietSince[.draft(id)] = now()
            }
            logger.info("\(draft.name) was taken back from the outbox (entries \(withdrawn)) to be renamed or deleted")
            return editing
        }
    }

    private func release(_ draft: DraftRecord) {
        if let id = draft.id { closed(id) }
    }

    /// The store's document whose place is `parent`/`name` and which was renamed away locally (a backup name):
    /// an editor saving by "rename away, write anew".
    private func renamedAwayDocument(parent: Int64, name: String) throws(WorkspaceError) -> DocumentInfo? {
        // Deleted ones too: `rm notes.txt` and a new `notes.txt` before the deletion settled is a new version.
        for change in state.withLock({ $0.changes.values.filter { $0.outboxID == nil } }) {
            let found = try storing { () throws(StoreError) -> DocumentInfo? in
                guard let node = try store.node(inode: change.inode), node.parentInode == parent, node.name == name
                else { return nil }
                return try store.document(inode: change.inode)
            }
            if let found, found.isWritable { return found }
        }
        return nil
    }

    // MARK: - Names

    /// `unlink`: a draft is dropped (its bytes with it); one of the store's documents is deleted on Stud.IP once
    /// the deletion settles.
    public func remove(parent: Int64, name: String) throws(WorkspaceError) {
        switch try existing(parent: parent, name: name) {
        case .draft(let draft):
            // Taken back from the outbox first if it is there (``hold(_:)``): what is dropped is what is now.
            let current = try hold(draft)
            defer { release(draft) }
            try drop(current)
            // Deleting a draft written over a document deletes the document.
            if let documentID = draft.documentID, let covered = try coveredDocument(parent: parent, name: name),
                covered.info.id == documentID, covered.info.isEditable
            {
                try change(covered.node, info: covered.info) { $0.isDeleted = true }
            }
        case .document(let node, let info):
            try requireEditable(info)
            try change(node, info: info) { $0.isDeleted = true }
        case .other(let node):
            throw .refused(errno: node.kind == .directory ? EISDIR : EROFS, rule: "\(name) is not yours to delete")
        case .none:
            throw .refused(errno: ENOENT, rule: "\(name) does not exist")
        }
    }

    /// `mkdir` where Stud.IP allows subfolders (`is-subfolder-allowed`), or inside a folder made locally.
    public func makeFolder(parent: Int64, name: String) throws(WorkspaceError) -> DraftRecord {
        let place = try place(parent)
        if case .folder(let access) = place, !access.permissions.isSubfolderAllowed {
            throw .refused(
                errno: EACCES,
                rule: "Stud.IP does not let you make folders in folder \(access.folderID) (is-subfolder-allowed is off)"
            )
        }
        guard case .none = try existing(parent: parent, name: name) else {
            throw .refused(errno: EEXIST, rule: "\(name) exists")
        }
        return try insert(DraftRecord(parent: parent, name: name, isFolder: true, modified: Date()), copying: nil)
    }

    /// `rmdir` of an empty folder made locally; Stud.IP's folders stay.
    public func removeFolder(parent: Int64, name: String) throws(WorkspaceError) {
        switch try existing(parent: parent, name: name) {
        case .draft(let draft) where draft.isFolder:
            guard let id = draft.id else { return }
            let inode = Self.inode(ofDraft: id)
            guard !state.withLock({ $0.drafts.values.contains { $0.parent == inode } }) else {
                throw .refused(errno: ENOTEMPTY, rule: "\(name) is not empty")
            }
            try hold(draft)
            defer { release(draft) }
            try drop(draft)
        case .draft: throw .refused(errno: ENOTDIR, rule: "\(name) is a file")
        case .document: throw .refused(errno: ENOTDIR, rule: "\(name) is a document")
        case .other(let node):
            let isFolder = try storing { () throws(StoreError) in try store.folderAccess(inode: node.inode) } != nil
            throw .refused(
                errno: isFolder ? EACCES : EROFS, rule: "\(name): Stud.IP's folders are not deleted from the mount")
        case .none: throw .refused(errno: ENOENT, rule: "\(name) does not exist")
        }
    }

    /// `rename(2)`. Drafts move freely between folders one may write to; a draft renamed over a document becomes a
    /// new version of it (an atomic save); the store's documents are renamed (moved where the API can) on Stud.IP
    /// once the change settles. `noReplace`: `RENAME_NOREPLACE`.
    public func rename(
        parent: Int64, name: String, to newParent: Int64, _ newName: String, noReplace: Bool
    ) throws(WorkspaceError) {
        let source = try existing(parent: parent, name: name)
        let target = try existing(parent: newParent, name: newName)
        if case .none = target {
        } else if noReplace {
            throw .refused(errno: EEXIST, rule: "\(newName) exists (RENAME_NOREPLACE)")
        }
        if parent == newParent, name == newName { return }
        switch source {
        case .draft(let draft):
            guard let id = draft.id else { return }
            try hold(draft)
            defer { release(draft) }
            if newParent != parent { try requireWritable(try place(newParent)) }
            // What it replaces, if anything: the document it becomes a new version of, and what it waits for.
            var replacing: DraftRecord?
            var pinned: Int64?
            defer { if let pinned { closed(pinned) } }
            switch target {
            case .draft(let replaced):
                guard replaced.isFolder == draft.isFolder else {
                    throw .refused(errno: draft.isFolder ? ENOTDIR : EISDIR, rule: "\(newName) is of another kind")
                }
                var next = draft
                pinned = try adopt(replaced, into: &next)
                replacing = next
            case .document(let node, let info):
                guard !draft.isFolder else { throw .refused(errno: ENOTDIR, rule: "\(newName) is a document") }
                guard info.isWritable else {
                    throw .refused(
                        errno: EACCES,
                        rule: "Stud.IP does not let you change document \(info.id) (is-writable is off)")
                }
                var next = draft
                next.documentID = info.id
                (next.baseVersion, next.baseETag) = base(of: info)
                next.follows = nil
                replacing = next
                if node.parentInode != newParent || node.name != newName {
                    // A document renamed here locally is replaced: it keeps its name on Stud.IP.
                    try forgetChange(of: node.inode)
                }
            case .other: throw .refused(errno: EACCES, rule: "\(newName) is not yours to replace")
            case .none: break
            }
            // Applied to the draft's current record: a release that changed it meanwhile is kept.
            let renamed = try update(id) { current in
                if let replacing {
                    current.documentID = replacing.documentID
                    current.baseVersion = replacing.baseVersion
                    current.baseETag = replacing.baseETag
                    current.follows = replacing.follows
                }
                current.parent = newParent
                current.name = newName
                current.modified = Date()
            }
            if replacing != nil, let renamed { learnBaseETag(of: renamed) }
            state.withLock { $0.quietSince[.draft(id)] = now() }
        case .document(let node, let info):
            try requireEditable(info)
            if newParent != node.parentInode || newParent != parent {
                guard configuration.movesDocuments() else {
                    throw .refused(
                        errno: EXDEV, rule: "this Stud.IP API cannot move documents between folders (JSON:API)")
                }
                try requireWritable(try place(newParent))
            }
            switch target {
            case .draft(let replaced):
                guard replaced.state != .queued else {
                    throw .refused(errno: EBUSY, rule: "\(newName) is in the outbox (`campusfs outbox` discards it)")
                }
                try drop(replaced)
            case .document(let replacedNode, let replacedInfo):
                try requireEditable(replacedInfo)
                try change(replacedNode, info: replacedInfo) { $0.isDeleted = true }
            case .other: throw .refused(errno: EACCES, rule: "\(newName) is not yours to replace")
            case .none: break
            }
            try change(node, info: info) { change in
                change.parent = newParent
                change.name = newName
                change.isDeleted = false
            }
        case .other(let node):
            throw .refused(
                errno: node.kind == .directory ? EACCES : EROFS, rule: "\(name) cannot be renamed from the mount")
        case .none:
            throw .refused(errno: ENOENT, rule: "\(name) does not exist")
        }
    }

    // MARK: - Rows and files

    private func requireEditable(_ info: DocumentInfo) throws(WorkspaceError) {
        guard !info.isEditable else { return }
        throw .refused(
            errno: EACCES,
            rule: "Stud.IP does not let you rename, move or delete document \(info.id) (is-editable is off)")
    }

    /// The store's document at `parent`/`name` in the store (whatever the overlay shows there).
    private func coveredDocument(parent: Int64, name: String) throws(WorkspaceError) -> (
        node: Node, info: DocumentInfo
    )? {
        try storing { () throws(StoreError) in
            guard let node = try store.lookup(parent: parent, name: name),
                let info = try store.document(inode: node.inode)
            else { return nil }
            return (node, info)
        }
    }

    /// Records a local rename or deletion of the store's document; one back to where the store has it is none.
    private func change(
        _ node: Node, info: DocumentInfo, _ body: (inout DocumentChangeRecord) -> Void
    ) throws(WorkspaceError) {
        var change =
            state.withLock { $0.changes[node.inode] }
            ?? DocumentChangeRecord(
                inode: node.inode, documentID: info.id, parent: node.parentInode ?? 0, name: node.name)
        guard change.outboxID == nil else {
            throw .refused(errno: EBUSY, rule: "\(change.name)'s last change is in the outbox")
        }
        body(&change)
        if !change.isDeleted, change.parent == node.parentInode, change.name == node.name {
            try forgetChange(of: node.inode)
            return
        }
        try storing { () throws(StoreError) in try store.saveDocumentChange(change) }
        state.withLock { state in
            state.changes[node.inode] = change
            state.quietSince[.change(node.inode)] = now()
        }
    }

    func forgetChange(of inode: Int64) throws(WorkspaceError) {
        try storing { () throws(StoreError) in try store.deleteDocumentChange(inode: inode) }
        state.withLock { state in
            state.changes[inode] = nil
            state.quietSince[.change(inode)] = nil
        }
    }

    /// Stores a new draft and makes its file: empty, or a copy of `content`. `opening`: the caller's open of it is
    /// claimed (see ``openForWriting(_:truncating:)``).
    private func insert(_ draft: DraftRecord, copying source: Int32?, opening: Bool = false) throws(WorkspaceError)
        -> DraftRecord
    {
        var draft = draft
        // A new file or an `O_TRUNC` open is written from its first byte on: marked in the same write (``touched(_:)``).
        draft.isBeingWritten = opening && draft.isChanged && !draft.isFolder
        let saved = try storing { () throws(StoreError) in try store.saveDraft(draft) }
        guard let id = saved.id else { return saved }
        if !saved.isFolder {
            do throws(WorkspaceError) {
                try makeFile(path(ofDraft: id), copying: source)
            } catch {
                try? storing { () throws(StoreError) in try store.deleteDraft(id: id) }
                throw error
            }
        }
        return try writes.withLock { _ throws(WorkspaceError) -> DraftRecord in
            // A local folder that went meanwhile (Stud.IP made it, its drafts moved to the store's folder): the
            // kernel looks the directory up again.
            if saved.parent > Self.inodeBase, state.withLock({ $0.drafts[saved.parent - Self.inodeBase] == nil }) {
                try? storing { () throws(StoreError) in try store.deleteDraft(id: id) }
                if !saved.isFolder { unlink(path(ofDraft: id)) }
                throw .refused(errno: ESTALE, rule: "the folder of \(saved.name) was replaced")
            }
            let shown = state.withLock { $0.resolved(saved) }
            if shown != saved { _ = try storing { () throws(StoreError) in try store.saveDraft(shown) } }
            state.withLock { state in
                state.drafts[id] = shown
                state.quietSince[.draft(id)] = now()
                if opening { state.openCount[id, default: 0] += 1 }
            }
            learnBaseETag(of: shown)
            return shown
        }
    }

    /// Writes `draft` as it is now, in the store and the overlay (one that follows a draft Stud.IP has confirmed
    /// since takes what that made: ``State/resolved(_:)``). Every change of a draft that exists goes through this
    /// or ``update(_:_:)``, one at a time, so that two of them (a write's first byte and a confirmation's release)
    /// never write back each other's stale copies.
    func save(_ draft: DraftRecord) throws(WorkspaceError) {
        guard draft.id != nil else { return }
        try writes.withLock { _ throws(WorkspaceError) in _ = try persist(draft) }
    }

    /// Changes the current record of draft `id`, unless it is gone or `applies` says no (asked under the same
    /// lock); returns what it became.
    @discardableResult
    func update(
        _ id: Int64, if applies: (DraftRecord) -> Bool = { _ in true }, _ change: (inout DraftRecord) -> Void
    ) throws(WorkspaceError) -> DraftRecord? {
        try writes.withLock { _ throws(WorkspaceError) -> DraftRecord? in
            guard var draft = state.withLock({ $0.drafts[id] }), applies(draft) else { return nil }
            change(&draft)
            return try persist(draft)
        }
    }

    /// Writes `draft` (resolved, ``State/resolved(_:)``) to the store, then the overlay; returns what was kept. Only
    /// while holding ``writes``.
    func persist(_ draft: DraftRecord) throws(WorkspaceError) -> DraftRecord {
        let shown = state.withLock { $0.resolved(draft) }
        _ = try storing { () throws(StoreError) in try store.saveDraft(shown) }
        if let id = shown.id { state.withLock { $0.drafts[id] = shown } }
        return shown
    }

    /// Deletes draft `id`'s row, then takes it out of the overlay (its file is the caller's). Only while holding
    /// ``writes``.
    func forget(_ id: Int64) throws(WorkspaceError) {
        try storing { () throws(StoreError) in try store.deleteDraft(id: id) }
        state.withLock { state in
            state.drafts[id] = nil
            state.quietSince[.draft(id)] = nil
            state.confirmed[id] = nil
        }
    }

    /// Forgets a draft and removes its bytes. A refused one's entry leaves the outbox too, so that `campusfs outbox
    /// retry` cannot send bytes the tree no longer shows (the user replaced or deleted them).
    func drop(_ draft: DraftRecord) throws(WorkspaceError) {
        guard let id = draft.id else { return }
        if draft.state == .failed { discardEntries(ofDraft: id) }
        try writes.withLock { _ throws(WorkspaceError) in try forget(id) }
        if !draft.isFolder { unlink(path(ofDraft: id)) }
    }

    /// A draft's file, with the bytes of the open file `input` if given (read from its start).
    private func makeFile(_ path: String, copying input: Int32?) throws(WorkspaceError) {
        let target = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard target >= 0 else { throw .file(path: path, operation: "create", errno: errno) }
        defer { close(target) }
        guard let input else { return }
        guard lseek(input, 0, SEEK_SET) == 0 else { throw .file(path: path, operation: "copy into", errno: errno) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw .file(path: path, operation: "copy into", errno: errno) }
            if count == 0 { return }
            var written = 0
            while written < count {
                let result = buffer[written..<count].withUnsafeBytes { write(target, $0.baseAddress, $0.count) }
                if result < 0, errno == EINTR { continue }
                guard result > 0 else { throw .file(path: path, operation: "write", errno: errno) }
                written += result
            }
        }
    }

    func storing<T>(_ body: () throws(StoreError) -> T) throws(WorkspaceError) -> T {
        do throws(StoreError) {
            return try body()
        } catch {
            throw .store(error)
        }
    }
}
