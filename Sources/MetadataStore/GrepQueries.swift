import Foundation
import GRDB
import StudIPModel

/// A document below a `campusfs grep` PATH whose text is stored (``StoredText/parts(of:only:_:)`` reads it).
public struct GrepScopeDocument: Sendable, Hashable {
    public var documentID: String
    /// Below the node searched, e.g. `Folien/a.pdf`; empty when that node is the document itself.
    public var relativePath: String
    public var name: String
    public var partKind: TextPartKind?
}

/// The documents below a `campusfs grep` PATH without text yet (never downloaded, or not indexed yet) that the user
/// may download: grep's note. Failed extractions (images, broken files) and documents the user may not download
/// are not among them.
public struct GrepMissing: Sendable, Hashable {
    public var count: Int
    /// Their names, when asked for (`--include`/`--exclude` decide which of them count); else empty.
    public var names: [String]
}

extension MetadataStore {
    /// The documents with stored text below `inode` (or `inode` itself when it is one), sorted by path: what
    /// `campusfs grep` searches there. Symlinks below (a course's earlier semesters) are not followed, like
    /// `grep -r`. Paths are built for the documents with text alone, upwards from them, rather than for every
    /// document below (`large`: 454 of 7,516; the query over all took 20 ms of every grep, docs/search.md).
    public func grepDocuments(below inode: Int64) throws(StoreError) -> [GrepScopeDocument] {
        try read("listing the documents below inode \(inode)") { db in
            try db.rows(GrepSQL.stored, ["target": inode]).map { row in
                GrepScopeDocument(
                    documentID: try row.decode(atIndex: 0), relativePath: try row.decode(atIndex: 1),
                    name: try row.decode(atIndex: 2), partKind: TextPartKind(storedValue: try row.decode(atIndex: 3)))
            }
        }
    }

    /// The documents below `inode` that have no text yet. A query of its own, apart from ``grepDocuments(below:)``,
    /// so that grep runs the two on two threads (docs/search.md, "grep"). Without `naming` they are only counted:
    /// their 7,060 names cost `large` 3 ms of every grep.
    public func grepMissing(below inode: Int64, naming: Bool = false) throws(StoreError) -> GrepMissing {
        try read("counting the documents without text below inode \(inode)") { db in
            let root = inode == Node.rootInode
            let arguments: StatementArguments = root ? [] : ["target": inode]
            guard naming else {
                let sql = root ? GrepSQL.missingInTreeCount : GrepSQL.missingCount
                let count = try Int.fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
                return GrepMissing(count: count ?? 0, names: [])
            }
            let sql = root ? GrepSQL.missingInTree : GrepSQL.missing
            let names = try String.fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
            return GrepMissing(count: names.count, names: names)
        }
    }
}

enum GrepSQL {
    /// The documents with text, then from each of their folders (once, however many documents it holds) up its
    /// parents until `:target` (or the root: then it is not below), building the path below `:target` on the way;
    /// `:target` itself when it is such a document. Per folder rather than per document: 1 ms of 3.6 less on `large`
    /// (454 documents, 2,901 steps up before), docs/search.md.
    static let stored = """
        WITH RECURSIVE docs(inode, parent, name, studip_id, part_kind) AS MATERIALIZED (
            SELECT n.inode, n.parent, n.name, n.studip_id, e.part_kind FROM search_extraction e
            JOIN node n ON n.item_kind = 'document' AND n.studip_id = e.document_id
            WHERE e.failure IS NULL
        ), up(folder, node, path) AS (
            SELECT DISTINCT parent, parent, '' FROM docs
            UNION ALL
            SELECT u.folder, c.parent, CASE u.path WHEN '' THEN c.name ELSE c.name || '/' || u.path END
            FROM up u JOIN node c ON c.inode = u.node
            WHERE u.node <> :target AND c.parent IS NOT NULL
        ), below(folder, path) AS MATERIALIZED (
            SELECT folder, path FROM up WHERE node = :target
        )
        SELECT d.studip_id, CASE b.path WHEN '' THEN d.name ELSE b.path || '/' || d.name END, d.name, d.part_kind
        FROM below b CROSS JOIN docs d ON d.parent = b.folder
        UNION ALL
        SELECT studip_id, '', name, part_kind FROM docs WHERE inode = :target
        ORDER BY 2
        """

    /// Every downloadable document without an extraction row: below the root, every document is (`large`: 4.5 ms
    /// in `sqlite3`, against 10–15 ms for ``missing``'s walk).
    static let missingInTree = """
        SELECT n.name FROM document d JOIN node n ON n.inode = d.inode
        WHERE \(missingDocument)
        """

    /// How many ``missingInTree`` names, without the join for them (2 ms against 4–7 ms in `sqlite3` on `large`).
    static let missingInTreeCount = "SELECT count(*) FROM document d WHERE \(missingDocument)"

    private static let missingDocument =
        "d.downloadable AND NOT EXISTS (SELECT 1 FROM search_extraction e WHERE e.document_id = d.id)"

    /// Downloadable documents without an extraction row among the children of the folders below `:target`
    /// (documents have no children, so the recursion walks the folders alone), or `:target` itself.
    static let missing = """
        WITH RECURSIVE below(inode) AS (
            SELECT inode FROM node WHERE inode = :target
            UNION ALL
            SELECT n.inode FROM node n JOIN below b ON n.parent = b.inode WHERE n.item_kind <> 'document'
        ), candidates(inode) AS (
            SELECT inode FROM node WHERE inode = :target
            UNION ALL
            SELECT n.inode FROM below b JOIN node n ON n.parent = b.inode
        )
        SELECT n.name FROM candidates x JOIN node n ON n.inode = x.inode JOIN document d ON d.inode = n.inode
        LEFT JOIN search_extraction e ON e.document_id = n.studip_id
        WHERE n.item_kind = 'document' AND d.downloadable AND e.document_id IS NULL
        """

    /// How many ``missing`` names.
    static let missingCount = "SELECT count(*) FROM (\(missing))"
}
