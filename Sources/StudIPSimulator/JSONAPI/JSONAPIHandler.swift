import Foundation

/// Stud.IP's JSON:API (`<base>/jsonapi.php/v1/…`) for the routes a mirror needs (API.md §3).
///
/// Request handling follows Stud.IP's middleware order: trailing-slash redirect, authentication (401),
/// then per controller the `Accept` check (406) and the query-parameter check (400). The content and
/// upload routes are `NonJsonApiController`s: no `Accept` or query checks, plain-text errors.
public struct JSONAPIHandler: APIHandler {
    public init() {}

    public func handle(_ request: SimRequest, context: SimContext) async -> SimResponse {
        let path = request.segments.joined(separator: "/")
        if request.hasTrailingSlash {
            var location = context.basePath + "/jsonapi.php/v1/" + path
            if !request.query.isEmpty {
                location += "?" + PHP.buildQuery(request.query.map { ($0.name, $0.value) })
            }
            return SimResponse(status: 301, headers: [("Location", location)], route: "jsonapi redirect")
        }
        let layout = Layout(flavour: context.flavour)
        guard let (route, parameters) = Self.match(request) else {
            let allowed = Self.routes.filter { RoutePattern.bind($0.pattern, request.segments) != nil }.map(\.method)
            let env = JSONAPIEnvironment(request: request, context: context, layout: layout, route: "jsonapi unknown")
            if !allowed.isEmpty {
                return env.error(
                    405, title: "Method not allowed. Must be one of: \(allowed.joined(separator: ", "))"
                )
                .adding(header: ("Allow", allowed.joined(separator: ", ")))
            }
            if !layout.unknownRouteIsJSON { return Self.slimNotFoundPage(request, context: context) }
            return env.error(
                404, title: "Not found.",
                detail: "The requested resource could not be found. Please verify the URI and try again.")
        }
        let env = JSONAPIEnvironment(
            request: request, context: context, layout: layout, route: "jsonapi \(route.method) \(route.name)")
        if request.user == nil, !route.isPublic {
            return SimResponse(
                status: 401,
                headers: [
                    ("WWW-Authenticate", "Basic realm=\"Stud.IP JSON-API\""),
                    ("Content-Type", "text/html; charset=UTF-8"),
                ],
                route: env.route)
        }
        if let rules = route.rules {
            if !Self.accepts(request.header("accept"), layout: layout) {
                return env.error(406, title: "Not Acceptable Error")
            }
            if let violation = env.queryViolation(rules) { return violation }
        }
        return route.run(env, parameters, request.user)
    }

