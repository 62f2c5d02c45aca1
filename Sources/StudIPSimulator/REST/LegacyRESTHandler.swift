import Foundation

/// Stud.IP's legacy REST API (`<base>/api.php/…`, 3.0–5.5) for the routes a mirror needs (API.md §2).
///
/// Unknown routes answer 404 and wrong methods 405 before authentication; then a missing consumer is a
/// plain-text 401 with the installation's realm unless the route is `@allow_nobody`.
public struct LegacyRESTHandler: APIHandler {
    public init() {}

    public func handle(_ request: SimRequest, context: SimContext) async -> SimResponse {
        var segments = request.segments
        if let last = segments.last, last.hasSuffix(".json") { segments[segments.count - 1] = String(last.dropLast(5)) }
        let matching = Self.routes.compactMap { route in RoutePattern.bind(route.pattern, segments).map { (route, $0) }
        }
        guard !matching.isEmpty else {
            return .text("HTTP/1.1 404 Not Found", status: 404, route: "rest unknown")
        }
        guard
            let (route, parameters) = matching.filter({ $0.0.method == request.method }).min(by: {
                $0.1.count < $1.1.count
            })
        else {
            let allowed = Set(matching.map(\.0.method)).sorted().joined(separator: ", ")
            return .text(
                "HTTP/1.1 405 Method Not Allowed", status: 405, headers: [("Allow", allowed)],
                route: "rest \(request.method) \(matching[0].0.name)")
        }
        let env = LegacyEnvironment(request: request, context: context, route: "rest \(route.method) \(route.name)")
        guard let user = request.user else {
            guard route.allowNobody else {
                return .text(
                    "HTTP/1.1 401 Unauthorized (no consumer)", status: 401,
                    headers: [("WWW-Authenticate", "Basic realm=\"\(context.university.installationID)\"")],
                    route: env.route)
            }
            return route.run(env, parameters, nil)
        }
        return route.run(env, parameters, user)
    }

    /// A route: method, pattern (`*` = one `:placeholder`), whether it is `@allow_nobody`, and its handler.
    struct Route: Sendable {
        let method: String
        let pattern: [String]
        let placeholders: [String]
        let allowNobody: Bool
        let run: @Sendable (LegacyEnvironment, [String], User?) -> SimResponse

        /// The route template as Stud.IP names it, e.g. `folder/:folder_id/files`.
        var name: String {
            var names = placeholders.makeIterator()
            return pattern.map { $0 == "*" ? ":" + (names.next() ?? "id") : $0 }.joined(separator: "/")
        }

        init(
            _ method: String, _ template: String, allowNobody: Bool = false,
            _ run: @escaping @Sendable (LegacyEnvironment, [String], User?) -> SimResponse
        ) {
            self.method = method
            let parts = template.split(separator: "/").map(String.init)
            pattern = parts.map { $0.hasPrefix(":") ? "*" : $0 }
            placeholders = parts.filter { $0.hasPrefix(":") }.map { String($0.dropFirst()) }
            self.allowNobody = allowNobody
            self.run = run
        }

        init(
            _ method: String, _ template: String,
            user run: @escaping @Sendable (LegacyEnvironment, [String], User) -> SimResponse
        ) {
            self.init(method, template, allowNobody: false) { env, parameters, user in
                guard let user else { return env.error(401, "") }
                return run(env, parameters, user)
            }
        }
    }

    static let routes: [Route] = [
        Route("GET", "discovery", user: { env, _, _ in env.discovery() }),
        Route("GET", "user", user: { env, _, user in env.userShow(user) }),
        Route("GET", "user/:user_id", user: { env, p, _ in env.userShow(id: p[0]) }),
        Route("GET", "semesters", allowNobody: true) { env, _, _ in env.semesters() },
        Route("GET", "semester/:semester_id", user: { env, p, _ in env.semester(id: p[0]) }),
        Route("GET", "user/:user_id/courses", user: { env, p, user in env.userCourses(id: p[0], viewer: user) }),
        Route("GET", "user/:user_id/top_folder", user: { env, p, user in env.userTopFolder(id: p[0], viewer: user) }),
        Route("GET", "course/:course_id", user: { env, p, user in env.courseShow(id: p[0], viewer: user) }),
        Route(
            "GET", "course/:course_id/top_folder", user: { env, p, user in env.courseTopFolder(id: p[0], viewer: user) }
        ),
        Route("GET", "folder/:folder_id", user: { env, p, user in env.folderShow(id: p[0], viewer: user) }),
        Route("GET", "folder/:folder_id/subfolders", user: { env, p, user in env.subfolders(id: p[0], viewer: user) }),
        Route("GET", "folder/:folder_id/files", user: { env, p, user in env.folderFiles(id: p[0], viewer: user) }),
        Route(
            "GET", "folder/:folder_id/permissions",
            user: { env, p, user in
                env.folderPermissions(id: p[0], viewer: user)
            }),
        Route("GET", "file/:file_ref_id", user: { env, p, user in env.fileShow(id: p[0], viewer: user) }),
        Route("GET", "file/:file_ref_id/download", user: { env, p, user in env.download(id: p[0], viewer: user) }),
        Route("POST", "file/:folder_id", user: { env, p, user in env.upload(into: p[0], user: user) }),
        Route("DELETE", "file/:file_ref_id", user: { env, p, user in env.deleteFile(id: p[0], user: user) }),
        Route("PUT", "file/:file_ref_id", user: { env, p, user in env.editFile(id: p[0], user: user) }),
        Route("POST", "file/:file_ref_id/update", user: { env, p, user in env.updateFile(id: p[0], user: user) }),
        Route(
            "POST", "file/:file_ref_id/move/:destination_folder_id",
            user: { env, p, user in env.moveFile(id: p[0], to: p[1], user: user) }),
        Route(
            "POST", "folder/:folder_id/new_folder", user: { env, p, user in env.createFolder(in: p[0], user: user) }),
        Route("DELETE", "folder/:folder_id", user: { env, p, user in env.deleteFolder(id: p[0], user: user) }),
        Route("GET", "studip/file_system/folder_types", user: { env, _, _ in env.folderTypes() }),
        Route("GET", "course/:course_id/news", user: { env, p, user in env.courseNews(id: p[0], viewer: user) }),
        Route("GET", "news/:news_id", user: { env, p, _ in env.newsShow(id: p[0]) }),
        Route("GET", "news/:news_id/comments", user: { env, p, _ in env.newsComments(id: p[0]) }),
        Route("GET", "studip/news", user: { env, _, _ in env.globalNews() }),
        Route("GET", "user/:user_id/news", user: { env, p, _ in env.profileNews(id: p[0]) }),
        Route("GET", "course/:course_id/events", user: { env, p, user in env.courseEvents(id: p[0], viewer: user) }),
        Route("GET", "user/:user_id/events", user: { env, p, user in env.userEvents(id: p[0], viewer: user) }),
        Route("GET", "user/:user_id/events.ics", user: { env, p, user in env.userCalendar(id: p[0], viewer: user) }),
        Route(
            "GET", "user/:user_id/schedule",
            user: { env, p, user in env.userSchedule(id: p[0], semesterID: nil, viewer: user) }),
        Route(
            "GET", "user/:user_id/schedule/:semester_id",
            user: { env, p, user in env.userSchedule(id: p[0], semesterID: p[1], viewer: user) }),
        Route("GET", "studip/content_terms_of_use_list", user: { env, _, _ in env.termsList() }),
    ]
}
