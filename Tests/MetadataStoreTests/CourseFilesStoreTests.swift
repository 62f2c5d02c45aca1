import Foundation
import GRDB
import StudIPModel
import Testing

@testable import MetadataStore

/// The store side of issue 18: announcements, course dates and timetables.
@Suite struct CourseFilesStoreTests {
    /// Migration v5 rebuilds `node` for the new item kinds: a v4 store's tags, tag links, inodes and AUTOINCREMENT
    /// counter survive it, and the tables for the generated files are there afterwards.
    @Test func upgradingFromVersion4KeepsTagsAndInodes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coursefiles-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("campusfs.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try Schema.migrator.migrate(queue, upTo: "v4: tag view")
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO course (id, number, title, subtitle, description, semester_ids, lecturers, web_url,
                                        first_seen_at, baseline)
                    VALUES ('c-101', 'INF-101', 'Foo', '', '', '[]', '[]', '', 0, 1);
                    INSERT INTO node (inode, parent, name, base_name, kind, item_kind, mtime, created)
                    VALUES (2, 1, 'Ongoing', 'Ongoing', 'directory', 'ongoing', 0, 0);
                    INSERT INTO node (inode, parent, name, base_name, kind, item_kind, studip_id, course_id, mtime,
                                      created)
                    VALUES (3, 2, 'INF-101 Foo', 'INF-101 Foo', 'directory', 'course', 'c-101', 'c-101', 0, 0);
                    INSERT INTO node (inode, parent, name, base_name, kind, item_kind, studip_id, course_id, size,
                                      mtime, created)
                    VALUES (4, 3, 'a.pdf', 'a.pdf', 'file', 'document', 'd1', 'c-101', 1000, 0, 0);
                    INSERT INTO node (inode, parent, name, base_name, kind, item_kind, mtime, created)
                    VALUES (5, 1, 'Tags', 'Tags', 'directory', 'tagView', 0, 0);
                    INSERT INTO node (inode, parent, name, base_name, kind, item_kind, studip_id, mtime, created)
                    VALUES (6, 5, 'exam', 'exam', 'directory', 'tag', 'exam', 0, 0);
                    INSERT INTO node (inode, parent, name, base_name, kind, item_kind, studip_id, course_id, size,
                                      mtime, symlink_target, created)
                    VALUES (7, 6, 'a.pdf', 'a.pdf', 'symlink', 'tagLink', 'd1', 'c-101', 25, 0,
                            '../../Ongoing/INF-101 Foo/a.pdf', 0);
                    INSERT INTO node (inode, parent, name, base_name, kind, item_kind, mtime, created)
                    VALUES (8, 1, 'deleted', 'deleted', 'directory', 'ongoing', 0, 0);
                    DELETE FROM node WHERE inode = 8;
                    INSERT INTO user_tag (item_kind, studip_id, position, tag)
                    VALUES ('document', 'd1', 0, 'exam'), ('document', 'd1', 1, 'später');
                    """)
        }
        try queue.close()

        let store = try MetadataStore(path: path)
        #expect(try store.userState(inode: 4).tags == ["exam", "später"])
        #expect(try store.inode("Ongoing/INF-101 Foo/a.pdf") == 4)
        #expect(try store.resolve(path: "Tags/exam/a.pdf").inode == 4)
        #expect(try store.inode("Tags/exam/a.pdf") == 7)

        let migrated = try DatabaseQueue(path: path)
        defer { try? migrated.close() }
        try migrated.write { db in
            try db.execute(
                sql: """
                    INSERT INTO node (parent, name, base_name, kind, item_kind, studip_id, course_id, mtime, created)
                    VALUES (3, 'Ankündigungen', 'Ankündigungen', 'directory', 'announcements', 'c-101', 'c-101', 0, 0)
                    """)
            #expect(db.lastInsertedRowID == 9, "inode 8 belonged to the deleted node")
            try db.execute(
                sql: "INSERT INTO generated_file (inode, content) VALUES (?, ?)",
                arguments: [db.lastInsertedRowID, Data("x".utf8)])
            for table in ["announcement", "course_date", "schedule_slot"] {
                #expect(try db.tableExists(table), "table \(table)")
            }
        }
    }
}

/// Announcements and dates applied after a course's folders.
@Suite struct CourseExtrasTests {
    let course = "WS 2026-27/INF-101 Foo"

    func news(_ id: String, _ title: String, changed: Date) -> (Announcement, GeneratedFile) {
        (
            Announcement(
                id: id, title: title, html: "<p>\(title)</p>", authorName: "Prof. Owner", published: changed,
                expires: nil, changed: changed, commentsAllowed: false),
            GeneratedFile(name: "\(id) \(title).md", content: Data("# \(title)\n".utf8), changed: changed)
        )
    }

    func extras(_ items: [(Announcement, GeneratedFile)], calendar: String? = nil) -> CourseExtras {
        let date = CourseDate(
            id: "t1", start: now, end: now + 5400, title: "Vorlesung", description: nil, room: "HS 1",
            isCancelled: false, cancellationNote: nil)
        return CourseExtras(
            courseID: info101.id, announcements: ("Ankündigungen", items),
            dates: calendar.map { ([date], GeneratedFile(name: "Termine.ics", content: Data($0.utf8), changed: now)) })
    }

    /// The files appear with exact sizes and mtimes; later announcements are `new` and counted, expired ones
    /// depart, read ones lose their highlight.
    @Test func announcementsBehaveLikeDocuments() throws {
        let store = try MetadataStore.withCourse(content(info101))
        let old = news("n1", "Willkommen", changed: now - 30 * day)
        _ = try store.applyCourseExtras(extras([old], calendar: "BEGIN:VCALENDAR"), now: now)
        #expect(try store.names(course) == ["Ankündigungen", "Termine.ics"])
        #expect(try store.names(course + "/Ankündigungen") == ["n1 Willkommen.md"])
        let first = try store.resolve(path: course + "/Ankündigungen/n1 Willkommen.md")
        #expect(first.size == Int64("# Willkommen\n".utf8.count))
        #expect(first.mtime == now - 30 * day)
        #expect(try store.generatedContent(inode: first.inode) == Data("# Willkommen\n".utf8))
        #expect(try store.highlightedDocuments().isEmpty, "a first sync highlights only recent announcements")
        let calendar = try store.resolve(path: course + "/Termine.ics")
        #expect(try store.generatedContent(inode: calendar.inode) == Data("BEGIN:VCALENDAR".utf8))

        let fresh = news("n2", "Klausur", changed: now)
        let summary = try store.applyCourseExtras(extras([old, fresh]), now: now)
        #expect(summary.added.map(\.path) == [course + "/Ankündigungen/n2 Klausur.md"])
        #expect(try store.highlightedDocuments().map(\.path) == [course + "/Ankündigungen/n2 Klausur.md"])
        #expect(try store.resolve(path: course).highlightedBelow == 1)
        #expect(try store.names(course) == ["Ankündigungen", "Termine.ics"], "dates not fetched: calendar kept")

        let expired = try store.applyCourseExtras(extras([fresh]), now: now)
        #expect(expired.removed.map(\.path) == [course + "/Ankündigungen/n1 Willkommen.md"])
        #expect(try store.names(course + "/Ankündigungen") == ["n2 Klausur.md"])
        #expect(try store.markRead(inode: store.inode(course + "/Ankündigungen/n2 Klausur.md")))
        #expect(try store.highlightedDocuments().isEmpty)
        #expect(try store.resolve(path: course).highlightedBelow == 0)
    }

    /// A semester's timetable lies in its folder and goes with an empty one.
    @Test func timetableInTheSemesterFolder() throws {
        let store = try MetadataStore.withCourse(content(info101))
        let file = GeneratedFile(name: "Stundenplan.ics", content: Data("BEGIN:VCALENDAR".utf8), changed: now)
        _ = try store.applyTimetable(semesterID: ws2627.id, slots: nil, file: file, now: now)
        #expect(try store.names("WS 2026-27") == ["INF-101 Foo", "Stundenplan.ics"])
        #expect(try store.resolve(path: "WS 2026-27/Stundenplan.ics").size == 15)
        _ = try store.applyTimetable(semesterID: ws2627.id, slots: [], file: nil, now: now)
        #expect(try store.names("WS 2026-27") == ["INF-101 Foo"])
    }
}
