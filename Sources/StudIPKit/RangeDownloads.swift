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
/// read out of order never waits behind the document streams. Only facts about the whole connection throw
/// ``StudIPError/rangesUnavailable(what:detail:)``; an answer that fails for one range throws another error.
final class RangeRoutes: Sendable {
    enum Route: Sendable, Equatable {
        /// The JSON:API content route answers ranges (its probe got `206`): a newer Stud.IP than 5.0.7.
        case contentRoute
        /// `sendfile.php` with the web session.
        case sendfile
        /// None; why, for the maintainer. Every range throws ``StudIPError/rangesUnavailable(what:detail:)`` at once.
        case unavailable(String)
    }

    /// What a probe found and for which document: a redirected probe (nil) says nothing about another document.
    private struct Probe: Sendable {
        let route: Route?
        let documentID: String
    }

    private struct State {
        var route: Route?
        /// When the range session last logged in anew (a renewal, or a login of its own that failed).
        var lastLogin: ContinuousClock.Instant?
        /// The session the last completed renewal produced: only its ending again within the interval is the limit.
        var renewed: [String: String]?
        /// A login that failed other than by a refusal (a `503`, a `429`): no new post before the interval passed.
        var loginFailure: StudIPError?
        /// The session `sendfile.php` answered with its login page while a new login had to wait: not sent again.
        var expired: [String: String]?
    }

