import Foundation
import GRDB
import StudIPModel
import Synchronization
import Testing

@testable import MetadataStore

/// Statements the writer connection runs, counted by GRDB's trace.
private final class StatementCount: Sendable {
    private let value = Mutex(0)
    func add() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

/// Issue 31: a refresh of an unchanged course costs a read of the course's rows, not writes of them, and none of its
/// statements reads the rows of the other courses (docs/metadata-store.md, "Refresh").
@Suite struct RefreshCostTests {
    let course = "WS 2026-27/INF-101 Foo"

    func listing(documents count: Int) -> CourseContent {
        content(
            info101, folders: [folder("f", in: root(info101), "Folien"), folder("g", in: "f", "Alt")],
            documents: (0..<count).map { document("d\($0)", in: $0 % 2 == 0 ? "f" : "g", "Datei \($0).pdf") })
    }

    /// Rows changed and statements run (the store's own, not those SQLite runs inside them) on the store's writer
    /// connection while `body` runs.
    func cost(_ store: MetadataStore, _ body: () throws -> Void) throws -> (changes: Int, statements: Int) {
        let statements = StatementCount()
        let before = try store.pool.writeWithoutTransaction { db in
            // Statements SQLite runs inside others (FTS5's on its shadow tables, triggers) start with "--".
            db.trace { event in if !event.description.hasPrefix("--") { statements.add() } }
            return db.totalChangesCount
        }
        try body()
        let after = try store.pool.writeWithoutTransaction { db in
            db.trace(options: .statement, nil)
            return db.totalChangesCount
        }
        return (after - before, statements.count)
    }

    @Test func aRefreshOfAnUnchangedCourseWritesOnlyItsListingTime() throws {
        let store = try MetadataStore.withCourse(listing(documents: 40))
        // A tag view, highlights and search rows exist: none of them is rewritten.
        try store.setTags(["exam"], inode: store.inode(course + "/Folien/Datei 0.pdf"))
        let before = try store.walk().map(\.path)
        let cost = try cost(store) {
            let summary = try store.applyCourse(listing(documents: 40), now: now + day)
            #expect(summary.changedNodes.isEmpty && summary.changedNames.isEmpty)
        }
        #expect(cost.changes == 1, "course.listed_at, nothing else")
        #expect(try store.walk().map(\.path) == before)
        #expect(try store.listing(of: store.inode(course))?.listedAt == now + day)
        #expect(try store.listing(of: store.inode(course + "/Folien/Alt"))?.listedAt == now + day)
        #expect(try store.search("Datei 3").map(\.path) == ["\(course)/Folien/Alt/Datei 3.pdf"])
    }

    @Test func unchangedAnnouncementsAndDatesAreNotRewritten() throws {
        let store = try MetadataStore.withCourse(listing(documents: 4))
        let helpers = CourseExtrasTests()
        let extras = helpers.extras(
            [helpers.news("n1", "Willkommen", changed: now - day), helpers.news("n2", "Klausur", changed: now)],
            calendar: "BEGIN:VCALENDAR")
        _ = try store.applyCourseExtras(extras, now: now)
        let highlighted = try store.resolve(path: course).highlightedBelow
        let cost = try cost(store) {
            let summary = try store.applyCourseExtras(extras, now: now + day)
            #expect(summary.changedNodes.isEmpty && summary.added.isEmpty && summary.changed.isEmpty)
        }
        #expect(cost.changes == 0)
        #expect(try store.names(course + "/Ankündigungen") == ["n1 Willkommen.md", "n2 Klausur.md"])
        #expect(try store.resolve(path: course).highlightedBelow == highlighted)
        #expect(try store.courseDates(courseID: info101.id).map(\.id) == ["t1"])
    }

    /// What a first fill runs for each further document: its node, its name and its row, and no lookup of its own
    /// (whether another course has it is one statement for all of them; it was one each); its search row is written
    /// by one statement for the course (it was one each).
    /// A node INSERT (named at once: its folder is new) and a `document` INSERT; the search rows come from one
    /// statement for the course.
    @Test func aFirstFillRunsTwoStatementsADocument() throws {
        var statements: [Int] = []
        for count in [10, 50] {
            let store = try MetadataStore.temporary()
            _ = try store.applyOverview(overview([info101]), now: now)
            statements.append(
                try cost(store) { _ = try store.applyCourse(listing(documents: count), now: now) }
                    .statements)
        }
        #expect(statements[1] - statements[0] == 2 * 40)
    }

    /// The search rows of a course, as the index holds them.
    func searchRows(_ store: MetadataStore) throws -> [[DatabaseValue]] {
        try store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT rowid, \(SearchSQL.metadataColumns) FROM search_document ORDER BY rowid")
                .map { Array($0.databaseValues) }
        }
    }

