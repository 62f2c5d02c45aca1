import Foundation
import Hummingbird
import NIOCore

/// The installation's front door: splits the path, counts, injects latency and faults, authenticates, and
/// hands the request to the API it belongs to.
///
/// `<base>/jsonapi.php/v1/…` → ``JSONAPIHandler``, `<base>/api.php/…` → ``LegacyRESTHandler`` (404 on 6.x),
/// `<base>/dispatch.php/…`, `<base>/index.php` and `<base>/sendfile.php` → ``WebRoutes``; `/__sim/…` → ``ControlAPI`` (never counted,
/// never faulted); `/__files/…` → ``FileIndex`` (the benchmark's plain HTTP baseline: counted, delayed, never
/// faulted); `/Shibboleth.sso/…` → ``ServiceProvider`` when single sign-on is configured (counted, never faulted).
struct InstallationResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let store: UniversityStore
    let statistics: Statistics
    let faults: FaultInjector
    let authenticator: Authenticator
    let settings: SettingsBox
    let flavour: Flavour
    let basePath: String
    let clients: [OAuth2Client]
    let serviceProvider: ServiceProvider?
    let addresses: PortCollector

    private enum API {
        case jsonAPI, legacyREST, web
    }

    func respond(to request: Request, context: Context) async throws -> Response {
        var request = request
        let path = request.uri.path
        let body = try await request.collectBody(upTo: 256 << 20)
        let bodyData = Data(buffer: body)
        var headers = Self.headerDictionary(request.headers)
        // HTTP/1.1's `Host` arrives as the `:authority` pseudo-header; PHP sees it as `HTTP_HOST`.
        if headers["host"] == nil, let authority = request.head.authority { headers["host"] = authority }
        let query = request.uri.query.map(FormEncoding.pairs) ?? []

        if path == "/__sim" || path.hasPrefix("/__sim/") {
            let control = ControlAPI(
                store: store, statistics: statistics, faults: faults, authenticator: authenticator, settings: settings,
                serviceProvider: serviceProvider)
            let segments = path.split(separator: "/").dropFirst().map { Self.decode($0) }
            let response = control.handle(method: request.method.rawValue, segments: segments, body: bodyData)
            return Streamer(statistics: statistics, settings: settings).response(response, bodyFault: nil)
        }

        if path == "/__files" || path.hasPrefix("/__files/") {
            let latency = settings.get().latencyMilliseconds
            if latency > 0 { try await settings.pause(for: .milliseconds(latency)) }
            let segments = path.split(separator: "/").dropFirst().map { Self.decode($0) }
            let response = FileIndex(university: store.snapshot()).respond(to: segments, range: headers["range"])
            statistics.count(route: response.route)
            return Streamer(statistics: statistics, settings: settings).response(response, bodyFault: nil)
        }

        let origin = "http://127.0.0.1:\(await addresses.installation ?? 0)"
        if let serviceProvider, path.hasPrefix("/Shibboleth.sso/") {
            let segments = path.split(separator: "/").map { Self.decode($0) }
            let response = serviceProvider.handle(
                SimRequest(
                    method: request.method.rawValue, segments: segments, query: query, headers: headers,
                    body: bodyData),
                origin: origin, identityProvider: "http://127.0.0.1:\(await addresses.identityProvider ?? 0)")
            statistics.count(route: response.route)
            return Streamer(statistics: statistics, settings: settings).response(response, bodyFault: nil)
        }

        guard let (api, segments, trailingSlash) = route(path) else {
            statistics.count(route: "unknown")
            return Streamer(statistics: statistics, settings: settings).response(
                .text("HTTP/1.1 404 Not Found", status: 404, route: "unknown"), bodyFault: nil)
        }

        statistics.requestStarted()
        defer { statistics.requestEnded() }
        var bodyFault: Streamer.BodyFault?
        var replacedHeaders: [String: String] = [:]
        switch faults.fault(forPath: String(path.dropFirst(basePath.count)), method: request.method.rawValue) {
        case .status(let status):
            statistics.count(route: "fault")
            return Streamer(statistics: statistics, settings: settings).response(
                faultResponse(status: status, api: api), bodyFault: nil)
        case .rateLimited(let seconds):
            statistics.count(route: "fault")
            var response = faultResponse(status: 429, api: api)
            response.headers.append(("Retry-After", String(seconds)))
            return Streamer(statistics: statistics, settings: settings).response(response, bodyFault: nil)
        case .resetAfterBytes(let bytes):
            bodyFault = .reset(after: bytes)
        case .stallAfterBytes(let bytes, let milliseconds):
            bodyFault = .stall(after: bytes, milliseconds: milliseconds)
        case .stall(let milliseconds):
            try await settings.pause(for: .milliseconds(milliseconds))
        case .headers(let headers):
            replacedHeaders = headers
        case .body(let text):
            statistics.count(route: "fault")
            let contentType =
                switch api {
                case .jsonAPI: "application/vnd.api+json"
                case .legacyREST: "application/json;charset=utf-8"
                case .web: "text/html; charset=UTF-8"
                }
            return Streamer(statistics: statistics, settings: settings).response(
                .text(text, status: 200, contentType: contentType, route: "fault"), bodyFault: nil)
        case nil:
            break
        }
        let latency = settings.get().latencyMilliseconds
        if latency > 0 { try await settings.pause(for: .milliseconds(latency)) }

        let university = store.snapshot()
        var schemes: Set<Authenticator.Scheme> =
            switch api {
            case .jsonAPI: flavour.hasOAuth2 ? [.basic, .cookie, .bearer] : [.basic, .cookie]
            case .legacyREST: [.basic, .cookie]
            case .web: [.cookie]
            }
        if !settings.get().basicAuthReachesPHP { schemes.remove(.basic) }
        let simRequest = SimRequest(
            method: request.method.rawValue, segments: segments, query: query, headers: headers, body: bodyData,
            user: authenticator.user(headers: headers, schemes: schemes, in: university, flavour: flavour),
            hasTrailingSlash: trailingSlash)
        let simContext = SimContext(
            university: university, flavour: flavour, basePath: basePath,
            baseURL: origin + basePath,
            externalBaseURL: "http://127.0.0.1:\(await addresses.external ?? 0)",
            contentRanges: settings.get().contentRanges,
            mutate: { [store] change in try store.mutate(change) })

        var response: SimResponse
        switch api {
        case .jsonAPI:
            response = await JSONAPIHandler().handle(simRequest, context: simContext)
        case .legacyREST:
            response = await LegacyRESTHandler().handle(simRequest, context: simContext)
        case .web:
            let web = WebRoutes(
                authenticator: authenticator, clients: clients, settings: { [settings] in settings.get() },
                serviceProvider: serviceProvider, origin: origin)
            response =
                web.handle(simRequest, context: simContext)
                ?? .text("Not Found", status: 404, route: "web unknown")
        }
        for (name, value) in replacedHeaders {
            response.headers.removeAll { $0.0.lowercased() == name.lowercased() }
            response.headers.append((name, value))
        }
        statistics.count(route: response.route)
        return Streamer(statistics: statistics, settings: settings).response(response, bodyFault: bodyFault)
    }

    /// The API and its decoded segments, or nil for paths outside the installation.
    private func route(_ path: String) -> (API, [String], Bool)? {
        guard path.hasPrefix(basePath + "/") else { return nil }
        var segments = path.dropFirst(basePath.count + 1).split(separator: "/", omittingEmptySubsequences: false)
            .map { Self.decode($0) }
        let trailingSlash = segments.count > 1 && segments.last == ""
        if trailingSlash { segments.removeLast() }
        if segments.starts(with: ["jsonapi.php", "v1"]) {
            return (.jsonAPI, Array(segments.dropFirst(2)), trailingSlash)
        }
        if segments.first == "api.php" {
            guard flavour.hasLegacyREST else { return nil }
            return (.legacyREST, Array(segments.dropFirst()), trailingSlash)
        }
        if segments.first == "dispatch.php" || segments == ["index.php"] || segments == ["sendfile.php"] {
            return (.web, segments, trailingSlash)
        }
        return nil
    }

    /// The error an overloaded or broken server sends, in the shape of the API that was asked.
    private func faultResponse(status: Int, api: API) -> SimResponse {
        let reason = HTTPResponse.Status(code: status).reasonPhrase
        switch api {
        case .jsonAPI:
            let errors: JSON = ["errors": [["status": .string(String(status)), "title": .string(reason)]]]
            return .json(errors, status: status, contentType: "application/json", route: "fault")
        case .legacyREST:
            return .json(
                ["status": .int(status), "message": .string(reason)], status: status,
                contentType: "application/json;charset=utf-8", route: "fault")
        case .web:
            return .text(reason, status: status, route: "fault")
        }
    }

    private static func decode(_ segment: Substring) -> String {
        String(segment).removingPercentEncoding ?? String(segment)
    }

    static func headerDictionary(_ fields: HTTPFields) -> [String: String] {
        var headers: [String: String] = [:]
        for field in fields {
            let name = field.name.canonicalName.lowercased()
            headers[name] = headers[name].map { "\($0), \(field.value)" } ?? field.value
        }
        return headers
    }
}
