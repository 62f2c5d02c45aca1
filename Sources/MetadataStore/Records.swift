import Foundation
import GRDB
import StudIPModel

// The rows refreshes write, one type per table: each names its table's columns once, for inserts and updates alike.
// Semesters and courses (tens per overview) are GRDB records, upserted (`INSERT … ON CONFLICT DO UPDATE`); folders
// and documents (thousands per refresh) are ``DetailRecord``s. Times are stored as seconds since 1970 (REAL), never
// as GRDB's default date strings.

/// A row of `semester`.
struct SemesterRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "semester"

    enum Columns {
        static let id = Column("id")
        static let title = Column("title")
        static let beginAt = Column("begin_at")
        static let endAt = Column("end_at")
    }

    var semester: RemoteSemester

    init(_ semester: RemoteSemester) {
        self.semester = semester
    }

    init(row: Row) throws {
        semester = RemoteSemester(
            id: try row.decode(forColumn: Columns.id.name), title: try row.decode(forColumn: Columns.title.name),
            begin: try row.date(Columns.beginAt.name), end: try row.date(Columns.endAt.name))
    }

    func encode(to container: inout PersistenceContainer) {
        container[Columns.id] = semester.id
        container[Columns.title] = semester.title
        container[Columns.beginAt] = semester.begin.timeIntervalSince1970
        container[Columns.endAt] = semester.end.timeIntervalSince1970
    }
}

/// A row of `course` as the overview writes it; `root_folder_id` and `listed_at` belong to the course's listing
/// and are left alone.
struct CourseRecord: FetchableRecord, PersistableRecord {
    static let databaseTableName = "course"

    enum Columns {
        static let id = Column("id")
        static let number = Column("number")
        static let title = Column("title")
        static let subtitle = Column("subtitle")
        static let description = Column("description")
        /// JSON arrays of strings.
        static let semesterIDs = Column("semester_ids")
        static let lecturers = Column("lecturers")
        static let webURL = Column("web_url")
        static let firstSeenAt = Column("first_seen_at")
        static let baseline = Column("baseline")
    }

    var course: RemoteCourse
    var firstSeenAt: Date
    /// The course was in the profile's first overview (its first listing is a first sync).
    var baseline: Bool

    init(_ course: RemoteCourse, firstSeenAt: Date, baseline: Bool) {
        self.course = course
        self.firstSeenAt = firstSeenAt
        self.baseline = baseline
    }

    init(row: Row) throws {
        let decoder = JSONDecoder()
        func strings(_ column: Column) throws -> [String] {
            try decoder.decode([String].self, from: Data(try row.decode(String.self, forColumn: column.name).utf8))
        }
        course = RemoteCourse(
            id: try row.decode(forColumn: Columns.id.name), number: try row.decode(forColumn: Columns.number.name),
            title: try row.decode(forColumn: Columns.title.name),
            subtitle: try row.decode(forColumn: Columns.subtitle.name),
            description: try row.decode(forColumn: Columns.description.name),
            semesterIDs: try strings(Columns.semesterIDs), lecturers: try strings(Columns.lecturers),
            webURL: try row.decode(forColumn: Columns.webURL.name))
        firstSeenAt = try row.date(Columns.firstSeenAt.name)
        baseline = try row.bool(Columns.baseline.name)
    }

    func encode(to container: inout PersistenceContainer) throws {
        let encoder = JSONEncoder()
        container[Columns.id] = course.id
        container[Columns.number] = course.number
        container[Columns.title] = course.title
        container[Columns.subtitle] = course.subtitle
        container[Columns.description] = course.description
        container[Columns.semesterIDs] = String(decoding: try encoder.encode(course.semesterIDs), as: UTF8.self)
        container[Columns.lecturers] = String(decoding: try encoder.encode(course.lecturers), as: UTF8.self)
        container[Columns.webURL] = course.webURL
        container[Columns.firstSeenAt] = firstSeenAt.timeIntervalSince1970
        container[Columns.baseline] = baseline
    }

    /// Inserts the course, or updates what Stud.IP says about a known one: when it was first seen and whether it
    /// was in the first overview stay as they were.
    func save(_ db: Database) throws {
        _ = try upsertAndFetch(db) { _ in [Columns.firstSeenAt.noOverwrite, Columns.baseline.noOverwrite] }
    }
}

