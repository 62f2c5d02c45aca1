import Foundation
import GRDB
import NamingRules
import StudIPModel

/// A file the daemon renders from Stud.IP's data (an announcement as Markdown, a calendar): the store keeps its
/// bytes, so getattr is exact and a read needs no network.
public struct GeneratedFile: Sendable, Hashable {
    /// The name before NamingRules makes it safe and unique.
    public var name: String
    public var content: Data
    /// The item's change time (an announcement's chdate), which is the file's mtime; nil for a file without one
    /// (a calendar), whose mtime is the refresh that saw its bytes change.
    public var changed: Date?

    public init(name: String, content: Data, changed: Date?) {
        self.name = name
        self.content = content
        self.changed = changed
    }
}

/// A course's announcements and dates as one refresh fetched them. nil parts were not fetched (switched off, or the
/// request failed): the store keeps what it has for them.
public struct CourseExtras: Sendable {
    public var courseID: String
    /// The folder's name (`Ankündigungen`) and each announcement with its rendered file.
    public var announcements: (folderName: String, items: [(Announcement, GeneratedFile)])?
    /// The course's dates and their calendar; no dates, no calendar. A nil calendar (the profile shows none, the
    /// timetable still needs the dates) leaves the calendar's node as it is.
    public var dates: (items: [CourseDate], calendar: GeneratedFile?)?

    public init(
        courseID: String, announcements: (folderName: String, items: [(Announcement, GeneratedFile)])?,
        dates: (items: [CourseDate], calendar: GeneratedFile?)?
    ) {
        self.courseID = courseID
        self.announcements = announcements
        self.dates = dates
    }
}

