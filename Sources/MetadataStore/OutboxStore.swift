import Foundation
import GRDB

/// One row of the outbox (docs/writing.md, "The outbox"): an operation to send to Stud.IP, kept until Stud.IP
/// confirmed it and the outcome was reported. The store keeps the operation and what the sender learned as text
/// the `Uploading` module writes and reads (JSON of its own types); it only files them.
public struct OutboxRow: Sendable, Hashable {
    /// Ascending in the order of enqueueing, never reused (AUTOINCREMENT): operations on one document are sent in
    /// this order, and the bytes file is named by it.
    public var id: Int64
    public var operation: String
    /// The workspace's draft this operation came from, if any (docs/writing.md, "Local first").
    public var draftID: Int64?
    public var state: String
    /// Stud.IP's answer for a refusal, or the last error of a waiting operation.
    public var reason: String?
    public var attempts: Int
    /// Not to be sent before this time (backoff).
    public var notBefore: Date?
    /// The length of the bytes in the outbox directory; nil for operations without bytes and after they were dropped.
    public var byteCount: Int64?
    /// Where the bytes are taken from: set in the same transaction that creates the row, so that a crash between the
    /// commit and the rename into the outbox directory is finished at the next start.
    public var bytesSource: String?
    /// What the sender learned before or while sending (which documents a folder held before an upload).
    public var progress: String?
    /// The outcome, once settled and until it was reported.
    public var outcome: String?
    public var created: Date

    public init(
        id: Int64 = 0, operation: String, draftID: Int64?, state: String, reason: String? = nil, attempts: Int = 0,
        notBefore: Date? = nil, byteCount: Int64?, bytesSource: String?, progress: String? = nil,
        outcome: String? = nil, created: Date
    ) {
        self.id = id
        self.operation = operation
        self.draftID = draftID
        self.state = state
        self.reason = reason
        self.attempts = attempts
        self.notBefore = notBefore
        self.byteCount = byteCount
        self.bytesSource = bytesSource
        self.progress = progress
        self.outcome = outcome
        self.created = created
    }

    init(row: Row) throws {
        id = row["id"]
        operation = row["operation"]
        draftID = row["draft_id"]
        state = row["state"]
        reason = row["reason"]
        attempts = row["attempts"]
        notBefore = (row["not_before"] as Double?).map(Date.init(timeIntervalSince1970:))
        byteCount = row["byte_count"]
        bytesSource = row["bytes_source"]
        progress = row["progress"]
        outcome = row["outcome"]
        created = Date(timeIntervalSince1970: row["created"])
    }
}

