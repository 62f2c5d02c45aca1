import AsyncHelpers
import Foundation
import MetadataStore
import StudIPKit
import StudIPModel

/// The sender: one entry at a time, oldest first among those that may go (docs/writing.md, "The outbox").
extension Outbox {
    /// Sends until cancelled. At the start it finishes what a crash interrupted: bytes not yet moved into the
    /// outbox, outcomes not yet reported, entries found `sending` (checked on Stud.IP before they are sent again).
    /// While another process sends from the same data directory, it waits for that one to end.
    public func run() async {
        // One sender per outbox: a second would send the same entry twice.
        guard !running else { return }
        running = true
        defer { running = false }
        guard let lock = await senderLock() else { return }
        defer { withExtendedLifetime(lock) {} }
        await recover()
        while !Task.isCancelled {
            let rows: [OutboxRow]
            let arriving: Bool
            do {
                (rows, arriving) = try await rowsToSend()
            } catch {
                logger.error("outbox: \(error)")
                await sleep(until: Date().addingTimeInterval(backoff.initial.seconds))
                continue
            }
            let recorded: Bool
            if let settled = rows.first(where: { $0.state == OutboxState.settled.rawValue }) {
                recorded = await report(settled)
            } else if let next = Self.next(in: rows, now: Date()) {
                recorded = await attempt(next)
            } else {
                var due = rows.filter { $0.state == OutboxState.waiting.rawValue }.map { $0.notBefore ?? .distantPast }
                // An enqueue in another process (`campusfs upload`) does not wake this one.
                if arriving { due.append(Date().addingTimeInterval(Self.lockPollInterval.seconds)) }
                await sleep(until: due.min())
                continue
            }
            // The store would not take the outcome (a full disk): not the same entry again at once.
            if !recorded { await sleep(until: Date().addingTimeInterval(backoff.initial.seconds)) }
        }
    }

    /// The cross-process lock of the sender (``OutboxLock``), waited for while another process holds it; nil
    /// when cancelled first.
    private func senderLock() async -> OutboxLock? {
        var told = false
        while !Task.isCancelled {
            let bytes = self.bytes
            do {
                if let lock = try await pool.run({ () throws(OutboxError) in try OutboxLock.acquire(in: bytes) }) {
                    return lock
                }
                if !told { logger.notice("outbox: another process is sending from \(bytes.directory.path); waiting") }
                told = true
            } catch {
                logger.error("outbox: \(error)")
            }
            await sleep(until: Date().addingTimeInterval(Self.lockPollInterval.seconds))
        }
        return nil
    }

    /// How often a sender looks whether the other process's sender ended.
    static let lockPollInterval = Duration.seconds(2)

    /// The entry to send now: queued, or waiting and due, and neither behind an unsettled entry on the same
    /// document nor waiting for a folder an entry still has to make.
    /// The rows, without those whose bytes are still being moved in: `enqueue` commits the row before it renames
    /// the bytes into the outbox, and the sender must not take their absence for lost bytes. `arriving`: some were
    /// left out.
    func rowsToSend() async throws(OutboxError) -> (rows: [OutboxRow], arriving: Bool) {
        let (store, bytes) = (self.store, self.bytes)
        return try await pool.run { () throws(OutboxError) in
            let rows = try OutboxCoding.storing { () throws(StoreError) in try store.outboxRows() }
            let ready = rows.filter { row in
                row.byteCount == nil || bytes.exists(row.id) || row.bytesSource.map { access($0, F_OK) != 0 } ?? true
            }
            return (ready, ready.count < rows.count)
        }
    }

    /// Before the first attempt: the ids already under `name` (or Stud.IP's `name[n]`) where it goes, so that what an
    /// interrupted attempt made can be told from what was there; a folder the user cannot list (homework) is noted
    /// as such. The attempt's outcome when the listing fails otherwise.
    private func noteExisting(
        _ name: String, _ progress: inout OutboxProgress,
        listing: () async throws(StudIPError) -> [(id: String, name: String)]
    ) async -> Attempt? {
        guard progress.before == nil, !progress.unlistable else { return nil }
        do {
            progress.before = Set(try await listing().filter { Self.isStudIPName($0.name, for: name) }.map(\.id))
        } catch {
            guard case .forbidden = error else { return Self.verdict(error) }
            progress.unlistable = true
        }
        return nil
    }