extension MetadataStore {
    /// Applies a course's announcements and dates in one transaction, after its folders (``applyCourse(_:now:)``).
    ///
    /// Announcements behave like documents: one that appears is `new` (on the course's first application only when
    /// changed within ``firstSyncNewWindow``), one whose chdate or bytes change is `changed`, one that expired or
    /// was deleted leaves the tree and is recorded as departed. The folder is there while the course has
    /// announcements, the calendar while it has dates.
    public func applyCourseExtras(_ extras: CourseExtras, now: Date = Date()) throws(StoreError) -> RefreshSummary {
        try write("applying the announcements and dates of course \(extras.courseID)", durability: .deferred) { db in
            guard
                let courseInode = try Int64.fetchOne(
                    db, sql: "SELECT inode FROM node WHERE item_kind = 'course' AND studip_id = ?",
                    arguments: [extras.courseID])
            else { throw StoreError.courseNotInTree(courseID: extras.courseID, title: extras.courseID) }
            var editor = TreeEditor(db: db)
            var summary = RefreshSummary()
            let existingFolder = try GeneratedNode.fetch(kind: .announcements, id: extras.courseID, db)
            let existingCalendar = try GeneratedNode.fetch(kind: .courseCalendar, id: extras.courseID, db)
            let firstTime = existingFolder == nil && existingCalendar == nil
            var added: [(Int64, String, Highlight?)] = []
            var changed: [(Int64, String, Highlight?)] = []
            // Counts change only with a highlight or the tree: most refreshes change neither.
            var highlightsChanged = false

            if let announcements = extras.announcements {
                let existing = try GeneratedNode.fetchAll(
                    "n.course_id = ? AND n.item_kind = 'announcement'", [extras.courseID], db)
                var present = Set<String>()
                let storedAnnouncements = try AnnouncementRow.stored(courseID: extras.courseID, db)
                var folderInode = existingFolder?.inode
                if !announcements.items.isEmpty {
                    let base = Naming.directoryName(announcements.folderName, id: extras.courseID)
                    let latest = announcements.items.compactMap(\.1.changed).max() ?? now
                    folderInode = try GeneratedNode.put(
                        existingFolder, parent: courseInode, baseName: base, kind: .directory, item: .announcements,
                        id: extras.courseID, courseID: extras.courseID, content: nil, changed: latest, now: now,
                        &editor, db
                    ).inode
                }
                for (announcement, file) in announcements.items {
                    guard let folder = folderInode, present.insert(announcement.id).inserted else { continue }
                    let old = existing[announcement.id]
                    let base = Naming.documentName(file.name, mimeType: "text/markdown", id: announcement.id)
                    let (inode, wasChanged) = try GeneratedNode.put(
                        old, parent: folder, baseName: base, kind: .file, item: .announcement, id: announcement.id,
                        courseID: extras.courseID, content: file.content, changed: file.changed, now: now, &editor, db)
                    let highlight: Highlight?
                    if let old {
                        highlight = old.highlight == .new ? .new : wasChanged ? .changed : old.highlight
                        if wasChanged { changed.append((inode, announcement.id, highlight)) }
                    } else {
                        let isRecent = (file.changed ?? now) >= now.addingTimeInterval(-Self.firstSyncNewWindow)
                        highlight = !firstTime || isRecent ? .new : nil
                        added.append((inode, announcement.id, highlight))
                    }
                    if old == nil || old?.highlight != highlight {
                        try db.run(
                            "UPDATE generated_file SET highlight = ? WHERE inode = ?", [highlight?.rawValue, inode])
                        highlightsChanged = true
                    }
                    let values = AnnouncementRow.values(announcement, courseID: extras.courseID)
                    if storedAnnouncements[announcement.id] != values { try AnnouncementRow.save(values, db) }
                }
                for (id, old) in existing where !present.contains(id) {
                    try summary.removed.append(
                        .init(
                            path: Paths.path(of: old.inode, db) ?? "", inode: old.inode, item: .announcement,
                            studipID: id))
                    try editor.delete(old.inode, parent: old.parent, name: old.name)
                    try db.run(
                        "INSERT OR IGNORE INTO departed (item_kind, studip_id, since) VALUES ('announcement', ?, ?)",
                        [id, now.timeIntervalSince1970])
                    try db.run("DELETE FROM announcement WHERE id = ?", [id])
                }
                if announcements.items.isEmpty, let folder = existingFolder {
                    try editor.delete(folder.inode, parent: folder.parent, name: folder.name)
                }
                try db.run(
                    """
                    DELETE FROM departed WHERE item_kind = 'announcement'
                    AND studip_id IN (SELECT id FROM announcement WHERE course_id = ?)
                    """, [extras.courseID])
            }

            if let dates = extras.dates {
                var rows: [String: [DatabaseValue]] = [:]
                for date in dates.items { rows[date.id] = CourseDateRow.values(date, courseID: extras.courseID) }
                if try rows != CourseDateRow.stored(courseID: extras.courseID, db) {
                    try db.run("DELETE FROM course_date WHERE course_id = ?", [extras.courseID])
                    for values in rows.values { try CourseDateRow.save(values, db) }
                }
                if dates.items.isEmpty {
                    if let calendar = existingCalendar {
                        try editor.delete(calendar.inode, parent: calendar.parent, name: calendar.name)
                    }
                } else if let file = dates.calendar {
                    let base = Naming.documentName(file.name, mimeType: "text/calendar", id: extras.courseID)
                    _ = try GeneratedNode.put(
                        existingCalendar, parent: courseInode, baseName: base, kind: .file, item: .courseCalendar,
                        id: extras.courseID, courseID: extras.courseID, content: file.content, changed: file.changed,
                        now: now, &editor, db)
                }
            }

            try editor.finish()
            if highlightsChanged || !editor.changedNames.isEmpty {
                try HighlightCounts.recount(course: extras.courseID, db)
            }
            for (inode, id, highlight) in added {
                try summary.added.append(
                    .init(
                        path: Paths.path(of: inode, db) ?? "", inode: inode, item: .announcement, studipID: id,
                        highlight: highlight))
            }
            for (inode, id, highlight) in changed {
                try summary.changed.append(
                    .init(
                        path: Paths.path(of: inode, db) ?? "", inode: inode, item: .announcement, studipID: id,
                        highlight: highlight))
            }
            editor.record(into: &summary)
            return summary
        }
    }

