import Foundation
import GRDB
import StudIPModel

// The rows refreshes write, one type per table: each names its table's columns once, in `encode(to:)`, for inserts
// and updates alike. Semesters and courses (tens per overview) are upserted (`INSERT … ON CONFLICT DO UPDATE`);
// folders and documents (thousands per refresh) are inserted or updated, which GRDB runs from cached SQL. Times are
// stored as seconds since 1970 (REAL), never as GRDB's default date strings.

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

/// A row of `folder`, the details of a folder node.
struct FolderRecord: PersistableRecord {
    static let databaseTableName = "folder"

    enum Columns {
        static let inode = Column("inode")
        static let id = Column("id")
        static let parentID = Column("parent_id")
        static let name = Column("name")
        static let description = Column("description")
        static let folderType = Column("folder_type")
        static let webURL = Column("web_url")
        static let created = Column("created")
        static let changed = Column("changed")
        static let listedAt = Column("listed_at")
    }

    var inode: Int64
    var folder: RemoteFolder
    /// When the folder's listing last succeeded; nil for one that failed this time.
    var listedAt: Date?

    func encode(to container: inout PersistenceContainer) {
        container[Columns.inode] = inode
        container[Columns.id] = folder.id
        container[Columns.parentID] = folder.parentID
        container[Columns.name] = folder.name
        container[Columns.description] = folder.description
        container[Columns.folderType] = folder.folderType
        container[Columns.webURL] = folder.webURL
        container[Columns.created] = folder.created.timeIntervalSince1970
        container[Columns.changed] = folder.changed.timeIntervalSince1970
        container[Columns.listedAt] = listedAt?.timeIntervalSince1970
    }

    /// Inserts a new folder's row or updates a known one's; a failed listing keeps the time of the last one that
    /// succeeded. Not an upsert, for the reason ``DocumentRecord/save(_:isNew:)`` gives.
    func save(_ db: Database, isNew: Bool) throws {
        if isNew || listedAt != nil {
            try isNew ? insert(db) : update(db)
        } else {
            try update(db, columns: databaseDictionary.keys.filter { $0 != Columns.listedAt.name })
        }
    }
}

/// A row of `document`, the details of a document node (its size and chdate live in `node`).
struct DocumentRecord: PersistableRecord {
    static let databaseTableName = "document"

    enum Columns {
        static let inode = Column("inode")
        static let id = Column("id")
        static let folderID = Column("folder_id")
        static let name = Column("name")
        static let description = Column("description")
        static let mimeType = Column("mime_type")
        static let created = Column("created")
        static let fileID = Column("file_id")
        static let ownerName = Column("owner_name")
        static let license = Column("license")
        static let downloadable = Column("downloadable")
        static let isLink = Column("is_link")
        static let webURL = Column("web_url")
        static let highlight = Column("highlight")
    }

    var inode: Int64
    var document: RemoteDocument
    var highlight: Highlight?

    func encode(to container: inout PersistenceContainer) {
        container[Columns.inode] = inode
        container[Columns.id] = document.id
        container[Columns.folderID] = document.folderID
        container[Columns.name] = document.name
        container[Columns.description] = document.description
        container[Columns.mimeType] = document.mimeType
        container[Columns.created] = document.created.timeIntervalSince1970
        container[Columns.fileID] = document.fileID
        container[Columns.ownerName] = document.ownerName
        container[Columns.license] = document.license
        container[Columns.downloadable] = document.isDownloadable
        container[Columns.isLink] = document.isLink
        container[Columns.webURL] = document.webURL
        container[Columns.highlight] = highlight?.rawValue
    }

    /// Inserts a new document's row or updates a known one's. Not an upsert: a refresh writes thousands of these,
    /// and GRDB builds an upsert's SQL anew for each row (5,000 documents: 2.5 s instead of 0.3 s, debug build).
    func save(_ db: Database, isNew: Bool) throws {
        if isNew { try insert(db) } else { try update(db) }
    }
}