    static func next(in rows: [OutboxRow], now: Date) -> OutboxRow? {
        let present = Set(rows.map(\.id))
        var busyDocuments = Set<String>()
        for row in rows {
            guard let entry = row.entry else { continue }
            let document = entry.operation.documentID
            defer { if let document { busyDocuments.insert(document) } }
            if let document, busyDocuments.contains(document) { continue }
            if let awaited = entry.operation.awaitedEntry, present.contains(awaited) { continue }
            switch entry.state {
            case .queued: return row
            case .waiting where (entry.notBefore ?? .distantPast) <= now: return row
            default: continue
            }
        }
        return nil
    }

    // MARK: - One attempt

    /// What an attempt came to.
    enum Attempt {
        case settled(OutboxOutcome)
        case waiting(reason: String)
        case failed(reason: String)
        case unconfirmed(reason: String)
        /// The entry was discarded before it was sent.
        case discarded

        var isSettled: Bool {
            if case .settled = self { return true }
            return false
        }
    }

    /// Sends `row` once; false when its outcome could not be recorded.
    func attempt(_ row: OutboxRow) async -> Bool {
        guard let entry = row.entry else { return false }
        sendingEntry = row.id
        defer { sendingEntry = nil }
        var row = row
        row.attempts += 1
        var progress = OutboxProgress(row.progress)
        // Written down from this attempt on, so that an attempt that ends before its request leaves does not count
        // as sent (``OutboxProgress/sent(after:)``).
        if entry.operation.carriesBytes, progress.requestLeft == nil {
            progress.requestLeft = progress.sent(after: row.attempts - 1)
        }
        let result: Attempt
        switch entry.operation {
        case .upload(.folder(let folder), let name, let terms):
            result = await upload(&row, &progress, into: folder, name: name, terms: terms)
        case .newVersion(let document, let name, let base, let folder, let baseETag):
            result = await newVersion(
                &row, &progress, of: document, in: folder, name: name, base: (base, baseETag))
        case .rename(let document, let name):
            result = await once(&row) { writer throws(StudIPError) in
                .done(try await writer.rename(documentID: document, to: name))
            }
        case .move(let document, .folder(let folder)):
            result = await once(&row) { writer throws(StudIPError) in
                .done(try await writer.move(documentID: document, toFolder: folder))
            }
        case .delete(let document):
            result = await once(&row) { writer throws(StudIPError) in
                do throws(StudIPError) {
                    try await writer.delete(documentID: document)
                } catch {
                    // Gone already: an earlier attempt whose answer was lost, or someone else deleted it.
                    guard case .notFound = error else { throw error }
                }
                return .done(nil)
            }
        case .makeFolder(.folder(let parent), let name):
            result = await makeFolder(&row, &progress, in: parent, name: name)
        case .upload(.madeBy, _, _), .move(_, .madeBy), .makeFolder(.madeBy, _):
            // `next(in:now:)` holds these back until the folder is made and the reference resolved.
            return false
        }
        row.progress = progress.text
        return await finish(row, result)
    }

    /// A rename, move or delete: sending it again does no harm, so no check before.
    private func once(
        _ row: inout OutboxRow, _ body: @Sendable (any DocumentWriter) async throws(StudIPError) -> OutboxOutcome
    ) async -> Attempt {
        if let failure = await markSending(&row) { return failure }
        do {
            return .settled(try await body(writer))
        } catch {
            return Self.verdict(error)
        }
    }

