/// The statements behind every read the filesystem and the CLI make, in one place so that a test can check with
/// `EXPLAIN QUERY PLAN` that each uses an index (the FS runs them thousands of times per `ls -R`).
enum QuerySQL {
    static let nodeByInode = "SELECT \(Node.columns) FROM node n WHERE n.inode = ?"
    static let lookup = "SELECT \(Node.columns) FROM node n WHERE n.parent = ? AND n.name = ?"
    static let children =
        "SELECT \(Node.columns) FROM node n WHERE n.parent = ? AND n.inode > ? ORDER BY n.inode LIMIT ?"
    /// A readdir's first page in one statement, so without a transaction around it: on each row the directory, its
    /// parent (NULLs for the root), when its listing last ran (a course's, also for its links and its announcements;
    /// a folder's as ``folderInfo`` reads it; NULL for other nodes), then one child after the offset in inode order
    /// (NULLs when there is none). Arguments: the directory, the offset, the limit.
    ///
    /// Joined flat, so that SQLite walks the children in `node_parent`'s order: with the directory's columns in a
    /// materialized CTE on the left of the join, every readdir filled a temporary table and sorted its children
    /// in another (docs/performance.md, "Daemon CPU a document"). The kinds are compared one by one: SQLite 3.40
    /// builds a temporary b-tree for an `IN` list of more than two constants at every execution.
    static let listing = """
        SELECT \(Node.columns), \(Node.columns("p")),
            CASE WHEN n.item_kind = 'course' OR n.item_kind = 'courseLink' OR n.item_kind = 'announcements'
                THEN (SELECT listed.listed_at FROM course listed WHERE listed.id = n.studip_id)
            WHEN n.item_kind = 'folder'
                THEN (SELECT NULLIF(COALESCE(f.listed_at, c.listed_at), 0) FROM folder f JOIN course c
                      ON c.id = n.course_id WHERE f.inode = n.inode)
            END,
            \(Node.columns("child"))
        FROM node n LEFT JOIN node p ON p.inode = n.parent
        LEFT JOIN node child ON child.parent = n.inode AND child.inode > ?2
        WHERE n.inode = ?1 ORDER BY child.inode LIMIT ?3
        """
    static let courseInfo = "SELECT description, web_url, listed_at FROM course WHERE id = ?"
    /// A folder's `listed_at` is NULL while its last listing was its course's (the common case, so that a refresh
    /// writes no folder row), and 0 when it never succeeded (docs/metadata-store.md, "Refresh").
    static let folderInfo = """
        SELECT f.description, f.web_url, NULLIF(COALESCE(f.listed_at, c.listed_at), 0) AS listed_at
        FROM folder f JOIN node n ON n.inode = f.inode JOIN course c ON c.id = n.course_id WHERE f.inode = ?
        """
    /// A folder node's row, or a course directory's root folder from its course (the root has no `folder` row); a
    /// course without a file area (no root folder id) has none.
    static let folderAccess = """
        SELECT f.id, n.course_id, f.folder_type, f.readable, f.writable, f.subfolder_allowed
        FROM folder f JOIN node n ON n.inode = f.inode WHERE f.inode = ?
        UNION ALL
        SELECT c.root_folder_id, c.id, 'RootFolder', 1, c.root_writable, c.root_subfolder_allowed
        FROM node n JOIN course c ON c.id = n.studip_id
        WHERE n.inode = ? AND n.item_kind = 'course' AND c.root_folder_id <> ''
        """
    static let document = """
        SELECT d.*, n.course_id, n.size, n.mtime FROM document d JOIN node n ON n.inode = d.inode
        WHERE d.inode = ?
        """
    static let isHighlighted = """
        SELECT 1 FROM document WHERE inode = ? AND highlight IS NOT NULL
        UNION ALL SELECT 1 FROM generated_file WHERE inode = ? AND highlight IS NOT NULL
        """
    static let userState = "SELECT rating, flagged, pinned FROM user_state WHERE item_kind = ? AND studip_id = ?"
    static let tags = "SELECT tag FROM user_tag WHERE item_kind = ? AND studip_id = ? ORDER BY position"

    /// Nodes whose item has tags; course links are left out, their course directory stands for them.
    static let taggedNodes = """
        SELECT node.inode, node.item_kind, node.studip_id FROM node
        WHERE node.item_kind != 'courseLink' AND EXISTS (
            SELECT 1 FROM user_tag WHERE user_tag.item_kind = node.item_kind AND user_tag.studip_id = node.studip_id)
        """

