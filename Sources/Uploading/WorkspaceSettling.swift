import Foundation
import Glibc
import MetadataStore
import NamingRules
import StudIPModel
import SystemSupport

/// Settling and reconciliation (docs/writing.md, "Local first: drafts"): a change becomes outbox operations only
/// when it is closed, under a final name, and was left alone for the settle time, so that an editor's dance of
/// temporary files and renames ends as one operation; and what the outbox reports back.
extension Workspace {
    /// Settles every change whose time has come, as long as the workspace lives: how the daemon runs it.
    public func run() async {
        let interval = max(configuration.settleTime / 4, .milliseconds(100))
        // Apart: a refresh a confirmed draft waits for may wait for the refresh slot, and settling never waits.
        async let confirming: Void = {
            while !Task.isCancelled {
                await showConfirmedDrafts()
                try? await Task.sleep(for: .seconds(1))
            }
        }()
        while !Task.isCancelled {
            await settle()
            try? await Task.sleep(for: interval)
        }
        await confirming
    }

    /// Reconciles what is due now into outbox operations. A draft goes before the drafts made after it, so a folder
    /// made locally is queued before the files copied into it, which then name it by its outbox entry.
    public func settle() async {
        let due = state.withLock { state in
            let instant = now()
            return state.quietSince.filter { key, since in
                if case .draft(let id) = key, state.openCount[id] != nil { return false }
                return instant - since >= configuration.settleTime
            }.keys
        }
        for case .draft(let id) in due.sorted(by: Self.order) {
            await reconcileDraft(id)
        }
        // Deletions first: a document renamed over another (`mv b a`) must not meet the name still taken.
        let changes = state.withLock { state in
            due.compactMap { key -> DocumentChangeRecord? in
                guard case .change(let inode) = key else { return nil }
                return state.changes[inode]
            }
        }
        for change in changes.sorted(by: { $0.isDeleted && !$1.isDeleted }) {
            await reconcileChange(change.inode)
        }
    }

    private static func order(_ first: Pending, _ second: Pending) -> Bool {
        switch (first, second) {
        case (.draft(let a), .draft(let b)): a < b
        case (.draft, .change): true
        case (.change, _): false
        }
    }

    private func stopWaiting(_ key: Pending) {
        state.withLock { _ = $0.quietSince.removeValue(forKey: key) }
    }

