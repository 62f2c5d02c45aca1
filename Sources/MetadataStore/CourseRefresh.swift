import Foundation
import GRDB
import NamingRules
import StudIPModel

extension MetadataStore {
    /// How far back a first sync still highlights documents as new (docs/metadata-store.md, "Highlights").
    public static let firstSyncNewWindow: TimeInterval = 7 * 24 * 3600

    /// Applies one course's folders and documents in one transaction: inserts, updates, renames and moves (which
    /// keep the node, its inode and its user state), and deletions.
    ///
    /// Deletion is conservative: what lies below a folder in `failedFolderIDs` (for the course root: everything),
    /// items the client or the store reported as problems, and documents the user may not download in
    /// `foldersWithUncheckedRestrictedDocuments` are kept as they were. A listing that failed as a whole never
    /// reaches the store (the client throws instead).
    ///
    /// Highlights: a course's first listing is a *first sync* when the course was in the profile's first overview
    /// (and has not been listed since it got its directory): then only documents changed within
    /// `firstSyncNewWindow` before `now` are `new`; the same holds for non-downloadable documents in
    /// ``CourseContent/foldersCheckedForTheFirstTime`` (missed before, not added). Otherwise every document that
    /// appears is `new`, and one
    /// whose version (``DocumentVersion``: file id, size) changes is `changed` (an unread `new` stays `new`). A new
    /// chdate alone is a rename or a move on Stud.IP, never new content.
    public func applyCourse(_ content: CourseContent, now: Date = Date()) throws(StoreError) -> RefreshSummary {
        try write(
            "applying the content of course \(content.course.title) (\(content.course.id))", durability: .deferred
        ) { db in
            var refresh = try CourseRefresh(db: db, content: content, now: now)
            return try refresh.run()
        }
    }
}

/// The statements a course's refresh runs per course, for the query-plan test: each reads the course's rows
/// through an index, never all the store's (docs/metadata-store.md, "Refresh").
enum RefreshSQL {
    static let courseItems = ExistingItem.query + " WHERE n.course_id = ? AND n.item_kind IN ('folder', 'document')"
    /// Items of one kind, by a JSON array of Stud.IP ids, wherever they are in the tree.
    static let itemsAnywhere =
        ExistingItem.query + " WHERE n.item_kind = ? AND n.studip_id IN (SELECT value FROM json_each(?))"
    static let summaryPaths =
        "SELECT inode, parent, name FROM node WHERE course_id = ? AND item_kind IN ('folder', 'document')"

    static let all: [(name: String, sql: String)] = [
        ("courseItems", courseItems), ("itemsAnywhere", itemsAnywhere), ("summaryPaths", summaryPaths),
        ("courseHighlights", QuerySQL.courseHighlights), ("topLevel", HighlightCounts.topLevelSQL),
        ("metadataRows", SearchSQL.metadataRows), ("naming", TreeEditor.childrenSQL),
    ]
}

/// A folder or document node as it was before the refresh.
struct ExistingItem {
    var inode: Int64
    var parent: Int64
    var name: String
    var baseName: String
    var item: ItemKind
    var studipID: String
    var courseID: String
    var size: Int64
    var mtime: Double
    var created: Double
    /// The `folder` or `document` row, for ``DetailRecord/save(_:stored:)``.
    var stored: [DatabaseValue]

    var fileID: String? { document(Self.fileID) }
    var highlight: String? { document(Self.highlight) }
    /// A document's name on Stud.IP, as the last listing gave it.
    var documentName: String? { document(Self.documentName) }
    /// A folder's `listed_at` as stored (nil for a document).
    var listedAt: DatabaseValue? { item == .folder ? stored[Self.listedAt] : nil }

    private static let fileID = DocumentRecord.sql.index(of: "file_id")
    private static let highlight = DocumentRecord.sql.index(of: "highlight")
    private static let documentName = DocumentRecord.sql.index(of: "name")
    private static let listedAt = FolderRecord.sql.index(of: "listed_at")

    /// A column of the document row; nil for a folder or a NULL.
    private func document<Value: DatabaseValueConvertible>(_ column: Int) -> Value? {
        item == .document ? Value.fromDatabaseValue(stored[column]) : nil
    }

