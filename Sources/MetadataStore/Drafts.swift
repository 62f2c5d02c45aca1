import Foundation
import GRDB
import StudIPModel

/// A local change the workspace keeps before Stud.IP has it (docs/writing.md, "Local first: drafts"): a file created
/// or opened for writing in the mount, or a folder made there. Its bytes are a file in the profile's data directory,
/// named by ``id``; this row is what shows it in the tree after a restart.
public struct DraftRecord: Sendable, Hashable {
    /// What became of a draft.
    public enum State: String, Sendable, Hashable, CaseIterable {
        /// Being written, or waiting for its settle time.
        case editing
        /// Handed to the outbox; shown until the store lists the document Stud.IP confirmed.
        case queued
        /// Uploaded into a homework folder, which the student cannot list: kept as the local copy, read-only.
        case handedIn = "handed-in"
        /// Refused by Stud.IP (``detail`` says why); kept.
        case failed
    }

    /// Nil until stored.
    public var id: Int64?
    /// The inode of the directory it shows in: a store node, or a local folder's draft.
    public var parent: Int64
    public var name: String
    public var isFolder: Bool
    /// The Stud.IP document it becomes a new version of; nil for a new document. For a folder: the folder Stud.IP
    /// made of it, once confirmed.
    public var documentID: String?
    /// The version of ``documentID`` the draft started from (a conflict is a document changed since).
    public var baseVersion: DocumentVersion?
    /// The content's `ETag` of that version, when the content cache knew it: a lecturer's new version at the same
    /// size through JSON:API keeps file id and size, and only this shows it (docs/writing.md, "The outbox").
    public var baseETag: String?
    /// An earlier draft under the same name whose upload it waits for, to become a new version of what that
    /// upload made rather than a second document.
    public var follows: Int64?
    /// Whether its bytes differ from what it started from (written, truncated, or a new file): a document opened
    /// for writing and closed unwritten (LibreOffice does so before and after saving) is no new version.
    public var isChanged: Bool
    public var state: State
    public var outboxID: Int64?
    /// Stud.IP's refusal.
    public var detail: String?
    public var modified: Date
    /// Written to since it was made and not yet closed by its last writer: found so at a start, the daemon died
    /// mid-write and its bytes may be torn, so it is held back (docs/writing.md, "Local first: drafts").
    public var isBeingWritten: Bool

    public init(
        id: Int64? = nil, parent: Int64, name: String, isFolder: Bool = false, documentID: String? = nil,
        baseVersion: DocumentVersion? = nil, baseETag: String? = nil, follows: Int64? = nil, isChanged: Bool = true,
        state: State = .editing, outboxID: Int64? = nil, detail: String? = nil, modified: Date,
        isBeingWritten: Bool = false
    ) {
        self.id = id
        self.parent = parent
        self.name = name
        self.isFolder = isFolder
        self.documentID = documentID
        self.baseVersion = baseVersion
        self.baseETag = baseETag
        self.follows = follows
        self.isChanged = isChanged
        self.state = state
        self.outboxID = outboxID
        self.detail = detail
        self.modified = modified
        self.isBeingWritten = isBeingWritten
    }
}

/// A document of the store renamed, moved or deleted in the mount and not yet settled or confirmed: the tree shows
/// it where the user put it (or not at all) until Stud.IP has the change.
public struct DocumentChangeRecord: Sendable, Hashable {
    /// The document's node.
    public var inode: Int64
    public var documentID: String
    /// Where it shows now.
    public var parent: Int64
    public var name: String
    public var isDeleted: Bool
    /// Set once the change is in the outbox.
    public var outboxID: Int64?

    public init(
        inode: Int64, documentID: String, parent: Int64, name: String, isDeleted: Bool = false, outboxID: Int64? = nil
    ) {
        self.inode = inode
        self.documentID = documentID
        self.parent = parent
        self.name = name
        self.isDeleted = isDeleted
        self.outboxID = outboxID
    }
}

