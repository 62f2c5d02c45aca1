import Foundation

/// One JSON:API request with what every route needs: the snapshot, the release layout and link building.
struct JSONAPIEnvironment: Sendable {
    let request: SimRequest
    let context: SimContext
    let layout: Layout
    /// The route name for the request counters, e.g. `jsonapi GET folders/{id}`.
    let route: String

    var university: University { context.university }
    var zone: TimeZone { context.university.timeZone }

    /// Absolute path of the API root without host, e.g. `/studip/jsonapi.php/v1`.
    var prefix: String { context.basePath + "/jsonapi.php/v1" }

    func link(_ path: String) -> String { prefix + "/" + path }

    func date(_ time: Int) -> JSON { .string(StudIPDate.iso8601(time, in: zone)) }

    /// A JSON:API document with the media type of the spec.
    func document(_ value: JSON, status: Int = 200, headers: [(String, String)] = []) -> SimResponse {
        .json(value, status: status, contentType: "application/vnd.api+json", headers: headers, route: route)
    }

    /// An error document in the release's error shape.
    func error(
        _ status: Int, title: String, detail: String? = nil, parameter: String? = nil, withStatus: Bool = true
    ) -> SimResponse {
        var object: [(String, JSON)] = []
        if layout.errorsUseIDAsTitle {
            object.append(("id", .string(title)))
            if withStatus { object.append(("status", .string(String(status)))) }
        } else {
            if withStatus { object.append(("status", .string(String(status)))) }
            object.append(("title", .string(title)))
        }
        if let detail { object.append(("detail", .string(detail))) }
        if let parameter { object.append(("source", ["parameter": .string(parameter)])) }
        return .json(
            ["errors": [.object(object)]], status: status, contentType: layout.errorContentType, route: route)
    }

    func notFound() -> SimResponse { error(404, title: "Not Found") }
    func forbidden() -> SimResponse { error(403, title: "Forbidden") }

    /// Plain-text errors of the non-JSON:API routes (content, upload).
    func plain(_ status: Int, _ text: String) -> SimResponse {
        .text(text, status: status, route: route)
    }
}
