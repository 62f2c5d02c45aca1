import Foundation
import GRDB
import StudIPModel

/// A document below a `campusfs grep` PATH, and whether its text is in the index.
public struct GrepScopeDocument: Sendable, Hashable {
    /// Whether the index holds the document's text.
    public enum Text: Sendable, Hashable {
        /// Extracted: ``MetadataStore/storedUTF8(documentID:)`` reads it.
        case stored
        /// Nothing extracted: never downloaded, or not indexed yet.
        case missing
        /// Extraction failed or the type has no text (images, archives): nothing to search.
        case failed
        /// Not extracted and never will be: the user may not download it.
        case locked
    }

    public var documentID: String
    /// Below the node searched, e.g. `Folien/a.pdf`; empty when that node is the document itself.
    public var relativePath: String
    public var name: String
    public var partKind: TextPartKind?
    public var text: Text
}

extension MetadataStore {
    /// Every document below `inode` (or `inode` itself when it is one), sorted by path: what `campusfs grep` may
    /// search there. Symlinks below (a course's earlier semesters) are not followed, like `grep -r`.
    public func grepScope(below inode: Int64) throws(StoreError) -> [GrepScopeDocument] {
        try read("listing the documents below inode \(inode)") { db in
            try db.rows(GrepSQL.scope, [inode]).map { row in
                let extracted: Bool = try row.decode(atIndex: 4)
                let failed: Bool = try row.decode(atIndex: 5)
                let downloadable: Bool = try row.decode(atIndex: 6)
                let text: GrepScopeDocument.Text =
                    extracted ? (failed ? .failed : .stored) : (downloadable ? .missing : .locked)
                return GrepScopeDocument(
                    documentID: try row.decode(atIndex: 0), relativePath: try row.decode(atIndex: 1),
                    name: try row.decode(atIndex: 2), partKind: TextPartKind(storedValue: try row.decode(atIndex: 3)),
                    text: text)
            }
        }
    }
}

enum GrepSQL {
    static let scope = """
        WITH RECURSIVE below(inode, path) AS (
            SELECT inode, '' FROM node WHERE inode = ?
            UNION ALL
            SELECT n.inode, ltrim(b.path || '/' || n.name, '/') FROM node n JOIN below b ON n.parent = b.inode
        )
        SELECT n.studip_id, b.path, n.name, e.part_kind, e.document_id IS NOT NULL, e.failure IS NOT NULL,
               d.downloadable
        FROM below b JOIN node n ON n.inode = b.inode JOIN document d ON d.inode = n.inode
        LEFT JOIN search_extraction e ON e.document_id = n.studip_id
        WHERE n.item_kind = 'document'
        ORDER BY b.path
        """
}