    /// A new document. Before the first attempt the folder is listed (which documents of that name it already
    /// holds); an attempt that may have arrived is looked for there before the bytes go again. A folder the user
    /// cannot list (homework) leaves only the answer: an interrupted attempt there is unconfirmed.
    private func upload(
        _ row: inout OutboxRow, _ progress: inout OutboxProgress, into folder: String, name: String, terms: String?
    ) async -> Attempt {
        let size = row.byteCount ?? 0
        if progress.mayHaveArrived {
            if progress.unlistable {
                return .unconfirmed(
                    reason: "the upload of \(name) was interrupted and a homework folder cannot be listed to see "
                        + "whether it arrived; retry it to hand it in again (a second copy is possible)")
            }
            do {
                if let found = try await arrived(name, size: size, in: folder, before: progress.before ?? []) {
                    logger.info("outbox: \(row.id) had arrived as \(found.name) (\(found.id))")
                    return .settled(.done(found))
                }
            } catch {
                return Self.verdict(error)
            }
            progress.mayHaveArrived = false
        }
        if let failure = await noteExisting(
            name, &progress,
            listing: { () async throws(StudIPError) in
                try await writer.documents(inFolder: folder).map { ($0.id, $0.name) }
            })
        {
            return failure
        }
        let wasSent = progress.requestLeft ?? false
        progress.mayHaveArrived = true
        progress.requestLeft = true
        row.progress = progress.text
        if let failure = await markSending(&row) { return failure }
        let receipt: UploadReceipt
        do {
            receipt = try await writer.upload(
                file: bytes.url(of: row.id).path, toFolder: folder, name: name, termsID: terms, progress: nil)
        } catch {
            if !Self.mayHaveArrived(after: error) {
                progress.didNotArrive(sentBefore: wasSent || !Self.provesNothingStored(error))
            }
            return Self.verdict(error)
        }
        switch receipt.outcome {
        case .stored(let document): return Self.confirm(document, sent: size)
        case .storedUnreadable: return .settled(.done(nil))
        case .storedUnverified:
            guard let id = receipt.documentID, let document = try? await writer.document(id: id) else {
                return .settled(.done(nil))
            }
            return Self.confirm(document, sent: size)
        case .maybeStored:
            do {
                if let found = try await arrived(name, size: size, in: folder, before: progress.before ?? []) {
                    return .settled(.done(found))
                }
            } catch {
                return Self.verdict(error)
            }
            progress.mayHaveArrived = false
            return .waiting(
                reason: "Stud.IP's answer to the upload of \(name) left open whether it was stored, "
                    + "and the folder does not show it")
        }
    }

    /// A new version, unless the document changed on Stud.IP since the draft's base or is gone: then the bytes go
    /// up as a new document beside it (the decision is kept, so that a retry goes on with it). Changed means another
    /// file id or size, or, where the draft knew its base's content `ETag`, another one now (one HEAD): JSON:API
    /// replaces content at the same size without changing either.
    private func newVersion(
        _ row: inout OutboxRow, _ progress: inout OutboxProgress, of documentID: String, in folder: String?,
        name: String, base: (version: DocumentVersion, etag: String?)
    ) async -> Attempt {
        if let keptAs = progress.keptAs, let conflictFolder = progress.conflictFolder,
            let cause = progress.conflictCause
        {
            let result = await upload(&row, &progress, into: conflictFolder, name: keptAs, terms: nil)
            return Self.conflict(result, cause: cause)
        }
        let size = row.byteCount ?? 0
        var current: RemoteDocument?
        do {
            current = try await writer.document(id: documentID)
        } catch {
            guard case .notFound = error else { return Self.verdict(error) }
            current = nil
        }
        var replaced = current.map { $0.version != base.version } ?? true
        if !replaced, let known = base.etag {
            do {
                // nil: the API has none (legacy REST) or the document is hosted elsewhere; file id and size decide.
                if let etag = try await writer.contentETag(documentID: documentID) { replaced = etag != known }
            } catch {
                guard case .notFound = error else { return Self.verdict(error) }
                current = nil
                replaced = true
            }
        }
        guard let current, !replaced else {
            if let current, progress.mayHaveArrived, current.size == size {
                // The interrupted attempt stored it (JSON:API keeps the file id, legacy REST makes a new one).
                return .settled(.done(current))
            }
            guard let conflictFolder = current?.folderID ?? folder else {
                return .failed(
                    reason: "document \(documentID) is gone from Stud.IP, and the outbox entry does not say "
                        + "which folder it was in; the bytes are kept: copy them into the folder again")
            }
            progress.keptAs = current == nil ? name : Self.yours(name)
            progress.conflictFolder = conflictFolder
            progress.conflictCause = current == nil ? .gone : .changed
            progress.mayHaveArrived = false
            let what = current == nil ? "is gone" : "changed on Stud.IP"
            logger.notice("outbox: \(row.id): document \(documentID) \(what); uploading as \(progress.keptAs ?? name)")
            return await newVersion(&row, &progress, of: documentID, in: folder, name: name, base: base)
        }
        let wasSent = progress.requestLeft ?? false
        progress.mayHaveArrived = true
        progress.requestLeft = true
        row.progress = progress.text
        if let failure = await markSending(&row) { return failure }
        let receipt: UploadReceipt
        do {
            receipt = try await writer.uploadNewVersion(
                documentID: documentID, file: bytes.url(of: row.id).path, name: name, progress: nil)
        } catch {
            // Refused, or never delivered: nothing to look for before the next attempt, and the draft may be taken
            // back (``Outbox/isWithdrawable(_:)``).
            if !Self.mayHaveArrived(after: error) {
                progress.didNotArrive(sentBefore: wasSent || !Self.provesNothingStored(error))
            }
            return Self.verdict(error)
        }
        if let document = receipt.document { return Self.confirm(document, sent: size) }
        do {
            // Stud.IP took the version (2xx): a read-back that fails leaves it arrived, found by the next attempt.
            let stored = try await writer.document(id: documentID)
            return stored.size == size
                ? .settled(.done(stored))
                : .waiting(reason: "Stud.IP's answer to the new version of \(name) left open whether it was stored")
        } catch {
            return Self.verdict(error)
        }
    }

