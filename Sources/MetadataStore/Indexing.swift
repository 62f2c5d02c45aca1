import Foundation
import GRDB
import StudIPModel

/// A document in the tree as the content indexer sees it: what to extract and what the index holds already.
public struct IndexingSubject: Sendable, Hashable {
    public var documentID: String
    /// The name in the tree, with the extension the MIME type gave it: the extractor decides by it.
    public var name: String
    public var mimeType: String
    public var version: DocumentVersion
    /// The version whose text (or failure) the index holds; nil when none.
    public var indexedVersion: DocumentVersion?
    /// The extractor version that produced what the index holds (``ExtractionRecord/extractor``).
    public var indexedExtractor: Int?
    /// Whether what the index holds is a failure that depended on the machine (``ExtractionRecord/retryable``).
    public var indexedRetryable = false

    /// Whether the index holds this version's text or its failure. The content indexer also compares
    /// ``indexedExtractor`` with its own version, and tries retryable failures again.
    public var isIndexed: Bool { indexedVersion == version }
}

/// How far the index is, for `campusfs status` and `campusfs index`.
public struct IndexStatistics: Sendable, Hashable, Codable {
    /// Documents in the tree whose text is searchable.
    public var documents: Int
    /// Documents in the tree whose current or an older version failed to extract (``failures()`` says why).
    public var failed: Int
    /// Bytes of extracted text (UTF-8) of the documents in the tree.
    public var textBytes: Int64
    /// Bytes the index's tables take in the database (full-text index included); nil when not measured.
    public var indexBytes: Int64?

    public init(documents: Int = 0, failed: Int = 0, textBytes: Int64 = 0, indexBytes: Int64? = nil) {
        self.documents = documents
        self.failed = failed
        self.textBytes = textBytes
        self.indexBytes = indexBytes
    }
}

/// What the content indexer (issue 16) reads and writes besides
/// ``indexContent(documentID:version:extractor:partKind:parts:now:)`` and
/// ``recordExtractionFailure(documentID:version:extractor:reason:retryable:now:)``.
extension MetadataStore {
    /// Every document in the tree with the version its index holds, by Stud.IP id: one query for the whole tree, so
    /// that comparing the content cache's blobs with the index at start costs one read.
    public func indexingSubjects() throws(StoreError) -> [String: IndexingSubject] {
        try read("reading which documents are indexed") { db in
            var subjects: [String: IndexingSubject] = [:]
            for row in try db.rows(IndexingSQL.subjects) {
                let subject = try IndexingSQL.subject(row)
                subjects[subject.documentID] = subject
            }
            return subjects
        }
    }

    /// The document with this Stud.IP id, if it is in the tree.
    public func indexingSubject(documentID: String) throws(StoreError) -> IndexingSubject? {
        try read("reading document \(documentID) for indexing") { db in
            try db.row(IndexingSQL.subjects + " WHERE n.item_kind = 'document' AND n.studip_id = ?", [documentID])
                .map(IndexingSQL.subject)
        }
    }

    /// Counts from one pass over the extraction rows; with `measuringSize`, also the index's bytes on disk, which
    /// reads every page of its tables (`dbstat`): for `campusfs index`, not for every `status`.
    public func indexStatistics(measuringSize: Bool = false) throws(StoreError) -> IndexStatistics {
        try read("measuring the search index") { db in
            var statistics = IndexStatistics()
            if let row = try db.row(IndexingSQL.counts) {
                statistics.documents = try row.decode(atIndex: 0)
                statistics.failed = try row.decode(atIndex: 1)
                statistics.textBytes = try row.decode(atIndex: 2)
            }
            if measuringSize { statistics.indexBytes = try IndexingSQL.indexBytes(db) }
            return statistics
        }
    }

    /// Documents in the tree whose extraction failed, with why, by path.
    public func extractionFailures() throws(StoreError) -> [(path: String, reason: String)] {
        try read("reading failed extractions") { db in
            try db.rows(IndexingSQL.failures).map { row in
                (try Paths.path(of: try row.decode(atIndex: 0), db) ?? "", try row.decode(atIndex: 1))
            }
        }
    }

    /// Drops all extracted text and recorded failures (`campusfs index --rebuild`); the metadata rows stay.
    public func forgetExtractions() throws(StoreError) {
        try write("dropping the extracted text") { db in
            try db.run("DELETE FROM search_part")
            try db.run("DELETE FROM search_extraction")
            // The external-content index is rebuilt from the now empty table: cheaper than one delete per part.
            try db.run("INSERT INTO search_content (search_content) VALUES ('rebuild')")
        }
    }
}

/// Documents are found by Stud.IP id through `node_item` (a document node's `studip_id` is its `document.id`), since
/// `document.id` has no index of its own (migration `v13`, docs/metadata-store.md).
enum IndexingSQL {
    static let subjects = """
        SELECT d.id, n.name, d.mime_type, d.file_id, n.size, e.file_id, e.size, e.extractor, e.retryable
        FROM document d JOIN node n ON n.inode = d.inode
        LEFT JOIN search_extraction e ON e.document_id = d.id
        """

    static func subject(_ row: Row) throws -> IndexingSubject {
        let indexedFile: String? = try row.decode(atIndex: 5)
        let indexedSize: Int64? = try row.decode(atIndex: 6)
        return IndexingSubject(
            documentID: try row.decode(atIndex: 0), name: try row.decode(atIndex: 1),
            mimeType: try row.decode(atIndex: 2),
            version: DocumentVersion(fileID: try row.decode(atIndex: 3), size: try row.decode(atIndex: 4)),
            indexedVersion: indexedFile.flatMap { file in indexedSize.map { DocumentVersion(fileID: file, size: $0) } },
            indexedExtractor: try row.decode(atIndex: 7), indexedRetryable: try row.decode(atIndex: 8) ?? false)
    }

    static let counts = """
        SELECT count(*) FILTER (WHERE e.failure IS NULL), count(*) FILTER (WHERE e.failure IS NOT NULL),
               COALESCE(sum(e.text_bytes), 0)
        FROM search_extraction e JOIN node n ON n.item_kind = 'document' AND n.studip_id = e.document_id
        """

    static let failures = """
        SELECT n.inode, e.failure
        FROM search_extraction e JOIN node n ON n.item_kind = 'document' AND n.studip_id = e.document_id
        WHERE e.failure IS NOT NULL ORDER BY n.inode
        """

    /// The pages of the index's tables (`dbstat`, which Debian's SQLite has); nil where an SQLite lacks it.
    static func indexBytes(_ db: Database) throws -> Int64? {
        try? Int64.fetchOne(
            db,
            sql: """
                SELECT COALESCE(sum(pgsize), 0) FROM dbstat
                WHERE name LIKE 'search\\_%' ESCAPE '\\' OR name LIKE 'sqlite_autoindex_search\\_%' ESCAPE '\\'
                """)
    }
}
