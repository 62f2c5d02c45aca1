import Foundation
import GRDB
import NamingRules
import StudIPModel

extension MetadataStore {
    /// Applies the user's semesters and courses: the top two levels of the tree (docs/metadata-store.md, "The tree"),
    /// in one transaction.
    ///
    /// Courses missing from the overview are removed with everything below them, unless the overview's `problems`
    /// name them (the client could not read them): those, and semesters named there, stay as they were. Hidden and
    /// filtered courses lose their directory (and content) but stay known, so showing them again is not mistaken
    /// for an enrolment. The first call on a profile marks the profile's first sync (see `applyCourse`). Call it
    /// only with an overview the client fetched completely: an empty one empties the tree.
    public func applyOverview(
        _ overview: RemoteOverview, options: TreeOptions = TreeOptions(), now: Date = Date()
    ) throws(StoreError) -> RefreshSummary {
        try write("applying the course overview", durability: .deferred) { db in
            var refresh = OverviewRefresh(db: db, overview: overview, options: options, now: now)
            let indexed = try SearchSQL.courseTexts(db)
            let summary = try refresh.run()
            for (course, text) in try SearchSQL.courseTexts(db) where indexed[course].map({ $0 != text }) ?? false {
                try SearchSQL.indexMetadata(course: course, db)
            }
            return summary
        }
    }
}

/// Where a course's directory goes.
private enum Placement {
    case ongoing
    /// A real directory under `main`, symlinks in `links` (semester ids).
    case semesters(main: String, links: [String])
}

/// A node of the top two levels, as loaded before the refresh.
private struct PlacedNode {
    var inode: Int64
    var parent: Int64
    var name: String
    var baseName: String
    var item: ItemKind
    var studipID: String?
    var mtime: Double

    init(row: Row) throws {
        inode = try row.decode(forColumn: "inode")
        parent = try row.decode(forColumn: "parent")
        name = try row.decode(forColumn: "name")
        baseName = try row.decode(forColumn: "base_name")
        let item = try row.decode(String.self, forColumn: "item_kind")
        guard let kind = ItemKind(rawValue: item) else { throw CorruptRow(detail: "node \(inode) is a \(item)") }
        self.item = kind
        studipID = try row.decode(forColumn: "studip_id")
        mtime = try row.decode(forColumn: "mtime")
    }
}

private struct OverviewRefresh {
    static let ongoingName = "Ongoing"

    let db: Database
    let overview: RemoteOverview
    let options: TreeOptions
    let now: Date
    var editor: TreeEditor
    var summary = RefreshSummary()
    var semesters: [String: RemoteSemester] = [:]
    /// Paths before the refresh, for moves and removals.
    var oldPaths: [Int64: String] = [:]
    var addedNodes: [(inode: Int64, item: ItemKind, id: String?)] = []
    var movedNodes: [(inode: Int64, item: ItemKind, from: String)] = []

    init(db: Database, overview: RemoteOverview, options: TreeOptions, now: Date) {
        self.db = db
        self.overview = overview
        self.options = options
        self.now = now
        editor = TreeEditor(db: db)
    }

