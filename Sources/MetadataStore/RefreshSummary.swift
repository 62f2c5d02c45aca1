import StudIPModel

/// What one refresh changed: for the CLI to print, and for the filesystem, which knows what the kernel may have cached
/// of it (``changedNodes``, ``changedNames``).
public struct RefreshSummary: Sendable, Hashable {
    /// One node that appeared, changed or went away, with its path from the mount point.
    public struct Item: Sendable, Hashable {
        public var path: String
        public var inode: Int64
        public var item: ItemKind
        public var studipID: String?
        /// Documents: the highlight the refresh gave them (nil for old documents on a first sync).
        public var highlight: Highlight?
    }

    /// A node that kept its inode but got another name or parent (renamed or moved on the server, or a course
    /// that moved to a newer semester).
    public struct Move: Sendable, Hashable {
        public var from: String
        public var to: String
        public var inode: Int64
        public var item: ItemKind
    }

    /// A name in a directory.
    public struct Name: Sendable, Hashable {
        public var parent: Int64
        public var name: String
    }

    /// New semesters, courses, folders and documents.
    public var added: [Item] = []
    /// Documents with a new version.
    public var changed: [Item] = []
    public var moved: [Move] = []
    /// Removed nodes (a removed course is listed once, not with everything below it).
    public var removed: [Item] = []
    /// Courses that lost most of their documents in one refresh: worth a loud log line, since a server hiccup
    /// (an empty but valid listing) looks exactly like this. Their cached bytes stay for the grace period.
    public var sweepingRemovals: [SweepingRemoval] = []
    /// Items that were skipped, from the client and from the store (e.g. a document whose folder is missing).
    public var problems: [ItemProblem] = []
    /// Nodes whose attributes (size, time, symlink target) or, for directories, listing changed.
    public var changedNodes: Set<Int64> = []
    /// Names that appeared, went away or now name another node.
    public var changedNames: Set<Name> = []

    public struct SweepingRemoval: Sendable, Hashable {
        public var course: String
        public var removed: Int
        public var before: Int
    }

    public init() {}

    public var isEmpty: Bool { added.isEmpty && changed.isEmpty && moved.isEmpty && removed.isEmpty }

    /// Adds another refresh's changes, e.g. the courses' summaries to the overview's.
    public mutating func merge(_ other: RefreshSummary) {
        added += other.added
        changed += other.changed
        moved += other.moved
        removed += other.removed
        sweepingRemovals += other.sweepingRemovals
        problems += other.problems
        changedNodes.formUnion(other.changedNodes)
        changedNames.formUnion(other.changedNames)
    }
}
