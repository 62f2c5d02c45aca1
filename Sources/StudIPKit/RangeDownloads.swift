import AsyncHTTPClient
import AsyncHelpers
import Foundation
import StudIPModel
import StudIPWire
import Synchronization

extension JSONAPISource {
    /// Through the content route where this installation answers ranges there, else through `sendfile.php` with a
    /// web session (docs/ranges.md, "On the wire").
    func downloadRange(_ request: RangeRequest) async throws(StudIPError) -> DownloadBody {
        try await transport.ranges.download(
            request, contentRoute: transport.installation.jsonAPI(["file-refs", request.documentID, "content"]),
            transport: transport)
    }
}

extension LegacyRESTSource {
    /// `file/{id}/download` ignores `Range` (captured on 5.0.7), so straight to `sendfile.php` with a web session.
    func downloadRange(_ request: RangeRequest) async throws(StudIPError) -> DownloadBody {
        try await transport.ranges.download(request, contentRoute: nil, transport: transport)
    }
}

/// How one connection fetches byte ranges (docs/ranges.md, "On the wire"): the route that answers them, decided by
/// the first range asked and kept; the web session `sendfile.php` needs; at most one new login for that session per
/// ``ClientConfiguration/rangeSessionRenewalInterval``. Range requests hold slots of a limiter of their own, so a
/// read out of order never waits behind the document streams.
final class RangeSupport: Sendable {
    enum Route: Sendable, Equatable {
        /// The JSON:API content route answers ranges (its probe got `206`): a newer Stud.IP than 5.0.7.
        case contentRoute
        /// `sendfile.php` with the web session.
        case sendfile
        /// None; why, for the maintainer. Every range throws ``StudIPError/rangesUnavailable(what:detail:)`` at once.
        case unavailable(String)
    }

    private struct State {
        var route: Route?
        var lastRenewal: ContinuousClock.Instant?
        /// The session `sendfile.php` answered with its login page while a new login had to wait: not sent again.
        var expired: [String: String]?
    }

    private let limiter: ConcurrencyLimiter
    private let session: WebSession?
    private let renewalInterval: Duration
    private let state = Mutex(State())
    /// Concurrent first ranges share one probe.
    private let probing = SingleFlight<Route?, StudIPError>()

    init(_ configuration: ClientConfiguration, api: any Authenticator) {
        limiter = ConcurrencyLimiter(limit: configuration.maxConcurrentRangeRequests)
        session = WebSession(configuration.credentials, api: api)
        renewalInterval = configuration.rangeSessionRenewalInterval
    }

    /// `request`'s bytes, verified (``verified(_:_:route:)``). `contentRoute` is the JSON:API content route of the
    /// document, nil for legacy REST.
    func download(
        _ request: RangeRequest, contentRoute: String?, transport: HTTPTransport
    ) async throws(StudIPError) -> DownloadBody {
        let what = "document \(request.documentID)"
        let range = request.range
        guard range.count >= 2, range.lowerBound >= 0,
            request.documentSize <= 0 || range.upperBound <= request.documentSize
        else {
            throw .rangesUnavailable(
                what: what,
                detail: "bytes \(range.lowerBound)..<\(range.upperBound) not asked: a range holds at least 2 bytes "
                    + "within the document (Stud.IP 5.0.7's sendfile.php answers one byte with the first one)")
        }
        if case .unavailable(let why) = state.withLock({ $0.route }) {
            transport.logger.debug("no byte range for \(what): \(why)")
            throw .rangesUnavailable(what: what, detail: why)
        }
        guard await limiter.acquire() else { throw .cancelled }
        let call = RangeCall(request: request, transport: transport, permit: DownloadPermit(limiter: limiter))
        do throws(StudIPError) {
            switch try await route(call, contentRoute: contentRoute) {
            case .sendfile?:
                return try await viaSendfile(call)
            case .unavailable(let why)?:
                // Logged where it was decided.
                throw .rangesUnavailable(what: what, detail: why)
            case .contentRoute?, nil:
                // nil: the probe was redirected (a document hosted elsewhere), which says nothing about Stud.IP; both
                // routes redirect such a document to its host, so the content route serves this one.
                guard let contentRoute else { throw call.unavailable("no route answers ranges") }
                let opened = try await call.refusingRanges {
                    () async throws(StudIPError) -> HTTPTransport.Opened in
                    try await transport.open(contentRoute, conditions: call.rangeHeader, what: what)
                }
                return try verified(opened, call, route: .contentRoute)
            }
        } catch {
            call.permit.release()
            throw error
        }
    }

    // MARK: Which route

    /// The route decided, or decides it: legacy REST goes to `sendfile.php` (its download route ignores `Range`);
    /// JSON:API probes its content route with `Range: bytes=0-0` first.
    private func route(_ call: RangeCall, contentRoute: String?) async throws(StudIPError) -> Route? {
        if let route = state.withLock({ $0.route }) { return route }
        guard let contentRoute else {
            return decide(
                session == nil ? .unavailable("this login has no web session for sendfile.php") : .sendfile, call)
        }
        return try await probing.run { [self] () async throws(StudIPError) -> Route? in
            if let route = state.withLock({ $0.route }) { return route }
            return try await probe(contentRoute, call)
        }
    }

