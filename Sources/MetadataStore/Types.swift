import Foundation
import StudIPModel

/// What a node is to the kernel.
public enum NodeKind: String, Sendable, Hashable, CaseIterable {
    case directory
    case file
    case symlink
}

/// What a node stands for in the tree (docs/metadata-store.md, "The tree").
public enum ItemKind: String, Sendable, Hashable, CaseIterable {
    /// The mount point itself, inode 1.
    case root
    /// A top-level folder for one semester.
    case semester
    /// The top-level folder `Ongoing` for open-ended courses.
    case ongoing
    /// A course's real directory (under its latest semester, or `Ongoing`).
    case course
    /// A symlink to a course's directory from one of its earlier semesters.
    case courseLink
    /// A Stud.IP folder below a course (the course's root folder is the course directory itself).
    case folder
    /// A Stud.IP file-ref.
    case document
    /// The top-level folder `Tags` (``TagView``): there while any item in the tree carries a tag.
    case tagView
    /// One folder per tag in use below `Tags`; its `studipID` is the tag itself (the name is sanitized).
    case tag
    /// A symlink in a tag folder to a tagged document, folder or course; its `studipID` is the target's.
    case tagLink
    /// A course's folder of announcements (`Ankündigungen`); its `studipID` is the course's.
    case announcements
    /// One announcement rendered as Markdown, bytes in the store (``GeneratedFile``).
    case announcement
    /// A course's dates as iCalendar (`Termine.ics`); its `studipID` is the course's.
    case courseCalendar
    /// A semester's timetable as iCalendar (`Stundenplan.ics`) in the semester folder; its `studipID` is the
    /// semester's.
    case timetable
}

/// The highlight of a document (`user.campusfs.highlight`, docs/metadata-store.md, "Highlights").
public enum Highlight: String, Sendable, Hashable, CaseIterable {
    /// Appeared since the last refresh and not read yet.
    case new
    /// A new version (chdate, file id or size) arrived and was not read yet.
    case changed
    /// Set by the user; survives reads and refreshes until the user clears it.
    case flagged
}

/// One entry of the tree: everything `lookup`, `getattr` and `readdir` need, from one table row.
public struct Node: Sendable, Hashable {
    public var inode: Int64
    /// nil only for the root.
    public var parentInode: Int64?
    /// The sanitized, unique name in its directory (docs/metadata-store.md, "Names").
    public var name: String
    public var kind: NodeKind
    public var item: ItemKind
    /// The Stud.IP id of the semester, course (also for course links), folder or document (also for tag links); the
    /// tag for tag folders; nil for root, `Ongoing` and `Tags`.
    public var studipID: String?
    /// The course the node belongs to (course directories, links, folders and documents).
    public var courseID: String?
    /// Documents: the size from the API, or, where that is 0, the length the host sent
    /// (``MetadataStore/recordHostSize(_:inode:)``). Symlinks: the target's length. Directories: 0.
    public var size: Int64
    /// Documents and folders: Stud.IP's chdate. Semesters: their begin. Courses: when the store first saw them.
    public var mtime: Date
    public var symlinkTarget: String?
    /// Directories: how many highlighted documents (new, changed or flagged) lie below (`user.campusfs.new`).
    public var highlightedBelow: Int
    /// Documents the user may see but not download: the mount shows them with mode 0000, so that `ls -l` tells
    /// them apart before an open fails with `EACCES`. Read with the node, so getattr needs no second query.
    public var isLocked: Bool

    public static let rootInode: Int64 = 1
}

/// A directory as readdir needs it, read in one transaction.
public struct Listing: Sendable, Hashable {
    public var directory: Node
    /// nil for the root.
    public var parent: Node?
    /// When the listing that filled this directory last ran, for TTLs: course directories (and their links, and
    /// their folders of announcements) and folders; nil when never listed (then the filesystem fetches before
    /// answering) or for other nodes. A folder whose own listing failed keeps its previous time; its course's time
    /// moves on.
    public var listedAt: Date?
    /// The first page; empty when `directory` is not a directory.
    public var children: [DirectoryEntry]
}

/// A child of a directory, with the cursor `readdir` resumes from.
public struct DirectoryEntry: Sendable, Hashable {
    public var node: Node
    /// Stable and strictly increasing within a directory: pass it back as `after` to continue behind this entry.
    /// Always greater than 2, so a filesystem may use 1 and 2 for `.` and `..`.
    public var offset: Int64
}

/// What the store knows about a document's remote version and how to fetch it.
public struct DocumentInfo: Sendable, Hashable {
    public var id: String
    public var folderID: String
    public var courseID: String
    public var mimeType: String
    public var size: Int64
    public var created: Date
    public var changed: Date
    public var fileID: String
    public var ownerName: String
    public var license: String
    public var isDownloadable: Bool
    public var isLink: Bool
    public var webURL: String
    /// The user may upload a new version (docs/writing.md, "When writing is on").
    public var isWritable: Bool
    /// The user may rename, move and delete the document.
    public var isEditable: Bool

