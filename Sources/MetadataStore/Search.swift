import Foundation
import GRDB
import StudIPModel

/// What narrows a search; nil and false narrow nothing.
public struct SearchFilters: Sendable, Hashable {
    /// A course's Stud.IP id, number or title (case-insensitive, whole).
    public var course: String?
    /// A semester's Stud.IP id or title (case-insensitive), e.g. `WS 2026/27`, or its folder's name, `WS 2026-27`.
    public var semester: String?
    /// A tag of the document (case-insensitive).
    public var tag: String?
    /// Only documents highlighted `new` or `changed` and not read yet.
    public var onlyNew: Bool

    public init(course: String? = nil, semester: String? = nil, tag: String? = nil, onlyNew: Bool = false) {
        self.course = course
        self.semester = semester
        self.tag = tag
        self.onlyNew = onlyNew
    }
}

/// One document a search found.
public struct SearchHit: Sendable, Hashable {
    /// Where ``snippet`` marks a match: start and end, control characters that never occur in names or extracted
    /// text, so the CLI can colour them or strip them.
    public static let matchStart = "\u{2}"
    public static let matchEnd = "\u{3}"

    public var inode: Int64
    public var documentID: String
    /// From the mount point, e.g. `WS 2026-27/INF-101 Foo/Folien/a.pdf`.
    public var path: String
    /// Whether the extracted text matched (the metadata may have matched too).
    public var contentMatched: Bool
    /// Around the best match, with ``matchStart``/``matchEnd``: from the text when it matched, else from the
    /// metadata column that matched best.
    public var snippet: String
    /// The page or slide of the best content match; nil without one or for text without pages.
    public var part: Int?
    public var partKind: TextPartKind?
}

/// A document version whose extracted text is stored.
public struct IndexedDocument: Sendable, Hashable {
    public var inode: Int64
    public var documentID: String
    public var version: DocumentVersion
    /// Nil for text without pages, slides or sheets.
    public var partKind: TextPartKind?
}

/// What the index holds for a document: which version was extracted and whether that failed.
public struct ExtractionRecord: Sendable, Hashable {
    public var version: DocumentVersion
    /// The version of the extractor that extracted it (`TextExtraction.TextExtractor.version(name:mimeType:)`).
    public var extractor: Int
    public var indexedAt: Date
    /// Why no text could be extracted from this version; nil when its text is stored.
    public var failure: String?
    /// Whether the failure depended on the machine (a time-out under load), so that the next start tries again.
    public var retryable: Bool
}

/// The search index (Schema v3, docs/metadata-store.md "The search index"): metadata of every document, kept in
/// step by the refreshes and ``setTags(_:inode:)``, and the extracted text of downloaded versions.
extension MetadataStore {
    /// Documents matching `query` (``SearchQuery`` syntax), best first: documents whose metadata matched (bm25,
    /// the title weighing most) before documents that matched only in their text. Only documents in the tree.
    public func search(_ query: String, filters: SearchFilters = SearchFilters(), limit: Int = 50)
        throws(StoreError) -> [SearchHit]
    {
        let expression = try SearchQuery(query).expression
        return try read("searching for \"\(query)\"") { db in
            var arguments = SearchSQL.filterArguments(filters)
            arguments += ["match": expression, "limit": limit]
            var hits: [SearchHit] = []
            var positions: [Int64: Int] = [:]
            for (inode, documentID, snippet) in try Self.metadataHits(expression, filters, limit, arguments, db) {
                positions[inode] = hits.count
                hits.append(
                    SearchHit(
                        inode: inode, documentID: documentID, path: "", contentMatched: false, snippet: snippet,
                        part: nil, partKind: nil))
            }
            // The best part of each document; snippets only for those (computing one per matching part is the
            // expensive step of a content search).
            var best: [(inode: Int64, documentID: String, part: Int64)] = []
            var seen = Set<Int64>()
            let cursor = try Row.fetchCursor(db.cachedStatement(sql: SearchSQL.contentHits), arguments: arguments)
            while let row = try cursor.next(), best.count < limit {
                let inode: Int64 = try row.decode(atIndex: 0)
                guard seen.insert(inode).inserted else { continue }
                best.append((inode, try row.decode(atIndex: 1), try row.decode(atIndex: 2)))
            }
            for match in best {
                guard
                    let row = try db.row(SearchSQL.contentSnippet, ["match": expression, "part": match.part])
                else { continue }
                let hit = SearchHit(
                    inode: match.inode, documentID: match.documentID, path: "", contentMatched: true,
                    snippet: try row.decode(atIndex: 0), part: try row.decode(atIndex: 1),
                    partKind: TextPartKind(storedValue: try row.decode(atIndex: 2)))
                if let position = positions[match.inode] {
                    hits[position].contentMatched = true
                    hits[position].snippet = hit.snippet
                    hits[position].part = hit.part
                    hits[position].partKind = hit.partKind
                } else if hits.count < limit {
                    hits.append(hit)
                }
            }
            for index in hits.indices {
                hits[index].path = try Paths.path(of: hits[index].inode, db) ?? ""
            }
            return hits
        }
    }

