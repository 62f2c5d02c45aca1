import Foundation
import GRDB
import StudIPModel

/// The reads the filesystem and the CLI need. Each is one read transaction, or one statement without a
/// transaction (`readStatement`), on indexed lookups (see `MetadataStoreTests.queryPlans`); none scans a table.
extension MetadataStore {
    /// Readdir offsets are `inode + offsetBias`, leaving 1 and 2 free for `.` and `..`.
    static let offsetBias: Int64 = 2

    /// getattr: the node with this inode, or nil when a refresh removed it.
    public func node(inode: Int64) throws(StoreError) -> Node? {
        try readStatement("reading inode \(inode)") { db in try Node.fetch(inode, db) }
    }

    /// lookup: the child called `name` (exact bytes, as stored: NFC) of directory `parent`.
    public func lookup(parent: Int64, name: String) throws(StoreError) -> Node? {
        try readStatement("looking up \(name) in inode \(parent)") { db in
            try db.row(QuerySQL.lookup, [parent, name]).map(Node.init(row:))
        }
    }

    /// readdir: up to `limit` children of `parent` after the entry whose offset is `offset` (0 = from the start),
    /// in inode order. Cursors stay valid across refreshes: removed entries just no longer appear.
    public func children(of parent: Int64, after offset: Int64 = 0, limit: Int = 1024) throws(StoreError)
        -> [DirectoryEntry]
    {
        try readListing("listing inode \(parent)") { connection in
            var entries: [DirectoryEntry] = []
            try connection.step(connection.children, [parent, max(offset - Self.offsetBias, 0), Int64(limit)]) { row in
                let node = try Node(row, at: 0)
                entries.append(DirectoryEntry(node: node, offset: node.inode + Self.offsetBias))
                return true
            }
            return entries
        }
    }

    /// readdir's first page: the directory, its parent for `..`, when it was listed, and the first page of children,
    /// consistent with each other because they come from one statement (``QuerySQL/listing``), which needs no
    /// transaction. Four statements in a read transaction were most of what a cold `find` cost the daemon besides
    /// the kernel (docs/performance.md, "Daemon CPU a document").
    public func listing(of directory: Int64, after offset: Int64 = 0, limit: Int = 1024) throws(StoreError)
        -> Listing?
    {
        try readListing("listing inode \(directory)") { connection in
            var listing: Listing?
            let listedAtColumn = 2 * Node.columnCount
            let childStart = listedAtColumn + 1
            let arguments = [directory, max(offset - Self.offsetBias, 0), Int64(limit)]
            try connection.step(connection.listing, arguments) { row in
                if listing == nil {
                    listing = Listing(
                        directory: try Node(row, at: 0),
                        parent: row.isNull(Node.columnCount) ? nil : try Node(row, at: Node.columnCount),
                        listedAt: row.isNull(listedAtColumn)
                            ? nil : Date(timeIntervalSince1970: row.double(listedAtColumn)),
                        children: [])
                }
                if !row.isNull(childStart) {
                    let child = try Node(row, at: childStart)
                    listing?.children.append(DirectoryEntry(node: child, offset: child.inode + Self.offsetBias))
                }
                return true
            }
            return listing
        }
    }

    /// getxattr/listxattr: everything the extended attributes show. Links show their course's data.
    public func info(inode: Int64) throws(StoreError) -> NodeInfo? {
        try read("reading the attributes of inode \(inode)") { db in
            guard let node = try Node.fetch(inode, db) else { return nil }
            var info = NodeInfo(
                node: node, description: "", webURL: "", document: nil, highlight: nil, user: UserState())
            switch node.item {
            case .root, .ongoing, .semester, .tagView, .tag, .tagLink, .announcements, .courseCalendar, .timetable:
                break
            case .announcement:
                info.highlight = try String.fetchOne(
                    db, sql: "SELECT highlight FROM generated_file WHERE inode = ?", arguments: [inode]
                ).flatMap(Highlight.init(rawValue:))
            case .course, .courseLink:
                if let row = try db.row(QuerySQL.courseInfo, [node.studipID]) {
                    info.description = try row.decode(forColumn: "description")
                    info.webURL = try row.decode(forColumn: "web_url")
                }
            case .folder:
                if let row = try db.row(QuerySQL.folderInfo, [inode]) {
                    info.description = try row.decode(forColumn: "description")
                    info.webURL = try row.decode(forColumn: "web_url")
                }
            case .document:
                if let row = try db.row(QuerySQL.document, [inode]) {
                    let document = try DocumentRow(row: row)
                    info.description = document.description
                    info.webURL = document.info.webURL
                    info.document = document.info
                    info.highlight = document.highlight
                }
            }
            if let key = UserKey(node: node) {
                info.user = try key.state(db)
                if info.highlight == nil, info.user.flagged { info.highlight = .flagged }
            }
            return info
        }
    }