    public var version: DocumentVersion { DocumentVersion(fileID: fileID, size: size) }
}

/// What the user may do in a directory that stands for a Stud.IP folder: a folder node, or a course directory (the
/// course's root folder). ``MetadataStore/folderAccess(inode:)``; docs/metadata-store.md, "Permissions".
public struct FolderAccess: Sendable, Hashable {
    /// The Stud.IP folder: where an upload or a new folder goes.
    public var folderID: String
    public var courseID: String
    /// Stud.IP's folder class; `RootFolder` for a course directory.
    public var folderType: String
    public var permissions: FolderPermissions

    /// A homework folder: what the user hands in there is not listed back to a student (docs/writing.md).
    public var isHomework: Bool { folderType == RemoteFolder.homeworkFolderType }
}

/// The user's own data about an item, kept by Stud.IP id: survives refreshes, renames and moves.
public struct UserState: Sendable, Hashable {
    public var tags: [String] = []
    /// 0–10 (`user.baloo.rating`).
    public var rating: Int = 0
    public var flagged: Bool = false
    public var pinned: Bool = false

    public init(tags: [String] = [], rating: Int = 0, flagged: Bool = false, pinned: Bool = false) {
        self.tags = tags
        self.rating = rating
        self.flagged = flagged
        self.pinned = pinned
    }
}

/// Everything the extended attributes of one node show (README.md, "Tags, highlights and pins").
public struct NodeInfo: Sendable, Hashable {
    public var node: Node
    /// The item's description from Stud.IP (`user.xdg.comment`).
    public var description: String
    /// The item's web page (`user.xdg.origin.url`); for links, their target.
    public var webURL: String
    /// Documents only.
    public var document: DocumentInfo?
    /// Documents only: `new`/`changed` win over `flagged`, which shows again once they are read.
    public var highlight: Highlight?
    public var user: UserState
}

/// A highlighted document for `campusfs new`.
public struct HighlightedDocument: Sendable, Hashable {
    public var node: Node
    public var highlight: Highlight
    /// Path from the mount point, e.g. `WS 2026-27/INF-101 Foo/Folien/a.pdf`.
    public var path: String
    public var courseTitle: String
}

/// A course that has a directory in the tree: what the CLI lists after `applyOverview`.
public struct PlacedCourse: Sendable, Hashable {
    public var courseID: String
    public var inode: Int64
    public var title: String
    /// The last complete listing; nil when the course was never listed.
    public var listedAt: Date?
}

/// A course as messages name it: its number (`INF-101`) when it has one, else its title; and where its directory is.
public struct CourseHeading: Sendable, Hashable {
    public var courseID: String
    public var number: String
    public var title: String
    /// The course directory's path from the mount point.
    public var path: String

    public init(courseID: String, number: String, title: String, path: String) {
        self.courseID = courseID
        self.number = number
        self.title = title
        self.path = path
    }

    public var label: String { number.isEmpty ? title : number }
}

/// One node of a full walk (`campusfs tree`).
public struct WalkEntry: Sendable, Hashable {
    public var node: Node
    /// Path from the mount point; empty for the root.
    public var path: String
    /// 0 for the node the walk started at.
    public var depth: Int
}

/// How the overview becomes the top two levels of the tree (config.toml; docs/metadata-store.md, "The tree").
public struct TreeOptions: Sendable, Hashable {
    /// Placeholders `{number}`, `{title}`, `{subtitle}`; runs of spaces collapse, an empty result falls back to the
    /// title.
    public var courseNameTemplate: String
    /// Only courses in these semesters (by Stud.IP id); nil shows all. Open-ended courses are always shown.
    public var semesterIDs: Set<String>?
    /// Courses (by Stud.IP id) to leave out of the tree.
    public var hiddenCourseIDs: Set<String>

    public static let defaultCourseNameTemplate = "{number} {title}"

    public init(
        courseNameTemplate: String = TreeOptions.defaultCourseNameTemplate, semesterIDs: Set<String>? = nil,
        hiddenCourseIDs: Set<String> = []
    ) {
        self.courseNameTemplate = courseNameTemplate
        self.semesterIDs = semesterIDs
        self.hiddenCourseIDs = hiddenCourseIDs
    }
}

/// Whether and when the profile synced, and as whom.
public struct SyncState: Sendable, Hashable {
    /// The first `applyOverview`; nil until then. Courses known at that moment are the profile's first sync.
    public var firstOverviewAt: Date?
    public var lastOverviewAt: Date?
    public var user: RemoteUser?
}
