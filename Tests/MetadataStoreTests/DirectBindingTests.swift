import Foundation
import GRDB
import Testing

@testable import MetadataStore

/// Issue 31: the first fill's per-item writes bind their values with SQLite's calls (`Database.run(_:values:)`)
/// instead of GRDB's `StatementArguments`; the rows must be what GRDB's arguments wrote, type for type.
@Suite struct DirectBindingTests {
    /// Every kind of value a refresh writes, and the edge cases of GRDB's bindings: a whole-valued `Double` stays
    /// REAL, a `Bool` is an INTEGER, a string is cut at an embedded NUL as GRDB binds it, an empty blob is a blob.
    let values: [DatabaseValue] = [
        .null, 42.databaseValue, Int64.min.databaseValue, 1.5.databaseValue, 1_794_700_800.0.databaseValue,
        true.databaseValue, false.databaseValue, "Übung 3 — Blatt.pdf".databaseValue, "vor\u{0}nach".databaseValue,
        "".databaseValue, Data([0, 1, 255]).databaseValue, Data().databaseValue,
    ]

    /// The stored type and value of each column, as SQLite itself prints them.
    func stored(_ db: Database) throws -> [[String]] {
        let columns = (0..<values.count).map { "typeof(c\($0)) || ':' || quote(c\($0))" }.joined(separator: ", ")
        return try Row.fetchAll(db, sql: "SELECT \(columns) FROM t ORDER BY rowid").map { row in
            try (0..<values.count).map { try row.decode(String.self, atIndex: $0) }
        }
    }

    @Test func theRowsAreWhatGRDBsArgumentsWrite() throws {
        let store = try MetadataStore.temporary()
        try store.pool.write { db in
            // No column affinity: each value is stored as bound.
            try db.execute(
                sql: "CREATE TEMP TABLE t (\((0..<values.count).map { "c\($0)" }.joined(separator: ", ")))")
            let insert = "INSERT INTO t VALUES (?\(String(repeating: ", ?", count: values.count - 1)))"
            try db.execute(sql: insert, arguments: StatementArguments(values))
            try db.run(insert, values: values)
            let rows = try stored(db)
            #expect(rows.count == 2)
            #expect(rows[1] == rows[0])
            #expect(rows[1][3] == "real:1.5" && rows[1][4] == "real:1794700800.0" && rows[1][5] == "integer:1")
            #expect(rows[1][8] == "text:'vor'" && rows[1][11] == "blob:X''")
        }
    }

    /// A failed write throws SQLite's error and leaves the cached statement usable; a wrong count is refused.
    @Test func failuresThrowAndTheStatementStaysUsable() throws {
        let store = try MetadataStore.temporary()
        try store.pool.write { db in
            try db.execute(sql: "CREATE TEMP TABLE u (id TEXT PRIMARY KEY NOT NULL, n INTEGER)")
            let insert = "INSERT INTO u (id, n) VALUES (?, ?)"
            try db.run(insert, values: ["a".databaseValue, 1.databaseValue])
            #expect {
                try db.run(insert, values: ["a".databaseValue, 2.databaseValue])
            } throws: { ($0 as? DatabaseError)?.resultCode == .SQLITE_CONSTRAINT }
            #expect {
                try db.run(insert, values: ["b".databaseValue])
            } throws: { ($0 as? DatabaseError)?.resultCode == .SQLITE_MISUSE }
            try db.run(insert, values: ["b".databaseValue, 3.databaseValue])
            #expect(try Int.fetchAll(db, sql: "SELECT n FROM u ORDER BY id") == [1, 3])
        }
    }
}
