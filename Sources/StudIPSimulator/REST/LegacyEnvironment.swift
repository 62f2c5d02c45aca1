import Foundation

/// One legacy REST request with link building, the pagination envelope and the JSON-string error bodies.
struct LegacyEnvironment: Sendable {
    let request: SimRequest
    let context: SimContext
    /// The route name for the request counters, e.g. `rest GET folder/:folder_id`.
    let route: String

    var university: University { context.university }
    var flavour: Flavour { context.flavour }

    /// An API href: absolute path without host, e.g. `/studip/api.php/course/<id>`.
    func href(_ path: String) -> String { context.basePath + "/api.php/" + path }

    func json(_ value: JSON, status: Int = 200, headers: [(String, String)] = []) -> SimResponse {
        .json(value, status: status, contentType: "application/json;charset=utf-8", headers: headers, route: route)
    }

    /// `$this->halt(code, message)`: the message as a JSON string.
    func error(_ status: Int, _ message: String) -> SimResponse {
        json(.string(message), status: status)
    }

    /// A JSON body with `ETag: "<md5>"` and 304 on a matching `If-None-Match` (`RouteMap::etag`).
    func tagged(_ value: JSON, headers: [(String, String)] = []) -> SimResponse {
        let etag = "\"\(PHP.md5(value.encoded()))\""
        if let match = request.header("if-none-match"),
            match.split(separator: ",").contains(where: {
                $0.trimmingCharacters(in: .whitespaces) == etag
            })
        {
            return SimResponse(status: 304, headers: headers + [("ETag", etag)], route: route)
        }
        return json(value, headers: headers + [("ETag", etag)])
    }

    /// `RouteMap::paginated`: `collection` plus `pagination`, whose `links` appear only when `total > limit`
    /// and whose `next` on the last page points to that page (API.md §2.4).
    func paginated(_ items: [(key: String, value: JSON)], keyed: Bool, defaultLimit: Int = 20) -> SimResponse {
        json(envelope(items, keyed: keyed, defaultLimit: defaultLimit))
    }

    func envelope(_ items: [(key: String, value: JSON)], keyed: Bool, defaultLimit: Int = 20) -> JSON {
        let total = items.count
        let rawOffset = max(0, request.queryValue("offset").flatMap { Int($0) } ?? 0)
        let requested = request.queryValue("limit").flatMap { Int($0) } ?? defaultLimit
        let limit = requested > 0 ? requested : max(defaultLimit, 1)
        let slice = rawOffset < total ? Array(items[rawOffset..<min(total, rawOffset + limit)]) : []
        let collection: JSON =
            keyed && !slice.isEmpty ? .object(slice.map { ($0.key, $0.value) }) : .array(slice.map(\.value))
        let offset = rawOffset - rawOffset % limit
        var pagination: [(String, JSON)] = [("total", .int(total)), ("offset", .int(offset)), ("limit", .int(limit))]
        if total > limit {
            let last = total % limit == 0 ? total - limit : total - total % limit
            pagination.append(
                (
                    "links",
                    [
                        "first": .string(pageLink(offset: 0, limit: limit)),
                        "previous": .string(pageLink(offset: max(0, offset - limit), limit: limit)),
                        "next": .string(pageLink(offset: min(last, offset + limit), limit: limit)),
                        "last": .string(pageLink(offset: last, limit: limit)),
                    ]
                ))
        }
        return ["collection": collection, "pagination": .object(pagination)]
    }

    private func pageLink(offset: Int, limit: Int) -> String {
        let kept = request.query.filter { $0.name != "offset" && $0.name != "limit" }.map { ($0.name, $0.value) }
        return href(request.segments.joined(separator: "/")) + "?"
            + PHP.buildQuery(kept + [("offset", String(offset)), ("limit", String(limit))])
    }
}
