import AsyncHTTPClient
import AsyncHelpers
import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import StudIPModel
import StudIPWire
import Synchronization

/// One HTTP request as the sources describe it. `what` names it in errors and logs ("the folders of course
/// INF-101"), so neither ever needs the headers.
struct HTTPRequest: Sendable {
    enum Method: String, Sendable {
        case get = "GET"
        case head = "HEAD"
        case post = "POST"
        case put = "PUT"
        case patch = "PATCH"
        case delete = "DELETE"

        /// GET and HEAD change nothing on the server, so a failed try may be repeated; every other method may have
        /// acted once sent, and its answer stands (docs/client.md, "Writing").
        var isSafe: Bool { self == .get || self == .head }
    }

    var method: Method = .get
    var url: String
    var headers: [String: String] = [:]
    /// A form body (`application/x-www-form-urlencoded`), for the login form and the token endpoint.
    var form: [(String, String)]?
    /// Any other body (JSON, a multipart upload streamed from disk), made anew for each try.
    var body: RequestBody?
    var what: String
    /// Writes the user asked for are counted but not charged to a refresh's request budget.
    var budgeted = true
    /// Time the whole exchange may take beyond the request timeout: an upload's bytes going out.
    var extraTime: Duration?
}

struct HTTPResponse: Sendable {
    var status: Int
    /// Header values by lowercased name; a repeated header (`set-cookie`) keeps each value.
    var headers: [String: [String]]
    var body: Data

    func header(_ name: String) -> String? { headers[name.lowercased()]?.first }
}

/// Everything between the sources and the network: authentication, bounded concurrency, timeouts, retries
/// with backoff, the per-refresh request budget and request counting.
///
/// Document downloads (Downloads.swift) use a client, a limiter and timeouts of their own: their bodies stream
/// for as long as the reader takes, which must neither hold up metadata requests nor wait behind a refresh.
/// Owns its `HTTPClient`s; ``shutdown()`` must be called once (the source's `shutdown()` does).
final class HTTPTransport: Sendable {
    let installation: Installation
    let logger: Logger
    let pageSize: Int
    let listsRestrictedDocuments: Bool
    /// What ``limiter`` lets through at once.
    let maxConcurrentRequests: Int
    private let client: HTTPClient
    private let limiter: ConcurrencyLimiter
    let retry: RetryPolicy
    private let timeout: Duration
    private let budget: Int
    let authenticator: any Authenticator
    private let counters = Mutex(Counters())
    private let breaker: CircuitBreaker
    /// Follows no redirects (the download decides which headers each hop gets) and times out by
    /// ``DownloadTimeouts``.
    let downloadClient: HTTPClient
    let downloadLimiter: ConcurrencyLimiter
    let downloadTimeouts: DownloadTimeouts
    /// How this connection fetches byte ranges (RangeDownloads.swift).
    let ranges: RangeRoutes

    private struct Counters {
        /// Requests charged to the budget.
        var total = 0
        var atRefreshStart = 0
        /// Requests the user asked for (downloads): counted, but not charged to a refresh's budget.
        var unbudgeted = 0
    }

    /// Largest JSON body accepted; a page of 1,000 documents is about 2 MB.
    private static let maxBodyBytes = 64 << 20