    /// Documents whose metadata matches, best first, in the tree and passing the filters. Without filters, ranked
    /// over the index alone and joined to the tree one at a time until `limit` are found, a snippet made for those
    /// only: joining every match before ranking (6,500 for a common word on `huge`) was a third of the query. With
    /// filters, one join, which drops what they exclude without a statement each (docs/search.md, "Latency").
    private static func metadataHits(
        _ expression: String, _ filters: SearchFilters, _ limit: Int, _ arguments: StatementArguments, _ db: Database
    ) throws -> [(inode: Int64, documentID: String, snippet: String)] {
        var hits: [(inode: Int64, documentID: String, snippet: String)] = []
        guard filters == SearchFilters() else {
            for row in try db.rows(SearchSQL.metadataHits, arguments) {
                hits.append((try row.decode(atIndex: 0), try row.decode(atIndex: 1), try row.decode(atIndex: 2)))
            }
            return hits
        }
        let ranked = try Row.fetchCursor(
            db.cachedStatement(sql: SearchSQL.rankedMetadata), arguments: ["match": expression])
        let inTree = try db.cachedStatement(sql: SearchSQL.documentInTree)
        let snippet = try db.cachedStatement(sql: SearchSQL.metadataSnippet)
        while hits.count < limit, let row = try ranked.next() {
            let inode: Int64 = try row.decode(atIndex: 0)
            guard let documentID = try String.fetchOne(inTree, arguments: [inode]) else { continue }
            let text = try String.fetchOne(snippet, arguments: ["match": expression, "inode": inode])
            hits.append((inode, documentID, text ?? ""))
        }
        return hits
    }

    /// Stores the text of one version of a document as extractor version `extractor` extracted it, page by page
    /// or slide by slide (`number`, counting `partKind`s; nil for text without pages), replacing whatever the index
    /// held for the document (an older version, a failure).
    public func indexContent(
        documentID: String, version: DocumentVersion, extractor: Int, partKind: TextPartKind?,
        parts: [(number: Int?, text: String)], now: Date = Date()
    ) throws(StoreError) {
        try write("indexing the text of document \(documentID)") { db in
            try SearchSQL.replaceExtraction(
                documentID, version, extractor: extractor, partKind: partKind,
                textBytes: parts.reduce(0) { $0 + $1.text.utf8.count }, failure: nil, now: now, db)
            for part in parts {
                try db.run(
                    "INSERT INTO search_part (document_id, number, text) VALUES (?, ?, ?)",
                    [documentID, part.number, part.text])
            }
        }
    }

    /// Records that extractor version `extractor` got no text from this version (unsupported type, broken file,
    /// time-out), so that it is not tried again until a newer version or extractor arrives — or, when
    /// `retryable`, until it has failed so `maximumTries` times in all, over every run. Drops an older version's
    /// text. Returns how often this version has now failed so, or nil when the failure is final.
    @discardableResult
    public func recordExtractionFailure(
        documentID: String, version: DocumentVersion, extractor: Int, reason: String, retryable: Bool = false,
        maximumTries: Int = .max, now: Date = Date()
    ) throws(StoreError) -> Int? {
        try write("recording the failed extraction of document \(documentID)") { db in
            // Only the same bytes failing the same extractor the same retryable way count on.
            let earlier: Int? = try db.row(
                """
                SELECT tries FROM search_extraction
                WHERE document_id = ? AND file_id = ? AND size = ? AND extractor = ? AND retryable = 1
                """, [documentID, version.fileID, version.size, extractor]
            )?.decode(atIndex: 0)
            let tries = (earlier ?? 0) + 1
            let failure = SearchSQL.Failure(reason: reason, retryable: retryable && tries < maximumTries, tries: tries)
            try SearchSQL.replaceExtraction(
                documentID, version, extractor: extractor, partKind: nil, textBytes: 0, failure: failure, now: now, db)
            return failure.retryable ? tries : nil
        }
    }

