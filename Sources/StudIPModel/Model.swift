import Foundation

/// What CampusFS knows about a Stud.IP installation, independent of which API delivered it.
///
/// These types are the vocabulary between the client (which decodes the wire formats) and the metadata store
/// (which turns them into a tree). Everything here has been checked and normalised by the client: dates are
/// `Date`s, sizes are non-negative, ids are non-empty. Names are exactly as the server sent them — sanitising
/// them for the filesystem is the store's job.

/// The logged-in user.
public struct RemoteUser: Sendable, Hashable, Codable {
    public var id: String
    public var username: String
    /// "Given Family", for status lines.
    public var displayName: String

    public init(id: String, username: String, displayName: String) {
        self.id = id
        self.username = username
        self.displayName = displayName
    }
}

public struct RemoteSemester: Sendable, Hashable, Codable {
    public var id: String
    /// Free text set by admins, e.g. "WS 2026/27".
    public var title: String
    public var begin: Date
    public var end: Date
    /// The lecture period (JSON:API `start-of-lectures`/`end-of-lectures`, REST `seminars_begin`/`seminars_end`);
    /// nil when the server gave none. A timetable entry that is no course's (no dates to follow) repeats only
    /// within it (docs/course-files.md).
    public var lectures: ClosedRange<Date>?

    public init(id: String, title: String, begin: Date, end: Date, lectures: ClosedRange<Date>? = nil) {
        self.id = id
        self.title = title
        self.begin = begin
        self.end = end
        self.lectures = lectures
    }
}

public struct RemoteCourse: Sendable, Hashable, Codable {
    public var id: String
    /// Course number; empty when the course has none (trailing blanks already trimmed).
    public var number: String
    public var title: String
    public var subtitle: String
    public var description: String
    /// The semesters the course runs in, oldest first. Empty for open-ended courses ("unbegrenzt", study
    /// groups), which Stud.IP lists under every semester.
    public var semesterIDs: [String]
    /// Lecturers' display names, for metadata.
    public var lecturers: [String]
    /// The course's page in the web UI (`user.xdg.origin.url`).
    public var webURL: String

    public init(
        id: String, number: String, title: String, subtitle: String = "", description: String = "",
        semesterIDs: [String], lecturers: [String] = [], webURL: String = ""
    ) {
        self.id = id
        self.number = number
        self.title = title
        self.subtitle = subtitle
        self.description = description
        self.semesterIDs = semesterIDs
        self.lecturers = lecturers
        self.webURL = webURL
    }

    public var isOpenEnded: Bool { semesterIDs.isEmpty }
}

public struct RemoteFolder: Sendable, Hashable, Codable {
    public var id: String
    /// nil for the course's root folder, whose content is the course folder's content.
    public var parentID: String?
    public var name: String
    public var description: String
    /// Stud.IP's folder class (`StandardFolder`, `HomeworkFolder`, …); unknown types are kept as sent.
    public var folderType: String
    public var created: Date
    public var changed: Date
    /// The folder's page in the web UI (`user.xdg.origin.url`).
    public var webURL: String
    /// What the logged-in user may do here, as Stud.IP says it (docs/writing.md, "When writing is on").
    public var permissions: FolderPermissions

    public init(
        id: String, parentID: String?, name: String, description: String = "", folderType: String = "StandardFolder",
        created: Date, changed: Date, webURL: String = "", permissions: FolderPermissions = FolderPermissions()
    ) {
        self.id = id
        self.parentID = parentID
        self.name = name
        self.description = description
        self.folderType = folderType
        self.created = created
        self.changed = changed
        self.webURL = webURL
        self.permissions = permissions
    }

    /// Stud.IP's class of homework folders: a student may hand in there but sees no submission, not even their own.
    public static let homeworkFolderType = "HomeworkFolder"

    /// A homework folder the user may not read (a student's view): listed, never listed *into* (403), kept as an
    /// empty directory so that the student can hand in there (docs/client.md, "Permissions").
    public var isUnreadableHomework: Bool { folderType == Self.homeworkFolderType && !permissions.isReadable }
}

/// A folder's permissions for the logged-in user: JSON:API's `is-readable`, `is-writable`, `is-subfolder-allowed`;
/// legacy REST's `is_readable`, `is_writable` and a rule for the subfolder flag it lacks (docs/client.md,
/// "Permissions"). The defaults are what a folder without any flag gets: readable (it was listed), nothing more.
public struct FolderPermissions: Sendable, Hashable, Codable {
    /// The user may list the folder's documents and subfolders.
    public var isReadable: Bool
    /// The user may upload documents into the folder.
    public var isWritable: Bool
    /// The user may create folders in the folder.
    public var isSubfolderAllowed: Bool

    public init(isReadable: Bool = true, isWritable: Bool = false, isSubfolderAllowed: Bool = false) {
        self.isReadable = isReadable
        self.isWritable = isWritable
        self.isSubfolderAllowed = isSubfolderAllowed
    }
}

