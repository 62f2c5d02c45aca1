import Foundation
import Hummingbird
import NIOCore

/// The "other host" that documents hosted elsewhere redirect to (Stud.IP URL files, API.md §3.7).
///
/// It serves `/elsewhere/<document id>/<name>` with deterministic bytes of the document's size and records
/// whether a request arrived with credentials, so tests can prove a client never forwards its Stud.IP login.
/// A document Stud.IP recorded as 0 bytes (5.0.7's "add URL" dialog stores 0) is ``unrecordedLength`` bytes here:
/// the host has the real document whatever Stud.IP wrote down (issue 28: 123,316 bytes on the real one).
/// A single `Range` gets `206` and that part, as most web servers answer, unless ``SimulatorSettings/externalRanges``
/// is off; the requests are counted under the route `external` (`external range` for a `206`).
struct ExternalHost: HTTPResponder {
    static let unrecordedLength = 123_316

    typealias Context = BasicRequestContext

    let store: UniversityStore
    let statistics: Statistics
    let settings: SettingsBox

    func respond(to request: Request, context: Context) async throws -> Response {
        let path = request.uri.path
        let headers = InstallationResponder.headerDictionary(request.headers)
        statistics.countExternal(withCredentials: headers["authorization"] != nil || headers["cookie"] != nil)

        let segments = path.split(separator: "/").map(String.init)
        guard segments.count >= 2, segments[0] == "elsewhere",
            let document = store.snapshot().fileRefs[segments[1]],
            case .external(let url) = document.content, url == path
        else {
            return Response(status: .notFound)
        }
        var fields = HTTPFields()
        fields[.contentType] = document.mimeType
        let size = document.size > 0 ? document.size : Self.unrecordedLength
        var part = 0..<size
        var status = HTTPResponse.Status.ok
        if settings.get().externalRanges, let header = headers["range"], let asked = FileIndex.part(header, of: size) {
            guard let asked else {
                fields[.contentRange] = "bytes */\(size)"
                return Response(status: .rangeNotSatisfiable, headers: fields)
            }
            (part, status) = (asked, .partialContent)
            fields[.acceptRanges] = "bytes"
            fields[.contentRange] = "bytes \(asked.lowerBound)-\(asked.upperBound - 1)/\(size)"
        }
        let streamer = Streamer(statistics: statistics, settings: settings)
        let bytes = ContentGenerator.externalBytes(path: url, size: size)
        let route = status == .partialContent ? "external range" : "external"
        let body = streamer.stream(id: document.id, route: route, size: part.count, fault: nil) {
            [part] offset, length in
            let start = part.lowerBound + offset
            return Array(bytes[min(start, bytes.count)..<min(start + length, bytes.count)])
        }
        return Response(status: status, headers: fields, body: request.method == .head ? ResponseBody() : body)
    }
}