    init(configuration: ClientConfiguration, installation: Installation) {
        self.installation = installation
        logger = configuration.logger
        pageSize = configuration.pageSize
        listsRestrictedDocuments = configuration.listsRestrictedDocuments
        maxConcurrentRequests = max(1, configuration.maxConcurrentRequests)
        limiter = ConcurrencyLimiter(limit: maxConcurrentRequests)
        retry = configuration.retry
        timeout = configuration.requestTimeout
        budget = configuration.requestBudget
        authenticator = makeAuthenticator(
            configuration.credentials, clientID: configuration.oauthClientID,
            basicFallsBackToWebLogin: configuration.basicFallsBackToWebLogin)
        breaker = CircuitBreaker(configuration.breaker, server: installation.serverName)
        var clientConfiguration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(
                connect: TimeAmount(min(configuration.requestTimeout, .seconds(10))),
                read: TimeAmount(configuration.requestTimeout)))
        clientConfiguration.connectionPool = .init(
            idleTimeout: .seconds(60),
            concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, configuration.maxConcurrentRequests))
        // Our retry policy decides about retries; the pool's own would keep a refused connection waiting.
        clientConfiguration.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: clientConfiguration)

        downloadTimeouts = configuration.downloadTimeouts
        downloadLimiter = ConcurrencyLimiter(limit: configuration.maxConcurrentDownloads)
        var downloadConfiguration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: TimeAmount(downloadTimeouts.connect), read: TimeAmount(downloadTimeouts.idle)))
        ranges = RangeRoutes(configuration, api: authenticator)
        // Room for the range requests beside the streams: neither waits for the other's connections.
        downloadConfiguration.connectionPool = .init(
            idleTimeout: .seconds(60),
            concurrentHTTP1ConnectionsPerHostSoftLimit: max(1, configuration.maxConcurrentDownloads)
                + max(1, configuration.maxConcurrentRangeRequests))
        downloadConfiguration.connectionPool.retryConnectionEstablishment = false
        downloadClient = HTTPClient(
            eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: downloadConfiguration)
    }

    func shutdown() async {
        for client in [client, downloadClient] {
            do {
                try await client.shutdown()
            } catch {
                logger.debug("HTTP client shutdown: \(error)")
            }
        }
    }

    var requestCount: Int { counters.withLock { $0.total + $0.unbudgeted } }

    /// Counts a request that the per-refresh budget does not limit (a download the user started).
    func countUnbudgeted() {
        counters.withLock { $0.unbudgeted += 1 }
    }

    /// Starts a new refresh: the request budget counts from here.
    func startRefresh() {
        counters.withLock { $0.atRefreshStart = $0.total }
    }

    // MARK: - Authenticated requests

    /// An authenticated request whose answer must be 2xx; other statuses become the matching ``StudIPError``.
    /// A 401 lets the authenticator renew its credentials once (token refresh, new login).
    func fetch(_ request: HTTPRequest) async throws(StudIPError) -> HTTPResponse {
        let response = try await authenticated(request)
        guard (200..<300).contains(response.status) else { throw error(for: response, what: request.what) }
        return response
    }

    /// An authenticated request, any answer but a 401 returned as it is: the writes read refusals themselves. A 401
    /// lets the authenticator renew its credentials once; the request is then sent again, a POST too, since the
    /// server refused it before acting.
    func authenticated(_ request: HTTPRequest) async throws(StudIPError) -> HTTPResponse {
        var renewed = false
        while true {
            let credentials = try await authenticator.headers(transport: self)
            var authenticated = request
            authenticated.headers.merge(credentials) { _, new in new }
            let response = try await send(authenticated)
            switch response.status {
            case 401 where Self.isRouteRefusal(response):
                throw .forbidden(what: request.what)
            case 401:
                guard !renewed, try await authenticator.renew(afterRejecting: credentials, transport: self) else {
                    throw .authenticationFailed(server: installation.serverName)
                }
                renewed = true
            default:
                return response
            }
        }
    }

    /// An authenticated GET whose body must be JSON, built as far as `shape` says (``JSONShape``).
    func fetchJSON(
        _ url: String, accept: String? = nil, what: String, shape: JSONShape = .everything
    ) async throws(StudIPError) -> JSONValue {
        var request = HTTPRequest(url: url, what: what)
        if let accept { request.headers["Accept"] = accept }
        let response = try await fetch(request)
        return try JSONValue.parse(response.body, what: what, shape: shape)
    }

    /// Legacy REST's course routes refuse non-members with 401 and a JSON string body (`""`), without the
    /// `WWW-Authenticate` header every refused login carries (API.md §2.7): a missing permission, not a login
    /// to renew.
    static func isRouteRefusal(_ response: HTTPResponse) -> Bool {
        response.header("WWW-Authenticate") == nil
            && response.body.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "\"")
    }

    /// The error a non-2xx answer means. Legacy REST answers 403 "Route not activated" when an admin has not
    /// enabled a route for API use: that is a missing API, not a missing permission (API.md §2.1). nginx and
    /// Apache answer 400 "plain HTTP" to `http://` sent to their HTTPS port.
    func error(for response: HTTPResponse, what: String) -> StudIPError {
        let text = String(decoding: response.body.prefix(1000), as: UTF8.self)
        switch response.status {
        case 400 where text.contains("plain HTTP") && installation.baseURL.hasPrefix("http:"):
            return Self.wrongScheme(installation.baseURL) ?? .serverError(status: 400, what: what)
        case 403 where text.contains("Route not activated"):
            return .apiUnavailable(
                server: installation.serverName,
                detail: "the route for \(what) is not activated for API use (ask the Stud.IP admins)")
        case 403: return .forbidden(what: what)
        case 404: return .notFound(what: what)
        default: return .serverError(status: response.status, what: what)
        }
    }

    // MARK: - Sending with retries

    /// Sends a request as it is (no authentication), retrying transient failures; returns any HTTP answer
    /// that is not worth retrying, or the last one when the retries are used up.
    func send(_ request: HTTPRequest) async throws(StudIPError) -> HTTPResponse {
        try await retry.run(
            "\(request.method.rawValue) \(request.what)", logger: logger,
            exhausted: { detail in .unreachable(server: installation.serverName, detail: detail) },
            attempt: { attempt async throws(StudIPError) in try await attemptOnce(request, attempt: attempt) })
    }

    /// One try: an HTTP answer, or a transient failure (timeout, reset) described for the user. Everything
    /// that retrying cannot fix (cancellation, budget, refused connection) is thrown.
    private func attemptOnce(_ request: HTTPRequest, attempt: Int) async throws(StudIPError) -> Attempt<HTTPResponse> {
        try breaker.check()
        if request.budgeted { try chargeBudget() } else { countUnbudgeted() }
        let outcome = try await limiter.withSlot { () async throws(StudIPError) -> Attempt<HTTPResponse> in
            // Checked again once a slot is free: the requests queued behind the ones that timed out.
            try breaker.check()
            let started = ContinuousClock.now
            do {
                let response = try await execute(request)
                breaker.answered()
                logger.debug(
                    "\(request.method.rawValue) \(request.url) → \(response.status)",
                    metadata: ["attempt": "\(attempt)", "duration": "\(ContinuousClock.now - started)"])
                // A POST may have changed something (spent a login ticket or a refresh token, stored an upload): its
                // answer stands.
                return request.method.isSafe ? .answered(response, response) : .final(response)
            } catch {
                return try failure(error, request: request)
            }
        }
        guard let outcome else { throw .cancelled }
        return outcome
    }

    /// Timeouts and broken connections are transient; a refused connection or an unknown host is not (the
    /// server is down or the URL wrong: fail fast), and neither is cancellation. A POST (any method but GET and
    /// HEAD) is tried again only when it never left (no connection in time): once sent, the server may have acted
    /// on it.
    private func failure(_ error: any Error, request: HTTPRequest) throws(StudIPError) -> Attempt<HTTPResponse> {
        // Our own request body failed (an upload's file could not be read): no network trouble to retry.
        if let local = error as? StudIPError { throw local }
        let failure = TransportFailure(error)
        let detail: String
        switch failure {
        case .cancelled:
            throw .cancelled
        case .connectTimeout, .answerTimeout:
            if breaker.timedOut() {
                logger.warning("\(installation.serverName) is not answering; pausing requests")
            }
            detail = failure.detail(timeout: timeout)
        case .unreachable:
            throw .unreachable(server: installation.serverName, detail: TransportFailure.unreachableDetail)
        case .plainHTTPOverTLS(let description):
            if request.url.hasPrefix("https:"), let wrong = Self.wrongScheme(request.url) { throw wrong }
            return .failed(description)
        case .closedByServer, .other:
            detail = failure.detail(timeout: timeout)
        }
        if !request.method.isSafe, !failure.beforeSending {
            throw .unreachable(
                server: installation.serverName,
                detail:
                    "\(detail) after sending \(request.what); \(Self.actedOnNote)")
        }
        return .failed(detail)
    }

    /// How ``failure(_:request:)`` ends the detail of a request that broke off after it left
    /// (``StudIPError/brokeOffAfterSending``).
    static let actedOnNote = "not sent again, because the server may have acted on it"

    private func chargeBudget() throws(StudIPError) {
        let allowed = counters.withLock { counters in
            guard counters.total - counters.atRefreshStart < budget else { return false }
            counters.total += 1
            return true
        }
        guard allowed else { throw .budgetExhausted(server: installation.serverName, limit: budget) }
    }

    private func execute(_ request: HTTPRequest) async throws -> HTTPResponse {
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method =
            switch request.method {
            case .get: .GET
            case .head: .HEAD
            case .post: .POST
            case .put: .PUT
            case .patch: .PATCH
            case .delete: .DELETE
            }
        outgoing.headers.add(name: "User-Agent", value: "CampusFS")
        for (name, value) in request.headers { outgoing.headers.replaceOrAdd(name: name, value: value) }
        if let form = request.form {
            let body = form.map { "\(Installation.encode($0.0))=\(Installation.encode($0.1))" }.joined(separator: "&")
            outgoing.headers.replaceOrAdd(name: "Content-Type", value: "application/x-www-form-urlencoded")
            outgoing.body = .bytes(Array(body.utf8))
        }
        if let body = request.body {
            outgoing.headers.replaceOrAdd(name: "Content-Type", value: body.contentType)
            outgoing.body = body.make()
        }
        let response = try await client.execute(
            outgoing, timeout: TimeAmount(timeout + (request.extraTime ?? .zero)))
        var headers: [String: [String]] = [:]
        for (name, value) in response.headers {
            headers[name.lowercased(), default: []].append(value)
        }
        let body = try await response.body.collect(upTo: Self.maxBodyBytes)
        return HTTPResponse(status: Int(response.status.code), headers: headers, body: Data(body.readableBytesView))
    }

    /// The error for `url`'s scheme being the wrong one, naming its server with the other scheme.
    static func wrongScheme(_ url: String) -> StudIPError? {
        guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.host
        else { return nil }
        let hostAndPort = host + (components.port.map { ":\($0)" } ?? "")
        let other = scheme == "https" ? "http" : "https"
        return .wrongScheme(typed: "\(scheme)://\(hostAndPort)", meant: "\(other)://\(hostAndPort)")
    }
}