/// The workspace's rows (module `Uploading`). Each write is one synced transaction: drafts are the user's data.
extension MetadataStore {
    public func drafts() throws(StoreError) -> [DraftRecord] {
        try read("reading the drafts") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM draft ORDER BY id").map(Self.draft)
        }
    }

    private static func draft(_ row: Row) -> DraftRecord {
        let fileID: String? = row["base_file_id"]
        let size: Int64? = row["base_size"]
        let state: String = row["state"]
        let modified: Double = row["modified"]
        var draft = DraftRecord(
            parent: row["parent"], name: row["name"], isFolder: row["is_folder"],
            modified: Date(timeIntervalSince1970: modified))
        draft.id = row["id"]
        draft.documentID = row["document_id"]
        draft.baseVersion = fileID.map { DocumentVersion(fileID: $0, size: size ?? 0) }
        draft.baseETag = row["base_etag"]
        draft.isBeingWritten = row["being_written"]
        draft.follows = row["follows"]
        draft.isChanged = row["changed"]
        draft.state = DraftRecord.State(rawValue: state) ?? .editing
        draft.outboxID = row["outbox_id"]
        draft.detail = row["detail"]
        return draft
    }

    /// Inserts a draft without ``DraftRecord/id`` or updates the one with it; returns it with its id.
    @discardableResult
    public func saveDraft(_ draft: DraftRecord) throws(StoreError) -> DraftRecord {
        try write("saving the draft \(draft.name)") { db in try Self.save(draft, in: db) }
    }

    /// ``saveDraft(_:)`` inside a transaction the caller holds.
    static func save(_ draft: DraftRecord, in db: Database) throws -> DraftRecord {
        let arguments: StatementArguments = [
            draft.parent, draft.name, draft.isFolder, draft.documentID, draft.baseVersion?.fileID,
            draft.baseVersion?.size, draft.follows, draft.isChanged, draft.state.rawValue, draft.outboxID,
            draft.detail,
            draft.modified.timeIntervalSince1970, draft.baseETag, draft.isBeingWritten,
        ]
        var saved = draft
        if let id = draft.id {
            try db.execute(
                sql: """
                    UPDATE draft SET parent = ?, name = ?, is_folder = ?, document_id = ?, base_file_id = ?,
                        base_size = ?, follows = ?, changed = ?, state = ?, outbox_id = ?, detail = ?, modified = ?,
                        base_etag = ?, being_written = ?
                    WHERE id = ?
                    """,
                arguments: arguments + [id])
        } else {
            try db.execute(
                sql: """
                    INSERT INTO draft (parent, name, is_folder, document_id, base_file_id, base_size, follows,
                        changed, state, outbox_id, detail, modified, base_etag, being_written)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: arguments)
            saved.id = db.lastInsertedRowID
        }
        return saved
    }

    public func deleteDraft(id: Int64) throws(StoreError) {
        try write("deleting draft \(id)") { db in
            try db.execute(sql: "DELETE FROM draft WHERE id = ?", arguments: [id])
        }
    }

    public func documentChanges() throws(StoreError) -> [DocumentChangeRecord] {
        try read("reading the local document changes") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM document_change").map { row in
                DocumentChangeRecord(
                    inode: row["inode"], documentID: row["document_id"], parent: row["parent"], name: row["name"],
                    isDeleted: row["deleted"], outboxID: row["outbox_id"])
            }
        }
    }

    public func saveDocumentChange(_ change: DocumentChangeRecord) throws(StoreError) {
        try write("saving the local change of document \(change.documentID)") { db in
            try db.execute(
                sql: """
                    INSERT OR REPLACE INTO document_change (inode, document_id, parent, name, deleted, outbox_id)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    change.inode, change.documentID, change.parent, change.name, change.isDeleted, change.outboxID,
                ])
        }
    }

    public func deleteDocumentChange(inode: Int64) throws(StoreError) {
        try write("dropping the local change of inode \(inode)") { db in
            try db.execute(sql: "DELETE FROM document_change WHERE inode = ?", arguments: [inode])
        }
    }
}

extension Schema {
    /// Issue 32: the workspace's drafts and local document changes (docs/writing.md, "Local first: drafts"). No
    /// foreign keys to `node`: a draft outlives a refresh that drops its folder, and is then still the user's data.
    static func addDrafts(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE draft (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    parent INTEGER NOT NULL,
                    name TEXT NOT NULL,
                    is_folder INTEGER NOT NULL,
                    document_id TEXT,
                    base_file_id TEXT,
                    base_size INTEGER,
                    follows INTEGER,
                    changed INTEGER NOT NULL,
                    state TEXT NOT NULL
                        CHECK (state IN ('editing', 'queued', 'handed-in', 'failed')),
                    outbox_id INTEGER,
                    detail TEXT,
                    modified REAL NOT NULL
                );
                CREATE TABLE document_change (
                    inode INTEGER PRIMARY KEY NOT NULL,
                    document_id TEXT NOT NULL,
                    parent INTEGER NOT NULL,
                    name TEXT NOT NULL,
                    deleted INTEGER NOT NULL,
                    outbox_id INTEGER
                );
                """)
    }

    /// Issue 32's gaps: the content `ETag` a draft's base version had (a same-size replacement through JSON:API
    /// changes nothing else), and whether a draft was being written when the daemon stopped (a torn draft is held
    /// back at the next start). docs/writing.md, "Local first: drafts" and "The outbox".
    static func addDraftBaseETagAndWriting(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE draft ADD COLUMN base_etag TEXT;
                ALTER TABLE draft ADD COLUMN being_written INTEGER NOT NULL DEFAULT 0;
                """)
    }
}