    /// A first fill's one `INSERT … SELECT` writes the rows the row-by-row update writes, and search finds them.
    @Test func aFirstFillIndexesWhatTheRowByRowUpdateIndexes() throws {
        let store = try MetadataStore.withCourse(listing(documents: 12))
        try store.setTags(["exam"], inode: store.inode(course + "/Folien/Datei 0.pdf"))
        let filled = try searchRows(store)
        #expect(filled.count == 12)
        #expect(try store.search("Datei 3").map(\.path) == ["\(course)/Folien/Alt/Datei 3.pdf"])
        // All rows but one gone: the course is indexed, so the update writes the others one by one.
        try store.pool.write { db in
            try db.execute(sql: "DELETE FROM search_document WHERE rowid <> (SELECT min(rowid) FROM search_document)")
            try SearchSQL.indexMetadata(course: info101.id, db)
        }
        #expect(try searchRows(store) == filled)
    }

    /// A first fill's search rows go into FTS5 in rowid order, so the course's commit writes them as one segment: in
    /// the folders' order (here `Folien`'s documents, then `Alt`'s, their inodes interleaved) FTS5 wrote a segment
    /// whenever a rowid was smaller than the last, and merged them again.
    @Test func aFirstFillWritesItsSearchRowsAsOneSegment() throws {
        let store = try MetadataStore.withCourse(listing(documents: 12))
        let segments = try store.pool.read { db in
            try Int.fetchOne(db, sql: "SELECT count(DISTINCT segid) FROM search_document_idx")
        }
        #expect(segments == 1)
        #expect(try searchRows(store).count == 12)
        #expect(try store.search("Datei 3").map(\.path) == ["\(course)/Folien/Alt/Datei 3.pdf"])
    }

    @Test func anUnchangedRefreshRunsAsManyStatementsForFortyDocumentsAsForFour() throws {
        var statements: [Int] = []
        for count in [4, 40] {
            let store = try MetadataStore.withCourse(listing(documents: count))
            statements.append(
                try cost(store) { _ = try store.applyCourse(listing(documents: count), now: now + day) }
                    .statements)
        }
        #expect(statements[0] == statements[1])
    }

    /// A folder's listing time is its course's while its listings succeed (no folder row written); one that failed
    /// keeps its last success, and one never listed has none.
    @Test func aFolderKeepsItsLastSuccessfulListing() throws {
        let store = try MetadataStore.withCourse(listing(documents: 4))
        var failing = listing(documents: 4)
        failing.folders.append(folder("h", in: root(info101), "Neu"))
        failing.failedFolderIDs = ["g", "h"]
        _ = try store.applyCourse(failing, now: now + day)
        #expect(try store.listing(of: store.inode(course + "/Folien"))?.listedAt == now + day)
        #expect(try store.listing(of: store.inode(course + "/Folien/Alt"))?.listedAt == now)
        #expect(try store.listing(of: store.inode(course + "/Neu"))?.listedAt == nil)
        failing.failedFolderIDs = ["h"]
        _ = try store.applyCourse(failing, now: now + 2 * day)
        #expect(try store.listing(of: store.inode(course + "/Folien/Alt"))?.listedAt == now + 2 * day)
        #expect(try store.listing(of: store.inode(course + "/Neu"))?.listedAt == nil)
    }

    /// Each per-course statement of a refresh reads through an index that narrows it to the course: no table scan,
    /// and no search by item kind alone, which reads that kind's nodes in every course (the search index's rows
    /// did, making a refresh of `huge` read the whole store once per course).
    @Test func everyPerCourseStatementReadsOnlyTheCourse() throws {
        let store = try MetadataStore.withCourse(listing(documents: 5))
        try store.pool.read { db in
            for (name, sql) in RefreshSQL.all {
                // Unbound parameters are NULL: a plan does not depend on them.
                let statement = try db.makeStatement(sql: "EXPLAIN QUERY PLAN " + sql)
                statement.setUncheckedArguments([])
                let plan = try Row.fetchAll(statement)
                let details = try plan.map { try $0.decode(String.self, forColumn: "detail") }
                #expect(!details.isEmpty)
                for detail in details {
                    // Bounded: the recursive CTE's queue (the course's folders), json_each over the course's
                    // semester ids (j) and over the listing's ids.
                    let bounded =
                        detail == "SCAN f" || detail.hasPrefix("SCAN j VIRTUAL")
                        || detail.hasPrefix("SCAN json_each VIRTUAL")
                    let scan = detail.hasPrefix("SCAN ") && !bounded
                    #expect(!scan, "\(name) scans: \(detail)")
                    #expect(!detail.hasSuffix("(item_kind=?)"), "\(name) reads every course: \(detail)")
                }
            }
        }
    }
}