    /// What the content cache needs to fetch a document, and what the user may do with it (`isWritable`,
    /// `isEditable`, docs/writing.md); nil for other nodes.
    public func document(inode: Int64) throws(StoreError) -> DocumentInfo? {
        try readStatement("reading document \(inode)") { db in
            try db.row(QuerySQL.document, [inode]).map { try DocumentRow(row: $0).info }
        }
    }

    /// What the user may do in the folder a directory stands for: a folder node's permissions, or for a course
    /// directory its root folder's. nil for every other node, and for a course without a file area.
    public func folderAccess(inode: Int64) throws(StoreError) -> FolderAccess? {
        try readStatement("reading the permissions of inode \(inode)") { db in
            try db.row(QuerySQL.folderAccess, [inode, inode]).map { row in
                FolderAccess(
                    folderID: try row.decode(atIndex: 0), courseID: try row.decode(atIndex: 1),
                    folderType: try row.decode(atIndex: 2),
                    permissions: FolderPermissions(
                        isReadable: try row.bool(atIndex: 3), isWritable: try row.bool(atIndex: 4),
                        isSubfolderAllowed: try row.bool(atIndex: 5)))
            }
        }
    }

    /// The node's path from the mount point (`WS 2026-27/INF-101 Foo/Folien`), empty for the root.
    public func path(of inode: Int64) throws(StoreError) -> String? {
        try read("finding the path of inode \(inode)") { db in try Paths.path(of: inode, db) }
    }

    /// The node at `path` (relative to the mount point; empty or `/` is the root). Symlinks are followed in the
    /// middle of the path, and at its end when `followSymlinks` is set. Throws `notFound` when nothing is there.
    public func resolve(path: String, followSymlinks: Bool = true) throws(StoreError) -> Node {
        let found = try read("resolving \(path)") { db -> Node? in
            guard var current = try Node.fetch(Node.rootInode, db) else { return nil }
            var remaining = path.split(separator: "/").map(String.init)
            var links = 0
            while !remaining.isEmpty {
                let component = remaining.removeFirst()
                if component == "." { continue }
                if component == ".." {
                    if let parent = current.parentInode, let node = try Node.fetch(parent, db) { current = node }
                    continue
                }
                guard current.kind == .directory,
                    let child = try db.row(QuerySQL.lookup, [current.inode, component]).map(Node.init(row:))
                else { return nil }
                if child.kind == .symlink, let target = child.symlinkTarget, followSymlinks || !remaining.isEmpty {
                    links += 1
                    guard links <= 40 else { return nil }
                    remaining = target.split(separator: "/").map(String.init) + remaining
                    if target.hasPrefix("/"), let root = try Node.fetch(Node.rootInode, db) { current = root }
                } else {
                    current = child
                }
            }
            return current
        }
        guard let found else { throw .notFound(path: path) }
        return found
    }