    private func reconcileDraft(_ id: Int64) async {
        guard let draft = state.withLock({ $0.drafts[id] }), draft.state == .editing else {
            stopWaiting(.draft(id))
            return
        }
        // A temporary name stays local until renamed (which starts the wait again) or deleted.
        if TemporaryName.isTemporary(draft.name) {
            stopWaiting(.draft(id))
            return
        }
        // The earlier draft of this name is still in the outbox: its outcome tells what this one becomes.
        if let earlier = draft.follows, state.withLock({ $0.drafts[earlier] != nil }) { return }
        // From here its bytes are on their way: an open gets a new draft, a rename or delete waits (`EBUSY`). Claimed
        // only if nothing opened, renamed or wrote it since `settle()` found it due; else it waits for its next quiet.
        let claimed = state.withLock { state -> Bool in
            guard state.drafts[id] == draft, state.openCount[id] == nil, let since = state.quietSince[.draft(id)],
                now() - since >= configuration.settleTime
            else { return false }
            state.settling.insert(id)
            return true
        }
        guard claimed else { return }
        defer { state.withLock { _ = $0.settling.remove(id) } }
        // Opened for writing and closed unwritten: the document shows again as the store has it.
        if !draft.isChanged, !draft.isFolder {
            stopWaiting(.draft(id))
            do {
                try await BlockingPool.shared.run { () throws(WorkspaceError) in try self.drop(draft) }
            } catch {
                logger.error("cannot drop the unchanged draft \(draft.name): \(error)")
            }
            invalidate(Invalidation(names: [.init(parent: draft.parent, name: draft.name)], inodes: [draft.parent]))
            return
        }
        let folder: FolderReference
        switch await folderReference(draft.parent) {
        case .some(.some(let reference)): folder = reference
        case .some(.none): return  // its local folder is not queued yet
        case .none:
            stopWaiting(.draft(id))
            return
        }
        let operation: OutboxOperation =
            if draft.isFolder {
                .makeFolder(parent: folder, name: draft.name)
            } else if let documentID = draft.documentID, let base = draft.baseVersion, case .folder(let id) = folder {
                .newVersion(
                    documentID: documentID, name: draft.name, base: base, folderID: id, baseETag: draft.baseETag)
            } else {
                .upload(folder: folder, name: draft.name, terms: configuration.terms)
            }
        // The outbox takes the bytes over by rename; a second link keeps the draft's own file, which the tree still
        // shows. A later write opens a new draft (``openForWriting(_:truncating:)``), so the bytes sent stay as they are.
        let bytes = draft.isFolder ? nil : path(ofDraft: id) + ".queued"
        do {
            if let bytes {
                try await BlockingPool.shared.run { () throws(WorkspaceError) in
                    unlink(bytes)
                    guard link(self.path(ofDraft: id), bytes) == 0 else {
                        throw .file(path: bytes, operation: "link", errno: errno)
                    }
                }
            }
            var queued = draft
            queued.state = .queued
            queued.outboxID = try await outbox.enqueue(operation, bytes: bytes, draftID: id)
            queued.follows = nil
            let sent = queued
            try await BlockingPool.shared.run { () throws(WorkspaceError) in
                try self.save(sent)
                // The draft carries the document's new content and name: a rename-away of it is absorbed.
                if let documentID = draft.documentID {
                    for change in self.state.withLock({ $0.changes.values.filter { $0.documentID == documentID } })
                    where change.outboxID == nil {
                        try self.forgetChange(of: change.inode)
                    }
                }
            }
            stopWaiting(.draft(id))
        } catch {
            if let bytes { await BlockingPool.shared.run { _ = unlink(bytes) } }
            logger.error("cannot queue \(draft.name) for Stud.IP: \(error); trying again")
            state.withLock { $0.quietSince[.draft(id)] = now() }
        }
    }

    /// The folder an operation goes into: a Stud.IP folder, or the outbox entry making a local one. nil: the folder
    /// is gone or no longer writable (logged); `.some(nil)`: a local folder not queued yet.
    private func folderReference(_ parent: Int64) async -> FolderReference?? {
        if let local = draft(inode: parent) {
            // Made on Stud.IP: its id (the entry that made it is gone from the outbox once it reported).
            if let made = local.documentID { return .some(.folder(made)) }
            // Confirmed without an id (before a restart): it waits until the store lists the folder.
            if let id = local.id, state.withLock({ $0.confirmed[id] != nil }) { return .some(nil) }
            return .some(local.outboxID.map { .madeBy(entry: $0) })
        }
        do {
            let access = try await store.run { store throws(StoreError) in try store.folderAccess(inode: parent) }
            guard let access else {
                logger.warning("the folder of inode \(parent) is gone; its drafts stay local")
                return nil
            }
            return .some(.folder(access.folderID))
        } catch {
            logger.error("cannot read the folder of inode \(parent): \(error)")
            return nil
        }
    }