    mutating func run() throws -> RefreshSummary {
        summary.problems = overview.problems
        let isFirstOverview =
            try db.row("SELECT first_overview_at FROM sync_state WHERE id = 1")?
            .optionalDate("first_overview_at") == nil
        try storeSemesters()
        let courses = try storeCourses(isFirstOverview: isFirstOverview)

        let topLevel = try db.rows("SELECT * FROM node WHERE parent = ?", [Node.rootInode]).map(PlacedNode.init)
        var second: [PlacedNode] = []
        for node in topLevel {
            oldPaths[node.inode] = node.name
            for child in try db.rows("SELECT * FROM node WHERE parent = ?", [node.inode]).map(PlacedNode.init) {
                oldPaths[child.inode] = node.name + "/" + child.name
                second.append(child)
            }
        }

        var placements: [String: Placement] = [:]
        for course in courses.list {
            placements[course.id] = placement(of: course)
        }
        let directories = try placeTopLevel(topLevel, placements: placements)
        try placeCourses(courses, placements: placements, existing: second, directories: directories)
        for node in topLevel where node.item != .tagView && !directories.values.contains(node.inode) {
            try editor.delete(node.inode, parent: Node.rootInode, name: node.name)
            summary.removed.append(.init(path: node.name, inode: node.inode, item: node.item, studipID: node.studipID))
        }
        try editor.finish()
        try updateLinkTargets()
        try TagView.sync(&editor, now: now)
        try HighlightCounts.recountTopLevel(db)
        try db.run(
            """
            UPDATE sync_state SET first_overview_at = COALESCE(first_overview_at, ?1), last_overview_at = ?1,
                user_id = ?2, username = ?3, display_name = ?4
            WHERE id = 1
            """,
            [now.timeIntervalSince1970, overview.user.id, overview.user.username, overview.user.displayName])

        for node in addedNodes {
            let path = try Paths.path(of: node.inode, db) ?? ""
            summary.added.append(.init(path: path, inode: node.inode, item: node.item, studipID: node.id))
        }
        for node in movedNodes {
            let path = try Paths.path(of: node.inode, db) ?? ""
            summary.moved.append(.init(from: node.from, to: path, inode: node.inode, item: node.item))
        }
        editor.record(into: &summary)
        return summary
    }

    /// Replaces the semester table with the overview's (every semester of the installation).
    private mutating func storeSemesters() throws {
        for semester in overview.semesters {
            guard semesters[semester.id] == nil else {
                summary.problems.append(.init(itemID: semester.id, message: "semester listed twice; using the first"))
                continue
            }
            semesters[semester.id] = semester
            try SemesterRecord(semester).upsert(db)
        }
        let unreadable = Set(overview.problems.map(\.itemID))
        for stored in try SemesterRecord.fetchAll(db) {
            let id = stored.semester.id
            guard semesters[id] == nil else { continue }
            if unreadable.contains(id) {
                semesters[id] = stored.semester
            } else {
                try stored.delete(db)
            }
        }
    }

    /// Upserts the courses, removes vanished ones (with their nodes, by cascade); returns the courses with their
    /// first-seen times.
    private mutating func storeCourses(isFirstOverview: Bool) throws -> (
        list: [RemoteCourse], firstSeen: [String: Date]
    ) {
        var firstSeen: [String: Date] = [:]
        for row in try db.rows("SELECT id, first_seen_at FROM course") {
            firstSeen[try row.decode(forColumn: "id")] = try row.date("first_seen_at")
        }
        var list: [RemoteCourse] = []
        var seen = Set<String>()
        for course in overview.courses {
            guard seen.insert(course.id).inserted else {
                summary.problems.append(.init(itemID: course.id, message: "course listed twice; using the first"))
                continue
            }
            list.append(course)
            if firstSeen[course.id] == nil { firstSeen[course.id] = now }
            try CourseRecord(course, firstSeenAt: now, baseline: isFirstOverview).save(db)
        }
        let unreadable = Set(overview.problems.map(\.itemID))
        let vanished = try db.rows(
            """
            SELECT c.*, n.inode, n.parent, n.name FROM course c
            LEFT JOIN node n ON n.item_kind = 'course' AND n.studip_id = c.id
            """)
        for row in vanished {
            let id = try row.decode(String.self, forColumn: "id")
            guard !seen.contains(id) else { continue }
            if unreadable.contains(id) {
                list.append(try CourseRecord(row: row).course)
                continue
            }
            // It departs with everything in it, as what vanishes from a course does: its cached bytes, tags and
            // pins wait out the removal grace (a course may leave the overview by mistake, or for a semester).
            try db.run(
                """
                INSERT OR IGNORE INTO departed (item_kind, studip_id, since)
                SELECT item_kind, studip_id, ? FROM node
                WHERE course_id = ? AND item_kind IN ('course', 'folder', 'document')
                """,
                [now.timeIntervalSince1970, id])
            if let inode = try row.decode(Int64?.self, forColumn: "inode") {
                summary.removed.append(
                    .init(path: try Paths.path(of: inode, db) ?? "", inode: inode, item: .course, studipID: id))
                try editor.delete(
                    inode, parent: try row.decode(forColumn: "parent"), name: try row.decode(forColumn: "name"))
            }
            for link in try db.rows(
                "SELECT inode, parent, name FROM node WHERE course_id = ? AND item_kind = 'courseLink'", [id])
            {
                try editor.delete(
                    try link.decode(forColumn: "inode"), parent: try link.decode(forColumn: "parent"),
                    name: try link.decode(forColumn: "name"))
            }
            try db.run("DELETE FROM course WHERE id = ?", [id])
        }
        return (list, firstSeen)
    }