    /// The node's columns, then the document's and the folder's (``DetailSQL/selection(_:)``).
    static let query = """
        SELECT n.inode, n.parent, n.name, n.base_name, n.item_kind, n.studip_id, n.course_id, n.size, n.mtime,
               n.created, \(DocumentRecord.sql.selection("d")), \(FolderRecord.sql.selection("f"))
        FROM node n LEFT JOIN document d ON d.inode = n.inode LEFT JOIN folder f ON f.inode = n.inode
        """
    private static let nodeColumns = 10

    /// Reads by index, in ``query``'s order: by name, GRDB looks each column up case-insensitively, which was a
    /// quarter of an unchanged course's refresh.
    init(row: Row) throws {
        inode = try row.decode(atIndex: 0)
        parent = try row.decode(atIndex: 1)
        name = try row.decode(atIndex: 2)
        baseName = try row.decode(atIndex: 3)
        let kind = try row.decode(String.self, atIndex: 4)
        guard let item = ItemKind(rawValue: kind), item == .folder || item == .document else {
            throw CorruptRow(detail: "node \(inode) is a \(kind), expected a folder or document")
        }
        self.item = item
        studipID = try row.decode(atIndex: 5)
        courseID = try row.decode(atIndex: 6)
        size = try row.decode(atIndex: 7)
        mtime = try row.decode(atIndex: 8)
        created = try row.decode(atIndex: 9)
        let documentColumns = DocumentRecord.sql.columns.count
        let start = item == .document ? Self.nodeColumns : Self.nodeColumns + documentColumns
        let count = item == .document ? documentColumns : FolderRecord.sql.columns.count
        guard row.count >= start + count else {
            throw CorruptRow(detail: "node \(inode): \(row.count) columns read, expected \(start + count)")
        }
        stored = (start..<start + count).map { row[$0] as DatabaseValue }
    }
}

/// Where a folder or document goes.
private enum ParentReference {
    /// The course directory (the course's root folder).
    case course
    /// A folder of this content.
    case folder(String)
    /// A folder the store keeps although it is not in the content (it failed to list).
    case kept(Int64)
}

private struct CourseRefresh {
    let db: Database
    let content: CourseContent
    let now: Date
    let courseInode: Int64
    let coursePath: String
    let isFirstSync: Bool
    /// The course's last listing before this one (seconds since 1970).
    let previousListing: Double?
    /// The root folder's listing failed: everything below the course is kept.
    let rootFailed: Bool
    var editor: TreeEditor
    var summary = RefreshSummary()
    var folders: [String: ExistingItem] = [:]
    var documents: [String: ExistingItem] = [:]
    /// Other courses whose items moved into this one: their counts change too.
    var otherCourses = Set<String>()
    var oldPaths: PathMap
    let contentFolderIDs: Set<String>
    var changes: [(inode: Int64, item: ItemKind, id: String, highlight: Highlight?, kind: Change)] = []
    /// Base and final name of new folders and documents named before their insert
    /// (``nameNewDirectories(folders:documents:)``), by Stud.IP id.
    var newFolderNames: [String: (base: String, name: String)] = [:]
    var newDocumentNames: [String: (base: String, name: String)] = [:]

    enum Change {
        case added
        case changed
        case moved(from: String)
        case changedAndMoved(from: String)
    }

    init(db: Database, content: CourseContent, now: Date) throws {
        let course = content.course
        guard
            let row = try db.row(
                """
                SELECT n.inode, c.baseline, c.listed_at FROM node n JOIN course c ON c.id = n.studip_id
                WHERE n.item_kind = 'course' AND n.studip_id = ?
                """,
                [course.id])
        else {
            throw StoreError.courseNotInTree(courseID: course.id, title: course.title)
        }
        self.db = db
        self.content = content
        self.now = now
        courseInode = try row.decode(forColumn: "inode")
        coursePath = try Paths.path(of: courseInode, db) ?? ""
        previousListing = try row.decode(forColumn: "listed_at")
        isFirstSync = try row.bool("baseline") && previousListing == nil
        rootFailed = content.failedFolderIDs.contains(content.rootFolderID)
        editor = TreeEditor(db: db)
        contentFolderIDs = Set(content.folders.map(\.id))
        oldPaths = PathMap(known: [courseInode: coursePath])
        for row in try db.rows(RefreshSQL.courseItems, [course.id]) {
            let item = try ExistingItem(row: row)
            oldPaths.add(item.inode, parent: item.parent, name: item.name)
            if item.item == .folder { folders[item.studipID] = item } else { documents[item.studipID] = item }
        }
    }

