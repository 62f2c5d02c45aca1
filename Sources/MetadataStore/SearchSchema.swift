import Foundation
import GRDB

/// The search index (Schema v3, issue 16): derived data, rebuilt from the tree and from extracted text.
/// docs/metadata-store.md ("The search index") explains the tables and why they are kept in sync as they are.
extension Schema {
    /// FTS5 with SQLite's own `unicode61` tokenizer, so that any SQLite (the `sqlite3` shell too) reads the index;
    /// `remove_diacritics 2` makes `Übung` the token `ubung`, and ``SearchQuery`` adds the `ue`/`ss` spellings
    /// on the query side.
    static let searchTokenizer = "unicode61 remove_diacritics 2"

    static func addSearchIndex(_ db: Database) throws {
        try db.execute(
            sql: """
                -- One row per document in the tree, rowid = its inode; written by MetadataStore.indexMetadata.
                CREATE VIRTUAL TABLE search_document USING fts5(
                    title, course, semester, path, owner, description, tags,
                    tokenize = '\(searchTokenizer)'
                );
                -- Delete-only trigger: a document leaves the tree by the cascade from node; rows are (re)written
                -- by explicit statements, because they combine five tables and the folder path.
                CREATE TRIGGER search_document_gone AFTER DELETE ON document BEGIN
                    DELETE FROM search_document WHERE rowid = old.inode;
                END;

                -- The extracted text of one document version, by Stud.IP id (not inode): it outlives a departure
                -- until the document is forgotten, and the content cache's evictions.
                CREATE TABLE search_extraction (
                    document_id TEXT PRIMARY KEY NOT NULL,
                    file_id TEXT NOT NULL,
                    size INTEGER NOT NULL,
                    indexed_at REAL NOT NULL,
                    -- What the numbered parts are: 'page', 'slide' or 'sheet'; NULL for text without parts.
                    part_kind TEXT,
                    -- UTF-8 bytes of the stored text, so that status needs no pass over it.
                    text_bytes INTEGER NOT NULL DEFAULT 0,
                    -- Why extraction failed for this version; NULL when its text is in search_part.
                    failure TEXT
                );
                CREATE TABLE search_part (
                    id INTEGER PRIMARY KEY,
                    document_id TEXT NOT NULL REFERENCES search_extraction(document_id) ON DELETE CASCADE,
                    -- The page or slide number; NULL for text without pages.
                    number INTEGER,
                    text TEXT NOT NULL
                );
                CREATE INDEX search_part_document ON search_part(document_id);
                -- External content: the text is stored once, in search_part; the triggers are SQLite's documented
                -- way to keep such an index in step.
                CREATE VIRTUAL TABLE search_content USING fts5(
                    text, content = 'search_part', content_rowid = 'id', tokenize = '\(searchTokenizer)'
                );
                CREATE TRIGGER search_part_added AFTER INSERT ON search_part BEGIN
                    INSERT INTO search_content (rowid, text) VALUES (new.id, new.text);
                END;
                CREATE TRIGGER search_part_removed AFTER DELETE ON search_part BEGIN
                    INSERT INTO search_content (search_content, rowid, text) VALUES ('delete', old.id, old.text);
                END;
                """)
        try db.execute(
            sql: "INSERT INTO search_document (rowid, \(SearchSQL.metadataColumns)) \(SearchSQL.metadataRows)",
            arguments: ["course": nil, "document": nil])
    }

    /// Issue 31: an index of every 3-character substring of the stored text, beside the word index, so that
    /// `campusfs grep` finds the parts holding a pattern's literal wherever it stands: inside a word, at a `-w`
    /// boundary the word tokenizer does not see (docs/search.md, "Candidate selection"). External content like
    /// `search_content`; `case_sensitive 0` folds case, so one index serves grep with and without `-i` (a superset:
    /// the engine decides); `detail = 'none'` keeps no positions, because grep checks the lines it reads anyway.
    static func addSubstringIndex(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE VIRTUAL TABLE search_trigram USING fts5(
                    text, content = 'search_part', content_rowid = 'id',
                    tokenize = 'trigram case_sensitive 0', detail = 'none'
                );
                CREATE TRIGGER search_part_trigram_added AFTER INSERT ON search_part BEGIN
                    INSERT INTO search_trigram (rowid, text) VALUES (new.id, new.text);
                END;
                CREATE TRIGGER search_part_trigram_removed AFTER DELETE ON search_part BEGIN
                    INSERT INTO search_trigram (search_trigram, rowid, text) VALUES ('delete', old.id, old.text);
                END;
                INSERT INTO search_trigram (search_trigram) VALUES ('rebuild');
                """)
    }
}
