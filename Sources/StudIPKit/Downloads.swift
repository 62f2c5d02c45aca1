import AsyncHTTPClient
import AsyncHelpers
import Foundation
import NIOCore
import StudIPModel
import Synchronization

/// How long a download may take to start and how long it may stall. Separate from
/// ``ClientConfiguration/requestTimeout``: an `open` is waiting, and offline it must fail fast.
public struct DownloadTimeouts: Sendable, Hashable {
    /// Connecting to a host (TCP and TLS). Short, so that opening an uncached document offline fails within
    /// seconds (docs/architecture.md, "Promises") instead of hanging.
    public var connect: Duration
    /// From sending a request to its response head, per redirect hop and attempt.
    public var responseHead: Duration
    /// The longest silence while the body arrives. The reader's pauses count too: the body is not buffered, so
    /// a reader that stops reading stops the transfer.
    public var idle: Duration

    public init(connect: Duration = .seconds(3), responseHead: Duration = .seconds(10), idle: Duration = .seconds(30)) {
        self.connect = connect
        self.responseHead = responseHead
        self.idle = idle
    }
}

extension DocumentSource {
    /// What downloads this source's documents; nil for sources that cannot (test fakes).
    public var downloader: (any DocumentDownloader)? { self as? any DocumentDownloader }
}

extension JSONAPISource: DocumentDownloader {
    /// `GET file-refs/{id}/content` (API.md §3.7): `ETag`, 304 on `If-None-Match`, a redirect for documents
    /// hosted elsewhere.
    func download(_ request: DownloadRequest) async throws(StudIPError) -> DownloadResponse {
        var conditions: [String: String] = [:]
        if let etag = request.ifNoneMatch { conditions["If-None-Match"] = etag }
        // Stud.IP ignores it on this route; a host the document redirects to may answer it.
        if let date = request.ifModifiedSince { conditions["If-Modified-Since"] = HTTPDate.format(date) }
        return try await transport.download(
            transport.installation.jsonAPI(["file-refs", request.documentID, "content"]), conditions: conditions,
            what: "document \(request.documentID)", readsETag: true)
    }
}

extension LegacyRESTSource: DocumentDownloader {
    /// `GET file/{id}/download` (API.md §2.6): no ETag, and Stud.IP 5.0.7 answers `If-Modified-Since` with 200
    /// even when nothing changed (captured), so a cached version is never revalidated through this API: the
    /// listing's file id and size say when the content changed.
    ///
    /// Documents hosted elsewhere have no data file, and this route answers 500 for them (captured). Where the
    /// installation also speaks JSON:API, its content route redirects to the other host; otherwise the download
    /// fails saying where the document lives.
    func download(_ request: DownloadRequest) async throws(StudIPError) -> DownloadResponse {
        var conditions: [String: String] = [:]
        if let date = request.ifModifiedSince { conditions["If-Modified-Since"] = HTTPDate.format(date) }
        let what = "document \(request.documentID)"
        do {
            return try await transport.download(
                transport.installation.legacy(["file", request.documentID, "download"]), conditions: conditions,
                what: what, readsETag: false,
                refusal: { response in
                    guard response.status == 500, String(decoding: response.body, as: UTF8.self).contains("file system")
                    else { return nil }
                    return .hostedElsewhere(what: what)
                })
        } catch .hostedElsewhere {
            return try await elsewhere(request, what: what)
        }
    }

    /// A document hosted elsewhere, through JSON:API's content route and its redirect (credentials go only to
    /// Stud.IP). An installation without JSON:API answers that route with an error of its own.
    private func elsewhere(_ request: DownloadRequest, what: String) async throws(StudIPError) -> DownloadResponse {
        do {
            return try await transport.download(
                transport.installation.jsonAPI(["file-refs", request.documentID, "content"]), conditions: [:],
                what: what, readsETag: false)
        } catch .notFound, .serverError, .malformedResponse, .apiUnavailable, .authenticationFailed {
            throw .hostedElsewhere(what: what)
        }
    }
}

// MARK: - Starting a download

extension HTTPTransport {
    /// Where a download's hops ended.
    enum Opened {
        case notModified
        case content(HTTPClientResponse, server: String, redirected: Bool)
    }

    /// Where a download's hops ended with one set of credentials.
    enum Head {
        case opened(Opened)
        /// The installation answered 401: the credentials need renewing.
        case rejected
    }

    /// An answer to one request: a 2xx whose body is still to be read, or anything else, read (it is small).
    private enum Answer {
        case streaming(HTTPClientResponse)
        case answered(HTTPResponse)
    }