    /// `206` with `Content-Range: bytes 0-0/<size>` means the content route answers ranges; anything else (5.0.7:
    /// `200` and the whole document, dropped unread) that it does not, and `sendfile.php` is next where the login
    /// has a web session.
    private func probe(_ url: String, _ call: RangeCall) async throws(StudIPError) -> Route? {
        let opened = try await call.refusingRanges { () async throws(StudIPError) -> HTTPTransport.Opened in
            try await call.transport.open(url, conditions: ["Range": "bytes=0-0"], what: call.what)
        }
        guard case .content(let response, _, let redirected) = opened, !redirected else { return nil }
        let status = Int(response.status.code)
        let header = response.headers.first(name: "content-range")
        let answered = ContentRange(header)
        if status == 206, let answered, answered.first == 0, answered.last == 0,
            call.request.documentSize <= 0 || answered.total == call.request.documentSize
        {
            return decide(.contentRoute, call)
        }
        // `response` goes unread: dropping it closes the connection rather than download the whole document.
        let why =
            "the JSON:API content route answers Range: bytes=0-0 with \(status)"
            + (header.map { " (Content-Range \($0))" } ?? "")
        guard session != nil else {
            return decide(.unavailable("\(why), and an OAuth2 login has no web session for sendfile.php"), call)
        }
        call.transport.logger.debug("\(why); byte ranges go to sendfile.php")
        return decide(.sendfile, call)
    }

    private func decide(_ route: Route, _ call: RangeCall) -> Route {
        state.withLock { $0.route = route }
        let said: String =
            switch route {
            case .contentRoute: "through the JSON:API content route"
            case .sendfile: "through sendfile.php with the web session"
            case .unavailable(let why): "none (\(why)); reads out of order wait for the download"
            }
        call.transport.logger.notice("byte ranges from \(call.transport.installation.serverName): \(said)")
        return route
    }

    // MARK: sendfile.php

    /// `sendfile.php?type=0&file_id=…` with the web session; `file_name` only names the `Content-Disposition`.
    /// Its login page (`200`, HTML) means the session ended: one new login and one more try, at most one new login
    /// per ``renewalInterval``.
    private func viaSendfile(_ call: RangeCall) async throws(StudIPError) -> DownloadBody {
        guard let session else { throw call.unavailable("this login has no web session for sendfile.php") }
        let id = Installation.encode(call.request.documentID)
        let url = call.transport.installation.baseURL + "/sendfile.php?type=0&file_id=\(id)&file_name=\(id)"
        var renewed = false
        while true {
            let headers = try await sessionFailure(call) { () async throws(StudIPError) -> [String: String] in
                try await session.authenticator.headers(transport: call.transport)
            }
            if !renewed, state.withLock({ $0.expired == headers }) {
                renewed = try await renew(headers, session, call)
                continue
            }
            let head = try await call.refusingRanges { () async throws(StudIPError) -> HTTPTransport.Head in
                try await call.transport.follow(
                    url, conditions: call.rangeHeader, credentials: headers, what: call.what)
            }
            guard case .opened(let opened) = head else {
                throw call.unavailable("sendfile.php answered 401, which Stud.IP 5.0.7 never does")
            }
            if case .content(let response, _, false) = opened, response.status.code == 200,
                response.headers["content-type"].contains(where: { $0.lowercased().hasPrefix("text/html") })
            {
                let page = await HTTPTransport.read(response)
                guard HTMLPage(page.body).loginForm != nil else {
                    throw call.unavailable("sendfile.php answered 200 with an HTML page that is not the range")
                }
                guard !renewed else {
                    state.withLock { $0.expired = headers }
                    throw call.unavailable("sendfile.php answered its login page again right after a new login")
                }
                call.transport.logger.info("the web session for sendfile.php ended; logging in again")
                renewed = try await renew(headers, session, call)
                continue
            }
            return try verified(opened, call, route: .sendfile)
        }
    }

    /// A new login for `expired`, unless one happened less than ``renewalInterval`` ago: then the session stays
    /// known as expired and ranges are unavailable until the interval has passed. True once renewed.
    private func renew(
        _ expired: [String: String], _ session: WebSession, _ call: RangeCall
    ) async throws(StudIPError) -> Bool {
        let allowed = state.withLock { state -> Bool in
            let now = ContinuousClock.now
            if let last = state.lastRenewal, now - last < renewalInterval {
                state.expired = expired
                return false
            }
            state.lastRenewal = now
            state.expired = nil
            return true
        }
        guard allowed else {
            throw call.unavailable(
                "the web session for sendfile.php ended less than \(renewalInterval) after the last new login")
        }
        let renewed = try await sessionFailure(call) { () async throws(StudIPError) -> Bool in
            try await session.authenticator.renew(afterRejecting: expired, transport: call.transport)
        }
        guard renewed else {
            throw call.unavailable("the session cookie given has ended, and sendfile.php needs a web session")
        }
        return true
    }

