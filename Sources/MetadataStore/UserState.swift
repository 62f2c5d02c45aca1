import Foundation
import GRDB
import StudIPModel

/// Who owns a piece of user state: the Stud.IP item, never the inode or path, so that it survives renames, moves
/// and refreshes. Course links share their course's state; the tag view is not an item (its links are followed
/// before the kernel asks for `user.*` attributes, which it never does on a symlink).
struct UserKey {
    var item: ItemKind
    var id: String

    init?(node: Node) {
        guard let id = node.studipID else { return nil }
        switch node.item {
        // Generated files are no Stud.IP items a user could tag (the tag view would not show them).
        case .root, .ongoing, .tagView, .tag, .tagLink, .announcements, .announcement, .courseCalendar, .timetable:
            return nil
        case .courseLink: item = .course
        default: item = node.item
        }
        self.id = id
    }

    func state(_ db: Database) throws -> UserState {
        var state = UserState()
        if let row = try db.row(QuerySQL.userState, [item.rawValue, id]) {
            state.rating = try row.decode(forColumn: "rating")
            state.flagged = try row.bool("flagged")
            state.pinned = try row.bool("pinned")
        }
        state.tags = try String.fetchAll(db.cachedStatement(sql: QuerySQL.tags), arguments: [item.rawValue, id])
        return state
    }

    /// Sets one column of the item's `user_state` row, creating the row when needed.
    func set(_ column: String, to value: Int, _ db: Database) throws {
        try db.run(
            """
            INSERT INTO user_state (item_kind, studip_id, \(column)) VALUES (?, ?, ?)
            ON CONFLICT (item_kind, studip_id) DO UPDATE SET \(column) = excluded.\(column)
            """,
            [item.rawValue, id, value])
    }
}

/// The user-state setters behind the writable extended attributes (issue 5). Each is one transaction, committed
/// and synced before it returns.
extension MetadataStore {
    /// The user's tags, rating, flag and pin of the item at `inode`.
    public func userState(inode: Int64) throws(StoreError) -> UserState {
        try read("reading the user state of inode \(inode)") { db in
            try Self.userKey(inode, db).state(db)
        }
    }

    /// The most bytes the tags may take together as `user.xdg.tags` (comma-separated): the kernel returns no
    /// extended attribute value larger than this (`XATTR_SIZE_MAX`), so more could be stored but never read back.
    public static let maxTagBytes = 65_536

    /// Replaces the tags (`user.xdg.tags`): trimmed, empty ones dropped, duplicates kept once, order kept. Returns
    /// what changed in the tag view, for the kernel's caches.
    @discardableResult
    public func setTags(_ tags: [String], inode: Int64) throws(StoreError) -> RefreshSummary {
        var cleaned: [String] = []
        var seen = Set<String>()
        for tag in tags {
            let trimmed = tag.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
            guard !trimmed.isEmpty else { continue }
            guard !trimmed.contains(","),
                !trimmed.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else { throw .invalidTag(tag) }
            if seen.insert(trimmed).inserted { cleaned.append(trimmed) }
        }
        let bytes = cleaned.reduce(max(0, cleaned.count - 1)) { $0 + $1.utf8.count }
        guard bytes <= Self.maxTagBytes else { throw .tagsTooLong(bytes: bytes, limit: Self.maxTagBytes) }
        return try write("setting tags on inode \(inode)") { db in
            let key = try Self.userKey(inode, db)
            let before = try key.state(db).tags
            try db.run("DELETE FROM user_tag WHERE item_kind = ? AND studip_id = ?", [key.item.rawValue, key.id])
            for (position, tag) in cleaned.enumerated() {
                try db.run(
                    "INSERT INTO user_tag (item_kind, studip_id, position, tag) VALUES (?, ?, ?, ?)",
                    [key.item.rawValue, key.id, position, tag])
            }
            if key.item == .document, let course = try Node.fetch(inode, db)?.courseID {
                try SearchSQL.indexMetadata(course: course, document: inode, db)
            }
            var editor = TreeEditor(db: db)
            try TagView.sync(&editor, now: Date(), tags: Set(before + cleaned))
            var summary = RefreshSummary()
            editor.record(into: &summary)
            return summary
        }
    }

    /// Sets the rating (`user.baloo.rating`), 0–10.
    public func setRating(_ rating: Int, inode: Int64) throws(StoreError) {
        guard (0...10).contains(rating) else { throw .invalidRating(rating) }
        try write("setting the rating of inode \(inode)") { db in
            try Self.userKey(inode, db).set("rating", to: rating, db)
        }
    }

    /// Pins (`user.campusfs.pinned` = 1) or unpins the item.
    public func setPinned(_ pinned: Bool, inode: Int64) throws(StoreError) {
        try write("pinning inode \(inode)") { db in
            try Self.userKey(inode, db).set("pinned", to: pinned ? 1 : 0, db)
        }
    }

