import Foundation
import GRDB
import NamingRules

/// Changes the node table inside one write transaction while keeping names sticky and unique.
///
/// Nodes that are new, renamed or moved first get a placeholder name (a control character and a counter: no
/// sanitized name contains one, so placeholders never collide with real names); `finish()` then names them per
/// directory. Nodes that keep their parent and base name are never touched, so they keep their name even when an
/// older duplicate appears; among the waiting nodes the oldest (created, then Stud.IP id) gets the plain name.
struct TreeEditor {
    let db: Database
    private var pendingDirectories: Set<Int64> = []
    private var placeholders = 0
    /// What the edits changed, for ``RefreshSummary/changedNodes`` and ``RefreshSummary/changedNames``.
    private(set) var changedNodes: Set<Int64> = []
    private(set) var changedNames: Set<RefreshSummary.Name> = []

    init(db: Database) {
        self.db = db
    }

    private mutating func placeholder(in parent: Int64) -> String {
        placeholders += 1
        pendingDirectories.insert(parent)
        return "\u{1}\(placeholders)"
    }

    static let insertSQL = """
        INSERT INTO node (parent, name, base_name, kind, item_kind, studip_id, course_id, size, mtime, symlink_target,
                          created)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    /// Inserts a node whose name `finish()` decides, or, where the caller named all of a new directory's children
    /// by the same rule (``names(_:)``), under `name`: the node is written once. Returns its inode.
    mutating func insert(
        parent: Int64, baseName: String, kind: NodeKind, item: ItemKind, studipID: String?, courseID: String?,
        size: Int64 = 0, mtime: Date, created: Date, symlinkTarget: String? = nil, name: String? = nil
    ) throws -> Int64 {
        if let name { changedNames.insert(.init(parent: parent, name: name)) }
        try db.run(
            Self.insertSQL,
            values: [
                parent.databaseValue, (name ?? placeholder(in: parent)).databaseValue, baseName.databaseValue,
                kind.rawValue.databaseValue, item.rawValue.databaseValue, studipID.databaseValue,
                courseID.databaseValue, size.databaseValue, mtime.timeIntervalSince1970.databaseValue,
                symlinkTarget.databaseValue, created.timeIntervalSince1970.databaseValue,
            ])
        changedNodes.insert(parent)
        return db.lastInsertedRowID
    }

    /// Gives an existing node a new parent and/or base name; its inode (and all below it) stays.
    mutating func place(_ inode: Int64, from oldParent: Int64, oldName: String, to parent: Int64, baseName: String)
        throws
    {
        try db.run(
            "UPDATE node SET parent = ?, name = ?, base_name = ? WHERE inode = ?",
            [parent, placeholder(in: parent), baseName, inode])
        changedNodes.formUnion([oldParent, parent, inode])
        changedNames.insert(.init(parent: oldParent, name: oldName))
    }

    /// Deletes a node and everything below it (foreign-key cascade).
    mutating func delete(_ inode: Int64, parent: Int64, name: String) throws {
        try db.run("DELETE FROM node WHERE inode = ?", [inode])
        changedNodes.insert(parent)
        changedNames.insert(.init(parent: parent, name: name))
    }

    /// Notes a changed attribute (size, mtime, symlink target).
    mutating func touched(_ inode: Int64) {
        changedNodes.insert(inode)
    }

    /// A directory's children with what naming needs. A tag link to a document numbers its duplicates like the
    /// document: before the extension. `CASE` because SQLite evaluates both sides of an `AND` or `OR` in a result
    /// column: the lookup ran for every child of every directory a refresh named in, and since `document.id` lost its
    /// index (migration `v13`) it would read the whole table each time; it goes through `node_item` now
    /// (docs/performance.md, "Daemon CPU a document").
    static let childrenSQL = """
        SELECT inode, name, base_name, created, studip_id,
            CASE WHEN item_kind IN ('document', 'announcement') THEN 1
                WHEN item_kind = 'tagLink' THEN EXISTS (
                    SELECT 1 FROM node target WHERE target.item_kind = 'document' AND target.studip_id = node.studip_id)
                ELSE 0 END
        FROM node WHERE parent = ?
        """

    /// Names every waiting node: the first free candidate of its base name, oldest first.
    mutating func finish() throws {
        for directory in pendingDirectories.sorted() {
            let rows = try db.rows(Self.childrenSQL, [directory])
            var taken = Set<String>()
            var waiting: [(inode: Int64, base: String, isDocument: Bool, created: Double, id: String)] = []
            // By index: by name, GRDB looks each column up case-insensitively (a first fill names every node).
            for row in rows {
                let name = try row.decode(String.self, atIndex: 1)
                if name.hasPrefix("\u{1}") {
                    waiting.append(
                        (
                            try row.decode(atIndex: 0), try row.decode(atIndex: 2),
                            try row.bool(atIndex: 5),
                            try row.decode(atIndex: 3),
                            try row.decode(String?.self, atIndex: 4) ?? ""
                        ))
                } else {
                    taken.insert(name)
                }
            }
            waiting.sort { ($0.created, $0.id, $0.inode) < ($1.created, $1.id, $1.inode) }
            for node in waiting {
                let name = Self.firstFree(node.base, isDocument: node.isDocument, taken: &taken)
                try db.run("UPDATE node SET name = ? WHERE inode = ?", [name, node.inode])
                changedNames.insert(.init(parent: directory, name: name))
            }
        }
        pendingDirectories.removeAll()
    }

    /// The first candidate of `base` not in `taken` (the plain name, then ` (2)`, ` (3)`…), now taken.
    private static func firstFree(_ base: String, isDocument: Bool, taken: inout Set<String>) -> String {
        var number = 1
        var name = base
        while taken.contains(name) {
            number += 1
            name = Naming.candidate(base, number: number, isDocument: isDocument)
        }
        taken.insert(name)
        return name
    }

    /// A new node as ``names(_:)`` orders it.
    struct Newcomer {
        var base: String
        var isDocument: Bool
        var created: Double
        var id: String
    }

    /// The names `finish()` would give these nodes, all new, in a directory that holds nothing else: oldest first
    /// (created, then Stud.IP id), each the first free candidate of its base name. A first fill names most nodes
    /// so, at insert: one write a node instead of an insert and a rename (docs/performance.md, "Daemon CPU").
    static func names(_ newcomers: [Newcomer]) -> [String] {
        var taken = Set<String>()
        var names = [String](repeating: "", count: newcomers.count)
        for index in newcomers.indices.sorted(by: { lhs, rhs in
            (newcomers[lhs].created, newcomers[lhs].id) < (newcomers[rhs].created, newcomers[rhs].id)
        }) {
            names[index] = firstFree(newcomers[index].base, isDocument: newcomers[index].isDocument, taken: &taken)
        }
        return names
    }

    /// Copies what changed into a summary.
    func record(into summary: inout RefreshSummary) {
        summary.changedNodes.formUnion(changedNodes)
        summary.changedNames.formUnion(changedNames)
    }
}