    /// A new folder, looked for as an upload is: before the first attempt the parent's subfolders of that name
    /// (or `Name[1]`) are noted; after an attempt that may have made it, a new one of them is this entry's, so that
    /// sending again cannot make a second folder `Name[1]`. A parent the user cannot list leaves only the answer.
    private func makeFolder(
        _ row: inout OutboxRow, _ progress: inout OutboxProgress, in parent: String, name: String
    ) async -> Attempt {
        if progress.mayHaveArrived {
            // Nothing noted before: the parent cannot be listed (or an older version sent it).
            guard let before = progress.before else {
                return .unconfirmed(
                    reason: "making the folder \(name) was interrupted and whether Stud.IP made it cannot be checked; "
                        + "retry to make it (if it exists, the new one is named \(name)[1])")
            }
            do {
                let made = try await writer.folders(inFolder: parent)
                    .filter { !before.contains($0.id) && Self.isStudIPName($0.name, for: name) }
                    .max { $0.created < $1.created }
                if let made {
                    logger.info("outbox: \(row.id) had made folder \(made.name) (\(made.id))")
                    return .settled(.madeFolder(made))
                }
            } catch {
                return Self.verdict(error)
            }
            progress.mayHaveArrived = false
        }
        if let failure = await noteExisting(
            name, &progress,
            listing: { () async throws(StudIPError) in
                try await writer.folders(inFolder: parent).map { ($0.id, $0.name) }
            })
        {
            return failure
        }
        progress.mayHaveArrived = true
        row.progress = progress.text
        if let failure = await markSending(&row) { return failure }
        do {
            return .settled(.madeFolder(try await writer.makeFolder(parentFolderID: parent, name: name)))
        } catch {
            if !Self.mayHaveArrived(after: error) { progress.mayHaveArrived = false }
            return Self.verdict(error)
        }
    }

    /// Records that the entry is being sent (and what was learned before), so that a crash from here on is
    /// checked at the next start. Nil when the store could not record it: then nothing is sent.
    private func markSending(_ row: inout OutboxRow) async -> Attempt? {
        row.state = OutboxState.sending.rawValue
        do {
            // Discarded while the sender read the rows: nothing is sent.
            return try await save([row]).contains(row.id) ? .discarded : nil
        } catch {
            return .waiting(reason: "\(error)")
        }
    }

    /// A document of `folder` that was not there before the first attempt, under the name asked for or Stud.IP's
    /// variant of it (`Name[2].ext`), with the bytes' length.
    private func arrived(_ name: String, size: Int64, in folder: String, before: Set<String>)
        async throws(StudIPError) -> RemoteDocument?
    {
        try await writer.documents(inFolder: folder)
            .filter { !before.contains($0.id) && $0.size == size && Self.isStudIPName($0.name, for: name) }
            .max { $0.created < $1.created }
    }

    // MARK: - Outcomes