    private func reconcileChange(_ inode: Int64) async {
        guard let change = state.withLock({ $0.changes[inode] }), change.outboxID == nil else {
            stopWaiting(.change(inode))
            return
        }
        // A draft being written as the document's new content absorbs the change (vim's rename-away dance).
        let absorbed = state.withLock { state in
            state.drafts.values.contains { $0.documentID == change.documentID && $0.state == .editing }
        }
        if absorbed {
            stopWaiting(.change(inode))
            return
        }
        if !change.isDeleted, TemporaryName.isTemporary(change.name) {
            stopWaiting(.change(inode))
            return
        }
        do {
            guard let node = try await store.run({ store throws(StoreError) in try store.node(inode: inode) }) else {
                try await BlockingPool.shared.run { () throws(WorkspaceError) in try self.forgetChange(of: inode) }
                return
            }
            var operations: [OutboxOperation] = []
            if change.isDeleted {
                operations.append(.delete(documentID: change.documentID))
            } else {
                if change.parent != node.parentInode {
                    guard case .some(.some(let folder)) = await folderReference(change.parent) else { return }
                    operations.append(.move(documentID: change.documentID, folder: folder))
                }
                if change.name != node.name {
                    operations.append(.rename(documentID: change.documentID, name: change.name))
                }
            }
            var entry: Int64?
            for operation in operations {
                entry = try await outbox.enqueue(operation, bytes: nil, draftID: nil)
            }
            let queued = DocumentChangeRecord(
                inode: change.inode, documentID: change.documentID, parent: change.parent, name: change.name,
                isDeleted: change.isDeleted, outboxID: entry)
            try await store.run { store throws(StoreError) in try store.saveDocumentChange(queued) }
            state.withLock { state in
                state.changes[inode] = queued
                state.quietSince[.change(inode)] = nil
            }
        } catch {
            logger.error("cannot queue the change of \(change.name) for Stud.IP: \(error); trying again")
            state.withLock { $0.quietSince[.change(inode)] = now() }
        }
    }

    // MARK: - Outcomes