    /// Applies a semester's timetable: its weekly slots (nil when the installation has no timetable route and the
    /// file was built from the course dates) and the rendered file in the semester's folder; no file, no node.
    public func applyTimetable(
        semesterID: String, slots: [ScheduleSlot]?, file: GeneratedFile?, now: Date = Date()
    ) throws(StoreError) -> RefreshSummary {
        try write("applying the timetable of semester \(semesterID)", durability: .deferred) { db in
            var editor = TreeEditor(db: db)
            var summary = RefreshSummary()
            let existing = try GeneratedNode.fetch(kind: .timetable, id: semesterID, db)
            if let slots {
                try db.run("DELETE FROM schedule_slot WHERE semester_id = ?", [semesterID])
                for slot in slots { try ScheduleSlotRow.save(slot, semesterID: semesterID, db) }
            }
            let semesterInode = try Int64.fetchOne(
                db, sql: "SELECT inode FROM node WHERE item_kind = 'semester' AND studip_id = ?",
                arguments: [semesterID])
            if let file, let semesterInode {
                let base = Naming.documentName(file.name, mimeType: "text/calendar", id: semesterID)
                _ = try GeneratedNode.put(
                    existing, parent: semesterInode, baseName: base, kind: .file, item: .timetable, id: semesterID,
                    courseID: nil, content: file.content, changed: file.changed, now: now, &editor, db)
            } else if let existing {
                try editor.delete(existing.inode, parent: existing.parent, name: existing.name)
            }
            try editor.finish()
            editor.record(into: &summary)
            return summary
        }
    }

    /// A course's dates as the last refresh stored them: what the timetable's slots repeat on, and the timetable of
    /// an installation without a schedule route is their union.
    public func courseDates(courseID: String) throws(StoreError) -> [CourseDate] {
        try read("reading the dates of course \(courseID)") { db in
            try db.rows("SELECT * FROM course_date WHERE course_id = ? ORDER BY start_at, id", [courseID]).map { row in
                CourseDate(
                    id: try row.decode(forColumn: "id"), start: try row.date("start_at"), end: try row.date("end_at"),
                    title: try row.decode(forColumn: "title"), description: try row.decode(forColumn: "description"),
                    room: try row.decode(forColumn: "room"), isCancelled: try row.bool("cancelled"),
                    cancellationNote: try row.decode(forColumn: "cancellation_note"))
            }
        }
    }

    /// The bytes of a generated file (announcement, calendar, timetable); nil for other nodes.
    public func generatedContent(inode: Int64) throws(StoreError) -> Data? {
        try read("reading the generated file \(inode)") { db in
            try Data.fetchOne(db, sql: "SELECT content FROM generated_file WHERE inode = ?", arguments: [inode])
        }
    }
}

/// A generated node (announcements folder or file, calendar, timetable) as it was before the refresh.
private struct GeneratedNode {
    var inode: Int64
    var parent: Int64
    var name: String
    var baseName: String
    var mtime: Double
    var content: Data?
    var highlight: Highlight?

    private static let query = """
        SELECT n.inode, n.parent, n.name, n.base_name, n.mtime, n.studip_id, g.content, g.highlight
        FROM node n LEFT JOIN generated_file g ON g.inode = n.inode
        """

    init(row: Row) throws {
        inode = try row.decode(forColumn: "inode")
        parent = try row.decode(forColumn: "parent")
        name = try row.decode(forColumn: "name")
        baseName = try row.decode(forColumn: "base_name")
        mtime = try row.decode(forColumn: "mtime")
        content = try row.decode(forColumn: "content")
        highlight = try row.decode(String?.self, forColumn: "highlight").flatMap(Highlight.init(rawValue:))
    }

    static func fetch(kind: ItemKind, id: String, _ db: Database) throws -> GeneratedNode? {
        try db.row(query + " WHERE n.item_kind = ? AND n.studip_id = ?", [kind.rawValue, id]).map(Self.init(row:))
    }

    static func fetchAll(_ condition: String, _ arguments: StatementArguments, _ db: Database) throws -> [String:
        GeneratedNode]
    {
        var result: [String: GeneratedNode] = [:]
        for row in try db.rows(query + " WHERE " + condition, arguments) {
            result[try row.decode(forColumn: "studip_id")] = try GeneratedNode(row: row)
        }
        return result
    }