    /// Where the course goes, or nil when it is hidden or outside the semester filter.
    private mutating func placement(of course: RemoteCourse) -> Placement? {
        guard !options.hiddenCourseIDs.contains(course.id) else { return nil }
        guard !course.isOpenEnded else { return .ongoing }
        var known = course.semesterIDs.filter { semesters[$0] != nil }
        for id in course.semesterIDs where semesters[id] == nil {
            summary.problems.append(
                .init(itemID: course.id, message: "course \(course.title) names unknown semester \(id); ignored"))
        }
        guard !known.isEmpty else { return .ongoing }
        if let filter = options.semesterIDs {
            known = known.filter(filter.contains)
        }
        let ordered = Set(known).compactMap { semesters[$0] }.sorted {
            ($0.begin, $0.id) < ($1.begin, $1.id)
        }
        guard let latest = ordered.last else { return nil }
        return .semesters(main: latest.id, links: ordered.dropLast().map(\.id))
    }

    /// Creates, renames and keeps the semester folders and `Ongoing`; returns their inodes by semester id (and
    /// `""` for `Ongoing`). Folders no longer needed are deleted by the caller once the courses moved out.
    private mutating func placeTopLevel(_ existing: [PlacedNode], placements: [String: Placement]) throws
        -> [String: Int64]
    {
        var needed = Set<String>()
        var needsOngoing = false
        for placement in placements.values {
            switch placement {
            case .ongoing: needsOngoing = true
            case .semesters(let main, let links): needed.formUnion([main] + links)
            }
        }
        var directories: [String: Int64] = [:]
        let ordered = needed.compactMap { semesters[$0] }.sorted { ($0.begin, $0.id) < ($1.begin, $1.id) }
        for semester in ordered {
            let base = Naming.directoryName(semester.title, id: semester.id)
            let begin = semester.begin.timeIntervalSince1970
            if let node = existing.first(where: { $0.item == .semester && $0.studipID == semester.id }) {
                directories[semester.id] = node.inode
                if node.baseName != base {
                    try editor.place(
                        node.inode, from: Node.rootInode, oldName: node.name, to: Node.rootInode, baseName: base)
                    movedNodes.append((node.inode, .semester, node.name))
                }
                if node.mtime != begin {
                    try db.run("UPDATE node SET mtime = ? WHERE inode = ?", [begin, node.inode])
                    editor.touched(node.inode)
                }
            } else {
                let inode = try editor.insert(
                    parent: Node.rootInode, baseName: base, kind: .directory, item: .semester, studipID: semester.id,
                    courseID: nil, mtime: semester.begin, created: semester.begin)
                directories[semester.id] = inode
                addedNodes.append((inode, .semester, semester.id))
            }
        }
        if needsOngoing {
            if let node = existing.first(where: { $0.item == .ongoing }) {
                directories[""] = node.inode
            } else {
                let inode = try editor.insert(
                    parent: Node.rootInode, baseName: Self.ongoingName, kind: .directory, item: .ongoing,
                    studipID: nil, courseID: nil, mtime: now, created: Date(timeIntervalSince1970: 0))
                directories[""] = inode
                addedNodes.append((inode, .ongoing, nil))
            }
        }
        return directories
    }