    /// What the index holds for the document; nil when it was never extracted (or was forgotten).
    public func extraction(documentID: String) throws(StoreError) -> ExtractionRecord? {
        try read("reading the extraction state of document \(documentID)") { db in
            try db.row(
                """
                SELECT file_id, size, extractor, indexed_at, failure, retryable FROM search_extraction
                WHERE document_id = ?
                """, [documentID]
            ).map { row in
                ExtractionRecord(
                    version: DocumentVersion(fileID: try row.decode(atIndex: 0), size: try row.decode(atIndex: 1)),
                    extractor: try row.decode(atIndex: 2), indexedAt: try row.date(atIndex: 3),
                    failure: try row.decode(atIndex: 4), retryable: try row.decode(atIndex: 5))
            }
        }
    }

    /// Documents in the tree with a stored page or slide containing every word, each as the start of a token
    /// (case, accents and `ue`/`ü` spellings ignored): the only ones a grep for a pattern with these literal words
    /// needs to read. A literal that starts inside a word cannot use it (``candidateParts(containingAll:)`` can).
    public func candidateDocuments(containingAll words: [String]) throws(StoreError) -> [IndexedDocument] {
        guard let expression = SearchQuery.allPrefixes(words) else { return [] }
        return try read("finding documents that contain \(words.joined(separator: ", "))") { db in
            try db.rows(SearchSQL.candidates, [expression]).map { row in
                IndexedDocument(
                    inode: try row.decode(atIndex: 0), documentID: try row.decode(atIndex: 1),
                    version: DocumentVersion(fileID: try row.decode(atIndex: 2), size: try row.decode(atIndex: 3)),
                    partKind: TextPartKind(storedValue: try row.decode(atIndex: 4)))
            }
        }
    }

    /// Parts (pages, slides, sheets) whose stored text may contain every one of `substrings` (3 characters or more
    /// each, else nothing is found): by document id, the part ids in order. From the index of substrings (FTS5
    /// `trigram`, case folded, every trigram present but not checked for order), so a superset of the parts that
    /// contain them; with ``candidateDocuments(containingAll:)`` the only text a grep for a pattern with these
    /// literals needs to read (docs/search.md, "Candidate selection").
    public func candidateParts(containingAll substrings: [String]) throws(StoreError) -> [String: [Int64]] {
        guard let expression = SearchSQL.allTrigrams(substrings) else { return [:] }
        return try read("finding the pages that contain \(substrings.joined(separator: ", "))") { db in
            var parts: [String: [Int64]] = [:]
            let rows = try Row.fetchCursor(db.cachedStatement(sql: SearchSQL.candidateParts), arguments: [expression])
            while let row = try rows.next() {
                parts[try row.decode(atIndex: 0), default: []].append(try row.decode(atIndex: 1))
            }
            return parts
        }
    }

    /// Runs `body` in one read transaction with access to the stored text (one transaction for a whole grep, not
    /// one per document). Errors `body` throws become ``StoreError``s.
    public func readingStoredText<T>(_ body: (StoredText) throws -> T) throws(StoreError) -> T {
        try read("reading the stored text") { db in try body(StoredText(db: db)) }
    }
}

/// The stored text, read in place: valid only inside ``MetadataStore/readingStoredText(_:)``'s closure.
public struct StoredText {
    fileprivate let db: Database