    /// A session of its own (Basic's) that the login form refuses, or that no login form can give, makes ranges
    /// unavailable for this connection, never "login needed": the API's login works. The API's own session fails as
    /// the API's login does.
    private func sessionFailure<T>(
        _ call: RangeCall, _ body: () async throws(StudIPError) -> T
    ) async throws(StudIPError) -> T {
        do {
            return try await body()
        } catch {
            guard session?.isOwn == true else { throw error }
            switch error {
            case .unreachable, .cancelled:
                throw error
            case _ where error.isLoginFailure, .malformedResponse, .notFound, .forbidden:
                throw call.unavailable(decide(.unavailable("no web session from the login form: \(error)"), call))
            default:
                throw call.unavailable("no web session from the login form: \(error)")
            }
        }
    }

    // MARK: Verification

    /// The body of a `206` whose `Content-Range` names exactly the bytes asked for (and the listing's size where
    /// known) and whose `Content-Length`, if any, is their count; the body throws when fewer arrive. Anything else
    /// is ``StudIPError/rangesUnavailable(what:detail:)``, its body dropped unread; Stud.IP answering `200` (the
    /// whole document: it ignores `Range`) decides that this connection has no ranges.
    private func verified(
        _ opened: HTTPTransport.Opened, _ call: RangeCall, route: Route
    ) throws(StudIPError) -> DownloadBody {
        let routeName = route == .sendfile ? "sendfile.php" : "the JSON:API content route"
        guard case .content(let response, let server, let redirected) = opened else {
            throw call.unavailable("\(routeName) answered 304 Not Modified to a range")
        }
        let from = redirected ? server : routeName
        let status = Int(response.status.code)
        guard status == 206 else {
            let why = "\(from) answered \(status) instead of 206 Partial Content"
            if status == 200, !redirected { throw call.unavailable(decide(.unavailable(why), call)) }
            throw call.unavailable(why)
        }
        let range = call.request.range
        let size = call.request.documentSize
        let header = response.headers.first(name: "content-range")
        guard let answered = ContentRange(header), answered.first == range.lowerBound,
            answered.last == range.upperBound - 1, answered.last < answered.total, size <= 0 || answered.total == size
        else {
            throw call.unavailable(
                "\(from) answered bytes \(range.lowerBound)-\(range.upperBound - 1)\(size > 0 ? "/\(size)" : "") "
                    + "with Content-Range \"\(header ?? "")\"")
        }
        let count = Int64(range.count)
        if let length = response.headers.first(name: "content-length"), Int64(length) != count {
            throw call.unavailable("\(from) announced Content-Length \(length) for a range of \(count) bytes")
        }
        let body = DownloadStream.body(
            of: response, what: call.what, server: server, idle: call.transport.downloadTimeouts.idle,
            permit: call.permit, length: count)
        // sendfile.php's Last-Modified is the time of the request (captured), no version.
        let dated = route != .sendfile || redirected
        return DownloadBody(
            expectedLength: count,
            etag: route == .contentRoute && !redirected ? response.headers.first(name: "etag") : nil,
            lastModified: dated ? response.headers.first(name: "last-modified").flatMap(HTTPDate.parse) : nil,
            wasRedirected: redirected, next: body.next)
    }
}

/// One range being fetched: what is asked, through which transport, holding which slot.
private struct RangeCall: Sendable {
    let request: RangeRequest
    let transport: HTTPTransport
    let permit: DownloadPermit

    var what: String { "document \(request.documentID)" }
    var rangeHeader: [String: String] {
        ["Range": "bytes=\(request.range.lowerBound)-\(request.range.upperBound - 1)"]
    }

    /// ``StudIPError/rangesUnavailable(what:detail:)``, logged for the maintainer.
    func unavailable(_ detail: String) -> StudIPError {
        transport.logger.notice("no byte range for \(what)", metadata: ["why": "\(detail)"])
        return .rangesUnavailable(what: what, detail: detail)
    }

    func unavailable(_ route: RangeSupport.Route) -> StudIPError {
        guard case .unavailable(let why) = route else { return unavailable("no route answers ranges") }
        return .rangesUnavailable(what: what, detail: why)
    }

    /// `416 Range Not Satisfiable` (several ranges, or a start past the end: the document changed) is no error of
    /// the document, only of the range.
    func refusingRanges<T>(_ body: () async throws(StudIPError) -> T) async throws(StudIPError) -> T {
        do {
            return try await body()
        } catch .serverError(status: 416, let what) {
            throw unavailable("\(what) answered 416 Range Not Satisfiable")
        }
    }
}

/// `Content-Range: bytes <first>-<last>/<total>`, digits only: 5.0.7's corrupt answer to a long suffix
/// (`bytes -500000-1499999/1500000`) and `*` totals do not parse.
struct ContentRange: Equatable {
    let first: Int64
    let last: Int64
    let total: Int64

    init?(_ header: String?) {
        guard let header, header.hasPrefix("bytes ") else { return nil }
        let parts = header.dropFirst(6).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = Self.number(bounds[0]), let last = Self.number(bounds[1]),
            let total = Self.number(parts[1]), first <= last
        else { return nil }
        (self.first, self.last, self.total) = (first, last, total)
    }

    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(text)
    }
}