/// A failure below HTTP, told by the types AsyncHTTPClient, NIO and NIOSSL throw. Each caller decides what it
/// means for its requests: metadata requests retry timeouts, an `open` waiting for a download does not.
enum TransportFailure {
    case cancelled
    /// No connection in time: TCP connect or TLS handshake.
    case connectTimeout
    /// Connected, but no answer in time: the response, a read, a write, a connection from the pool, the deadline.
    case answerTimeout
    /// The server closed the connection before the answer was complete.
    case closedByServer
    /// The connection was refused or the host is unknown: the server is down or the URL wrong. Retrying cannot help.
    case unreachable
    /// A TLS handshake met a plain HTTP answer (BoringSSL's WRONG_VERSION_NUMBER): `https://` typed for a server
    /// that speaks plain HTTP. `detail` as for ``other(_:)``.
    case plainHTTPOverTLS(String)
    /// Anything else, described for the user ("connection failed (…)").
    case other(String)

    /// True when the request cannot have reached the server (no connection was made).
    var beforeSending: Bool {
        switch self {
        case .connectTimeout, .unreachable, .plainHTTPOverTLS: true
        case .cancelled, .answerTimeout, .closedByServer, .other: false
        }
    }

    /// What went wrong, for an error message.
    func detail(timeout: Duration) -> String {
        switch self {
        case .cancelled: "cancelled"
        case .connectTimeout, .answerTimeout: "timed out after \(timeout)"
        case .closedByServer: "connection closed by the server"
        case .unreachable: Self.unreachableDetail
        case .plainHTTPOverTLS(let detail), .other(let detail): detail
        }
    }