    mutating func run() throws -> RefreshSummary {
        let changesBefore = db.totalChangesCount
        summary.problems = content.problems
        let validFolders = resolveFolders()
        let placedDocuments = resolveDocuments(validFolders: validFolders)
        try adoptFromOtherCourses(folders: validFolders.map(\.folder), documents: placedDocuments.map(\.document))
        try nameNewDirectories(folders: validFolders, documents: placedDocuments)

        var present = Set<Int64>()
        var folderInodes: [String: Int64] = [:]
        for (folder, parent) in validFolders {
            let inode = try apply(folder, parent: try inode(of: parent, folderInodes: folderInodes))
            folderInodes[folder.id] = inode
            present.insert(inode)
        }
        for (document, parent) in placedDocuments {
            present.insert(try apply(document, parent: try inode(of: parent, folderInodes: folderInodes)))
        }
        try deleteVanished(present: present)
        try editor.finish()
        // Only when the refresh changed a node, folder or document row can the rows derived from them (highlight
        // counts, the tag view, the search index's metadata) change, so a refresh of an unchanged course reads the
        // course's rows and writes nothing but its listing times (docs/metadata-store.md, "Refresh").
        let treeChanged = db.totalChangesCount != changesBefore
        try recordRestrictedChecks()
        let root = content.folders.first { $0.id == content.rootFolderID }?.permissions ?? FolderPermissions()
        try db.run(
            """
            UPDATE course SET listed_at = ?, root_folder_id = ?, root_writable = ?, root_subfolder_allowed = ?
            WHERE id = ?
            """,
            [
                now.timeIntervalSince1970, content.rootFolderID, root.isWritable, root.isSubfolderAllowed,
                content.course.id,
            ])
        try forgetDepartures()
        guard treeChanged else { return summary }

        try HighlightCounts.recount(course: content.course.id, db)
        for other in otherCourses.sorted() {
            try HighlightCounts.recount(course: other, db)
        }
        try summarize()
        try TagView.sync(&editor, now: now)
        editor.record(into: &summary)
        try SearchSQL.indexMetadata(course: content.course.id, db)
        return summary
    }

    /// The course and what appears in it have not departed (they came back): only items new to the tree can be in
    /// `departed`, since a refresh records an item there when it deletes its node. One lookup each, and none while
    /// nothing has departed, rather than a pass over `departed` against the course's nodes.
    private func forgetDepartures() throws {
        guard try db.row("SELECT 1 FROM departed LIMIT 1") != nil else { return }
        let added = changes.compactMap { change in
            if case .added = change.kind { (change.item, change.id) } else { nil }
        }
        for (item, id) in [(ItemKind.course, content.course.id)] + added {
            try db.run("DELETE FROM departed WHERE item_kind = ? AND studip_id = ?", [item.rawValue, id])
        }
    }

    // MARK: Resolving the content

