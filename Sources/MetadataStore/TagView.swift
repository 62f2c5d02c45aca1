import Foundation
import GRDB
import NamingRules

/// The read-only tag view (issue 16): a top-level folder `Tags` with one folder per tag in use, each holding a
/// symlink per tagged document, folder or course, pointing at it relatively (`../../WS 2026-27/INF-101 Foo/a.pdf`).
///
/// The view is stored as nodes, so inodes, sticky names, duplicate suffixes, lookups, listings and the kernel's
/// invalidations all come from the machinery the rest of the tree uses. ``sync(_:now:)`` derives it from
/// `user_tag` and the tree at the end of every transaction that changes either (refreshes, `setTags`), through the
/// caller's ``TreeEditor``, so the caller's summary names every view node whose listing, name or link target
/// changed. docs/metadata-store.md ("The tag view") has the rules.
enum TagView {
    /// The folder's name; issue 18 makes it follow the profile's language.
    static let name = "Tags"

    /// Each item that carries a tag and has a node in the tree (courses by their directory), with that node.
    private static let taggedSQL = """
        SELECT t.tag, n.inode, n.parent, n.name, n.studip_id, n.base_name, n.created FROM user_tag t
        JOIN node n ON n.studip_id = t.studip_id AND n.item_kind = t.item_kind
        WHERE t.item_kind IN ('document', 'folder', 'course')
        """

    private struct Target {
        var parent: Int64
        var name: String
        var baseName: String
        var created: Date
    }

    private struct ViewNode {
        var inode: Int64
        var parent: Int64
        var name: String
        var baseName: String
        var key: String
        var symlinkTarget: String?

        init(row: Row) throws {
            inode = try row.decode(forColumn: "inode")
            parent = try row.decode(forColumn: "parent")
            name = try row.decode(forColumn: "name")
            baseName = try row.decode(forColumn: "base_name")
            key = try row.decode(String?.self, forColumn: "studip_id") ?? ""
            symlinkTarget = try row.decode(forColumn: "symlink_target")
        }
    }

    /// Brings the view in step with the tags and the tree: creates and removes the view, tag folders and links,
    /// renames links whose target was renamed, and rewrites targets that moved. Call it after the caller's own
    /// edits are named (`editor.finish()`); it names its own.
    ///
    /// `Tags` is created while a tag is in use and removed with the last one. Names are the tree's: whoever holds
    /// `Tags` keeps it and a newcomer gets ` (2)`. When the view and a semester of that name appear in one refresh,
    /// the semester is named first (the view is placed after the refresh's own nodes), so the view yields.
    ///
    /// With `tags`, only those tags' folders are looked at: enough after a tag change, which moves nothing in the
    /// tree, and it keeps a `setxattr` from reading every link of the view.
    static func sync(_ editor: inout TreeEditor, now: Date, tags: Set<String>? = nil) throws {
        let db = editor.db
        var wanted: [String: [String: Target]] = [:]
        let scope = tags.map { Array($0) }
        let scoped = scope.map { " AND t.tag IN (\(Array(repeating: "?", count: $0.count).joined(separator: ", ")))" }
        for row in try db.rows(taggedSQL + (scoped ?? ""), StatementArguments(scope ?? [])) {
            let tag: String = try row.decode(forColumn: "tag")
            wanted[tag, default: [:]][try row.decode(forColumn: "studip_id")] = Target(
                parent: try row.decode(forColumn: "parent"), name: try row.decode(forColumn: "name"),
                baseName: try row.decode(forColumn: "base_name"), created: try row.date("created"))
        }
        let view = try db.row("SELECT * FROM node WHERE item_kind = 'tagView'").map(ViewNode.init(row:))
        let inUse = scope == nil ? !wanted.isEmpty : try db.row(taggedSQL + " LIMIT 1") != nil
        guard inUse else {
            if let view { try editor.delete(view.inode, parent: view.parent, name: view.name) }
            return
        }
        let viewInode =
            try view?.inode
            ?? editor.insert(
                parent: Node.rootInode, baseName: name, kind: .directory, item: .tagView, studipID: nil,
                courseID: nil, mtime: now, created: now)

        var folders: [String: Int64] = [:]
        for folder in try db.rows("SELECT * FROM node WHERE parent = ?", [viewInode]).map(ViewNode.init(row:))
        where tags?.contains(folder.key) ?? true {
            if wanted[folder.key] == nil || folders[folder.key] != nil {
                try editor.delete(folder.inode, parent: viewInode, name: folder.name)
            } else {
                folders[folder.key] = folder.inode
            }
        }
        var links: [(inode: Int64, current: String?, target: Target)] = []
        // Sorted, so that inode order (`ls -U`) does not depend on hashing.
        for (tag, targets) in wanted.sorted(by: { $0.key < $1.key }) {
            let folder =
                try folders[tag]
                ?? editor.insert(
                    parent: viewInode, baseName: Naming.directoryName(tag, id: tag), kind: .directory, item: .tag,
                    studipID: tag, courseID: nil, mtime: now, created: now)
            var linked = Set<String>()
            for link in try db.rows("SELECT * FROM node WHERE parent = ?", [folder]).map(ViewNode.init(row:)) {
                guard let target = targets[link.key], linked.insert(link.key).inserted else {
                    try editor.delete(link.inode, parent: folder, name: link.name)
                    continue
                }
                if link.baseName != target.baseName {
                    try editor.place(
                        link.inode, from: folder, oldName: link.name, to: folder, baseName: target.baseName)
                }
                links.append((link.inode, link.symlinkTarget, target))
            }
            for (id, target) in targets.sorted(by: { $0.key < $1.key }) where !linked.contains(id) {
                let inode = try editor.insert(
                    parent: folder, baseName: target.baseName, kind: .symlink, item: .tagLink, studipID: id,
                    courseID: nil, mtime: now, created: target.created, symlinkTarget: "")
                links.append((inode, nil, target))
            }
        }
        try editor.finish()
        // Targets share their folders: each directory's path is read once, not once per link.
        var prefixes: [Int64: String] = [Node.rootInode: ""]
        func prefix(_ directory: Int64) throws -> String {
            if let known = prefixes[directory] { return known }
            guard let row = try db.row("SELECT parent, name FROM node WHERE inode = ?", [directory]),
                let parent = try row.decode(Int64?.self, forColumn: "parent")
            else { return "" }
            let path = try prefix(parent) + (try row.decode(String.self, forColumn: "name")) + "/"
            prefixes[directory] = path
            return path
        }
        for link in links {
            let target = "../../" + (try prefix(link.target.parent)) + link.target.name
            guard link.current != target else { continue }
            try db.run(
                "UPDATE node SET symlink_target = ?, size = ? WHERE inode = ?", [target, target.utf8.count, link.inode])
            editor.touched(link.inode)
        }
    }
}