    /// Every node below (and including) `inode`, depth first, children sorted by name: `campusfs tree`.
    public func walk(from inode: Int64 = Node.rootInode) throws(StoreError) -> [WalkEntry] {
        try read("walking the tree") { db in
            guard let start = try Node.fetch(inode, db) else { throw StoreError.noSuchNode(inode: inode) }
            let rows = try db.rows(QuerySQL.walk, [inode])
            var children: [Int64: [Node]] = [:]
            for row in rows {
                let node = try Node(row: row)
                if let parent = node.parentInode { children[parent, default: []].append(node) }
            }
            var result: [WalkEntry] = []
            var stack = [WalkEntry(node: start, path: try Paths.path(of: inode, db) ?? "", depth: 0)]
            while let entry = stack.popLast() {
                result.append(entry)
                let sorted = (children[entry.node.inode] ?? []).sorted {
                    $0.name.utf8.lexicographicallyPrecedes($1.name.utf8)
                }
                for child in sorted.reversed() {
                    let path = entry.path.isEmpty ? child.name : entry.path + "/" + child.name
                    stack.append(WalkEntry(node: child, path: path, depth: entry.depth + 1))
                }
            }
            return result
        }
    }

    /// Highlighted documents (new, changed, flagged), newest chdate first: `campusfs new`.
    public func highlightedDocuments(limit: Int = 1000) throws(StoreError) -> [HighlightedDocument] {
        try read("listing highlighted documents") { db in
            let rows = try db.rows(QuerySQL.highlighted, [limit])
            return try rows.compactMap { row in
                let node = try Node(row: row)
                let stored = try row.decode(String?.self, forColumn: "highlight").flatMap(Highlight.init(rawValue:))
                let flagged: Highlight? = try row.bool("flagged") ? .flagged : nil
                guard let highlight = stored ?? flagged else { return nil }
                return HighlightedDocument(
                    node: node, highlight: highlight, path: try Paths.path(of: node.inode, db) ?? "",
                    courseTitle: try row.decode(forColumn: "course_title"))
            }
        }
    }

    /// Every tagged item in the tree with its tags (a course once, under its directory, not its links), by path;
    /// with `tag`, only the items carrying it.
    public func taggedItems(tag: String? = nil) throws(StoreError) -> [(path: String, tags: [String])] {
        try read("listing tagged items") { db in
            var result: [(path: String, tags: [String])] = []
            for row in try db.rows(QuerySQL.taggedNodes) {
                let inode: Int64 = try row.decode(forColumn: "inode")
                let tags = try String.fetchAll(
                    db.cachedStatement(sql: QuerySQL.tags),
                    arguments: [
                        try row.decode(String.self, forColumn: "item_kind"),
                        try row.decode(String.self, forColumn: "studip_id"),
                    ])
                if let tag, !tags.contains(tag) { continue }
                if let path = try Paths.path(of: inode, db) { result.append((path, tags)) }
            }
            return result.sorted { $0.path.utf8.lexicographicallyPrecedes($1.path.utf8) }
        }
    }

    /// The documents that must stay cached: pinned themselves, or below a pinned folder, course or semester.
    public func pinnedDocumentInodes() throws(StoreError) -> [Int64] {
        try read("listing pinned documents") { db in
            try Int64.fetchAll(db.cachedStatement(sql: QuerySQL.pinnedDocuments))
        }
    }

    /// Whether the item at `inode` or anything above it is pinned.
    public func isPinnedOrBelowAPin(inode: Int64) throws(StoreError) -> Bool {
        try read("reading the pins above inode \(inode)") { db in
            try db.row(QuerySQL.pinnedAbove, [inode]) != nil
        }
    }