    /// The content's folders (root excluded) whose parent chain reaches the root or a kept folder, parents first.
    /// Others are reported as problems and their existing nodes kept.
    private mutating func resolveFolders() -> [(folder: RemoteFolder, parent: ParentReference)] {
        var byID: [String: RemoteFolder] = [:]
        for folder in content.folders where folder.id != content.rootFolderID {
            guard byID[folder.id] == nil else {
                summary.problems.append(.init(itemID: folder.id, message: "folder \(folder.name) listed twice"))
                continue
            }
            byID[folder.id] = folder
        }
        var depths: [String: Int] = [:]
        var invalid = Set<String>()
        for id in byID.keys.sorted() {
            var chain: [String] = []
            var current = id
            var depth: Int?
            while depth == nil {
                if let known = depths[current] {
                    depth = known
                } else if invalid.contains(current) || chain.contains(current) {
                    break
                } else if let folder = byID[current] {
                    chain.append(current)
                    guard let parentID = folder.parentID else { break }
                    if parentID == content.rootFolderID || keptFolder(parentID) != nil {
                        depth = 0
                    } else {
                        current = parentID
                    }
                } else {
                    break
                }
            }
            if let base = depth {
                for (offset, folderID) in chain.reversed().enumerated() { depths[folderID] = base + offset + 1 }
            } else {
                invalid.formUnion(chain)
            }
        }
        for id in invalid.sorted() {
            let name = byID[id]?.name ?? id
            summary.problems.append(
                .init(itemID: id, message: "folder \(name) skipped: its parent folder is missing from the listing"))
        }
        return depths.compactMap { id, depth in byID[id].map { (folder: $0, depth: depth) } }
            .sorted { ($0.depth, $0.folder.name, $0.folder.id) < ($1.depth, $1.folder.name, $1.folder.id) }
            .map { entry in
                let parentID = entry.folder.parentID ?? content.rootFolderID
                let parent: ParentReference =
                    if parentID == content.rootFolderID {
                        .course
                    } else if byID[parentID] == nil, let kept = keptFolder(parentID) {
                        .kept(kept)
                    } else {
                        .folder(parentID)
                    }
                return (entry.folder, parent)
            }
    }

    /// A folder that failed to list and is not in the content: its existing node stays and takes children.
    private func keptFolder(_ id: String) -> Int64? {
        guard content.failedFolderIDs.contains(id), !contentFolderIDs.contains(id) else { return nil }
        return folders[id]?.inode
    }

    /// The documents whose folder is known; the others are reported and their existing nodes kept.
    private mutating func resolveDocuments(validFolders: [(folder: RemoteFolder, parent: ParentReference)])
        -> [(document: RemoteDocument, parent: ParentReference)]
    {
        let folderIDs = Set(validFolders.map(\.folder.id))
        var seen = Set<String>()
        var result: [(document: RemoteDocument, parent: ParentReference)] = []
        for document in content.documents {
            guard seen.insert(document.id).inserted else {
                summary.problems.append(.init(itemID: document.id, message: "document \(document.name) listed twice"))
                continue
            }
            if document.folderID == content.rootFolderID {
                result.append((document, .course))
            } else if folderIDs.contains(document.folderID) {
                result.append((document, .folder(document.folderID)))
            } else if let kept = keptFolder(document.folderID) {
                result.append((document, .kept(kept)))
            } else {
                summary.problems.append(
                    .init(
                        itemID: document.id,
                        message: "document \(document.name) skipped: its folder \(document.folderID) is missing"))
            }
        }
        return result.sorted { ($0.document.name, $0.document.id) < ($1.document.name, $1.document.id) }
    }

    /// Items of this content that the store has under another course (moved between courses on the server).
    private mutating func adoptFromOtherCourses(folders remoteFolders: [RemoteFolder], documents: [RemoteDocument])
        throws
    {
        // One statement per kind for all the ids (a JSON array): on a first fill every item is new to the course,
        // and a lookup each was a tenth of the fill's store time.
        let wanted: [(ItemKind, [String])] = [
            (.folder, remoteFolders.map(\.id).filter { folders[$0] == nil }),
            (.document, documents.map(\.id).filter { self.documents[$0] == nil }),
        ]
        for (item, ids) in wanted where !ids.isEmpty {
            let list = String(decoding: try JSONEncoder().encode(ids), as: UTF8.self)
            for row in try db.rows(RefreshSQL.itemsAnywhere, [item.rawValue, list]) {
                let existing = try ExistingItem(row: row)
                otherCourses.insert(existing.courseID)
                let path = try Paths.path(of: existing.inode, db) ?? ""
                oldPaths.addKnown(existing.inode, path: path)
                if item == .folder {
                    folders[existing.studipID] = existing
                } else {
                    self.documents[existing.studipID] = existing
                }
            }
        }
    }