    /// What the outbox reports (its `onSettled`): a confirmed draft stays until its course was refreshed and the store
    /// lists the document under the name Stud.IP gave; a homework hand-in stays as a read-only copy (`handed-in`);
    /// a refused or conflicting one stays with its state. Drafts waiting for this one become new versions of what it
    /// made.
    public func settled(_ entry: OutboxEntry, _ outcome: OutboxOutcome) async {
        // A quick server answers before settling recorded which entry the draft went to: wait for that (the
        // outbox keeps the entry until this returns), or the outcome would find no draft and the draft stay queued.
        if let id = entry.draftID {
            for _ in 0..<1000 where state.withLock({ $0.settling.contains(id) }) {
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
        do {
            // A refused draft keeps no entry id; the entry keeps the draft's, and `campusfs outbox retry` may send it.
            let draft = state.withLock { state in
                state.drafts.values.first { $0.outboxID == entry.id }
                    ?? entry.draftID.flatMap { state.drafts[$0] }.flatMap { $0.state == .failed ? $0 : nil }
            }
            if let draft {
                try await settledDraft(draft, outcome, of: entry.id)
            } else if let change = state.withLock({ $0.changes.values.first { $0.outboxID == entry.id } }) {
                try await settledChange(change, outcome)
            }
        } catch {
            logger.error("cannot record the outcome of outbox entry \(entry.id): \(error)")
        }
    }

    /// Applies `outcome` of entry `entryID` to `draft`, as ``settled(_:_:)`` looked it up (internal: a test drives
    /// a rename between the look-up and this).
    func settledDraft(_ draft: DraftRecord, _ outcome: OutboxOutcome, of entryID: Int64)
        async throws(WorkspaceError)
    {
        guard let id = draft.id else { return }
        var document: RemoteDocument?
        var madeFolder: RemoteFolder?
        var kept = draft
        switch outcome {
        case .done(let made):
            document = made
            kept.state = .queued
            // No document: a homework hand-in (a student cannot read it back), or a read-back that failed
            // elsewhere, which the course's refresh then shows.
            if made == nil, draft.documentID == nil, !draft.isFolder, await isHomework(draft.parent) {
                kept.state = .handedIn
            }
        case .madeFolder(let folder):
            madeFolder = folder
            kept.state = .queued
        case .failed(let reason), .unconfirmed(let reason):
            kept.state = .failed
            kept.detail = reason
        case .conflict:
            // Both are on Stud.IP: the lecturer's version under the name, the user's beside it as "(yours)"
            // (the notification names it). The draft goes once the refreshed course shows both.
            kept.state = .queued
        case .discarded:
            kept.state = .failed
            kept.detail = Self.discardedDetail
        }
        let confirmed = kept.state == .queued
        if !confirmed {
            let unsent = kept
            let applied = try await BlockingPool.shared.run { () throws(WorkspaceError) -> Bool in
                // Only while the draft still stands for this entry: a rename or delete may have taken it back
                // since it was looked up (``withdraw(_:)``), and the draft is being edited again.
                let kept = try self.update(id, if: { $0.outboxID == entryID || $0.state == .failed }) {
                    $0.state = unsent.state
                    $0.detail = unsent.detail
                    $0.outboxID = nil
                }
                guard kept != nil else { return false }
                // After a conflict or a refusal the followers have no version to start from: they conflict in turn.
                try self.release(followersOf: id, base: nil)
                return true
            }
            guard applied else {
                logger.info("\(draft.name) was taken back from the outbox before entry \(entryID)'s outcome came")
                return
            }
            invalidate(Invalidation(names: [.init(parent: draft.parent, name: draft.name)], inodes: [draft.parent]))
            return
        }
        // What it made is what saves from now on are new versions of: the draft's own fields say so, so that an
        // open or a rename over it meanwhile starts from the right document, and waits for nothing.
        let (made, folder) = (document, madeFolder)
        try await BlockingPool.shared.run { () throws(WorkspaceError) in
            try self.update(id) { shown in
                shown.state = .queued
                if let made, !draft.isFolder {
                    shown.documentID = made.id
                    shown.baseVersion = DocumentVersion(fileID: made.fileID, size: made.size)
                    // Its content's ETag is not asked for: file id and size decide for a save over it.
                    shown.baseETag = nil
                }
                // A folder's drafts go into the folder Stud.IP made from now on, its outbox entry being done.
                if let folder, draft.isFolder { shown.documentID = folder.id }
            }
            // Tried at once below; again after 15 s if that refresh fails.
            self.state.withLock { $0.confirmed[id] = Confirmation(retryAt: self.now() + .seconds(15)) }
            try self.release(followersOf: id, base: made)
        }
        // One's own new version: the cache's copy of the document is the content it replaced.
        if let made, draft.documentID != nil, !draft.isFolder { await newVersionMade?(made.id) }
        await showConfirmed(id)
    }

    /// Tries again for the confirmed drafts whose time has come (``showConfirmed(_:)``); their next try is
    /// scheduled first, so that a slow refresh is not asked for twice.
    func showConfirmedDrafts() async {
        let due = state.withLock { state in
            let instant = now()
            let due = state.confirmed.filter { $0.value.retryAt <= instant }.keys.sorted()
            for id in due { state.confirmed[id]?.schedule(after: instant) }
            return due
        }
        for id in due { await showConfirmed(id) }
    }

    /// Drops the confirmed draft `id` once a refresh of its course that started after the confirmation worked, so
    /// the tree shows what Stud.IP made of it under Stud.IP's name, and never neither: until then the draft stays
    /// and ``run()`` tries again with backoff (offline, a timeout, the course's listing failed). A save over it
    /// meanwhile is a new version of what it made.
    func showConfirmed(_ id: Int64) async {
        guard let draft = state.withLock({ $0.drafts[id] }) else {
            state.withLock { _ = $0.confirmed.removeValue(forKey: id) }
            return
        }
        // Without a daemon (`campusfs outbox retry` sends alone) nothing refreshes: the daemon's next start does.
        guard let refresh = refreshCourse else { return }
        let refreshed: Bool
        do throws(StoreError) {
            // A folder no longer in the store has no course to wait for: what was made in it is gone too.
            if let courseID = try await courseID(of: draft.parent) {
                refreshed = await refresh(courseID)
            } else {
                refreshed = true
            }
        } catch {
            logger.error("cannot read the course of \(draft.name): \(error); trying again")
            return
        }
        guard refreshed else { return }
        do {
            let adopted = try await BlockingPool.shared.run { () throws(WorkspaceError) -> Int64?? in
                var folder: Int64?
                if draft.isFolder {
                    // Its drafts move to the folder Stud.IP made, once the store lists it; until then it stays.
                    guard
                        let node = try self.storing({ () throws(StoreError) in
                            try self.store.lookup(parent: draft.parent, name: draft.name)
                        })
                    else { return nil }
                    folder = node.inode
                }
                return try self.dropConfirmed(draft, movingChildrenTo: folder) ? .some(folder) : nil
            }
            guard let adopted else { return }
            var invalidation = Invalidation(
                names: [.init(parent: draft.parent, name: draft.name)], inodes: [draft.parent, Self.inode(ofDraft: id)])
            if let adopted { invalidation.inodes.append(adopted) }
            invalidate(invalidation)
        } catch {
            logger.error("cannot drop the confirmed draft \(draft.name): \(error); trying again")
        }
    }

    /// Forgets a confirmed draft, unless an open or a rename pins it (then it stays for the next try); a folder's
    /// drafts move into the store's `folder` in the same step. Under the lock every draft write takes, so a draft
    /// written meanwhile into the folder is moved too, or finds the folder gone (``insert(_:copying:opening:)``).
    private func dropConfirmed(_ draft: DraftRecord, movingChildrenTo folder: Int64?) throws(WorkspaceError) -> Bool {
        guard let id = draft.id else { return true }
        let gone = try writes.withLock { _ throws(WorkspaceError) -> Bool in
            guard state.withLock({ $0.openCount[id] == nil }) else { return false }
            if let folder {
                let inode = Self.inode(ofDraft: id)
                for var child in state.withLock({ $0.drafts.values.filter { $0.parent == inode } }) {
                    child.parent = folder
                    _ = try persist(child)
                }
            }
            try forget(id)
            return true
        }
        if gone, !draft.isFolder { unlink(path(ofDraft: id)) }
        return gone
    }

    /// The drafts that waited for draft `id`'s outcome may settle now; `base`: the document it made, which they
    /// are new versions of.
    private func release(followersOf id: Int64, base: RemoteDocument?) throws(WorkspaceError) {
        // Found and changed under the lock every draft write takes: a follower written meanwhile is not missed.
        try writes.withLock { _ throws(WorkspaceError) in
            for var follower in state.withLock({ $0.drafts.values.filter { $0.follows == id } }) {
                follower.follows = nil
                if let base {
                    follower.documentID = base.id
                    follower.baseVersion = DocumentVersion(fileID: base.fileID, size: base.size)
                    follower.baseETag = nil
                }
                _ = try persist(follower)
            }
        }
    }

    /// Whether directory `inode` is a homework folder (a local folder never is).
    private func isHomework(_ inode: Int64) async -> Bool {
        guard draft(inode: inode) == nil else { return false }
        do {
            return try await store.run { store throws(StoreError) in try store.folderAccess(inode: inode) }?.isHomework
                ?? false
        } catch {
            logger.error("cannot read the folder of inode \(inode): \(error)")
            return false
        }
    }

    private func settledChange(_ change: DocumentChangeRecord, _ outcome: OutboxOutcome) async throws(WorkspaceError) {
        if case .failed(let reason) = outcome {
            logger.warning("Stud.IP refused the change of \(change.name): \(reason); it shows as Stud.IP has it")
        } else if let courseID = try? await courseID(of: change.parent), let refresh = refreshCourse {
            _ = await refresh(courseID)
        }
        try await BlockingPool.shared.run { () throws(WorkspaceError) in try self.forgetChange(of: change.inode) }
        invalidate(Invalidation(names: [.init(parent: change.parent, name: change.name)], inodes: [change.parent]))
    }

    /// The course a directory (a store folder or a local folder) belongs to; nil when the store has no such folder.
    private func courseID(of directory: Int64) async throws(StoreError) -> String? {
        var inode = directory
        while let local = draft(inode: inode) { inode = local.parent }
        let parent = inode
        return try await store.run { store throws(StoreError) in try store.folderAccess(inode: parent)?.courseID }
    }
}
