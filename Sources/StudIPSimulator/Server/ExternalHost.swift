import Foundation
import Hummingbird
import NIOCore

/// The "other host" that documents hosted elsewhere redirect to (Stud.IP URL files, API.md §3.7).
///
/// It serves `/elsewhere/<document id>/<name>` with deterministic bytes of the document's size and records
/// whether a request arrived with credentials, so tests can prove a client never forwards its Stud.IP login.
/// A document Stud.IP recorded as 0 bytes (5.0.7's "add URL" dialog stores 0) is ``unrecordedLength`` bytes here:
/// the host has the real document whatever Stud.IP wrote down (issue 28: 123,316 bytes on the real one).
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
        let streamer = Streamer(statistics: statistics, settings: settings)
        let bytes = ContentGenerator.externalBytes(path: url, size: size)
        let body = streamer.stream(id: document.id, route: "external", size: size, fault: nil) { offset, length in
            return Array(bytes[min(offset, bytes.count)..<min(offset + length, bytes.count)])
        }
        return Response(status: .ok, headers: fields, body: request.method == .head ? ResponseBody() : body)
    }
}
