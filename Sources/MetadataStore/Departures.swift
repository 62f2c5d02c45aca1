import Foundation
import GRDB

/// A folder or document Stud.IP removed, and when the refresh that noticed it ran.
public struct DepartedItem: Sendable, Hashable {
    public var item: ItemKind
    public var studipID: String
    public var since: Date
}

/// What outlives an item Stud.IP removed, and for how long: the `departed` table (Schema v2). The daemon collects
/// what is past the grace period (its cached bytes, the user's tags, rating, flag and pin) and any cached blob no
/// known document owns.
extension MetadataStore {
    /// Items removed before `date` that have not come back, oldest first.
    public func departed(before date: Date) throws(StoreError) -> [DepartedItem] {
        try read("listing departed items") { db in
            try db.rows(
                "SELECT item_kind, studip_id, since FROM departed WHERE since < ? ORDER BY since",
                [date.timeIntervalSince1970]
            ).compactMap { row in
                guard let item = ItemKind(rawValue: try row.decode(String.self, forColumn: "item_kind")) else {
                    return nil
                }
                return DepartedItem(
                    item: item, studipID: try row.decode(forColumn: "studip_id"), since: try row.date("since"))
            }
        }
    }

    /// Forgets departed items for good: the user's state and tags for them, a document's extracted text, and the
    /// departures themselves. An item that came back in the meantime keeps everything.
    public func forget(_ items: [DepartedItem]) throws(StoreError) {
        try write("forgetting \(items.count) departed items") { db in
            for departed in items {
                let key: StatementArguments = [departed.item.rawValue, departed.studipID]
                guard try db.row("SELECT 1 FROM node WHERE item_kind = ? AND studip_id = ? LIMIT 1", key) == nil
                else { continue }
                try db.run("DELETE FROM user_state WHERE item_kind = ? AND studip_id = ?", key)
                try db.run("DELETE FROM user_tag WHERE item_kind = ? AND studip_id = ?", key)
                try db.run("DELETE FROM departed WHERE item_kind = ? AND studip_id = ?", key)
                if departed.item == .document {
                    try db.run("DELETE FROM search_extraction WHERE document_id = ?", [departed.studipID])
                }
            }
        }
    }

    /// Every document id in the tree or departed and not yet forgotten: a cached blob of any other document belongs
    /// to nothing (left behind by a crash between a refresh and the cache's cleanup, or a store deleted by hand).
    public func knownDocumentIDs() throws(StoreError) -> Set<String> {
        try read("listing the known documents") { db in
            Set(
                try String.fetchAll(
                    db,
                    sql: """
                        SELECT studip_id FROM node WHERE item_kind = 'document'
                        UNION SELECT studip_id FROM departed WHERE item_kind = 'document'
                        """))
        }
    }
}