    /// Puts each course's directory under its latest semester (or `Ongoing`) and symlinks into earlier ones.
    private mutating func placeCourses(
        _ courses: (list: [RemoteCourse], firstSeen: [String: Date]), placements: [String: Placement],
        existing: [PlacedNode], directories: [String: Int64]
    ) throws {
        var directoryNodes: [String: PlacedNode] = [:]
        var linkNodes: [String: [PlacedNode]] = [:]
        for node in existing {
            guard let id = node.studipID else { continue }
            if node.item == .course { directoryNodes[id] = node }
            if node.item == .courseLink { linkNodes[id, default: []].append(node) }
        }
        let named = courses.list.map {
            (course: $0, base: Naming.courseName(template: options.courseNameTemplate, course: $0))
        }
        for (course, base) in named.sorted(by: { ($0.base, $0.course.id) < ($1.base, $1.course.id) }) {
            let firstSeen = courses.firstSeen[course.id] ?? now
            let parent: Int64?
            let linkParents: Set<Int64>
            switch placements[course.id] {
            case .ongoing:
                parent = directories[""]
                linkParents = []
            case .semesters(let main, let links):
                parent = directories[main]
                linkParents = Set(links.compactMap { directories[$0] })
            case nil:
                parent = nil
                linkParents = []
            }
            let directory = directoryNodes[course.id]
            if let directory, let parent {
                if directory.parent != parent || directory.baseName != base {
                    try editor.place(
                        directory.inode, from: directory.parent, oldName: directory.name, to: parent, baseName: base)
                    movedNodes.append((directory.inode, .course, oldPaths[directory.inode] ?? directory.name))
                }
            } else if let parent {
                let inode = try editor.insert(
                    parent: parent, baseName: base, kind: .directory, item: .course, studipID: course.id,
                    courseID: course.id, mtime: firstSeen, created: firstSeen)
                addedNodes.append((inode, .course, course.id))
            } else if let directory {
                summary.removed.append(
                    .init(
                        path: oldPaths[directory.inode] ?? directory.name, inode: directory.inode, item: .course,
                        studipID: course.id))
                try editor.delete(directory.inode, parent: directory.parent, name: directory.name)
                try db.run("UPDATE course SET listed_at = NULL WHERE id = ?", [course.id])
            }
            var linked = Set<Int64>()
            for link in linkNodes[course.id] ?? [] {
                if linkParents.contains(link.parent) {
                    linked.insert(link.parent)
                    if link.baseName != base {
                        try editor.place(
                            link.inode, from: link.parent, oldName: link.name, to: link.parent, baseName: base)
                    }
                } else {
                    try editor.delete(link.inode, parent: link.parent, name: link.name)
                }
            }
            for linkParent in linkParents.subtracting(linked).sorted() {
                _ = try editor.insert(
                    parent: linkParent, baseName: base, kind: .symlink, item: .courseLink, studipID: course.id,
                    courseID: course.id, mtime: firstSeen, created: firstSeen, symlinkTarget: "")
            }
        }
    }

    /// Points every link at its course's directory, relative: `../WS 2026-27/INF-101 Foo`.
    private mutating func updateLinkTargets() throws {
        let rows = try db.rows(
            """
            SELECT l.inode, l.symlink_target, p.name AS semester_name, c.name AS course_name
            FROM node l
            JOIN node c ON c.item_kind = 'course' AND c.studip_id = l.studip_id
            JOIN node p ON p.inode = c.parent
            WHERE l.item_kind = 'courseLink'
            """)
        for row in rows {
            let target =
                "../" + (try row.decode(String.self, forColumn: "semester_name")) + "/"
                + (try row.decode(String.self, forColumn: "course_name"))
            guard try row.decode(String?.self, forColumn: "symlink_target") != target else { continue }
            let inode = try row.decode(Int64.self, forColumn: "inode")
            try db.run(
                "UPDATE node SET symlink_target = ?, size = ? WHERE inode = ?", [target, target.utf8.count, inode])
            editor.touched(inode)
        }
    }
}