extension Schema {
    /// Issue 32: the outbox's operations (docs/writing.md, "The outbox"). No foreign keys: an operation outlives
    /// the nodes it names (a refresh may drop a folder while an upload into it waits).
    static func addOutbox(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE outbox (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    operation TEXT NOT NULL,
                    draft_id INTEGER,
                    state TEXT NOT NULL,
                    reason TEXT,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    not_before REAL,
                    byte_count INTEGER,
                    bytes_source TEXT,
                    progress TEXT,
                    outcome TEXT,
                    created REAL NOT NULL
                );
                """)
    }
}

/// The outbox's rows. Every write is synced (``Durability/synced``): an operation the user was told is queued must
/// survive a power loss. The outbox holds few rows (what waits to be sent), so reads take them all, in id order.
extension MetadataStore {
    /// Adds an operation and returns its id.
    public func insertOutboxRow(_ row: OutboxRow) throws(StoreError) -> Int64 {
        try write("queueing an operation for Stud.IP") { db in
            try db.execute(
                sql: """
                    INSERT INTO outbox (operation, draft_id, state, reason, attempts, not_before, byte_count,
                                        bytes_source, progress, outcome, created)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """,
                arguments: [
                    row.operation, row.draftID, row.state, row.reason, row.attempts,
                    row.notBefore?.timeIntervalSince1970, row.byteCount, row.bytesSource, row.progress, row.outcome,
                    row.created.timeIntervalSince1970,
                ])
            return db.lastInsertedRowID
        }
    }

    /// Every row, oldest first.
    public func outboxRows() throws(StoreError) -> [OutboxRow] {
        try read("reading the outbox") { db in
            try Row.fetchAll(db, sql: "SELECT * FROM outbox ORDER BY id").map(OutboxRow.init(row:))
        }
    }

    public func outboxRow(id: Int64) throws(StoreError) -> OutboxRow? {
        try read("reading outbox entry \(id)") { db in
            try Row.fetchOne(db, sql: "SELECT * FROM outbox WHERE id = ?", arguments: [id]).map(OutboxRow.init(row:))
        }
    }

    /// Writes every column but `id` and `created` of each row, in one transaction: a settled operation and the
    /// operations that waited for it (an upload into the folder it made) change together. Returns the ids no row
    /// had any more (discarded meanwhile). Only the sender writes rows it read earlier; everyone else changes rows
    /// as they are (``modifyOutboxRows(_:)``).
    @discardableResult
    public func updateOutboxRows(_ rows: [OutboxRow]) throws(StoreError) -> [Int64] {
        try write("updating the outbox") { db in try Self.update(rows, in: db) }
    }

    /// Gives `body` every row as one transaction reads them and writes back the rows it returns, in that
    /// transaction: nothing another writer commits (the sender's `sending` mark) falls between the read and the
    /// write, so a change decided on a row's state is made on that state.
    public func modifyOutboxRows(_ body: ([OutboxRow]) -> [OutboxRow]) throws(StoreError) {
        try write("updating the outbox") { db in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM outbox ORDER BY id").map(OutboxRow.init(row:))
            _ = try Self.update(body(rows), in: db)
        }
    }

    private static func update(_ rows: [OutboxRow], in db: Database) throws -> [Int64] {
        var missing: [Int64] = []
        for row in rows {
            try db.execute(
                sql: """
                    UPDATE outbox SET operation = ?, draft_id = ?, state = ?, reason = ?, attempts = ?,
                        not_before = ?, byte_count = ?, bytes_source = ?, progress = ?, outcome = ?
                    WHERE id = ?
                    """,
                arguments: [
                    row.operation, row.draftID, row.state, row.reason, row.attempts,
                    row.notBefore?.timeIntervalSince1970, row.byteCount, row.bytesSource, row.progress,
                    row.outcome, row.id,
                ])
            if db.changesCount == 0 { missing.append(row.id) }
        }
        return missing
    }

    /// Removes an operation; false when there was none.
    @discardableResult
    public func deleteOutboxRow(id: Int64) throws(StoreError) -> Bool {
        try write("removing outbox entry \(id)") { db in
            try db.execute(sql: "DELETE FROM outbox WHERE id = ?", arguments: [id])
            return db.changesCount > 0
        }
    }

    /// Removes row `id` if `removable` holds for it as this transaction reads it, and writes what `dependent` makes
    /// of every other row (nil: unchanged) in the same transaction: the sender's claim of a row is a write too, so a
    /// discard never deletes a row being sent. Nil: there is no such row; `removed` false: nothing was written.
    public func removeOutboxRow(
        id: Int64, if removable: (OutboxRow) -> Bool, updating dependent: (OutboxRow) -> OutboxRow?
    ) throws(StoreError) -> (row: OutboxRow, removed: Bool, dependents: [OutboxRow])? {
        try write("removing outbox entry \(id)") { db -> (row: OutboxRow, removed: Bool, dependents: [OutboxRow])? in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM outbox ORDER BY id").map(OutboxRow.init(row:))
            guard let row = rows.first(where: { $0.id == id }) else { return nil }
            guard removable(row) else { return (row, false, []) }
            let dependents = rows.filter { $0.id != id }.compactMap(dependent)
            for other in dependents {
                try db.execute(
                    sql: "UPDATE outbox SET state = ?, reason = ? WHERE id = ?",
                    arguments: [other.state, other.reason, other.id])
            }
            try db.execute(sql: "DELETE FROM outbox WHERE id = ?", arguments: [id])
            return (row, true, dependents)
        }
    }

    /// Takes back the rows of draft `draft.id` and writes `draft` as given (editing again), in one transaction, if
    /// `withdrawable` holds for each row as this transaction reads it: the sender's claim of a row is a write too,
    /// so none slips between the check and the delete (docs/writing.md, "Renaming or deleting a file in the
    /// outbox"). Returns the ids taken back (none: the draft has no row, and nothing was written); nil, with
    /// nothing changed, when a row is not withdrawable.
    public func withdrawOutboxRows(of draft: DraftRecord, if withdrawable: (OutboxRow) -> Bool) throws(StoreError)
        -> [Int64]?
    {
        guard let id = draft.id else { return nil }
        return try write("taking back the outbox entries of draft \(id)") { db -> [Int64]? in
            let rows = try Row.fetchAll(db, sql: "SELECT * FROM outbox WHERE draft_id = ?", arguments: [id])
                .map(OutboxRow.init(row:))
            guard !rows.isEmpty else { return [] }
            guard rows.allSatisfy(withdrawable) else { return nil }
            try db.execute(sql: "DELETE FROM outbox WHERE draft_id = ?", arguments: [id])
            _ = try Self.save(draft, in: db)
            return rows.map(\.id)
        }
    }

    /// How many rows are in each state, for status lines.
    public func outboxStateCounts() throws(StoreError) -> [String: Int] {
        try read("counting the outbox") { db in
            var counts: [String: Int] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT state, count(*) AS n FROM outbox GROUP BY state") {
                counts[row["state"]] = row["n"]
            }
            return counts
        }
    }
}