    /// Inserts or updates the node (renaming it when its base name changed) and its bytes (nil for the folder);
    /// returns its inode and whether its bytes or change time changed. The mtime is `changed`, or without one the
    /// refresh (`now`) that first saw these bytes; it never goes back, and moves whenever the bytes change, so
    /// `ls -l`, `make` and calendar programs watching the file see every change.
    static func put(
        _ existing: GeneratedNode?, parent: Int64, baseName: String, kind: NodeKind, item: ItemKind, id: String,
        courseID: String?, content: Data?, changed: Date?, now: Date, _ editor: inout TreeEditor, _ db: Database
    ) throws -> (inode: Int64, changed: Bool) {
        let size = Int64(content?.count ?? 0)
        let inode: Int64
        var wasChanged = false
        if let existing {
            inode = existing.inode
            if existing.parent != parent || existing.baseName != baseName {
                try editor.place(inode, from: existing.parent, oldName: existing.name, to: parent, baseName: baseName)
            }
            let bytesChanged = existing.content != content
            var mtime = max(existing.mtime, changed?.timeIntervalSince1970 ?? existing.mtime)
            if bytesChanged, mtime == existing.mtime { mtime = max(now.timeIntervalSince1970, existing.mtime + 1) }
            wasChanged = bytesChanged || mtime != existing.mtime
            if wasChanged {
                try db.run("UPDATE node SET size = ?, mtime = ? WHERE inode = ?", [size, mtime, inode])
                editor.touched(inode)
            }
        } else {
            inode = try editor.insert(
                parent: parent, baseName: baseName, kind: kind, item: item, studipID: id, courseID: courseID,
                size: size, mtime: changed ?? now, created: changed ?? now)
        }
        if let content, existing?.content != content {
            try db.run(
                """
                INSERT INTO generated_file (inode, content) VALUES (?, ?)
                ON CONFLICT (inode) DO UPDATE SET content = excluded.content
                """, [inode, content])
        }
        return (inode, wasChanged)
    }
}

/// A table's rows of one course by id, as the refresh before stored them: announcements and dates are written only
/// when they changed, so a refresh of an unchanged course rewrites none (docs/metadata-store.md, "Refresh").
private protocol CourseRows {
    static var table: String { get }
    /// `id` first, then `course_id`.
    static var columns: [String] { get }
}

extension CourseRows {
    static func stored(courseID: String, _ db: Database) throws -> [String: [DatabaseValue]] {
        var rows: [String: [DatabaseValue]] = [:]
        for row in try db.rows(
            "SELECT \(columns.joined(separator: ", ")) FROM \(table) WHERE course_id = ?", [courseID])
        {
            rows[try row.decode(atIndex: 0)] = Array(row.databaseValues)
        }
        return rows
    }

    static func save(_ values: [DatabaseValue], _ db: Database) throws {
        try db.run(
            "INSERT OR REPLACE INTO \(table) (\(columns.joined(separator: ", "))) VALUES "
                + "(?\(String(repeating: ", ?", count: columns.count - 1)))",
            values: values)
    }
}

private enum AnnouncementRow: CourseRows {
    static let table = "announcement"
    static let columns = [
        "id", "course_id", "title", "html", "author_name", "published", "expires", "changed", "comments_allowed",
    ]

    static func values(_ a: Announcement, courseID: String) -> [DatabaseValue] {
        [
            a.id.databaseValue, courseID.databaseValue, a.title.databaseValue, a.html.databaseValue,
            a.authorName.databaseValue, a.published.timeIntervalSince1970.databaseValue,
            a.expires?.timeIntervalSince1970.databaseValue ?? .null, a.changed.timeIntervalSince1970.databaseValue,
            a.commentsAllowed.databaseValue,
        ]
    }
}

private enum CourseDateRow: CourseRows {
    static let table = "course_date"
    static let columns = [
        "id", "course_id", "start_at", "end_at", "title", "description", "room", "cancelled", "cancellation_note",
    ]

    static func values(_ d: CourseDate, courseID: String) -> [DatabaseValue] {
        [
            d.id.databaseValue, courseID.databaseValue, d.start.timeIntervalSince1970.databaseValue,
            d.end.timeIntervalSince1970.databaseValue, d.title.databaseValue, d.description.databaseValue,
            d.room.databaseValue, d.isCancelled.databaseValue, d.cancellationNote.databaseValue,
        ]
    }
}

private enum ScheduleSlotRow {
    static func save(_ s: ScheduleSlot, semesterID: String, _ db: Database) throws {
        try db.run(
            """
            INSERT OR REPLACE INTO schedule_slot (semester_id, id, course_id, title, weekday, start_minute,
                                                  end_minute, room, description)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                semesterID, s.id, s.courseID, s.title, s.weekday, s.startMinute, s.endMinute, s.room,
                s.description,
            ])
    }
}
