/// Which query parameters a route accepts (`QueryChecker`): unknown families and undeclared paging or
/// filters are a 400 (API.md §3.1).
struct QueryRules: Sendable {
    var paginated = false
    var filters: Set<String> = []
    /// Controllers that validate their parameters themselves (news, schedule) answer a forbidden filter or page
    /// parameter with an error that has only a title.
    var validatesItself = false

    static let single = QueryRules()
    static let list = QueryRules(paginated: true)
    static let news = QueryRules(paginated: true, validatesItself: true)
    static let schedule = QueryRules(filters: ["timestamp"], validatesItself: true)
}

/// `page[offset]`/`page[limit]` as Stud.IP's `JsonApiController` applies them (API.md §3.4).
struct Page: Sendable {
    var offset: Int
    var limit: Int

    static let defaultLimit = 30

    init(query: [(name: String, value: String)]) {
        offset = max(0, query.last { $0.name == "page[offset]" }.flatMap { Int($0.value) } ?? 0)
        let limit = query.last { $0.name == "page[limit]" }.flatMap { Int($0.value) } ?? Self.defaultLimit
        self.limit = limit > 0 ? limit : Self.defaultLimit
    }

    func slice<T>(_ items: [T]) -> [T] {
        guard offset < items.count else { return [] }
        return Array(items[offset..<min(items.count, offset + limit)])
    }
}

extension JSONAPIEnvironment {
    /// The first query problem of this request for a route with `rules`, as the 400 response.
    func queryViolation(_ rules: QueryRules) -> SimResponse? {
        for (name, _) in request.query {
            let family = name.split(separator: "[", maxSplits: 1).first.map(String.init) ?? name
            let key = Self.bracketKey(name)
            switch family {
            case "include", "fields":
                continue
            case "page":
                if !rules.paginated, rules.validatesItself {
                    return titleOnlyError("Page parameter should contain only allowed values.", parameter: "page")
                }
                if !rules.paginated {
                    return error(
                        400, title: "Page parameter \(key ?? name) is not allowed.", parameter: "page",
                        withStatus: false)
                }
            case "filter":
                if !rules.filters.contains(key ?? ""), rules.validatesItself {
                    return titleOnlyError("Filter should contain only allowed values.", parameter: "filter")
                }
                if !rules.filters.contains(key ?? "") {
                    return error(
                        400, title: "Filter parameter \(key ?? name) is not allowed.", parameter: "filter",
                        withStatus: false)
                }
            case "sort":
                return error(400, title: "Sort parameter \(name) is not allowed.", parameter: "sort", withStatus: false)
            default:
                return error(400, title: "Unrecognized Parameter.", parameter: name, withStatus: false)
            }
        }
        return nil
    }

    private func titleOnlyError(_ title: String, parameter: String) -> SimResponse {
        .json(
            ["errors": [["title": .string(title), "source": ["parameter": .string(parameter)]]]], status: 400,
            contentType: layout.errorContentType, route: route)
    }

    /// A paginated collection document: `meta.page`, `links` with the wrong-`last` bug, then `data`.
    func collection(_ items: [JSON], total: Int? = nil, page: Page, included: [JSON] = []) -> SimResponse {
        let total = total ?? items.count
        let paged = page.slice(items)
        var links: [(String, JSON)] = [
            ("first", .string(pageLink(offset: 0, limit: page.limit))),
            ("last", .string(pageLink(offset: Self.lastOffset(total: total, limit: page.limit), limit: page.limit))),
        ]
        if page.offset - page.limit >= 0 {
            links.append(("prev", .string(pageLink(offset: page.offset - page.limit, limit: page.limit))))
        }
        if total > page.offset + page.limit {
            links.append(("next", .string(pageLink(offset: page.offset + page.limit, limit: page.limit))))
        }
        var document: [(String, JSON)] = [
            ("meta", ["page": ["offset": .int(page.offset), "limit": .int(page.limit), "total": .int(total)]]),
            ("links", .object(links)),
            ("data", .array(paged)),
        ]
        if !included.isEmpty { document.append(("included", .array(included))) }
        return self.document(.object(document))
    }

    /// `Paginator::getLastOffset` as shipped: `max(0, floor(total/limit - 1) * limit)` — wrong unless `total`
    /// is a multiple of `limit` (total 31, limit 30 → 0).
    static func lastOffset(total: Int, limit: Int) -> Int {
        let pages = (Double(total) / Double(limit) - 1).rounded(.down)
        return max(0, Int(pages) * limit)
    }

    /// The request's query with `page[offset]` and `page[limit]` set the way PHP's arrays keep order: the `page`
    /// group where the request had it (else last), its keys in the request's order, missing ones appended.
    private func pageLink(offset: Int, limit: Int) -> String {
        let values = ["page[offset]": String(offset), "page[limit]": String(limit)]
        let pageKeys = request.query.map(\.name).filter { values[$0] != nil }
        let order = pageKeys.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        let group = (order + ["page[offset]", "page[limit]"].filter { !order.contains($0) }).map {
            ($0, values[$0] ?? "")
        }
        var pairs: [(String, String)] = []
        for (name, value) in request.query where !name.hasPrefix("page[") {
            pairs.append((name, value))
        }
        let position =
            request.query.firstIndex { $0.name.hasPrefix("page[") }.map { index in
                request.query[..<index].filter { !$0.name.hasPrefix("page[") }.count
            } ?? pairs.count
        pairs.insert(contentsOf: group, at: position)
        return link(request.segments.joined(separator: "/")) + "?" + PHP.buildQuery(pairs)
    }

    private static func bracketKey(_ name: String) -> String? {
        guard let open = name.firstIndex(of: "["), let close = name.lastIndex(of: "]"), open < close else { return nil }
        return String(name[name.index(after: open)..<close])
    }
}