    /// The detail of ``unreachable`` for the user.
    static let unreachableDetail = "connection refused or host unknown"

    init(_ error: any Error) {
        if error is CancellationError || Task.isCancelled {
            self = .cancelled
            return
        }
        switch error {
        case let error as HTTPClientError:
            switch error {
            case .cancelled: self = .cancelled
            case .connectTimeout, .tlsHandshakeTimeout: self = .connectTimeout
            case .readTimeout, .writeTimeout, .deadlineExceeded, .getConnectionFromPoolTimeout:
                self = .answerTimeout
            case .remoteConnectionClosed: self = .closedByServer
            default: self = .other(Self.describe(error))
            }
        // NIO's happy-eyeballs connector: every address refused, or the name did not resolve.
        case is NIOConnectionError:
            self = .unreachable
        case let error as IOError where error.errnoCode == ECONNREFUSED:
            self = .unreachable
        // BoringSSL's reasons have no public code; the reason's name in its message is the stable part.
        case NIOSSLError.handshakeFailed(.sslError(let reasons))
        where reasons.contains(where: { $0.description.contains("WRONG_VERSION_NUMBER") }):
            self = .plainHTTPOverTLS(Self.describe(error))
        default:
            self = .other(Self.describe(error))
        }
    }

    private static func describe(_ error: any Error) -> String {
        "connection failed (\(String(describing: error).prefix(120)))"
    }
}