    /// Names, before they are inserted, the children of each directory that holds only new items: a folder new in
    /// this listing, or the course directory on its first listing. They get the names ``TreeEditor/finish()`` would
    /// give them, so each is written once (``TreeEditor/names(_:)``); a directory into which an existing item moves
    /// is left to `finish()`.
    private mutating func nameNewDirectories(
        folders validFolders: [(folder: RemoteFolder, parent: ParentReference)],
        documents placedDocuments: [(document: RemoteDocument, parent: ParentReference)]
    ) throws {
        // By directory: the course directory is `""`, a folder its Stud.IP id.
        var children: [String: [(id: String, newcomer: TreeEditor.Newcomer)]] = [:]
        var occupied = Set<String>()
        func add(
            _ id: String, to parent: ParentReference, isNew: Bool, _ newcomer: @autoclosure () -> TreeEditor.Newcomer
        ) {
            let key: String
            switch parent {
            case .course: key = ""
            case .folder(let folderID) where folders[folderID] == nil: key = folderID
            case .folder, .kept: return
            }
            guard isNew, !occupied.contains(key) else {
                occupied.insert(key)
                children[key] = nil
                return
            }
            children[key, default: []].append((id, newcomer()))
        }
        for (folder, parent) in validFolders {
            add(
                folder.id, to: parent, isNew: folders[folder.id] == nil,
                .init(
                    base: Naming.directoryName(folder.name, id: folder.id), isDocument: false,
                    created: folder.created.timeIntervalSince1970, id: folder.id))
        }
        for (document, parent) in placedDocuments {
            add(
                document.id, to: parent, isNew: documents[document.id] == nil,
                .init(
                    base: baseName(of: document), isDocument: true, created: document.created.timeIntervalSince1970,
                    id: document.id))
        }
        if children[""] != nil, try db.row("SELECT 1 FROM node WHERE parent = ? LIMIT 1", [courseInode]) != nil {
            children[""] = nil
        }
        for entries in children.values {
            for (entry, name) in zip(entries, TreeEditor.names(entries.map(\.newcomer))) {
                if entry.newcomer.isDocument {
                    newDocumentNames[entry.id] = (entry.newcomer.base, name)
                } else {
                    newFolderNames[entry.id] = (entry.newcomer.base, name)
                }
            }
        }
    }

    private func inode(of parent: ParentReference, folderInodes: [String: Int64]) throws -> Int64 {
        switch parent {
        case .course: return courseInode
        case .kept(let inode): return inode
        case .folder(let id):
            guard let inode = folderInodes[id] ?? folders[id]?.inode else {
                throw CorruptRow(detail: "folder \(id) was not placed before its children")
            }
            return inode
        }
    }

    // MARK: Applying

    private mutating func apply(_ folder: RemoteFolder, parent: Int64) throws -> Int64 {
        let named = newFolderNames[folder.id]
        let base = named?.base ?? Naming.directoryName(folder.name, id: folder.id)
        let changed = folder.changed.timeIntervalSince1970
        let inode: Int64
        if let existing = folders[folder.id] {
            inode = existing.inode
            if let from = try move(existing, to: parent, baseName: base) {
                changes.append((inode, .folder, folder.id, nil, .moved(from: from)))
            }
            let created = folder.created.timeIntervalSince1970
            if existing.mtime != changed || existing.created != created || existing.courseID != content.course.id {
                try db.run(
                    "UPDATE node SET mtime = ?, created = ?, course_id = ? WHERE inode = ?",
                    [changed, created, content.course.id, inode])
            }
            if existing.mtime != changed { editor.touched(inode) }
        } else {
            inode = try editor.insert(
                parent: parent, baseName: base, kind: .directory, item: .folder, studipID: folder.id,
                courseID: content.course.id, mtime: folder.changed, created: folder.created, name: named?.name)
            changes.append((inode, .folder, folder.id, nil, .added))
        }
        let stored = folders[folder.id]?.stored
        // A failed listing keeps the last successful one: the stored time, or while that was the course's
        // (NULL), the course's previous listing; 0 for a folder never listed.
        var listedAt = DatabaseValue.null
        if content.failedFolderIDs.contains(folder.id) {
            let kept = folders[folder.id]?.listedAt.flatMap { $0.isNull ? previousListing?.databaseValue : $0 }
            listedAt = kept ?? 0.databaseValue
        }
        try FolderRecord(inode: inode, folder: folder, listedAt: listedAt).save(db, stored: stored)
        return inode
    }