    /// Writes what the attempt came to; a settled entry's bytes go and its outcome is reported.
    func finish(_ row: OutboxRow, _ result: Attempt) async -> Bool {
        var row = row
        var changed: [OutboxRow] = []
        switch result {
        case .settled(let outcome):
            row.state = OutboxState.settled.rawValue
            row.reason = nil
            row.outcome = try? OutboxCoding.encode(outcome)
            if case .madeFolder(let folder) = outcome, let rows = try? await rows() {
                // The entries that waited for this folder now name it.
                for var other in rows where other.entry?.operation.awaitedEntry == row.id {
                    guard let operation = other.entry?.operation.resolving(entry: row.id, to: folder.id),
                        let text = try? OutboxCoding.encode(operation)
                    else { continue }
                    other.operation = text
                    changed.append(other)
                }
            }
        case .waiting(let reason):
            row.state = OutboxState.waiting.rawValue
            row.reason = reason
            row.notBefore = Date().addingTimeInterval(backoff.delay(afterAttempts: row.attempts).seconds)
            logger.warning("outbox: \(row.id) waits until \(row.notBefore ?? Date()): \(reason)")
        case .failed(let reason):
            row.state = OutboxState.failed.rawValue
            row.reason = reason
            logger.error("outbox: \(row.id) failed: \(reason)")
        case .unconfirmed(let reason):
            row.state = OutboxState.unconfirmed.rawValue
            row.reason = reason
            logger.warning("outbox: \(row.id) unconfirmed: \(reason)")
        case .discarded:
            return true
        }
        do {
            // Discarded or taken back while it was tried, before anything was sent: no wait or refusal to report.
            let gone = try await save([row] + changed).contains(row.id)
            if gone, !result.isSettled { return true }
        } catch {
            logger.error("outbox: cannot record the outcome of \(row.id): \(error)")
            return false
        }
        guard let entry = row.entry else { return true }
        switch result {
        case .settled: return await report(row)
        case .failed(let reason): await onSettled(entry, .failed(reason: reason))
        case .unconfirmed(let reason): await onSettled(entry, .unconfirmed(reason: reason))
        case .waiting, .discarded: break
        }
        return true
    }

    /// Reports a settled entry, then removes it and its bytes; false when the row could not be removed.
    func report(_ row: OutboxRow) async -> Bool {
        let (store, bytes, id) = (self.store, self.bytes, row.id)
        try? await pool.run { () throws(OutboxError) in try bytes.remove(id) }
        if let entry = row.entry, let outcome = OutboxCoding.decode(OutboxOutcome.self, row.outcome) {
            logger.info("outbox: \(id) settled: \(outcome)")
            await onSettled(entry, outcome)
        }
        do {
            try await pool.run { () throws(OutboxError) in
                _ = try OutboxCoding.storing { () throws(StoreError) in try store.deleteOutboxRow(id: id) }
            }
        } catch {
            logger.error("outbox: cannot remove settled entry \(id): \(error)")
            return false
        }
        return true
    }

    // MARK: - Start

    /// Finishes what a crash interrupted: bytes still at their source are moved in, bytes lost fail the entry, and
    /// an entry found `sending` is looked for on Stud.IP before it goes again.
    func recover() async {
        let (store, bytes) = (self.store, self.bytes)
        let recovered: [OutboxRow]
        let kept: [String]
        do {
            (recovered, kept) = try await pool.run { () throws(OutboxError) in try Self.recover(store, bytes) }
        } catch {
            logger.error("outbox: cannot check the outbox at the start: \(error)")
            return
        }
        for path in kept {
            logger.warning("outbox: a file of no entry, the only copy of its bytes, was moved to \(path)")
        }
        for row in recovered where row.state == OutboxState.failed.rawValue {
            if let entry = row.entry, let reason = row.reason { await onSettled(entry, .failed(reason: reason)) }
        }
    }

    /// ``recover()``'s blocking part: returns the rows it changed, and where it moved the only copies of no entry.
    private static func recover(_ store: MetadataStore, _ bytes: OutboxBytes) throws(OutboxError) -> (
        changed: [OutboxRow], kept: [String]
    ) {
        var changed: [OutboxRow] = []
        // Listed before the rows are read: a row is committed before its bytes are moved in, so a file found here
        // whose row is not there is one whose row was discarded or taken back before a crash let its file go. Only
        // a second link of the draft's bytes is removed; an only copy (its row lost with an older store put back)
        // stays for the user.
        let files = bytes.stored()
        let rows = try OutboxCoding.storing { () throws(StoreError) in try store.outboxRows() }
        var kept: [String] = []
        for orphan in Set(files).subtracting(rows.map(\.id)).sorted() {
            // One that cannot be moved stays where it is; the rows are recovered all the same.
            if let moved = (try? bytes.clearOrphan(orphan)) ?? nil { kept.append(moved) }
        }
        for var row in rows where row.state != OutboxState.settled.rawValue {
            var dirty = false
            if row.byteCount != nil, !bytes.exists(row.id) {
                do throws(OutboxError) {
                    guard let source = row.bytesSource else {
                        throw .bytes(path: bytes.url(of: row.id).path, operation: "find", detail: "missing")
                    }
                    try bytes.prepare()
                    try bytes.takeOver(source, as: row.id)
                } catch {
                    row.state = OutboxState.failed.rawValue
                    row.reason = "its bytes are lost: \(error)"
                    dirty = true
                }
            }
            if row.state == OutboxState.sending.rawValue {
                var progress = OutboxProgress(row.progress)
                progress.mayHaveArrived = true
                row.progress = progress.text
                row.state = OutboxState.queued.rawValue
                dirty = true
            }
            if dirty { changed.append(row) }
        }
        try OutboxCoding.storing { () throws(StoreError) in _ = try store.updateOutboxRows(changed) }
        return (changed, kept)
    }