    /// Largest body read from a non-2xx answer (an error message, a redirect page).
    private static let maxAnswerBytes = 64 << 10

    /// Downloads `url`, following redirects by hand: only requests to the installation's own origin carry the
    /// credentials. A 2xx streams (``DownloadStream``), a 304 is `.notModified`. `readsETag` makes the `ETag` header
    /// the body's `etag` (legacy REST has none worth keeping); `refusal` recognises answers that are final although
    /// their status would be retried.
    ///
    /// Holds a slot of the download limiter until the body ends, fails or is dropped. Counts every request in
    /// ``requestCount``, none against the refresh budget: downloads are what the user asked for.
    func download(
        _ url: String, conditions: [String: String], what: String,
        readsETag: Bool, refusal: (HTTPResponse) -> StudIPError? = { _ in nil }
    ) async throws(StudIPError) -> DownloadResponse {
        guard await downloadLimiter.acquire() else { throw .cancelled }
        let permit = DownloadPermit(limiter: downloadLimiter)
        do throws(StudIPError) {
            switch try await open(url, conditions: conditions, what: what, refusal: refusal) {
            case .notModified:
                permit.release()
                return .notModified
            case .content(let response, let server, let redirected):
                let body = DownloadStream.body(
                    of: response, what: what, server: server, idle: downloadTimeouts.idle, permit: permit)
                return .content(
                    DownloadBody(
                        expectedLength: body.expectedLength,
                        etag: readsETag ? response.headers.first(name: "etag") : nil,
                        lastModified: response.headers.first(name: "last-modified").flatMap(HTTPDate.parse),
                        wasRedirected: redirected, next: body.next))
            }
        } catch {
            permit.release()
            throw error
        }
    }

    /// Follows `url` with the authenticator's credentials, renewed once when Stud.IP answers 401.
    func open(
        _ url: String, conditions: [String: String], what: String,
        refusal: (HTTPResponse) -> StudIPError? = { _ in nil }
    ) async throws(StudIPError) -> Opened {
        var renewed = false
        while true {
            let credentials = try await authenticator.headers(transport: self)
            switch try await follow(url, conditions: conditions, credentials: credentials, what: what, refusal: refusal)
            {
            case .opened(let opened):
                return opened
            case .rejected:
                guard !renewed, try await authenticator.renew(afterRejecting: credentials, transport: self) else {
                    throw .authenticationFailed(server: installation.serverName)
                }
                renewed = true
            }
        }
    }

    /// Requests `url` and the redirects it answers with, at most ``Redirect/maxHops`` of them. `conditions` go to
    /// every hop, `credentials` only to the installation's own origin.
    func follow(
        _ url: String, conditions: [String: String], credentials: [String: String], what: String,
        refusal: (HTTPResponse) -> StudIPError? = { _ in nil }
    ) async throws(StudIPError) -> Head {
        var target = url
        for hop in 0...Redirect.maxHops {
            let own = installation.isOwnOrigin(target)
            let server = own ? installation.serverName : Origin(target)?.description ?? "another host"
            var headers = conditions
            if own { headers.merge(credentials) { _, new in new } }
            switch try await start(target, headers: headers, what: what, server: server, refusal: refusal) {
            case .streaming(let response):
                return .opened(.content(response, server: server, redirected: hop > 0))
            case .answered(let response) where response.status == 304:
                return .opened(.notModified)
            case .answered(let response) where Redirect.isRedirect(status: response.status):
                guard hop < Redirect.maxHops else {
                    throw .malformedResponse(what: what, detail: "more than \(Redirect.maxHops) redirects")
                }
                guard let location = response.header("location"), let next = Redirect.target(of: location, from: target)
                else {
                    throw .malformedResponse(what: what, detail: "a redirect without a usable address")
                }
                logger.debug(
                    "\(what) redirected",
                    metadata: [
                        "to": "\(Origin(next)?.description ?? "?")", "credentials": "\(installation.isOwnOrigin(next))",
                    ])
                target = next
            case .answered(let response) where response.status == 401 && own:
                return .rejected
            case .answered(let response):
                throw own ? error(for: response, what: what) : elsewhereError(response, what: "\(what) at \(server)")
            }
        }
        throw .malformedResponse(what: what, detail: "more than \(Redirect.maxHops) redirects")
    }

