import GRDB

/// Keeps `node.highlighted_below` (the `user.campusfs.new` count) right, so that reading it is one row.
///
/// Rather than adjusting counts by deltas along every path (easy to get wrong with moves and cascades), every
/// write that can change a highlight recounts the whole course it touched — a few hundred rows — and then the
/// top level from the course directories.
enum HighlightCounts {
    static func recount(course courseID: String, _ db: Database) throws {
        var parents: [Int64: Int64] = [:]
        var counts: [Int64: Int] = [:]
        var stored: [Int64: Int] = [:]
        var lit: [Int64] = []
        // By index, in `courseHighlights`' order, read in place: a name lookup per column was most of a recount,
        // and GRDB's rows copied every value of a course's few hundred.
        try db.step(QuerySQL.courseHighlights, [courseID]) { row in
            let inode = row.int64(0)
            parents[inode] = row.isNull(1) ? nil : row.int64(1)
            let item = row.string(2)
            if item == ItemKind.document.rawValue || item == ItemKind.announcement.rawValue {
                if row.int64(4) != 0 { lit.append(inode) }
            } else {
                counts[inode] = 0
                stored[inode] = Int(row.int64(3))
            }
            return true
        }
        for document in lit {
            var current = parents[document]
            var steps = 0
            while let directory = current, let count = counts[directory], steps <= counts.count {
                counts[directory] = count + 1
                current = parents[directory]
                steps += 1
            }
        }
        for (inode, count) in counts where stored[inode] != count { try set(inode, count, db) }
        try recountTopLevel(db)
    }

    /// The root and the top-level folders, each with what it holds and the sum of its course directories.
    static let topLevelSQL = """
        SELECT t.inode, t.highlighted_below, (
            SELECT COALESCE(SUM(c.highlighted_below), 0) FROM node c
            WHERE c.parent = t.inode AND c.item_kind = 'course')
        FROM node t WHERE t.parent = ?1 OR t.inode = ?1
        """

    /// Semester folders and `Ongoing` sum their course directories (links are not "below"); the root sums those.
    /// Reads the sums first and writes only those that changed: run after every course, an UPDATE each would
    /// rewrite the same rows hundreds of times a refresh.
    static func recountTopLevel(_ db: Database) throws {
        var total = 0
        var stored: Int?
        for row in try db.rows(topLevelSQL, [Node.rootInode]) {
            let inode: Int64 = try row.decode(atIndex: 0)
            let count: Int = try row.decode(atIndex: 1)
            if inode == Node.rootInode {
                stored = count
                continue
            }
            let sum: Int = try row.decode(atIndex: 2)
            total += sum
            if count != sum { try set(inode, sum, db) }
        }
        if stored != total { try set(Node.rootInode, total, db) }
    }

    private static func set(_ inode: Int64, _ count: Int, _ db: Database) throws {
        try db.run("UPDATE node SET highlighted_below = ? WHERE inode = ?", [count, inode])
    }
}