    /// Pinned items (a course link shares its course's state, and has nothing below it), then everything below.
    static let pinnedDocuments = """
        WITH RECURSIVE pinned(inode) AS (
            SELECT node.inode FROM node
            JOIN user_state ON user_state.item_kind = node.item_kind AND user_state.studip_id = node.studip_id
            WHERE user_state.pinned = 1
            UNION
            SELECT node.inode FROM node JOIN pinned ON node.parent = pinned.inode
        )
        SELECT document.inode FROM pinned JOIN document ON document.inode = pinned.inode ORDER BY document.inode
        """

    static let pinnedAbove = """
        WITH RECURSIVE up(inode, parent) AS (
            SELECT inode, parent FROM node WHERE inode = ?
            UNION ALL
            SELECT node.inode, node.parent FROM node JOIN up ON node.inode = up.parent
        )
        SELECT 1 FROM up JOIN node ON node.inode = up.inode
        JOIN user_state ON user_state.item_kind = node.item_kind AND user_state.studip_id = node.studip_id
        WHERE user_state.pinned = 1 LIMIT 1
        """

    /// Names from the node up to the root, nearest last; the root itself (no parent) has no name.
    static let path = """
        WITH RECURSIVE up(inode, parent, name, depth) AS (
            SELECT inode, parent, name, 0 FROM node WHERE inode = ?
            UNION ALL
            SELECT n.inode, n.parent, n.name, up.depth + 1 FROM node n JOIN up ON n.inode = up.parent
            WHERE up.depth < 1000
        )
        SELECT name FROM up WHERE parent IS NOT NULL ORDER BY depth DESC
        """

    /// Everything below a node, through the parent index.
    static let walk = """
        WITH RECURSIVE below(inode) AS (
            SELECT inode FROM node WHERE parent = ?
            UNION ALL
            SELECT node.inode FROM node JOIN below ON node.parent = below.inode
        )
        SELECT \(Node.columns) FROM below JOIN node n ON n.inode = below.inode
        """

    /// Documents and announcements with a stored highlight (partial indexes) or documents with a flag (partial
    /// index), newest first.
    static let highlighted = """
        SELECT \(Node.columns), COALESCE(d.highlight, g.highlight) AS highlight, COALESCE(u.flagged, 0) AS flagged,
               c.title AS course_title
        FROM node n
        LEFT JOIN document d ON d.inode = n.inode
        LEFT JOIN generated_file g ON g.inode = n.inode
        JOIN course c ON c.id = n.course_id
        LEFT JOIN user_state u ON u.item_kind = 'document' AND u.studip_id = n.studip_id
        WHERE n.inode IN (
            SELECT inode FROM document WHERE highlight IS NOT NULL
            UNION
            SELECT inode FROM generated_file WHERE highlight IS NOT NULL
            UNION
            SELECT node.inode FROM user_state JOIN node ON node.item_kind = 'document'
                AND node.studip_id = user_state.studip_id
            WHERE user_state.flagged = 1 AND user_state.item_kind = 'document'
        )
        ORDER BY n.mtime DESC, n.inode DESC
        LIMIT ?
        """

    /// The course a node lies in, and the course's directory.
    static let courseOfNode = """
        SELECT c.id, c.number, c.title, cn.inode FROM node n JOIN course c ON c.id = n.course_id
        JOIN node cn ON cn.item_kind = 'course' AND cn.studip_id = c.id WHERE n.inode = ?
        """

    static let placedCourses = """
        SELECT n.inode, n.studip_id, c.title, c.listed_at FROM node n JOIN course c ON c.id = n.studip_id
        WHERE n.item_kind = 'course' ORDER BY n.inode
        """

    /// A course's directories, documents and announcements with what decides their highlight, for
    /// `HighlightCounts`.
    static let courseHighlights = """
        SELECT n.inode, n.parent, n.item_kind, n.highlighted_below,
               (d.highlight IS NOT NULL OR g.highlight IS NOT NULL OR COALESCE(u.flagged, 0) = 1) AS lit
        FROM node n
        LEFT JOIN document d ON d.inode = n.inode
        LEFT JOIN generated_file g ON g.inode = n.inode
        LEFT JOIN user_state u ON n.item_kind = 'document' AND u.item_kind = 'document'
            AND u.studip_id = n.studip_id
        WHERE n.course_id = ? AND n.item_kind IN ('course', 'folder', 'document', 'announcements', 'announcement')
        """

    /// Every statement above, for the query-plan test.
    static let all: [(name: String, sql: String)] = [
        ("nodeByInode", nodeByInode), ("lookup", lookup), ("listing", listing), ("children", children),
        ("courseInfo", courseInfo),
        ("folderInfo", folderInfo), ("folderAccess", folderAccess), ("document", document),
        ("isHighlighted", isHighlighted),
        ("userState", userState), ("tags", tags), ("path", path), ("walk", walk), ("highlighted", highlighted),
        ("placedCourses", placedCourses), ("courseHighlights", courseHighlights),
    ]
}