    /// Another host's refusal. It never saw the Stud.IP credentials, so a 401 there is not a Stud.IP login
    /// problem.
    private func elsewhereError(_ response: HTTPResponse, what: String) -> StudIPError {
        switch response.status {
        case 401, 403: .forbidden(what: "\(what) (that host refuses; CampusFS sends Stud.IP logins only to Stud.IP)")
        case 404, 410: .notFound(what: what)
        default: .serverError(status: response.status, what: what)
        }
    }

    /// The longest `Retry-After` a download waits for before it retries. Someone waits for the open: a server asking
    /// for more patience gets a clear "try again" (EAGAIN) instead of an open that hangs and then looks offline.
    static let longestRetryAfter = Duration.seconds(1)

    /// One request until its response head, retried on 5xx, 429 and connections closed before the head. Never
    /// retried: timeouts and refused connections (the user waits for an `open`; offline it must fail fast), and
    /// anything after the head (body bytes may have been handed out).
    private func start(
        _ url: String, headers: [String: String], what: String, server: String,
        refusal: (HTTPResponse) -> StudIPError?
    ) async throws(StudIPError) -> Answer {
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        request.headers.add(name: "User-Agent", value: "CampusFS")
        for (name, value) in headers { request.headers.replaceOrAdd(name: name, value: value) }
        return try await retry.run(
            "the download of \(what)", logger: logger, longestRetryAfter: Self.longestRetryAfter,
            exhausted: { detail in unreachable(server, what: what, detail: detail) },
            attempt: { attempt async throws(StudIPError) in
                try await startOnce(request, url: url, what: what, server: server, refusal: refusal, attempt: attempt)
            })
    }

    /// One try of ``start(_:headers:what:server:refusal:)``.
    private func startOnce(
        _ request: HTTPClientRequest, url: String, what: String, server: String,
        refusal: (HTTPResponse) -> StudIPError?, attempt: Int
    ) async throws(StudIPError) -> Attempt<Answer> {
        countUnbudgeted()
        let started = ContinuousClock.now
        let response: HTTPClientResponse
        do {
            response = try await downloadClient.execute(request, timeout: TimeAmount(downloadTimeouts.responseHead))
        } catch {
            return try startFailure(error, url: url, what: what, server: server)
        }
        let status = Int(response.status.code)
        logger.debug(
            "GET \(server == installation.serverName ? url : server) → \(status)",
            metadata: ["attempt": "\(attempt)", "duration": "\(ContinuousClock.now - started)"])
        if (200..<300).contains(status) { return .final(.streaming(response)) }
        let answer = await Self.read(response)
        if let refused = refusal(answer) { throw refused }
        return .answered(.answered(answer), answer)
    }

    /// A non-2xx answer with its (small) body; a body too large to be a message is left out.
    static func read(_ response: HTTPClientResponse) async -> HTTPResponse {
        var headers: [String: [String]] = [:]
        for (name, value) in response.headers {
            headers[name.lowercased(), default: []].append(value)
        }
        let body = (try? await response.body.collect(upTo: maxAnswerBytes)).map { Data($0.readableBytesView) }
        return HTTPResponse(status: Int(response.status.code), headers: headers, body: body ?? Data())
    }

    /// A failure worth retrying (a connection closed before the head); throws for those that are not. An `open`
    /// waits for this, so a timeout is not retried: offline it must fail fast.
    private func startFailure(
        _ error: any Error, url: String, what: String, server: String
    ) throws(StudIPError) -> Attempt<Answer> {
        let detail: String
        switch TransportFailure(error) {
        case .cancelled:
            throw .cancelled
        case .connectTimeout:
            detail = "no connection within \(downloadTimeouts.connect)"
        case .answerTimeout:
            detail = "no answer within \(downloadTimeouts.responseHead)"
        case .unreachable:
            detail = TransportFailure.unreachableDetail
        case .closedByServer:
            return .failed("connection closed by the server")
        case .plainHTTPOverTLS(let failure):
            if server == installation.serverName, url.hasPrefix("https:"), let wrong = Self.wrongScheme(url) {
                throw wrong
            }
            return .failed(failure)
        case .other(let failure):
            return .failed(failure)
        }
        throw unreachable(server, what: what, detail: detail)
    }

    /// Stud.IP out of reach takes the server link offline; another host out of reach fails only this download.
    private func unreachable(_ server: String, what: String, detail: String) -> StudIPError {
        server == installation.serverName
            ? .unreachable(server: server, detail: detail) : .hostUnreachable(host: server, what: what, detail: detail)
    }
}

// MARK: - Reading the body

