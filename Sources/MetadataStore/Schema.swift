import Foundation
import GRDB

/// The schema and its migrations. docs/metadata-store.md explains the tables; new versions append a migration
/// and never edit a shipped one.
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", migrate: createVersion1)
        migrator.registerMigration("v2: departures", migrate: addDepartures)
        migrator.registerMigration("v3: search index", migrate: addSearchIndex)
        migrator.registerMigration("v4: tag view", migrate: addTagView)
        migrator.registerMigration("v5: course files", migrate: addCourseFiles)
        migrator.registerMigration("v6: restricted-document rotation", migrate: addRestrictedChecks)
        migrator.registerMigration("v7: sizes hosts sent", migrate: addHostSizes)
        migrator.registerMigration("v8: extractor versions", migrate: addExtractorVersions)
        migrator.registerMigration("v9: no document etag", migrate: dropDocumentETag)
        migrator.registerMigration("v10: substring index", migrate: addSubstringIndex)
        migrator.registerMigration("v11: permissions", migrate: addPermissions)
        migrator.registerMigration("issue 32: outbox", migrate: addOutbox)
        migrator.registerMigration("issue 32: drafts", migrate: addDrafts)
        migrator.registerMigration("v12: one index per item", migrate: mergeItemIndexes)
        migrator.registerMigration("issue 32: draft base etag, being written", migrate: addDraftBaseETagAndWriting)
        migrator.registerMigration("v13: no id indexes on details", migrate: dropDetailIDIndexes)
        migrator.registerMigration("v14: node checks without IN lists", migrate: checkNodeKindsWithoutLists)
        return migrator
    }

    /// Issue 31: `node`'s CHECK constraints said `kind IN (3 values)` and `item_kind IN (14 values)`, and SQLite 3.40
    /// codes a constant list of more than two values as a temporary b-tree that every execution of a statement
    /// builds anew: each node INSERT opened, filled and closed two of them, about a third of the insert's time in a
    /// first fill (docs/performance.md, "Daemon CPU a document"). The same constraints as chains of `=` and `OR`
    /// (for a NOT NULL column the same rows pass) need none. SQLite cannot change a CHECK constraint, so the table is
    /// rebuilt (``rebuildNode(kindCheck:itemKindCheck:indexes:_:)``: every row, inode and the AUTOINCREMENT counter
    /// kept; the rows that refer to nodes by inode or by kind and id are untouched), with the indexes of `v12`.
    private static func checkNodeKindsWithoutLists(_ db: Database) throws {
        // The lists of `v5`, spelled out: a shipped migration never changes with the enums.
        let kinds = ["directory", "file", "symlink"]
        let itemKinds = [
            "root", "semester", "ongoing", "course", "courseLink", "folder", "document", "tagView", "tag", "tagLink",
            "announcements", "announcement", "courseCalendar", "timetable",
        ]
        func anyOf(_ column: String, _ values: [String]) -> String {
            values.map { "\(column) = '\($0)'" }.joined(separator: " OR ")
        }
        try rebuildNode(
            kindCheck: anyOf("kind", kinds), itemKindCheck: anyOf("item_kind", itemKinds),
            indexes: """
                CREATE INDEX node_course ON node(course_id);
                CREATE UNIQUE INDEX node_item ON node(
                    item_kind, studip_id, (CASE WHEN item_kind IN ('courseLink', 'tagLink') THEN parent ELSE 0 END));
                """, db)
    }

    /// Issue 31: `document.id` and `folder.id` were UNIQUE, so each had an index keyed by random Stud.IP ids that
    /// repeated `node_item`'s keys (the node's `studip_id` is the row's `id`, and `node_item` keeps one placement
    /// per item): a course's first fill changed most leaf pages of both, and every course's commit copied them into
    /// the WAL again. Nothing reads either table by `id` (docs/performance.md, "Daemon CPU a document"). SQLite
    /// cannot drop a column's UNIQUE, so both tables are rebuilt the documented way (as ``rebuildNode(itemKinds:_:)``),
    /// with their columns in the same order, and the index and trigger that went with `document`.
    private static func dropDetailIDIndexes(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE document_new (
                    inode INTEGER PRIMARY KEY NOT NULL REFERENCES node(inode) ON DELETE CASCADE,
                    id TEXT NOT NULL,
                    folder_id TEXT NOT NULL,
                    name TEXT NOT NULL,
                    description TEXT NOT NULL,
                    mime_type TEXT NOT NULL,
                    created REAL NOT NULL,
                    file_id TEXT NOT NULL,
                    owner_name TEXT NOT NULL,
                    license TEXT NOT NULL,
                    downloadable INTEGER NOT NULL,
                    is_link INTEGER NOT NULL,
                    web_url TEXT NOT NULL,
                    highlight TEXT CHECK (highlight IN ('new', 'changed')),
                    host_size INTEGER,
                    writable INTEGER NOT NULL DEFAULT 0,
                    editable INTEGER NOT NULL DEFAULT 0
                );
                INSERT INTO document_new SELECT inode, id, folder_id, name, description, mime_type, created, file_id,
                    owner_name, license, downloadable, is_link, web_url, highlight, host_size, writable, editable
                FROM document;
                DROP TABLE document;
                ALTER TABLE document_new RENAME TO document;
                CREATE INDEX document_highlighted ON document(inode) WHERE highlight IS NOT NULL;
                CREATE TRIGGER search_document_gone AFTER DELETE ON document BEGIN
                    DELETE FROM search_document WHERE rowid = old.inode;
                END;

                CREATE TABLE folder_new (
                    inode INTEGER PRIMARY KEY NOT NULL REFERENCES node(inode) ON DELETE CASCADE,
                    id TEXT NOT NULL,
                    parent_id TEXT,
                    name TEXT NOT NULL,
                    description TEXT NOT NULL,
                    folder_type TEXT NOT NULL,
                    web_url TEXT NOT NULL,
                    created REAL NOT NULL,
                    changed REAL NOT NULL,
                    listed_at REAL,
                    readable INTEGER NOT NULL DEFAULT 1,
                    writable INTEGER NOT NULL DEFAULT 0,
                    subfolder_allowed INTEGER NOT NULL DEFAULT 0
                );
                INSERT INTO folder_new SELECT inode, id, parent_id, name, description, folder_type, web_url, created,
                    changed, listed_at, readable, writable, subfolder_allowed
                FROM folder;
                DROP TABLE folder;
                ALTER TABLE folder_new RENAME TO folder;
                """)
    }

    /// Issue 31: `node_item (item_kind, studip_id)` and the one-placement index `(studip_id, item_kind)` held the
    /// same pairs, both keyed by random Stud.IP ids: every new node changed a page in each. One UNIQUE index now
    /// does both jobs: its third column is the parent for course and tag links (one per semester or tag folder,
    /// never two in the same one) and 0 for everything else (one placement per item). Lookups by kind and id read
    /// its first two columns, as they read `node_item` before (docs/performance.md, "Daemon CPU a document").
    /// Links were not unique before: a second link of an item in the same folder, which no code made, would stop
    /// the index and so the store from opening; the oldest stays (the next overview or tag change renews links).
    private static func mergeItemIndexes(_ db: Database) throws {
        try db.execute(
            sql: """
                DELETE FROM node WHERE item_kind IN ('courseLink', 'tagLink') AND inode NOT IN (
                    SELECT min(inode) FROM node WHERE item_kind IN ('courseLink', 'tagLink')
                    GROUP BY item_kind, studip_id, parent);
                DROP INDEX node_single_placement;
                DROP INDEX node_item;
                CREATE UNIQUE INDEX node_item ON node(
                    item_kind, studip_id, (CASE WHEN item_kind IN ('courseLink', 'tagLink') THEN parent ELSE 0 END));
                """)
    }

    /// Issue 32: what the logged-in user may do with each folder and document (docs/writing.md), as the last
    /// listing said. The course's root folder has no `folder` row, so its flags are the course's. Until the next
    /// refresh fills them in, a folder is readable and nothing is writable.
    private static func addPermissions(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE folder ADD COLUMN readable INTEGER NOT NULL DEFAULT 1;
                ALTER TABLE folder ADD COLUMN writable INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE folder ADD COLUMN subfolder_allowed INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE document ADD COLUMN writable INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE document ADD COLUMN editable INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE course ADD COLUMN root_writable INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE course ADD COLUMN root_subfolder_allowed INTEGER NOT NULL DEFAULT 0;
                """)
    }

    /// Issue 29: `document.etag` was never written but by a store method nothing called: the content cache keeps a
    /// download's ETag in its sidecar, next to the bytes it validates (docs/mount.md). SQLite rewrites the table.
    private static func dropDocumentETag(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE document DROP COLUMN etag")
    }

    /// Issue 29: which extractor version produced a document's text or failure, so that a better extractor
    /// extracts again, and whether a failure depended on the machine, so that a later try (in this run or the next)
    /// retries it, and how often it failed so, which bounds the tries over every run (docs/search.md, "Indexing").
    /// What the index holds was made by version 1. Before, time-outs and a missing `pdftotext` were recorded as
    /// final; their reasons are the only mark of them.
    private static func addExtractorVersions(_ db: Database) throws {
        try db.execute(
            sql: """
                ALTER TABLE search_extraction ADD COLUMN extractor INTEGER NOT NULL DEFAULT 1;
                ALTER TABLE search_extraction ADD COLUMN retryable INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE search_extraction ADD COLUMN tries INTEGER NOT NULL DEFAULT 1;
                UPDATE search_extraction SET retryable = 1
                WHERE failure LIKE 'text extraction took longer than %'
                   OR failure LIKE '%(Scripts/bootstrap installs poppler-utils)';
                """)
    }

    /// Issue 28: the length a document's host sent when Stud.IP recorded 0 bytes for it (5.0.7's "add URL" dialog
    /// does), so that `stat` keeps the real size once the cached copy is gone. Apart from `node.size`, which stays
    /// Stud.IP's 0: a refresh compares that and so sees no new version, and a download still takes any length
    /// (docs/mount.md, "Documents hosted elsewhere").
    private static func addHostSizes(_ db: Database) throws {
        try db.execute(sql: "ALTER TABLE document ADD COLUMN host_size INTEGER")
    }

    /// Issue 28: in which order the folders of a course were last looked in for documents the user may not download
    /// (JSON:API on Stud.IP 5.0 looks in one folder per listing). Kept here rather than in the client, so that
    /// `campusfs refresh` without a mount continues the rotation the last process left, as a daemon does; the root
    /// folder has no `folder` row, hence a table by folder id.
    private static func addRestrictedChecks(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE restricted_check (
                    folder_id TEXT PRIMARY KEY NOT NULL,
                    course_id TEXT NOT NULL REFERENCES course(id) ON DELETE CASCADE,
                    checked INTEGER NOT NULL
                );
                CREATE INDEX restricted_check_course ON restricted_check(course_id);
                """)
    }

    /// The item kinds of the tag view (``TagView``), and its links (one per tag of an item) exempt from the
    /// one-placement index. The view itself is built by the next refresh or tag change.
    private static func addTagView(_ db: Database) throws {
        try rebuildNode(
            itemKinds: [
                "root", "semester", "ongoing", "course", "courseLink", "folder", "document", "tagView", "tag",
                "tagLink",
            ], db)
    }

    /// The generated files of issue 18: a course's announcements folder with one Markdown file per announcement,
    /// its calendar and a semester's timetable. What Stud.IP said is kept in `announcement`, `course_date` and
    /// `schedule_slot` (by the course or semester, so a hidden course's rows go with it); the rendered bytes live
    /// in `generated_file` next to the node, so getattr is exact and a read needs no network. The files appear
    /// with the next refresh.
    private static func addCourseFiles(_ db: Database) throws {
        try rebuildNode(
            itemKinds: [
                "root", "semester", "ongoing", "course", "courseLink", "folder", "document", "tagView", "tag",
                "tagLink",
                "announcements", "announcement", "courseCalendar", "timetable",
            ], db)
        try db.execute(
            sql: """
                CREATE TABLE announcement (
                    id TEXT PRIMARY KEY NOT NULL,
                    course_id TEXT NOT NULL REFERENCES course(id) ON DELETE CASCADE,
                    title TEXT NOT NULL,
                    html TEXT NOT NULL,
                    author_name TEXT,
                    published REAL NOT NULL,
                    expires REAL,
                    changed REAL NOT NULL,
                    comments_allowed INTEGER NOT NULL
                );
                CREATE INDEX announcement_course ON announcement(course_id);

                CREATE TABLE course_date (
                    id TEXT PRIMARY KEY NOT NULL,
                    course_id TEXT NOT NULL REFERENCES course(id) ON DELETE CASCADE,
                    start_at REAL NOT NULL,
                    end_at REAL NOT NULL,
                    title TEXT,
                    description TEXT,
                    room TEXT,
                    cancelled INTEGER NOT NULL,
                    cancellation_note TEXT
                );
                CREATE INDEX course_date_course ON course_date(course_id);

                -- A slot's id is only unique within the user's timetable of one semester.
                CREATE TABLE schedule_slot (
                    semester_id TEXT NOT NULL REFERENCES semester(id) ON DELETE CASCADE,
                    id TEXT NOT NULL,
                    course_id TEXT,
                    title TEXT NOT NULL,
                    weekday INTEGER NOT NULL CHECK (weekday BETWEEN 1 AND 7),
                    start_minute INTEGER NOT NULL,
                    end_minute INTEGER NOT NULL,
                    room TEXT,
                    description TEXT,
                    PRIMARY KEY (semester_id, id)
                );

                -- The bytes of an announcement, calendar or timetable node (its size and mtime are in node);
                -- highlight as for documents: announcements that are new or changed and not read yet.
                CREATE TABLE generated_file (
                    inode INTEGER PRIMARY KEY NOT NULL REFERENCES node(inode) ON DELETE CASCADE,
                    content BLOB NOT NULL,
                    highlight TEXT CHECK (highlight IN ('new', 'changed'))
                );
                CREATE INDEX generated_file_highlighted ON generated_file(inode) WHERE highlight IS NOT NULL;
                """)
    }

    /// Gives `node` a new list of item kinds. SQLite cannot change a CHECK constraint, so the table is rebuilt the
    /// documented way (new table, copy, drop, rename; GRDB's default `.deferred` foreign-key checks turn them off
    /// meanwhile and check them at the end), keeping its AUTOINCREMENT counter: inodes of deleted nodes are never
    /// handed out again. Course and tag links are exempt from the one-placement index.
    private static func rebuildNode(itemKinds: [String], _ db: Database) throws {
        let kinds = itemKinds.map { "'\($0)'" }.joined(separator: ", ")
        try rebuildNode(
            kindCheck: "kind IN ('directory', 'file', 'symlink')", itemKindCheck: "item_kind IN (\(kinds))",
            indexes: """
                CREATE INDEX node_item ON node(item_kind, studip_id);
                CREATE UNIQUE INDEX node_single_placement ON node(studip_id, item_kind)
                    WHERE item_kind NOT IN ('courseLink', 'tagLink');
                CREATE INDEX node_course ON node(course_id);
                """, db)
    }

    /// ``rebuildNode(itemKinds:_:)`` with the CHECK expressions of `kind` and `item_kind` and the indexes besides
    /// `node_name` and `node_parent` as given: every migration that rebuilds `node` goes through here.
    private static func rebuildNode(
        kindCheck: String, itemKindCheck: String, indexes: String, _ db: Database
    ) throws {
        let columns =
            "inode, parent, name, base_name, kind, item_kind, studip_id, course_id, size, mtime, symlink_target, "
            + "created, highlighted_below"
        try db.execute(
            sql: """
                CREATE TABLE node_new (
                    inode INTEGER PRIMARY KEY AUTOINCREMENT,
                    parent INTEGER REFERENCES node(inode) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    base_name TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (\(kindCheck)),
                    item_kind TEXT NOT NULL CHECK (\(itemKindCheck)),
                    studip_id TEXT,
                    course_id TEXT REFERENCES course(id) ON DELETE CASCADE,
                    size INTEGER NOT NULL DEFAULT 0,
                    mtime REAL NOT NULL,
                    symlink_target TEXT,
                    created REAL NOT NULL,
                    highlighted_below INTEGER NOT NULL DEFAULT 0,
                    CHECK ((parent IS NULL) = (item_kind = 'root'))
                );
                INSERT INTO node_new (\(columns)) SELECT \(columns) FROM node;
                UPDATE sqlite_sequence
                SET seq = MAX(seq, COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'node'), 0))
                WHERE name = 'node_new';
                DROP TABLE node;
                ALTER TABLE node_new RENAME TO node;
                CREATE UNIQUE INDEX node_name ON node(parent, name);
                CREATE INDEX node_parent ON node(parent);
                """ + indexes)
    }

    /// Folders and documents Stud.IP removed, and since when: their cached bytes and the user's tags, rating and
    /// pin outlive them for a grace period, so a listing that comes back empty for a while (a server hiccup)
    /// loses nothing (``MetadataStore/departed(before:)``). An item that comes back leaves the table.
    private static func addDepartures(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE departed (
                    item_kind TEXT NOT NULL,
                    studip_id TEXT NOT NULL,
                    since REAL NOT NULL,
                    PRIMARY KEY (item_kind, studip_id)
                );
                CREATE INDEX departed_since ON departed(since);
                """)
    }

    private static func createVersion1(_ db: Database) throws {
        try db.execute(
            sql: """
                CREATE TABLE sync_state (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    created_at REAL NOT NULL,
                    first_overview_at REAL,
                    last_overview_at REAL,
                    user_id TEXT,
                    username TEXT,
                    display_name TEXT
                );

                CREATE TABLE semester (
                    id TEXT PRIMARY KEY NOT NULL,
                    title TEXT NOT NULL,
                    begin_at REAL NOT NULL,
                    end_at REAL NOT NULL
                );

                -- Every course of the last overview, also hidden or filtered ones (so that showing them again
                -- is not mistaken for an enrolment).
                CREATE TABLE course (
                    id TEXT PRIMARY KEY NOT NULL,
                    number TEXT NOT NULL,
                    title TEXT NOT NULL,
                    subtitle TEXT NOT NULL,
                    description TEXT NOT NULL,
                    semester_ids TEXT NOT NULL,
                    lecturers TEXT NOT NULL,
                    web_url TEXT NOT NULL,
                    root_folder_id TEXT,
                    first_seen_at REAL NOT NULL,
                    -- 1 when the course was in the profile's first overview: its first listing is a first sync.
                    baseline INTEGER NOT NULL CHECK (baseline IN (0, 1)),
                    -- The last listing while the course had a directory (also one with failed folders); NULL = never.
                    listed_at REAL
                );

                -- The tree. inode = rowid; AUTOINCREMENT so that no number is ever handed out twice.
                CREATE TABLE node (
                    inode INTEGER PRIMARY KEY AUTOINCREMENT,
                    parent INTEGER REFERENCES node(inode) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    -- The sanitized name before duplicate suffixes: a change means the item was renamed.
                    base_name TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('directory', 'file', 'symlink')),
                    item_kind TEXT NOT NULL
                        CHECK (item_kind IN ('root', 'semester', 'ongoing', 'course', 'courseLink', 'folder',
                                             'document')),
                    studip_id TEXT,
                    course_id TEXT REFERENCES course(id) ON DELETE CASCADE,
                    size INTEGER NOT NULL DEFAULT 0,
                    mtime REAL NOT NULL,
                    symlink_target TEXT,
                    -- The age that decides which duplicate keeps the plain name (mkdate, begin, first seen).
                    created REAL NOT NULL,
                    highlighted_below INTEGER NOT NULL DEFAULT 0,
                    CHECK ((parent IS NULL) = (item_kind = 'root'))
                );
                CREATE UNIQUE INDEX node_name ON node(parent, name);
                -- (parent, rowid): children in inode order, the readdir cursor.
                CREATE INDEX node_parent ON node(parent);
                CREATE INDEX node_item ON node(item_kind, studip_id);
                -- One placement per item; only course links repeat (one per earlier semester).
                CREATE UNIQUE INDEX node_single_placement ON node(studip_id, item_kind) WHERE item_kind <> 'courseLink';
                CREATE INDEX node_course ON node(course_id);

                CREATE TABLE folder (
                    inode INTEGER PRIMARY KEY NOT NULL REFERENCES node(inode) ON DELETE CASCADE,
                    id TEXT NOT NULL UNIQUE,
                    parent_id TEXT,
                    name TEXT NOT NULL,
                    description TEXT NOT NULL,
                    folder_type TEXT NOT NULL,
                    web_url TEXT NOT NULL,
                    created REAL NOT NULL,
                    changed REAL NOT NULL,
                    listed_at REAL
                );

                -- size and changed live in node (size, mtime): one row answers getattr.
                CREATE TABLE document (
                    inode INTEGER PRIMARY KEY NOT NULL REFERENCES node(inode) ON DELETE CASCADE,
                    id TEXT NOT NULL UNIQUE,
                    folder_id TEXT NOT NULL,
                    name TEXT NOT NULL,
                    description TEXT NOT NULL,
                    mime_type TEXT NOT NULL,
                    created REAL NOT NULL,
                    file_id TEXT NOT NULL,
                    owner_name TEXT NOT NULL,
                    license TEXT NOT NULL,
                    downloadable INTEGER NOT NULL,
                    is_link INTEGER NOT NULL,
                    web_url TEXT NOT NULL,
                    etag TEXT,
                    highlight TEXT CHECK (highlight IN ('new', 'changed'))
                );
                CREATE INDEX document_highlighted ON document(inode) WHERE highlight IS NOT NULL;

                -- The user's data, by Stud.IP id and never by inode or path; no foreign key, so it outlives
                -- hidden courses and items that come back.
                CREATE TABLE user_state (
                    item_kind TEXT NOT NULL,
                    studip_id TEXT NOT NULL,
                    rating INTEGER NOT NULL DEFAULT 0 CHECK (rating BETWEEN 0 AND 10),
                    flagged INTEGER NOT NULL DEFAULT 0,
                    pinned INTEGER NOT NULL DEFAULT 0,
                    PRIMARY KEY (item_kind, studip_id)
                );
                CREATE INDEX user_state_flagged ON user_state(studip_id) WHERE flagged = 1;
                CREATE INDEX user_state_pinned ON user_state(item_kind, studip_id) WHERE pinned = 1;

                CREATE TABLE user_tag (
                    item_kind TEXT NOT NULL,
                    studip_id TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    tag TEXT NOT NULL,
                    PRIMARY KEY (item_kind, studip_id, position)
                );
                CREATE INDEX user_tag_tag ON user_tag(tag);
                """)
        let now = Date().timeIntervalSince1970
        try db.execute(sql: "INSERT INTO sync_state (id, created_at) VALUES (1, ?)", arguments: [now])
        try db.execute(
            sql: """
                INSERT INTO node (inode, parent, name, base_name, kind, item_kind, mtime, created)
                VALUES (?, NULL, '', '', 'directory', 'root', ?, 0)
                """,
            arguments: [Node.rootInode, now])
    }
}