    private mutating func apply(_ document: RemoteDocument, parent: Int64) throws -> Int64 {
        let named = newDocumentNames[document.id]
        let base = named?.base ?? baseName(of: document)
        let changed = document.changed.timeIntervalSince1970
        let inode: Int64
        let highlight: Highlight?
        if let existing = documents[document.id] {
            inode = existing.inode
            let from = try move(existing, to: parent, baseName: base)
            let versionChanged = existing.fileID != document.fileID || existing.size != document.size
            highlight =
                existing.highlight == Highlight.new.rawValue
                ? .new : versionChanged ? .changed : existing.highlight.flatMap(Highlight.init(rawValue:))
            let created = document.created.timeIntervalSince1970
            if existing.size != document.size || existing.mtime != changed || existing.created != created
                || existing.courseID != content.course.id
            {
                try db.run(
                    "UPDATE node SET size = ?, mtime = ?, created = ?, course_id = ? WHERE inode = ?",
                    [document.size, changed, created, content.course.id, inode])
            }
            if existing.mtime != changed || existing.size != document.size { editor.touched(inode) }
            switch (versionChanged, from) {
            case (true, let from?):
                changes.append((inode, .document, document.id, highlight, .changedAndMoved(from: from)))
            case (true, nil): changes.append((inode, .document, document.id, highlight, .changed))
            case (false, let from?): changes.append((inode, .document, document.id, highlight, .moved(from: from)))
            case (false, nil): break
            }
        } else {
            let isRecent = document.changed >= now.addingTimeInterval(-MetadataStore.firstSyncNewWindow)
            let wasMissed =
                !document.isDownloadable && content.foldersCheckedForTheFirstTime.contains(document.folderID)
            highlight = !(isFirstSync || wasMissed) || isRecent ? .new : nil
            inode = try editor.insert(
                parent: parent, baseName: base, kind: .file, item: .document, studipID: document.id,
                courseID: content.course.id, size: document.size, mtime: document.changed, created: document.created,
                name: named?.name)
            changes.append((inode, .document, document.id, highlight, .added))
        }
        try DocumentRecord(inode: inode, document: document, highlight: highlight).save(
            db, stored: documents[document.id]?.stored)
        return inode
    }

    /// A document's base name: while its Stud.IP name stays, the one it has, since the extension added from the MIME
    /// type must not flip when only the MIME type changes. Stud.IP 5.0.7 derives the type from the
    /// name again at every new version, so `Hinweise.` went from `text/plain` to `application/octet-stream`
    /// (docs/metadata-store.md, "Names").
    private func baseName(of document: RemoteDocument) -> String {
        if let existing = documents[document.id], existing.documentName == document.name { return existing.baseName }
        return Naming.documentName(document.name, mimeType: document.mimeType, id: document.id)
    }

    /// Moves or renames an existing node when its parent or base name changed; returns its old path then.
    private mutating func move(_ existing: ExistingItem, to parent: Int64, baseName: String) throws -> String? {
        guard existing.parent != parent || existing.baseName != baseName else { return nil }
        try editor.place(existing.inode, from: existing.parent, oldName: existing.name, to: parent, baseName: baseName)
        return oldPaths.path(of: existing.inode)
    }

    /// From this many documents on, losing more than half of a course's documents counts as sweeping.
    static let sweepingRemoval = 10

    /// Deletes what the server no longer lists, except what must be kept: everything when the root failed, the
    /// content of failed folders, items reported as problems, documents the user may not download in folders the
    /// listing did not look for them in, and the folders above all of those.
    private mutating func deleteVanished(present: Set<Int64>) throws {
        guard !rootFailed else { return }
        let existing = Array(folders.values) + Array(documents.values)
        let mine = existing.filter { $0.courseID == content.course.id }
        var children: [Int64: [Int64]] = [:]
        var parents: [Int64: Int64] = [:]
        for item in mine {
            children[item.parent, default: []].append(item.inode)
            parents[item.inode] = item.parent
        }
        let problemIDs = Set(summary.problems.map(\.itemID))
        var keep = Set<Int64>()
        var stack = mine.filter { content.failedFolderIDs.contains($0.studipID) || problemIDs.contains($0.studipID) }
            .map(\.inode)
        stack += try uncheckedRestrictedDocuments()
        while let inode = stack.popLast() {
            guard keep.insert(inode).inserted else { continue }
            stack += children[inode] ?? []
        }
        for inode in keep {
            var current = parents[inode]
            while let parent = current, parent != courseInode, keep.insert(parent).inserted {
                current = parents[parent]
            }
        }
        let vanished = mine.filter { !present.contains($0.inode) && !keep.contains($0.inode) }
        let documentsBefore = mine.count { $0.item == .document }
        let documentsRemoved = vanished.count { $0.item == .document }
        if documentsRemoved >= Self.sweepingRemoval, documentsRemoved * 2 > documentsBefore {
            summary.sweepingRemovals.append(
                .init(course: coursePath, removed: documentsRemoved, before: documentsBefore))
        }
        for item in vanished.sorted(by: { $0.inode < $1.inode }) {
            summary.removed.append(
                .init(path: oldPaths.path(of: item.inode), inode: item.inode, item: item.item, studipID: item.studipID))
            try editor.delete(item.inode, parent: item.parent, name: item.name)
            try db.run(
                "INSERT OR IGNORE INTO departed (item_kind, studip_id, since) VALUES (?, ?, ?)",
                [item.item.rawValue, item.studipID, now.timeIntervalSince1970])
        }
    }