/// The body of one download, read chunk by chunk: each `next()` awaits AsyncHTTPClient's next chunk, so the
/// network read waits for the reader (backpressure) and at most a chunk is held in memory.
///
/// A transfer that breaks (reset, idle timeout, fewer bytes than announced) throws; it is never retried here,
/// since the reader already has the first bytes. `next()` must not be called again before it returns.
actor DownloadStream {
    private var iterator: HTTPClientResponse.Body.AsyncIterator?
    private var permit: DownloadPermit?
    private var failure: StudIPError?
    private var reading = false
    private var received: Int64 = 0
    private let expectedLength: Int64?
    private let what: String
    /// Who sends the body: Stud.IP, or the host a document hosted elsewhere lives on.
    private let server: String
    private let idle: Duration

    private init(
        response: HTTPClientResponse, expectedLength: Int64?, what: String, server: String, idle: Duration,
        permit: DownloadPermit
    ) {
        iterator = response.body.makeAsyncIterator()
        self.expectedLength = expectedLength
        self.what = what
        self.server = server
        self.idle = idle
        self.permit = permit
    }

    /// The announced length and the reader of `response`'s body, which takes over `permit`. `length`, when given,
    /// is what the body must hold whatever the headers say (a range: docs/ranges.md).
    static func body(
        of response: HTTPClientResponse, what: String, server: String, idle: Duration, permit: DownloadPermit,
        length: Int64? = nil
    ) -> (expectedLength: Int64?, next: @Sendable () async throws -> [UInt8]?) {
        let length = length ?? response.headers.first(name: "content-length").flatMap { Int64($0) }
        let stream = DownloadStream(
            response: response, expectedLength: length, what: what, server: server, idle: idle, permit: permit)
        return (length, { try await stream.next() })
    }

    /// The next chunk, nil at the end of the body.
    func next() async throws(StudIPError) -> [UInt8]? {
        if let failure { throw failure }
        precondition(!reading, "DownloadBody.next() called again before the previous call returned")
        guard var current = iterator else { return nil }
        reading = true
        defer { reading = false }
        var chunk: [UInt8]?
        do {
            while let buffer = try await current.next(isolation: self) {
                guard buffer.readableBytes > 0 else { continue }
                iterator = current
                received += Int64(buffer.readableBytes)
                chunk = Array(buffer.readableBytesView)
                break
            }
        } catch {
            throw fail(classify(error))
        }
        if let chunk {
            // A chunked body (no Content-Length) may run past the range it was announced as.
            if let expectedLength, received > expectedLength {
                throw fail(
                    .malformedResponse(
                        what: what, detail: "\(server) sent more than the \(expectedLength) bytes expected"))
            }
            return chunk
        }
        if let expectedLength, received != expectedLength {
            throw fail(
                .brokeOff(what: what, detail: "it ended after \(received) of \(expectedLength) bytes", stalled: false))
        }
        iterator = nil
        permit?.release()
        permit = nil
        return nil
    }

    /// Ends the transfer (dropping the iterator cancels it) and remembers why, for later calls.
    private func fail(_ error: StudIPError) -> StudIPError {
        failure = error
        iterator = nil
        permit?.release()
        permit = nil
        return error
    }

    private func classify(_ error: any Error) -> StudIPError {
        switch TransportFailure(error) {
        case .cancelled: .cancelled
        case .answerTimeout: .brokeOff(what: what, detail: "no data from \(server) for \(idle)", stalled: true)
        default:
            .brokeOff(what: what, detail: "\(server) closed the connection after \(received) bytes", stalled: false)
        }
    }
}

/// A download's slot in ``HTTPTransport/downloadLimiter``, held from the request until the body ends. Given back
/// once: explicitly, or at the latest when the body is dropped unread.
final class DownloadPermit: Sendable {
    private let limiter: ConcurrencyLimiter
    private let held = Mutex(true)

    init(limiter: ConcurrencyLimiter) {
        self.limiter = limiter
    }

    func release() {
        let wasHeld = held.withLock { held in
            defer { held = false }
            return held
        }
        guard wasHeld else { return }
        Task { [limiter] in await limiter.release() }
    }

    deinit {
        release()
    }
}

/// RFC 1123 dates, as `Last-Modified` and `If-Modified-Since` carry them.
enum HTTPDate {
    static func format(_ date: Date) -> String { formatter().string(from: date) }

    static func parse(_ text: String) -> Date? { formatter().date(from: text) }

    /// A fresh formatter per call: `DateFormatter` is not `Sendable`, and a download needs one or two.
    private static func formatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }
}