public struct RemoteDocument: Sendable, Hashable, Codable {
    public var id: String
    public var folderID: String
    public var name: String
    public var description: String
    /// As sent; servers send odd values (the real demo data has "0").
    public var mimeType: String
    public var size: Int64
    public var created: Date
    /// The file-ref's chdate: metadata changes and new versions.
    public var changed: Date
    /// The `files` row; a new upload of the content changes it.
    public var fileID: String
    public var ownerName: String
    /// Terms-of-use id (`SELFMADE_NONPUB`, …), empty when unknown.
    public var license: String
    /// False when the user may see but not download the document (opening it fails with EACCES).
    public var isDownloadable: Bool
    /// True for documents hosted elsewhere (Stud.IP URL files): downloading follows a redirect.
    public var isLink: Bool
    /// The document's page in the web UI, or for links the external URL when the API tells it.
    public var webURL: String
    /// The logged-in user may upload a new version (JSON:API `is-writable`; legacy REST `is_writable`, or where an
    /// old installation lacks it, the user owns the document).
    public var isWritable: Bool
    /// The logged-in user may rename, move and delete the document (JSON:API `is-editable`; legacy REST
    /// `is_editable`, or the user owns it).
    public var isEditable: Bool

    public init(
        id: String, folderID: String, name: String, description: String = "", mimeType: String, size: Int64,
        created: Date, changed: Date, fileID: String, ownerName: String = "", license: String = "",
        isDownloadable: Bool = true, isLink: Bool = false, webURL: String = "", isWritable: Bool = false,
        isEditable: Bool = false
    ) {
        self.id = id
        self.folderID = folderID
        self.name = name
        self.description = description
        self.mimeType = mimeType
        self.size = size
        self.created = created
        self.changed = changed
        self.fileID = fileID
        self.ownerName = ownerName
        self.license = license
        self.isDownloadable = isDownloadable
        self.isLink = isLink
        self.webURL = webURL
        self.isWritable = isWritable
        self.isEditable = isEditable
    }

    /// What a refresh compares to decide that a document has new content.
    public var version: DocumentVersion { DocumentVersion(fileID: fileID, size: size) }
}

/// A document's content as far as a listing shows it: the `files` row and its size.
///
/// Not the file-ref's `chdate`: Stud.IP 5.0.7 bumps it on a rename and on a move while the content stays, and
/// leaves it alone when JSON:API's `POST file-refs/{id}/content` replaces the bytes (captured, fixtures-5.0.7-more
/// Parts 2 and 3). A new upload through the web UI or legacy REST gets a new file id; one through JSON:API keeps
/// it and changes only the size — or, at the same size, nothing a listing shows, which only the content route's
/// `ETag` reveals (the content cache revalidates on open for that).
public struct DocumentVersion: Sendable, Hashable, Codable {
    public var fileID: String
    public var size: Int64

    public init(fileID: String, size: Int64) {
        self.fileID = fileID
        self.size = size
    }
}

/// Everything below one course: its readable folders (root included) and the documents in them.
///
/// `failedFolderIDs` names folders whose listing failed (a 500 from one broken folder, malformed data):
/// the store must keep what it knew below them instead of deleting it. A course whose listing failed as a whole
/// never becomes a `CourseContent` (the client throws); a course without a file area is an empty content.
public struct CourseContent: Sendable, Hashable {
    public var course: RemoteCourse
    /// Empty when the API names no root folder: JSON:API for a course whose files tool is switched off.
    public var rootFolderID: String
    public var folders: [RemoteFolder]
    public var documents: [RemoteDocument]
    public var failedFolderIDs: Set<String>
    /// Folders in which this listing did not look for documents the user may not download (JSON:API on
    /// Stud.IP 5.0 looks in one folder per listing). Their downloadable documents are complete; the
    /// non-downloadable ones the store knows there must stay until a listing that looks in the folder omits them.
    /// Empty when the listing is complete (legacy REST, JSON:API 5.1+, or restricted documents switched off).
    public var foldersWithUncheckedRestrictedDocuments: Set<String>
    /// Folders this listing looked into for non-downloadable documents for the first time (Stud.IP 5.0, in
    /// rotation). Such documents that appear there were missed before, not added: they are `new` only when recent,
    /// as in a first sync.
    public var foldersCheckedForTheFirstTime: Set<String> = []
    public var problems: [ItemProblem]

    public init(
        course: RemoteCourse, rootFolderID: String, folders: [RemoteFolder], documents: [RemoteDocument],
        failedFolderIDs: Set<String> = [], foldersWithUncheckedRestrictedDocuments: Set<String> = [],
        problems: [ItemProblem] = []
    ) {
        self.course = course
        self.rootFolderID = rootFolderID
        self.folders = folders
        self.documents = documents
        self.failedFolderIDs = failedFolderIDs
        self.foldersWithUncheckedRestrictedDocuments = foldersWithUncheckedRestrictedDocuments
        self.problems = problems
    }
}

/// One item the client skipped, with what a user needs to know.
public struct ItemProblem: Sendable, Hashable, CustomStringConvertible {
    /// The Stud.IP id of the item (folder, document, course), when known.
    public var itemID: String
    public var message: String

    public init(itemID: String, message: String) {
        self.itemID = itemID
        self.message = message
    }

    public var description: String { "\(itemID): \(message)" }
}

/// The user's view of the installation at one moment: what `campusfs refresh` fetches.
public struct RemoteOverview: Sendable, Hashable {
    public var user: RemoteUser
    /// Every semester the installation has, oldest first.
    public var semesters: [RemoteSemester]
    /// The user's courses (each once, with all its semesters).
    public var courses: [RemoteCourse]
    /// Semesters or courses the client skipped because the server described them unreadably.
    public var problems: [ItemProblem]

    public init(
        user: RemoteUser, semesters: [RemoteSemester], courses: [RemoteCourse], problems: [ItemProblem] = []
    ) {
        self.user = user
        self.semesters = semesters
        self.courses = courses
        self.problems = problems
    }
}
