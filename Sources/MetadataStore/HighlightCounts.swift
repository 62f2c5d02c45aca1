import GRDB

/// Keeps `node.highlighted_below` (the `user.campusfs.new` count) right, so that reading it is one row.
///
/// Rather than adjusting counts by deltas along every path (easy to get wrong with moves and cascades), every
/// write that can change a highlight recounts the whole course it touched — a few hundred rows — and then the
/// top level from the course directories.
enum HighlightCounts {
    static func recount(course courseID: String, _ db: Database) throws {
        let rows = try db.rows(QuerySQL.courseHighlights, [courseID])
        var parents: [Int64: Int64] = [:]
        var counts: [Int64: Int] = [:]
        var stored: [Int64: Int] = [:]
        var lit: [Int64] = []
        for row in rows {
            let inode = try row.decode(Int64.self, forColumn: "inode")
            parents[inode] = try row.decode(Int64?.self, forColumn: "parent")
            let item = try row.decode(String.self, forColumn: "item_kind")
            if item == ItemKind.document.rawValue || item == ItemKind.announcement.rawValue {
                if try row.bool("lit") { lit.append(inode) }
            } else {
                counts[inode] = 0
                stored[inode] = try row.decode(Int.self, forColumn: "highlighted_below")
            }
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
        for (inode, count) in counts where stored[inode] != count {
            try db.run("UPDATE node SET highlighted_below = ? WHERE inode = ?", [count, inode])
        }
        try recountTopLevel(db)
    }

    /// Semester folders and `Ongoing` sum their course directories (links are not "below"); the root sums those.
    static func recountTopLevel(_ db: Database) throws {
        let topLevel = try Int64.fetchAll(
            db.cachedStatement(sql: "SELECT inode FROM node WHERE parent = ?"), arguments: [Node.rootInode])
        for inode in topLevel {
            try db.run(
                """
                UPDATE node SET highlighted_below = (
                    SELECT COALESCE(SUM(highlighted_below), 0) FROM node WHERE parent = ?1 AND item_kind = 'course')
                WHERE inode = ?1
                """,
                [inode])
        }
        try db.run(
            """
            UPDATE node SET highlighted_below = (
                SELECT COALESCE(SUM(highlighted_below), 0) FROM node WHERE parent = ?1)
            WHERE inode = ?1
            """,
            [Node.rootInode])
    }
}