    /// Flags a document (writing `flagged` to `user.campusfs.highlight`), or clears its highlight entirely
    /// (removing the attribute): the flag and an unread `new`/`changed` alike. Flagging also acknowledges an unread
    /// `new`/`changed`, so the attribute reads back as written.
    public func setFlagged(_ flagged: Bool, inode: Int64) throws(StoreError) {
        try write("flagging inode \(inode)") { db in
            let key = try Self.userKey(inode, db)
            guard key.item == .document, let courseID = try Node.fetch(inode, db)?.courseID else {
                throw StoreError.notADocument(path: try Paths.path(of: inode, db) ?? "inode \(inode)")
            }
            try key.set("flagged", to: flagged ? 1 : 0, db)
            try db.run("UPDATE document SET highlight = NULL WHERE inode = ?", [inode])
            try HighlightCounts.recount(course: courseID, db)
        }
    }

    /// Clears `new`/`changed` once a person opened a document or an announcement (the filesystem decides who; scans do not count);
    /// `flagged` stays. With `version`, only while the document still has that version: the filesystem clears a
    /// moment after the open, and a refresh in between may have brought a newer one, which nobody has seen.
    /// Returns whether anything changed; when nothing did, no write transaction is taken.
    @discardableResult
    public func markRead(inode: Int64, version: DocumentVersion? = nil) throws(StoreError) -> Bool {
        let isHighlighted = try read("reading the highlight of inode \(inode)") { db in
            try db.row(QuerySQL.isHighlighted, [inode, inode]) != nil
        }
        guard isHighlighted else { return false }
        return try write("marking inode \(inode) read") { db in
            if let version {
                try db.run(
                    """
                    UPDATE document SET highlight = NULL
                    WHERE inode = ? AND highlight IS NOT NULL AND file_id = ?
                      AND (SELECT size FROM node WHERE node.inode = document.inode) = ?
                    """, [inode, version.fileID, version.size])
            } else {
                try db.run("UPDATE document SET highlight = NULL WHERE inode = ? AND highlight IS NOT NULL", [inode])
            }
            var changes = db.changesCount
            try db.run("UPDATE generated_file SET highlight = NULL WHERE inode = ? AND highlight IS NOT NULL", [inode])
            changes += db.changesCount
            guard changes > 0, let courseID = try Node.fetch(inode, db)?.courseID else { return false }
            try HighlightCounts.recount(course: courseID, db)
            return true
        }
    }

    /// Records the length the host sent for a document Stud.IP says is 0 bytes (one hosted elsewhere: 0 means
    /// unknown), so that ``Node/size`` — and `stat` — keep it once the cached copy is evicted or cleaned. Refreshes
    /// leave it alone: they compare and write Stud.IP's 0, so no new version and no `changed` highlight follow.
    /// Returns whether anything changed; a known length takes no write transaction.
    @discardableResult
    public func recordHostSize(_ size: Int64, inode: Int64) throws(StoreError) -> Bool {
        let known = try read("reading the host's size of inode \(inode)") { db in
            try Int64.fetchOne(
                db.cachedStatement(sql: "SELECT host_size FROM document WHERE inode = ?"), arguments: [inode])
        }
        guard known != size else { return false }
        return try write("storing the host's size of inode \(inode)") { db in
            try db.run("UPDATE document SET host_size = ? WHERE inode = ?", [size, inode])
            guard db.changesCount > 0 else { throw StoreError.noSuchNode(inode: inode) }
            return true
        }
    }

    static func userKey(_ inode: Int64, _ db: Database) throws -> UserKey {
        guard let node = try Node.fetch(inode, db) else { throw StoreError.noSuchNode(inode: inode) }
        guard let key = UserKey(node: node) else {
            throw StoreError.notAnItem(path: try Paths.path(of: inode, db) ?? "")
        }
        return key
    }
}

extension MetadataStore {
    /// Every pinned item that covers a downloadable document, by path, with those documents (a pin inside a pinned
    /// folder is listed too). Found upwards from the pinned documents, so it costs a few reads per pinned document,
    /// not a walk of the tree.
    public func pinnedItems() throws(StoreError) -> [(path: String, documents: [DocumentInfo])] {
        var nodes: [Int64: Node] = [:]
        var pins: [Int64: Bool] = [:]
        var covered: [Int64: [DocumentInfo]] = [:]
        for inode in try pinnedDocumentInodes() {
            guard let document = try document(inode: inode), document.isDownloadable else { continue }
            var current: Int64? = inode
            while let at = current {
                if nodes[at] == nil { nodes[at] = try node(inode: at) }
                guard let node = nodes[at] else { break }
                if pins[at] == nil {
                    let isItem = node.studipID != nil && node.item != .root && node.item != .ongoing
                    pins[at] = isItem ? try userState(inode: at).pinned : false
                }
                if pins[at] == true { covered[at, default: []].append(document) }
                current = node.parentInode
            }
        }
        var items: [(path: String, documents: [DocumentInfo])] = []
        for (inode, documents) in covered { items.append((try path(of: inode) ?? "", documents)) }
        return items.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
    }
}
