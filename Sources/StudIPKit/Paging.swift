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
    static func collect(
        limit: Int, what: String, idKey: String,
        fetch: (_ offset: Int) async throws(StudIPError) -> Page
    ) async throws(StudIPError) -> [JSONValue] {
        var collected: [JSONValue] = []
        var seen = Set<String>()
        var offset = 0
        while true {
            let page = try await fetch(offset)
            var advanced = false
            for element in page.elements {
                guard let key = element[idKey]?.id else {
                    collected.append(element)
                    advanced = true
                    continue
                }
                if seen.insert(key).inserted {
                    collected.append(element)
                    advanced = true
                }
            }
            guard advanced || page.elements.isEmpty else {
                throw .malformedResponse(what: what, detail: "the page at offset \(offset) repeats earlier items")
            }
            offset += page.elements.count
            if let total = page.total {
                if offset >= total || page.elements.isEmpty { return collected }
            } else if page.elements.count < limit {
                return collected
            }
        }
    }
}