    /// Hands `visit` the document's parts in page or slide order (only those `ids` names, when given), each as
    /// the UTF-8 bytes of SQLite's row: no copy, no String (whose UTF-8 check took a quarter of a `campusfs grep`
    /// scan), valid during the call. Stops when `visit` returns false.
    public func parts(
        of documentID: String, only ids: [Int64]? = nil,
        _ visit: (_ number: Int?, _ text: UnsafeBufferPointer<UInt8>) -> Bool
    ) throws {
        // SQLite's own calls on GRDB's prepared statement (``Database/step(_:_:_:)``): a GRDB row wraps each page's
        // bytes in a `Data` first, 1.7 ms of a scan of `large`'s 18,060 pages (docs/search.md).
        func visitRows(_ statement: Statement, _ arguments: StatementArguments) throws -> Bool {
            var going = true
            try db.step(statement, arguments) { row in
                // Text as stored: the bytes without a conversion.
                going = visit(row.isNull(0) ? nil : Int(row.int64(0)), row.bytes(1))
                return going
            }
            return going
        }
        guard let ids else {
            _ = try visitRows(
                db.cachedStatement(sql: "SELECT number, text FROM search_part WHERE document_id = ? ORDER BY id"),
                [documentID])
            return
        }
        let statement = try db.cachedStatement(sql: "SELECT number, text FROM search_part WHERE id = ?")
        for id in ids {
            guard try visitRows(statement, [id]) else { return }
        }
    }
}

extension TextPartKind {
    /// A value the index stored; a value this version does not know reads as no kind rather than failing a search.
    init?(storedValue: String?) {
        guard let storedValue else { return nil }
        self.init(rawValue: storedValue)
    }
}

/// The index's SQL, in one place.
enum SearchSQL {
    /// Why extraction failed, as ``replaceExtraction(_:_:extractor:partKind:textBytes:failure:now:_:)`` stores it.
    struct Failure {
        var reason: String
        var retryable: Bool
        /// How often these bytes failed this extractor so, this one included.
        var tries: Int
    }

    static let metadataColumns = "title, course, semester, path, owner, description, tags"

    /// Index rows of the documents of every course (`:course` NULL) or one, or of one document (`:document`):
    /// name, course number and title, the titles of its semesters, the folder path inside the course, owner,
    /// description and the user's tags. The recursive part walks folders only.
    ///
    /// Its plan reads only the course's nodes (`RefreshCostTests`): the course directory through `node_item` (kind
    /// and id), then the folders' children through `node_parent`, in that order (`CROSS JOIN`). Left to itself,
    /// SQLite started from every course's documents by item kind, so each course's refresh read the whole store (a
    /// refresh of the unchanged `huge` took 63 s, docs/performance.md). Every course at once (the migration that
    /// built the index) is a branch of its own, through the top-level folders' children: `:course IS NULL OR …`
    /// would leave only the item kind to search by.
    static let metadataRows = """
        WITH RECURSIVE folder_path(inode, path) AS (
            SELECT inode, '' FROM node WHERE item_kind = 'course' AND studip_id = :course
            UNION ALL
            SELECT n.inode, '' FROM node t CROSS JOIN node n ON n.parent = t.inode
            WHERE :course IS NULL AND t.parent = \(Node.rootInode) AND +n.item_kind = 'course'
            UNION ALL
            SELECT n.inode, ltrim(f.path || '/' || n.name, '/')
            FROM node n JOIN folder_path f ON n.parent = f.inode WHERE n.item_kind = 'folder'
        )
        SELECT n.inode, d.name, c.number || ' ' || c.title,
               (SELECT group_concat(s.title, ' ') FROM json_each(c.semester_ids) j JOIN semester s ON s.id = j.value),
               f.path, d.owner_name, d.description,
               (SELECT group_concat(t.tag, ' ') FROM user_tag t
                WHERE t.item_kind = 'document' AND t.studip_id = d.id)
        FROM folder_path f CROSS JOIN node n ON n.parent = f.inode AND n.item_kind = 'document'
        JOIN document d ON d.inode = n.inode JOIN course c ON c.id = n.course_id
        WHERE (:document IS NULL OR n.inode = :document)
        """

