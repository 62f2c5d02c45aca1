/// Why the metadata store could not do something, with what a user can do about it.
public enum StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The database file could not be created or opened, or its schema is newer than this program.
    case cannotOpen(path: String, detail: String)
    /// SQLite failed during an operation (disk full, I/O error, corrupt file, locked by another process).
    case database(path: String, operation: String, detail: String)
    /// SQLite could not grow the file: the disk (or the quota) is full.
    case diskFull(path: String, operation: String)
    /// A path named by the user does not exist in the tree.
    case notFound(path: String)
    /// An inode that is not (or no longer) in the tree.
    case noSuchNode(inode: Int64)
    /// `applyCourse` for a course that has no directory (hidden, filtered out, or not in the last overview).
    case courseNotInTree(courseID: String, title: String)
    /// User state on the root or `Ongoing`, which are not Stud.IP items.
    case notAnItem(path: String)
    /// A highlight for something that is not a document.
    case notADocument(path: String)
    case invalidRating(Int)
    case invalidTag(String)
    /// The tags together would not fit in one extended attribute value.
    case tagsTooLong(bytes: Int, limit: Int)
    /// A search text with nothing to search for, one that starts with NOT, or one with a quote left open.
    case invalidQuery(query: String, reason: String)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let detail):
            "cannot open the metadata store \(path): \(detail) (check the directory's permissions and free space)"
        case .database(let path, let operation, let detail):
            "metadata store \(path) failed while \(operation): \(detail) (if the file is corrupt, delete it: "
                + "the next refresh rebuilds the tree, tags and highlights are lost)"
        case .diskFull(let path, let operation):
            "disk full: the metadata store \(path) could not grow while \(operation); free space on that disk"
        case .notFound(let path): "no such file or folder in the tree: \(path) (run `campusfs refresh`?)"
        case .noSuchNode(let inode): "inode \(inode) is not in the tree (it was removed by a refresh)"
        case .courseNotInTree(let courseID, let title):
            "course \(title) (\(courseID)) is not in the tree: it is hidden, filtered out, or missing from the last "
                + "overview; refresh the overview first"
        case .notAnItem(let path): "\(path.isEmpty ? "/" : path) is not a Stud.IP item and keeps no tags or ratings"
        case .notADocument(let path): "\(path) is not a document; only documents have highlights"
        case .invalidRating(let rating): "rating \(rating) is out of range; use 0 to 10"
        case .invalidTag(let tag): "tag \"\(tag)\" is invalid: tags are non-empty and contain no commas"
        case .tagsTooLong(let bytes, let limit):
            "the tags would take \(bytes) bytes together; at most \(limit) fit in an extended attribute, so remove some"
        case .invalidQuery(let query, let reason): "cannot search for \"\(query)\": \(reason)"
        }
    }
}
