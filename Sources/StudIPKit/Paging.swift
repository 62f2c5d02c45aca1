import StudIPModel
import StudIPWire

/// One page of a paginated collection: its elements and the total the server announced, if any.
struct Page: Sendable {
    var elements: [JSONValue]
    var total: Int?
}

/// The paging loop both APIs share. It ends on the announced total (`offset + count >= total`), never on links:
/// legacy REST's `next` points to the last page itself and JSON:API's `last` is wrong (API.md §2.4, §3.4).
/// A server that ignores the limit and sends everything at once ends the loop after one page; one that ignores
/// the offset and repeats itself is reported instead of looping. Elements are told apart by their `idKey` value.
enum Paging {
    /// Every element of the collection, each page's new elements handed to `decode` as the page arrives, before
    /// the next page is asked for: only the page in hand is held as ``JSONValue``, the rest as what `decode` makes
    /// of it (docs/performance.md, "Memory and order of a refresh").
    static func collect<Element>(
        limit: Int, what: String, idKey: String,
        fetch: (_ offset: Int) async throws(StudIPError) -> Page,
        decode: (_ elements: [JSONValue]) throws(StudIPError) -> [Element]
    ) async throws(StudIPError) -> [Element] {
        var collected: [Element] = []
        var seen = Set<String>()
        var offset = 0
        while true {
            let page = try await fetch(offset)
            let fresh = page.elements.filter { element in
                guard let key = element[idKey]?.id else { return true }
                return seen.insert(key).inserted
            }
            guard !fresh.isEmpty || page.elements.isEmpty else {
                throw .malformedResponse(what: what, detail: "the page at offset \(offset) repeats earlier items")
            }
            collected += try decode(fresh)
            offset += page.elements.count
            if let total = page.total {
                if offset >= total || page.elements.isEmpty { return collected }
            } else if page.elements.count < limit {
                return collected
            }
        }
    }

    /// Every element of the collection as JSON, for lists read as a whole (a course's announcements and dates).
    static func collect(
        limit: Int, what: String, idKey: String,
        fetch: (_ offset: Int) async throws(StudIPError) -> Page
    ) async throws(StudIPError) -> [JSONValue] {
        try await collect(limit: limit, what: what, idKey: idKey, fetch: fetch) { elements in elements }
    }
}