    /// Slim 3's HTML 404 page of 5.0.7 (fixtures-5.0.7-more `jsonapi_course_event_self`): its home-page link is
    /// built from the request URI and so echoes Basic-auth credentials as `user:password@`.
    static func slimNotFoundPage(_ request: SimRequest, context: SimContext) -> SimResponse {
        var userInfo = ""
        if let authorization = request.header("authorization"), authorization.lowercased().hasPrefix("basic "),
            let decoded = Data(base64Encoded: String(authorization.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
            let credentials = String(data: decoded, encoding: .utf8)
        {
            userInfo = credentials + "@"
        }
        let home = "http://\(userInfo)\(request.header("host") ?? "localhost")\(context.basePath)/jsonapi.php/"
        let page = """
            <html>
                <head>
                    <title>Page Not Found</title>
                    <style>
                        body{
                            margin:0;
                            padding:30px;
                            font:12px/1.5 Helvetica,Arial,Verdana,sans-serif;
                        }
                        h1{
                            margin:0;
                            font-size:48px;
                            font-weight:normal;
                            line-height:48px;
                        }
                        strong{
                            display:inline-block;
                            width:65px;
                        }
                    </style>
                </head>
                <body>
                    <h1>Page Not Found</h1>
                    <p>
                        The page you are looking for could not be found. Check the address bar
                        to ensure your URL is spelled correctly. If all else fails, you can
                        visit our home page at the link below.
                    </p>
                    <a href='\(home)'>Visit the Home Page</a>
                </body>
            </html>
            """
        return .text(page, status: 404, contentType: "text/html;charset=UTF-8", route: "jsonapi unknown")
    }

    /// `checkAcceptHeader`: some media range of the first `Accept` line must match `application/vnd.api+json`.
    static func accepts(_ header: String?, layout: Layout) -> Bool {
        guard let header, !header.trimmingCharacters(in: .whitespaces).isEmpty else {
            return layout.missingAcceptIsAcceptable
        }
        return header.split(separator: ",").contains { range in
            let type = range.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            return type == "*/*" || type == "application/*" || type == "application/vnd.api+json"
        }
    }

    // MARK: - Routing

    /// A route: method, pattern (`*` = one id), query rules (nil for non-JSON:API controllers) and its handler.
    struct Route: Sendable {
        let method: String
        let pattern: [String]
        let rules: QueryRules?
        let isPublic: Bool
        let run: @Sendable (JSONAPIEnvironment, [String], User?) -> SimResponse

        /// The pattern with `{id}` placeholders, e.g. `folders/{id}/file-refs`.
        var name: String { pattern.map { $0 == "*" ? "{id}" : $0 }.joined(separator: "/") }

        init(
            _ method: String, _ path: String, _ rules: QueryRules?, isPublic: Bool = false,
            _ run: @escaping @Sendable (JSONAPIEnvironment, [String], User?) -> SimResponse
        ) {
            self.method = method
            self.pattern = path.split(separator: "/").map(String.init)
            self.rules = rules
            self.isPublic = isPublic
            self.run = run
        }

        /// For routes that require a user (the dispatcher answers 401 before calling them).
        init(
            _ method: String, _ path: String, _ rules: QueryRules?,
            user run: @escaping @Sendable (JSONAPIEnvironment, [String], User) -> SimResponse
        ) {
            self.init(method, path, rules, isPublic: false) { env, parameters, user in
                guard let user else { return env.error(401, title: "Unauthorized") }
                return run(env, parameters, user)
            }
        }
    }

    static let routes: [Route] = [
        Route("GET", "discovery", .single, isPublic: true) { env, _, _ in env.discovery() },
        Route("GET", "semesters", .list, isPublic: true) { env, _, _ in env.semesters() },
        Route("GET", "semesters/*", .single, isPublic: true) { env, p, _ in env.semester(id: p[0]) },
        Route("GET", "users/me", .single, user: { env, _, user in env.document(["data": env.user(user)]) }),
        Route("GET", "users/*", .single, user: { env, p, _ in env.userShow(id: p[0]) }),
        Route(
            "GET", "users/*/courses", QueryRules(paginated: true, filters: ["semester"]),
            user: { env, p, user in
                env.userCourses(id: p[0], viewer: user)
            }),
        Route(
            "GET", "users/*/course-memberships", .list,
            user: { env, p, user in
                env.userMemberships(id: p[0], viewer: user)
            }),
        Route("GET", "users/*/folders", .list, user: { env, p, user in env.userFolders(id: p[0], viewer: user) }),
        Route("GET", "courses/*", .single, user: { env, p, user in env.courseShow(id: p[0], viewer: user) }),
        Route("GET", "courses/*/folders", .list, user: { env, p, user in env.courseFolders(id: p[0], viewer: user) }),
        Route(
            "GET", "courses/*/file-refs", .list,
            user: { env, p, user in
                env.courseFileRefs(id: p[0], viewer: user)
            }),
        Route("GET", "folders/*", .single, user: { env, p, user in env.folderShow(id: p[0], viewer: user) }),
        Route("GET", "folders/*/folders", .list, user: { env, p, user in env.subfolders(id: p[0], viewer: user) }),
        Route(
            "GET", "folders/*/file-refs", .list, user: { env, p, user in env.folderFileRefs(id: p[0], viewer: user) }),
        Route("GET", "file-refs/*", .single, user: { env, p, user in env.fileRefShow(id: p[0], viewer: user) }),
        Route("GET", "files/*", .single, user: { env, p, _ in env.fileShow(id: p[0]) }),
        Route("GET", "terms-of-use", .list, user: { env, _, _ in env.termsList() }),
        Route("GET", "terms-of-use/*", .single, user: { env, p, _ in env.termsShow(id: p[0]) }),
        Route("GET", "file-refs/*/content", nil, user: { env, p, user in env.content(id: p[0], viewer: user) }),
        Route("HEAD", "file-refs/*/content", nil, user: { env, p, user in env.content(id: p[0], viewer: user) }),
        Route("POST", "folders/*/file-refs", nil, user: { env, p, user in env.upload(into: p[0], user: user) }),
        Route("POST", "folders/*/folders", .single, user: { env, p, user in env.createFolder(in: p[0], user: user) }),
        Route(
            "POST", "courses/*/folders", .single,
            user: { env, p, user in env.createFolder(in: nil, course: p[0], user: user) }),
        Route("POST", "file-refs/*/content", nil, user: { env, p, user in env.newVersion(of: p[0], user: user) }),
        Route("PATCH", "file-refs/*", .single, user: { env, p, user in env.updateFileRef(id: p[0], user: user) }),
        Route(
            "GET", "file-refs/*/relationships/terms-of-use", .single,
            user: { env, p, user in env.termsOfUseRelationship(of: p[0], viewer: user) }),
        Route("GET", "courses/*/news", .news, user: { env, p, user in env.courseNews(id: p[0], viewer: user) }),
        Route("POST", "courses/*/news", .single, user: { env, p, user in env.createNews(in: p[0], user: user) }),
        Route("GET", "news", .news, user: { env, _, user in env.userNews(id: user.id) }),
        Route("GET", "news/*", .single, user: { env, p, _ in env.newsShow(id: p[0]) }),
        Route("GET", "news/*/comments", .list, user: { env, p, _ in env.newsComments(id: p[0]) }),
        Route("GET", "studip/news", .news, user: { env, _, _ in env.globalNews() }),
        Route("GET", "users/*/news", .news, user: { env, p, _ in env.userNews(id: p[0]) }),
        Route("GET", "courses/*/events", .list, user: { env, p, user in env.courseEvents(id: p[0], viewer: user) }),
        Route(
            "GET", "users/*/events", QueryRules(paginated: true, filters: ["timestamp"]),
            user: { env, p, user in env.userEvents(id: p[0], viewer: user) }),
        Route("GET", "users/*/events.ics", nil, user: { env, p, user in env.userCalendar(id: p[0], viewer: user) }),
        Route("GET", "users/*/schedule", .schedule, user: { env, p, user in env.userSchedule(id: p[0], viewer: user) }),
        Route("GET", "seminar-cycle-dates/*", .single, user: { env, p, _ in env.regularTimeShow(id: p[0]) }),
        Route("DELETE", "file-refs/*", .single, user: { env, p, user in env.deleteFileRef(id: p[0], user: user) }),
        Route("DELETE", "folders/*", .single, user: { env, p, user in env.deleteFolder(id: p[0], user: user) }),
    ]

    /// The most specific route for this method and path (literal segments beat placeholders).
    static func match(_ request: SimRequest) -> (Route, [String])? {
        let candidates = routes.filter { $0.method == request.method }.compactMap { route in
            RoutePattern.bind(route.pattern, request.segments).map { (route, $0) }
        }
        return candidates.min { lhs, rhs in lhs.1.count < rhs.1.count }
    }
}

extension SimResponse {
    func adding(header: (String, String)) -> SimResponse {
        var copy = self
        copy.headers.append(header)
        return copy
    }
}