    /// Records the folders this listing looked in for documents the user may not download, as the latest check
    /// (``MetadataStore/restrictedChecks(courseID:)``), and forgets folders the course no longer has. Only where
    /// the listing rotates (some folders were not looked in, or one was looked in for the first time: a course
    /// whose only such folder is its root); a complete listing has nothing to continue.
    private func recordRestrictedChecks() throws {
        let unchecked = content.foldersWithUncheckedRestrictedDocuments
        guard !unchecked.isEmpty || !content.foldersCheckedForTheFirstTime.isEmpty else { return }
        let current = Set(content.folders.map(\.id))
        let checked = current.subtracting(unchecked).subtracting(content.failedFolderIDs)
        let next = try Int64.fetchOne(db, sql: "SELECT coalesce(max(checked), 0) + 1 FROM restricted_check") ?? 1
        for folderID in checked.sorted() {
            try db.run(
                "INSERT OR REPLACE INTO restricted_check (folder_id, course_id, checked) VALUES (?, ?, ?)",
                [folderID, content.course.id, next])
        }
        let known = try String.fetchAll(
            db, sql: "SELECT folder_id FROM restricted_check WHERE course_id = ?", arguments: [content.course.id])
        for folderID in known where !current.contains(folderID) {
            try db.run("DELETE FROM restricted_check WHERE folder_id = ?", [folderID])
        }
    }

    /// The course's documents the user may not download (`downloadable = 0`) in the folders of
    /// ``CourseContent/foldersWithUncheckedRestrictedDocuments``: the listing did not look for such documents
    /// there, so their absence from it says nothing.
    private func uncheckedRestrictedDocuments() throws -> [Int64] {
        let folderIDs = content.foldersWithUncheckedRestrictedDocuments
        guard !folderIDs.isEmpty else { return [] }
        return try db.rows(
            """
            SELECT d.inode, d.folder_id FROM document d JOIN node n ON n.inode = d.inode
            WHERE n.course_id = ? AND d.downloadable = 0
            """,
            [content.course.id]
        ).compactMap { row in
            let folderID = try row.decode(String.self, forColumn: "folder_id")
            return try folderIDs.contains(folderID) ? row.decode(Int64.self, forColumn: "inode") : nil
        }
    }

    /// Fills the summary's paths from the tree after the refresh.
    private mutating func summarize() throws {
        var paths = PathMap(known: [courseInode: coursePath])
        try db.step(RefreshSQL.summaryPaths, [content.course.id]) { row in
            paths.add(row.int64(0), parent: row.int64(1), name: row.string(2) ?? "")
            return true
        }
        for change in changes {
            let item = RefreshSummary.Item(
                path: paths.path(of: change.inode), inode: change.inode, item: change.item, studipID: change.id,
                highlight: change.highlight)
            switch change.kind {
            case .added: summary.added.append(item)
            case .changed: summary.changed.append(item)
            case .moved(let from):
                summary.moved.append(.init(from: from, to: item.path, inode: item.inode, item: item.item))
            case .changedAndMoved(let from):
                summary.changed.append(item)
                summary.moved.append(.init(from: from, to: item.path, inode: item.inode, item: item.item))
            }
        }
    }
}