/// A row of `folder` or `document`, written from one cached statement per table and only when its values changed:
/// a refresh writes thousands of these, and GRDB's records build a dictionary per row (and an upsert's SQL anew
/// per row: 5,000 documents took 2.5 s as upserts, debug build). An unchanged row is not written at all, so a
/// refresh of an unchanged course dirties no page of `document` (docs/metadata-store.md, "Refresh").
protocol DetailRecord {
    static var sql: DetailSQL { get }
    var inode: Int64 { get }
    /// In the order of the table's ``DetailSQL/columns``.
    var values: [DatabaseValue] { get }
}

/// A detail table's columns (besides its key `inode`) and its statements, built once.
struct DetailSQL {
    let columns: [String]
    let insert: String
    let update: String

    init(table: String, columns: [String]) {
        self.columns = columns
        insert =
            "INSERT INTO \(table) (inode, \(columns.joined(separator: ", "))) "
            + "VALUES (?\(String(repeating: ", ?", count: columns.count)))"
        update = "UPDATE \(table) SET \(columns.map { "\($0) = ?" }.joined(separator: ", ")) WHERE inode = ?"
    }

    /// Where `column`, one of ``columns``, is in a row of them.
    func index(of column: String) -> Int {
        guard let index = columns.firstIndex(of: column) else { preconditionFailure("no column \(column)") }
        return index
    }

    /// The columns as a query selects them from the table aliased `alias`: the `stored` values of
    /// ``DetailRecord/save(_:stored:)``.
    func selection(_ alias: String) -> String {
        columns.map { "\(alias).\($0)" }.joined(separator: ", ")
    }
}

extension DetailRecord {
    /// Inserts the row (`stored` nil: a new node) or updates it when its values differ from `stored`, the row as the
    /// store holds it (``DetailSQL/selection(_:)``).
    func save(_ db: Database, stored: [DatabaseValue]?) throws {
        let values = values
        if let stored {
            guard stored != values else { return }
            try db.run(Self.sql.update, values: values + [inode.databaseValue])
        } else {
            try db.run(Self.sql.insert, values: [inode.databaseValue] + values)
        }
    }
}

/// A row of `folder`, the details of a folder node.
struct FolderRecord: DetailRecord {
    static let sql = DetailSQL(
        table: "folder",
        columns: [
            "id", "parent_id", "name", "description", "folder_type", "web_url", "created", "changed", "listed_at",
            "readable", "writable", "subfolder_allowed",
        ])

    var inode: Int64
    var folder: RemoteFolder
    /// NULL when this listing of the folder succeeded: it was listed with its course (`course.listed_at`), so a
    /// refresh of an unchanged course writes no folder row. A folder whose listing failed keeps the time of its
    /// last successful listing, 0 for never (``QuerySQL/folderInfo`` reads both).
    var listedAt: DatabaseValue

    var values: [DatabaseValue] {
        [
            folder.id.databaseValue, folder.parentID.databaseValue, folder.name.databaseValue,
            folder.description.databaseValue, folder.folderType.databaseValue, folder.webURL.databaseValue,
            folder.created.timeIntervalSince1970.databaseValue, folder.changed.timeIntervalSince1970.databaseValue,
            listedAt, folder.permissions.isReadable.databaseValue, folder.permissions.isWritable.databaseValue,
            folder.permissions.isSubfolderAllowed.databaseValue,
        ]
    }
}

/// A row of `document`, the details of a document node (its size and chdate live in `node`).
struct DocumentRecord: DetailRecord {
    static let sql = DetailSQL(
        table: "document",
        columns: [
            "id", "folder_id", "name", "description", "mime_type", "created", "file_id", "owner_name", "license",
            "downloadable", "is_link", "web_url", "highlight", "writable", "editable",
        ])

    var inode: Int64
    var document: RemoteDocument
    var highlight: Highlight?

    var values: [DatabaseValue] {
        [
            document.id.databaseValue, document.folderID.databaseValue, document.name.databaseValue,
            document.description.databaseValue, document.mimeType.databaseValue,
            document.created.timeIntervalSince1970.databaseValue, document.fileID.databaseValue,
            document.ownerName.databaseValue, document.license.databaseValue,
            document.isDownloadable.databaseValue, document.isLink.databaseValue, document.webURL.databaseValue,
            highlight?.rawValue.databaseValue ?? .null, document.isWritable.databaseValue,
            document.isEditable.databaseValue,
        ]
    }
}