    /// Brings the index rows of one course's documents, or of one document, up to date: explicit writes rather
    /// than triggers, because a row combines five tables and the folder path, which a rename of any folder above
    /// changes, and SQLite's triggers cannot run the recursive query that builds it. Only rows whose text changed
    /// are rewritten: a refresh that changes nothing costs a read of the course's rows (`large`, docs/benchmarks.md).
    /// When none of them is indexed yet (the course's first fill), one `INSERT … SELECT` writes them all inside
    /// SQLite, without a row, an array and a statement per document in Swift (docs/performance.md, "The store's
    /// I/O in a first fill").
    static func indexMetadata(course: String, document: Int64? = nil, _ db: Database) throws {
        let arguments: StatementArguments = ["course": course, "document": document]
        var indexed: [Int64: [DatabaseValue]] = [:]
        for row in try db.rows(
            """
            SELECT rowid, \(metadataColumns) FROM search_document WHERE rowid IN (
                SELECT inode FROM node WHERE item_kind = 'document' AND course_id = :course
                  AND (:document IS NULL OR inode = :document))
            """, arguments)
        {
            indexed[try row.decode(atIndex: 0)] = Array(row.databaseValues.dropFirst())
        }
        guard !indexed.isEmpty else {
            try db.run(firstFill, arguments)
            return
        }
        for row in try db.rows(metadataRows, arguments) {
            let inode: Int64 = try row.decode(atIndex: 0)
            let values = Array(row.databaseValues.dropFirst())
            if let old = indexed.removeValue(forKey: inode) {
                if old == values { continue }
                try db.run("DELETE FROM search_document WHERE rowid = ?", [inode])
            }
            try db.run(
                "INSERT INTO search_document (rowid, \(metadataColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                StatementArguments([inode.databaseValue] + values))
        }
        for inode in indexed.keys { try db.run("DELETE FROM search_document WHERE rowid = ?", [inode]) }
    }

    /// A course's first index rows, in rowid order: FTS5 keeps what a transaction inserts in memory and writes it as
    /// one segment at the commit, but writes what it holds as a segment of its own whenever a rowid is not larger
    /// than the last one. In the folders' order every folder but the first started a segment, and FTS5 merged them
    /// again (flushing and merging were three quarters of the search rows' time in a first fill, docs/performance.md,
    /// "Daemon CPU a document").
    static let firstFill = "INSERT INTO search_document (rowid, \(metadataColumns)) \(metadataRows) ORDER BY n.inode"

    /// The text of each course's index rows that comes from the overview (number, title, semester titles): a
    /// change means the course's rows must be rewritten.
    static let courseTexts = """
        SELECT c.id, c.number || ' ' || c.title || ' ' || COALESCE(
            (SELECT group_concat(s.title, ' ') FROM json_each(c.semester_ids) j JOIN semester s ON s.id = j.value),
            '')
        FROM course c
        """

    static func courseTexts(_ db: Database) throws -> [String: String] {
        var texts: [String: String] = [:]
        for row in try db.rows(courseTexts) { texts[try row.decode(atIndex: 0)] = try row.decode(atIndex: 1) }
        return texts
    }

    static func replaceExtraction(
        _ documentID: String, _ version: DocumentVersion, extractor: Int, partKind: TextPartKind?, textBytes: Int,
        failure: Failure?, now: Date, _ db: Database
    ) throws {
        // The cascade to search_part runs its delete trigger, which takes the text out of search_content.
        try db.run("DELETE FROM search_extraction WHERE document_id = ?", [documentID])
        try db.run(
            """
            INSERT INTO search_extraction
                (document_id, file_id, size, extractor, indexed_at, part_kind, text_bytes, failure, retryable, tries)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                documentID, version.fileID, version.size, extractor, now.timeIntervalSince1970, partKind?.rawValue,
                textBytes, failure?.reason, failure?.retryable ?? false, failure?.tries ?? 1,
            ])
    }

    static func filterArguments(_ filters: SearchFilters) -> StatementArguments {
        ["course": filters.course, "semester": filters.semester, "tag": filters.tag, "new": filters.onlyNew]
    }

    /// The filters, on `n` (node), `d` (document) and `c` (course).
    private static let filters = """
        (:course IS NULL OR c.id = :course OR c.number = :course COLLATE NOCASE OR c.title = :course COLLATE NOCASE)
        AND (:semester IS NULL OR EXISTS (
            SELECT 1 FROM json_each(c.semester_ids) j JOIN semester s ON s.id = j.value
            WHERE s.id = :semester OR s.title = :semester COLLATE NOCASE
              OR replace(s.title, '/', '-') = :semester COLLATE NOCASE))
        AND (:tag IS NULL OR EXISTS (
            SELECT 1 FROM user_tag t WHERE t.item_kind = 'document' AND t.studip_id = d.id
              AND t.tag = :tag COLLATE NOCASE))
        AND (NOT :new OR d.highlight IS NOT NULL)
        """

    /// bm25 weights of title, course, semester, path, owner, description, tags: the name counts most.
    static let metadataRank = "bm25(search_document, 10.0, 3.0, 1.0, 2.0, 3.0, 1.0, 3.0)"
    /// A hit's snippet: the best column's matching words between char(2) and char(3).
    static let metadataSnippetCall = "snippet(search_document, -1, char(2), char(3), '…', 12)"

    static let metadataHits = """
        SELECT m.rowid, d.id, \(metadataSnippetCall)
        FROM search_document m JOIN node n ON n.inode = m.rowid JOIN document d ON d.inode = m.rowid
        JOIN course c ON c.id = n.course_id
        WHERE search_document MATCH :match AND \(filters)
        ORDER BY \(metadataRank)
        LIMIT :limit
        """

    /// ``metadataHits`` without filters, in three steps: every match, ranked as there, ...
    static let rankedMetadata = """
        SELECT rowid FROM search_document WHERE search_document MATCH :match
        ORDER BY \(metadataRank)
        """

    /// ... whether one is a document in the tree, ...
    static let documentInTree = """
        SELECT d.id FROM node n JOIN document d ON d.inode = n.inode JOIN course c ON c.id = n.course_id
        WHERE n.inode = ?
        """

    /// ... and its snippet.
    static let metadataSnippet = """
        SELECT \(metadataSnippetCall) FROM search_document
        WHERE search_document MATCH :match AND rowid = :inode
        """

    /// Matching parts, best first, of documents in the tree.
    static let contentHits = """
        SELECT n.inode, d.id, p.id
        FROM search_content JOIN search_part p ON p.id = search_content.rowid
        JOIN node n ON n.item_kind = 'document' AND n.studip_id = p.document_id
        JOIN document d ON d.inode = n.inode JOIN course c ON c.id = n.course_id
        WHERE search_content MATCH :match AND \(filters)
        ORDER BY bm25(search_content)
        """

    static let contentSnippet = """
        SELECT snippet(search_content, 0, char(2), char(3), '…', 16), p.number, e.part_kind
        FROM search_content JOIN search_part p ON p.id = search_content.rowid
        JOIN search_extraction e ON e.document_id = p.document_id
        WHERE search_content MATCH :match AND search_content.rowid = :part
        """

    /// Every trigram of every substring, as one FTS5 query of `search_trigram` (its `detail = 'none'` has no
    /// phrases); nil when no substring has 3 characters.
    static func allTrigrams(_ substrings: [String]) -> String? {
        var trigrams: [String] = []
        for substring in substrings {
            let scalars = Array(substring.unicodeScalars)
            guard scalars.count >= 3 else { continue }
            for start in 0...(scalars.count - 3) {
                var trigram = String.UnicodeScalarView()
                trigram.append(contentsOf: scalars[start..<start + 3])
                let quoted = "\"" + String(trigram).replacingOccurrences(of: "\"", with: "\"\"") + "\""
                if !trigrams.contains(quoted) { trigrams.append(quoted) }
            }
        }
        return trigrams.isEmpty ? nil : trigrams.joined(separator: " AND ")
    }

    static let candidateParts = """
        SELECT p.document_id, p.id FROM search_trigram JOIN search_part p ON p.id = search_trigram.rowid
        WHERE search_trigram MATCH ? ORDER BY p.id
        """

    static let candidates = """
        SELECT DISTINCT n.inode, e.document_id, e.file_id, e.size, e.part_kind
        FROM search_content JOIN search_part p ON p.id = search_content.rowid
        JOIN search_extraction e ON e.document_id = p.document_id
        JOIN node n ON n.item_kind = 'document' AND n.studip_id = e.document_id
        WHERE search_content MATCH ?
        """
}