    private let limiter: ConcurrencyLimiter
    private let session: WebSession?
    private let renewalInterval: Duration
    private let state = Mutex(State())
    /// Concurrent first ranges share one probe.
    private let probing = SingleFlight<Probe, StudIPError>()

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
            // The caller's mistake, not the connection's: this range only.
            throw .malformedResponse(
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
                // nil: this document's probe was redirected (it is hosted elsewhere), which says nothing about
                // Stud.IP; both routes redirect such a document to its host, so the content route serves this one.
                guard let contentRoute else { throw call.unavailable("no route answers ranges") }
                var conditions = call.rangeHeader
                if let ifRange = request.ifRange { conditions["If-Range"] = ifRange }
                let opened = try await call.refusingRanges { () async throws(StudIPError) -> HTTPTransport.Opened in
                    try await transport.open(contentRoute, conditions: conditions, what: what)
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
    /// JSON:API probes its content route with `Range: bytes=0-0` first. nil: this document is hosted elsewhere and
    /// nothing is decided.
    private func route(_ call: RangeCall, contentRoute: String?) async throws(StudIPError) -> Route? {
        let documentID = call.request.documentID
        while true {
            if let route = state.withLock({ $0.route }) { return route }
            guard let contentRoute else {
                return decide(
                    session == nil ? .unavailable("this login has no web session for sendfile.php") : .sendfile, call)
            }
            let probed = try await probing.run { [self] () async throws(StudIPError) -> Probe in
                if let route = state.withLock({ $0.route }) { return Probe(route: route, documentID: documentID) }
                return Probe(route: try await probe(contentRoute, call), documentID: documentID)
            }
            // A joiner of another document's redirected probe probes again with its own document.
            if probed.route != nil || probed.documentID == documentID { return probed.route }
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

    /// Decides that this connection has no ranges, and the error that says so.
    private func decideUnavailable(_ why: String, _ call: RangeCall) -> StudIPError {
        decide(.unavailable(why), call)
        return .rangesUnavailable(what: call.what, detail: why)
    }

    @discardableResult
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
            let headers = try await sessionHeaders(session, call)
            if !renewed, state.withLock({ $0.expired == headers }) {
                renewed = try await renew(headers, session, call)
                continue
            }
            let head = try await call.refusingRanges { () async throws(StudIPError) -> HTTPTransport.Head in
                try await call.transport.follow(
                    url, conditions: call.rangeHeader, credentials: headers, what: call.what)
            }
            guard case .opened(let opened) = head else {
                throw call.failed("sendfile.php answered 401, which Stud.IP 5.0.7 never does")
            }
            if case .content(let response, _, false) = opened, response.status.code == 200,
                response.headers["content-type"].contains(where: { $0.lowercased().hasPrefix("text/html") })
            {
                let page = await HTTPTransport.read(response)
                guard HTMLPage(page.body).loginForm != nil else {
                    throw call.failed("sendfile.php answered 200 with an HTML page that is not the range")
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

    /// The web session's headers. A session of its own whose last login failed less than ``renewalInterval`` ago
    /// throws that failure again without posting the password: accounts lock after repeated posts.
    private func sessionHeaders(_ session: WebSession, _ call: RangeCall) async throws(StudIPError) -> [String: String]
    {
        if session.isOwn, let failure = recentLoginFailure() {
            call.transport.logger.debug("no new login for sendfile.php within \(renewalInterval) of: \(failure)")
            throw failure
        }
        // The first call after a failed login posts again (concurrent ones join it): a login like a renewal.
        let retrying =
            session.isOwn
            && state.withLock { state in
                guard state.loginFailure != nil else { return false }
                state.lastLogin = ContinuousClock.now
                state.loginFailure = nil
                return true
            }
        let headers = try await sessionFailure(call) { () async throws(StudIPError) -> [String: String] in
            try await session.authenticator.headers(transport: call.transport)
        }
        if retrying { state.withLock { $0.renewed = headers } }
        return headers
    }

    /// A new login for `expired`. Within ``renewalInterval`` of the last one: when `expired` is the session that
    /// login produced, it ended again, and ranges are unavailable until the interval has passed (the session stays
    /// known as expired); when it is an older one (another read met the same expiry), the authenticator hands out the
    /// current session or joins the login under way. True once renewed.
    private func renew(
        _ expired: [String: String], _ session: WebSession, _ call: RangeCall
    ) async throws(StudIPError) -> Bool {
        enum Decision {
            case logIn, current, limit
            case failed(StudIPError)
        }
        let decision = state.withLock { state -> Decision in
            let now = ContinuousClock.now
            if let last = state.lastLogin, now - last < renewalInterval {
                if let failure = state.loginFailure { return .failed(failure) }
                guard state.renewed == expired else { return .current }
                state.expired = expired
                return .limit
            }
            state.lastLogin = now
            state.loginFailure = nil
            state.expired = nil
            return .logIn
        }
        switch decision {
        case .limit:
            throw call.unavailable(
                "the web session for sendfile.php ended less than \(renewalInterval) after the last new login")
        case .failed(let failure):
            call.transport.logger.debug("no new login for sendfile.php within \(renewalInterval) of: \(failure)")
            throw failure
        case .logIn, .current:
            break
        }
        let renewed = try await sessionFailure(call) { () async throws(StudIPError) -> Bool in
            try await session.authenticator.renew(afterRejecting: expired, transport: call.transport)
        }
        guard renewed else {
            throw call.unavailable("the session cookie given has ended, and sendfile.php needs a web session")
        }
        if case .logIn = decision {
            let current = try await sessionHeaders(session, call)
            state.withLock { $0.renewed = current }
        }
        return true
    }

    /// The last login's failure, while it is less than ``renewalInterval`` old.
    private func recentLoginFailure() -> StudIPError? {
        state.withLock { state in
            guard let failure = state.loginFailure, let last = state.lastLogin,
                ContinuousClock.now - last < renewalInterval
            else { return nil }
            return failure
        }
    }

    /// A session of its own (Basic's) that the login form refuses, or that no login form can give, makes ranges
    /// unavailable for this connection, never "login needed": the API's login works. A login that fails otherwise
    /// (a `503`, a `429`) fails this range and is remembered, so that the next post waits ``renewalInterval``. The
    /// API's own session fails as the API's login does.
    private func sessionFailure<T>(
        _ call: RangeCall, _ body: () async throws(StudIPError) -> T
    ) async throws(StudIPError) -> T {
        do {
            return try await body()
        } catch {
            switch error {
            case .unreachable, .cancelled, .rangesUnavailable:
                throw error
            case _ where error.isLoginFailure, .malformedResponse, .notFound, .forbidden:
                guard session?.isOwn == true else { throw error }
                throw decideUnavailable("no web session from the login form: \(error)", call)
            default:
                call.transport.logger.notice("no new web session for sendfile.php", metadata: ["why": "\(error)"])
                state.withLock { state in
                    state.lastLogin = ContinuousClock.now
                    state.loginFailure = error
                }
                throw error
            }
        }
    }

    // MARK: Verification

    /// The body of a `206` whose `Content-Range` names exactly the bytes asked for (and the listing's size where
    /// known), whose `Content-Length`, if any, is their count, and, on the content route, whose `ETag` is the
    /// `If-Range` sent; the body throws when fewer arrive. Anything else fails this range
    /// (``StudIPError/malformedResponse(what:detail:)``), its body dropped unread; a route decided to answer ranges
    /// that answers `200` with the document (it ignores `Range`) decides that this connection has none.
    private func verified(
        _ opened: HTTPTransport.Opened, _ call: RangeCall, route: Route
    ) throws(StudIPError) -> DownloadBody {
        let routeName = route == .sendfile ? "sendfile.php" : "the JSON:API content route"
        guard case .content(let response, let server, let redirected) = opened else {
            throw call.failed("\(routeName) answered 304 Not Modified to a range")
        }
        let from = redirected ? server : routeName
        let status = Int(response.status.code)
        let etag = response.headers.first(name: "etag")
        let ifRange = route == .contentRoute ? call.request.ifRange : nil
        guard status == 206 else {
            let why = "\(from) answered \(status) instead of 206 Partial Content"
            guard status == 200, !redirected else { throw call.failed(why) }
            if let ifRange, etag != ifRange {
                throw call.failed("\(why), ETag \(etag ?? "none") for If-Range \(ifRange): the document changed")
            }
            throw decideUnavailable(why, call)
        }
        if let ifRange, etag != ifRange {
            throw call.failed("\(from) answered If-Range \(ifRange) with a 206 of ETag \(etag ?? "none")")
        }
        let range = call.request.range
        let size = call.request.documentSize
        let header = response.headers.first(name: "content-range")
        guard let answered = ContentRange(header), answered.first == range.lowerBound,
            answered.last == range.upperBound - 1, answered.last < answered.total, size <= 0 || answered.total == size
        else {
            throw call.failed(
                "\(from) answered bytes \(range.lowerBound)-\(range.upperBound - 1)\(size > 0 ? "/\(size)" : "") "
                    + "with Content-Range \"\(header ?? "")\"")
        }
        let count = Int64(range.count)
        if let length = response.headers.first(name: "content-length"), Int64(length) != count {
            throw call.failed("\(from) announced Content-Length \(length) for a range of \(count) bytes")
        }
        let body = DownloadStream.body(
            of: response, what: call.what, server: server, idle: call.transport.downloadTimeouts.idle,
            permit: call.permit, length: count)
        // sendfile.php's Last-Modified is the time of the request (captured), no version.
        let dated = route != .sendfile || redirected
        return DownloadBody(
            expectedLength: count,
            etag: route == .contentRoute && !redirected ? etag : nil,
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

    /// ``StudIPError/rangesUnavailable(what:detail:)``: this connection has no ranges. Logged for the maintainer.
    func unavailable(_ detail: String) -> StudIPError {
        transport.logger.notice("no byte ranges on this connection", metadata: ["why": "\(detail)"])
        return .rangesUnavailable(what: what, detail: detail)
    }

    /// This range's answer was not its bytes (``StudIPError/malformedResponse(what:detail:)``): the caller reads the
    /// stream for this document. Logged for the maintainer.
    func failed(_ detail: String) -> StudIPError {
        transport.logger.notice("no byte range for \(what)", metadata: ["why": "\(detail)"])
        return .malformedResponse(what: what, detail: detail)
    }

    /// `416 Range Not Satisfiable` (several ranges, or a start past the end: the document changed) fails this range
    /// only, as the transport's ``StudIPError/serverError(status:what:)``; logged with what was asked.
    func refusingRanges<T>(_ body: () async throws(StudIPError) -> T) async throws(StudIPError) -> T {
        do {
            return try await body()
        } catch .serverError(status: 416, let answered) {
            transport.logger.notice(
                "no byte range for \(what)",
                metadata: ["why": "\(answered) answered 416 Range Not Satisfiable to \(rangeHeader["Range"] ?? "")"])
            throw .serverError(status: 416, what: answered)
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