    /// The courses whose content lies below `path` (relative to the root); nil for the whole tree: no path, the
    /// root, or a folder with no course below it (the semester folders of a profile that hides them all).
    public func courseIDs(below path: String?) throws(StoreError) -> Set<String>? {
        let trimmed = (path ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        guard !trimmed.isEmpty else { return nil }
        let node = try resolve(path: trimmed)
        if let course = node.courseID { return [course] }
        let below = try walk(from: node.inode).compactMap(\.node.courseID)
        return below.isEmpty ? nil : Set(below)
    }

    /// In which order the course's folders were last looked in for documents the user may not download (folder id
    /// → a number, larger is later; absent: never), for the next listing to continue the rotation
    /// (`DocumentSource.content(of:lastChecked:)`).
    public func restrictedChecks(courseID: String) throws(StoreError) -> [String: Int64] {
        try read("reading which folders of course \(courseID) were looked in") { db in
            var checks: [String: Int64] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT folder_id, checked FROM restricted_check WHERE course_id = ?", arguments: [courseID])
            {
                checks[try row.decode(atIndex: 0)] = try row.decode(atIndex: 1)
            }
            return checks
        }
    }

    /// The ids of the documents in these courses, for `campusfs refresh PATH` to make their cached copies ask the
    /// server again.
    public func documentIDs(inCourses courseIDs: Set<String>) throws(StoreError) -> Set<String> {
        try read("listing the documents of \(courseIDs.count) courses") { db in
            var found = Set<String>()
            for courseID in courseIDs {
                found.formUnion(
                    try String.fetchAll(
                        db.cachedStatement(
                            sql: "SELECT studip_id FROM node WHERE course_id = ? AND item_kind = 'document'"),
                        arguments: [courseID]))
            }
            return found
        }
    }

    /// The course each of `inodes` lies in, so that what a refresh found can be told per course (the desktop
    /// notifications); nodes outside a course (a semester's timetable) are left out.
    public func courses(containing inodes: some Sequence<Int64>) throws(StoreError) -> [Int64: CourseHeading] {
        try read("finding the courses of new and changed items") { db in
            var found: [Int64: CourseHeading] = [:]
            for inode in Set(inodes) {
                guard let row = try db.row(QuerySQL.courseOfNode, [inode]) else { continue }
                let directory: Int64 = try row.decode(atIndex: 3)
                found[inode] = CourseHeading(
                    courseID: try row.decode(atIndex: 0), number: try row.decode(atIndex: 1),
                    title: try row.decode(atIndex: 2), path: try Paths.path(of: directory, db) ?? "")
            }
            return found
        }
    }

    /// The courses that have a directory, for the refresher to list (`applyCourse` refuses the others).
    public func placedCourses() throws(StoreError) -> [PlacedCourse] {
        try read("listing the courses") { db in
            try db.rows(QuerySQL.placedCourses).map { row in
                PlacedCourse(
                    courseID: try row.decode(forColumn: "studip_id"), inode: try row.decode(forColumn: "inode"),
                    title: try row.decode(forColumn: "title"), listedAt: try row.optionalDate("listed_at"))
            }
        }
    }

    /// ``Listing/listedAt``.
    /// Whether the profile synced yet, when, and as whom.
    public func syncState() throws(StoreError) -> SyncState {
        try read("reading the sync state") { db in
            guard let row = try db.row("SELECT * FROM sync_state WHERE id = 1") else { return SyncState() }
            var user: RemoteUser?
            if let id = try row.decode(String?.self, forColumn: "user_id") {
                user = RemoteUser(
                    id: id, username: try row.decode(String?.self, forColumn: "username") ?? "",
                    displayName: try row.decode(String?.self, forColumn: "display_name") ?? "")
            }
            return SyncState(
                firstOverviewAt: try row.optionalDate("first_overview_at"),
                lastOverviewAt: try row.optionalDate("last_overview_at"), user: user)
        }
    }
}

/// A document row joined with its node.
struct DocumentRow {
    var info: DocumentInfo
    var description: String
    var highlight: Highlight?

    init(row: Row) throws {
        info = DocumentInfo(
            id: try row.decode(forColumn: "id"), folderID: try row.decode(forColumn: "folder_id"),
            courseID: try row.decode(forColumn: "course_id"), mimeType: try row.decode(forColumn: "mime_type"),
            size: try row.decode(forColumn: "size"), created: try row.date("created"), changed: try row.date("mtime"),
            fileID: try row.decode(forColumn: "file_id"),
            ownerName: try row.decode(forColumn: "owner_name"), license: try row.decode(forColumn: "license"),
            isDownloadable: try row.bool("downloadable"), isLink: try row.bool("is_link"),
            webURL: try row.decode(forColumn: "web_url"), isWritable: try row.bool("writable"),
            isEditable: try row.bool("editable"))
        description = try row.decode(forColumn: "description")
        highlight = try row.decode(String?.self, forColumn: "highlight").flatMap(Highlight.init(rawValue:))
    }
}