    // MARK: - Sleeping

    /// Until `deadline` (nil: indefinitely), a wake-up (``wake()``) or cancellation.
    func sleep(until deadline: Date?) async {
        if woken {
            woken = false
            return
        }
        let timer = deadline.map { deadline in
            Task { [weak self] in
                try? await Task.sleep(for: .seconds(max(0, deadline.timeIntervalSinceNow)))
                await self?.wake()
            }
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { wakeUp = $0 }
        } onCancel: {
            Task { await self.wake() }
        }
        woken = false
        timer?.cancel()
    }

    // MARK: - Rules

    /// Retry or fail, from the error's case alone: offline, 5xx, 429 wait; refusals fail with Stud.IP's reason.
    static func verdict(_ error: StudIPError) -> Attempt {
        error.isRetryable ? .waiting(reason: error.description) : .failed(reason: error.description)
    }

    /// Whether a request that failed so may still have been stored: not when it never reached Stud.IP (connection
    /// refused, the breaker open), Stud.IP said it did not take it (429, 503) or refused it. A cancelled request
    /// (the daemon stopping) may have been sent whole.
    static func mayHaveArrived(after error: StudIPError) -> Bool {
        switch error {
        case .serverError(let status, _): ![429, 503].contains(status)
        case .unreachable: error.brokeOffAfterSending
        case .refused, .unsupported, .unreadableFile, .forbidden, .notFound: false
        default: true
        }
    }

    /// Whether a failure proves the bytes were not stored, so that the entry may be taken back
    /// (``OutboxProgress/requestLeft``): as ``mayHaveArrived(after:)``, but not a 503, which a proxy in front of
    /// Stud.IP may answer after it forwarded the request (the next attempt still skips the check: sending again
    /// is what a 503 asks for).
    static func provesNothingStored(_ error: StudIPError) -> Bool {
        if case .serverError(503, _) = error { return false }
        return !mayHaveArrived(after: error)
    }

    /// The stored document, if its size is the bytes sent.
    static func confirm(_ document: RemoteDocument, sent size: Int64) -> Attempt {
        guard document.size == size else {
            return .failed(
                reason: "Stud.IP stored \(document.size) bytes of \(size) as \(document.name) (\(document.id)); "
                    + "check it there, then retry or discard")
        }
        return .settled(.done(document))
    }

    static func conflict(_ attempt: Attempt, cause: OutboxOutcome.ConflictCause) -> Attempt {
        guard case .settled(.done(let document)) = attempt else { return attempt }
        return .settled(.conflict(keptAs: document?.name ?? "", document: document, documentWas: cause))
    }

    /// `name` as Stud.IP stores it when taken: `Name[2].ext` for documents, `Name[1]` for folders.
    static func isStudIPName(_ candidate: String, for name: String) -> Bool {
        guard candidate != name else { return true }
        let (stem, suffix) = split(name)
        guard candidate.hasPrefix(stem + "["), candidate.hasSuffix("]" + suffix) else { return false }
        let number = candidate.dropFirst(stem.count + 1).dropLast(suffix.count + 1)
        return !number.isEmpty && number.allSatisfy(\.isASCII) && number.allSatisfy(\.isNumber)
    }

    /// "`<name> (yours).<ext>`": the user's bytes beside a document the lecturer changed.
    static func yours(_ name: String) -> String {
        let (stem, suffix) = split(name)
        return stem + " (yours)" + suffix
    }

    /// The name before its extension, and the extension with its dot ("" when none; a leading dot starts no
    /// extension).
    private static func split(_ name: String) -> (stem: String, suffix: String) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
        return (String(name[..<dot]), String(name[dot...]))
    }
}
