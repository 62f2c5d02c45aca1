import Foundation
import GRDB

/// A row that does not satisfy what the schema promises (a file edited by hand, or damaged).
struct CorruptRow: Error, CustomStringConvertible {
    var detail: String
    var description: String { "unexpected data in the database: \(detail)" }
}

extension Database {
    /// Runs a statement from the connection's statement cache: refreshes run the same few statements thousands of
    /// times.
    func run(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws {
        try cachedStatement(sql: sql).execute(arguments: arguments)
    }

    func rows(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws -> [Row] {
        try Row.fetchAll(cachedStatement(sql: sql), arguments: arguments)
    }

    func row(_ sql: String, _ arguments: StatementArguments = StatementArguments()) throws -> Row? {
        try Row.fetchOne(cachedStatement(sql: sql), arguments: arguments)
    }
}

extension Row {
    func date(_ column: String) throws -> Date {
        Date(timeIntervalSince1970: try decode(Double.self, forColumn: column))
    }

    func date(atIndex index: Int) throws -> Date {
        Date(timeIntervalSince1970: try decode(Double.self, atIndex: index))
    }

    func optionalDate(_ column: String) throws -> Date? {
        try decode(Double?.self, forColumn: column).map(Date.init(timeIntervalSince1970:))
    }

    func bool(_ column: String) throws -> Bool {
        try decode(Int64.self, forColumn: column) != 0
    }

    func bool(atIndex index: Int) throws -> Bool {
        try decode(Int64.self, atIndex: index) != 0
    }
}

extension Node {
    /// The columns `init(row:)` reads, qualified by the table alias `n`. Every query that builds nodes selects
    /// them first and in this order: `init(row:)` reads by index, because looking columns up by name was a tenth
    /// of the daemon's time in a cold `find`.
    static let columns = columns("n")

    /// ``columns`` of the node aliased `n`, a row of ``columnCount`` values.
    static func columns(_ n: String) -> String {
        "\(n).inode, \(n).parent, \(n).name, \(n).kind, \(n).item_kind, \(n).studip_id, \(n).course_id, "
            + "CASE WHEN \(n).size = 0 AND \(n).item_kind = 'document' THEN "
            + "COALESCE((SELECT hosted.host_size FROM document hosted WHERE hosted.inode = \(n).inode), 0) "
            + "ELSE \(n).size END, \(n).mtime, \(n).symlink_target, \(n).highlighted_below, "
            + "COALESCE((SELECT locked.downloadable = 0 FROM document locked WHERE locked.inode = \(n).inode), 0)"
    }

    static let columnCount = 12

    init(row: Row) throws {
        try self.init(row: row, at: 0)
    }

    /// Reads ``columns`` from `start` on.
    init(row: Row, at start: Int) throws {
        let inode = try row.decode(Int64.self, atIndex: start)
        let kind = try row.decode(String.self, atIndex: start + 3)
        let item = try row.decode(String.self, atIndex: start + 4)
        guard let nodeKind = NodeKind(rawValue: kind), let itemKind = ItemKind(rawValue: item) else {
            throw CorruptRow(detail: "node \(inode) has kind \(kind)/\(item)")
        }
        self.init(
            inode: inode,
            parentInode: try row.decode(atIndex: start + 1),
            name: try row.decode(atIndex: start + 2),
            kind: nodeKind,
            item: itemKind,
            studipID: try row.decode(atIndex: start + 5),
            courseID: try row.decode(atIndex: start + 6),
            size: try row.decode(atIndex: start + 7),
            mtime: try row.date(atIndex: start + 8),
            symlinkTarget: try row.decode(atIndex: start + 9),
            highlightedBelow: try row.decode(atIndex: start + 10),
            isLocked: try row.decode(Int64.self, atIndex: start + 11) != 0)
    }

    static func fetch(_ inode: Int64, _ db: Database) throws -> Node? {
        try db.row(QuerySQL.nodeByInode, [inode]).map(Node.init(row:))
    }
}

/// Paths from the mount point, as the CLI prints them and `resolve(path:)` reads them.
enum Paths {
    /// The node's path, e.g. `WS 2026-27/INF-101 Foo/Folien`; empty for the root; nil when the inode is gone.
    static func path(of inode: Int64, _ db: Database) throws -> String? {
        let names = try String.fetchAll(db.cachedStatement(sql: QuerySQL.path), arguments: [inode])
        // Only the root has no parent: no names means the root or a missing inode.
        if names.isEmpty { return inode == Node.rootInode ? "" : nil }
        return names.joined(separator: "/")
    }
}

/// Parent and name of nodes, to build many paths without a query each.
struct PathMap {
    private var entries: [Int64: (parent: Int64, name: String)] = [:]
    private var known: [Int64: String] = [:]

    /// `known` paths end the walk up (e.g. the course directory's path).
    init(known: [Int64: String]) {
        self.known = known
    }

    mutating func add(_ inode: Int64, parent: Int64, name: String) {
        entries[inode] = (parent, name)
    }

    mutating func addKnown(_ inode: Int64, path: String) {
        known[inode] = path
    }

    func path(of inode: Int64) -> String {
        var names: [String] = []
        var current = inode
        while known[current] == nil, let entry = entries[current], names.count <= entries.count {
            names.append(entry.name)
            current = entry.parent
        }
        let prefix = known[current].map { [$0] } ?? []
        return (prefix + names.reversed()).filter { !$0.isEmpty }.joined(separator: "/")
    }
}
