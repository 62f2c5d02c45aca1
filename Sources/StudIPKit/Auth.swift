import AsyncHelpers
import Foundation
import StudIPModel
import StudIPWire

/// Supplies the credentials of every API request and renews them after a 401.
///
/// Headers carrying secrets go only into requests, never into logs or errors: the transport logs the
/// request's `what` and URL, and errors name the server.
protocol Authenticator: Sendable {
    /// Headers for the next request; may renew credentials known to be expired first.
    func headers(transport: HTTPTransport) async throws(StudIPError) -> [String: String]

    /// Called once after the server rejected `rejected`. True when fresh credentials are ready and the request
    /// is worth repeating; false when there is nothing to renew (wrong password).
    func renew(afterRejecting rejected: [String: String], transport: HTTPTransport) async throws(StudIPError) -> Bool
}

func makeAuthenticator(
    _ credentials: Credentials, clientID: String, basicFallsBackToWebLogin: Bool = false
) -> any Authenticator {
    switch credentials {
    case .basic(let username, let password):
        let token = Data("\(username):\(password)".utf8).base64EncodedString()
        let basic = FixedAuthenticator(headers: ["Authorization": "Basic \(token)"])
        guard basicFallsBackToWebLogin else { return basic }
        return BasicOrFormAuthenticator(
            basic: basic,
            form: .webForm(username: username, password: password))
    case .sessionCookie(let value):
        // A bare value is Stud.IP 5's `Seminar_Session`; `name=value` names the cookie (6.0: `Studip_Session`).
        return FixedAuthenticator(headers: ["Cookie": value.contains("=") ? value : "Seminar_Session=\(value)"])
    case .bearer(let tokens, let storage):
        return BearerAuthenticator(tokens: tokens, storage: storage, clientID: clientID)
    case .webLogin(let username, let password):
        return SessionAuthenticator.webForm(username: username, password: password)
    case .singleSignOn(let username, let password, let entry, let acceptsConsent):
        return SessionAuthenticator { transport async throws(StudIPError) in
            try await SingleSignOn.logIn(
                username: username, password: password, entry: entry, acceptsConsent: acceptsConsent,
                transport: transport)
        }
    }
}

/// The web session `sendfile.php` needs for byte ranges (docs/ranges.md, "On the wire").
struct WebSession: Sendable {
    let authenticator: any Authenticator
    /// A session of its own beside an API login with Basic: its refusal says nothing about that login.
    let isOwn: Bool

    /// The login itself where it is a web session (the form, single sign-on, a given cookie); for Basic a session of
    /// its own through the login form with the same password, the one the form fallback uses where it is on (never
    /// two logins); none for OAuth2 tokens.
    init?(_ credentials: Credentials, api: any Authenticator) {
        switch credentials {
        case .webLogin, .singleSignOn, .sessionCookie:
            authenticator = api
            isOwn = false
        case .basic(let username, let password):
            authenticator =
                (api as? BasicOrFormAuthenticator)?.form ?? .webForm(username: username, password: password)
            isOwn = true
        case .bearer:
            return nil
        }
    }
}

/// Basic or a given session cookie: nothing to renew, a 401 means the credentials are wrong or expired.
struct FixedAuthenticator: Authenticator {
    let headers: [String: String]

    func headers(transport: HTTPTransport) async throws(StudIPError) -> [String: String] { headers }

    func renew(afterRejecting rejected: [String: String], transport: HTTPTransport) async throws(StudIPError) -> Bool {
        false
    }
}

/// HTTP Basic until the server refuses it, then Stud.IP's login form with the same password: the form tells a wrong
/// password (refused there too) from Basic that no longer reaches PHP (accepted there), so the second is not
/// reported as the first (docs/login.md).
actor BasicOrFormAuthenticator: Authenticator {
    private let basic: FixedAuthenticator
    let form: SessionAuthenticator
    private var usesForm = false

    init(basic: FixedAuthenticator, form: SessionAuthenticator) {
        self.basic = basic
        self.form = form
    }

    func headers(transport: HTTPTransport) async throws(StudIPError) -> [String: String] {
        usesForm ? try await form.headers(transport: transport) : basic.headers
    }

    func renew(afterRejecting rejected: [String: String], transport: HTTPTransport) async throws(StudIPError) -> Bool {
        guard rejected == basic.headers else {
            return try await form.renew(afterRejecting: rejected, transport: transport)
        }
        if usesForm { return true }
        do throws(StudIPError) {
            _ = try await form.headers(transport: transport)
        } catch {
            switch error {
            case _ where error.isLoginFailure, .unreachable: throw error
            // No login form to try (a page without one, no index.php, an error page): Basic's refusal stands.
            default: return false
            }
        }
        if !usesForm {
            usesForm = true
            transport.logger.warning(
                """
                the server refused HTTP Basic but its login form accepts the same password: Basic no longer reaches \
                Stud.IP (a proxy or web server change); using the login form
                """)
        }
        return true
    }
}

/// OAuth2 Bearer tokens (API.md §4.4): refreshed at `dispatch.php/api/oauth2/token` when known to be expired or
/// after a 401. Refresh tokens rotate, so concurrent requests share one refresh and the new pair is saved at once.
actor BearerAuthenticator: Authenticator {
    private var tokens: OAuthTokens
    private let storage: (any TokenStorage)?
    private let clientID: String
    private let refreshing = SingleFlight<OAuthTokens, StudIPError>()

    /// Refresh this long before the announced expiry, so a request does not race the deadline.
    private static let expiryMargin: TimeInterval = 10

    init(tokens: OAuthTokens, storage: (any TokenStorage)?, clientID: String) {
        self.tokens = tokens
        self.storage = storage
        self.clientID = clientID
    }

    func headers(transport: HTTPTransport) async throws(StudIPError) -> [String: String] {
        if tokens.refreshToken != nil, let expiry = tokens.expiresAt, expiry.timeIntervalSinceNow < Self.expiryMargin {
            try await refresh(replacing: tokens.accessToken, transport: transport)
        }
        return Self.headers(tokens)
    }

    func renew(afterRejecting rejected: [String: String], transport: HTTPTransport) async throws(StudIPError) -> Bool {
        guard rejected == Self.headers(tokens) else { return true }
        guard tokens.refreshToken != nil else { return false }
        try await refresh(replacing: tokens.accessToken, transport: transport)
        return true
    }

    private static func headers(_ tokens: OAuthTokens) -> [String: String] {
        ["Authorization": "Bearer \(tokens.accessToken)"]
    }

    /// Refreshes unless another task already replaced `accessToken`; joins a refresh in progress.
    private func refresh(replacing accessToken: String, transport: HTTPTransport) async throws(StudIPError) {
        guard tokens.accessToken == accessToken else { return }
        guard let refreshToken = tokens.refreshToken else {
            throw .authenticationFailed(server: transport.installation.serverName)
        }
        let request = refreshRequest(refreshToken, transport: transport)
        let fresh = try await refreshing.run { () async throws(StudIPError) in
            try await Self.requestTokens(request, transport: transport)
        }
        guard tokens.accessToken == accessToken else { return }
        tokens = fresh
        do {
            try await storage?.save(fresh)
            transport.logger.info("refreshed the OAuth2 access token")
        } catch {
            transport.logger.error(
                "refreshed the OAuth2 access token but could not store it; the next start needs a new login",
                metadata: ["error": "\(error)"])
        }
    }

    private func refreshRequest(_ refreshToken: String, transport: HTTPTransport) -> HTTPRequest {
        HTTPRequest(
            method: .post, url: transport.installation.web(["api", "oauth2", "token"]),
            headers: ["Accept": "application/json"],
            form: [("grant_type", "refresh_token"), ("refresh_token", refreshToken), ("client_id", clientID)],
            what: "the OAuth2 token refresh")
    }

    /// Sends a token request (refresh or code exchange) and reads the pair it answers.
    static func requestTokens(
        _ request: HTTPRequest, transport: HTTPTransport
    ) async throws(StudIPError) -> OAuthTokens {
        let response = try await transport.send(request)
        guard (200..<300).contains(response.status) else {
            if let refusal = refusal(of: response, request: request, transport: transport) { throw refusal }
            throw .serverError(status: response.status, what: request.what)
        }
        let json = try JSONValue.parse(response.body, what: request.what)
        guard let access = json["access_token"]?.id, let refresh = json["refresh_token"]?.id else {
            throw .malformedResponse(what: request.what, detail: "no access_token/refresh_token")
        }
        let expiry = json["expires_in"]?.int.map { Date(timeIntervalSinceNow: TimeInterval($0)) }
        return OAuthTokens(accessToken: access, refreshToken: refresh, expiresAt: expiry)
    }

    /// What the token endpoint's refusal means, nil when it is none (a server error to try again after). RFC 6749
    /// §5.2 refuses with 400/401 and JSON `{"error": "invalid_grant"}`; Stud.IP 6.0 answers every OAuth2 error
    /// with 500 and an HTML page quoting league/oauth2-server's message ("The refresh token is invalid.",
    /// "Client authentication failed"). Both mean "log in again" (docs/login.md); the server's words go to the log.
    static func refusal(of response: HTTPResponse, request: HTTPRequest, transport: HTTPTransport) -> StudIPError? {
        let text = String(decoding: response.body.prefix(64 << 10), as: UTF8.self)
        let json =
            (response.header("content-type") ?? "").contains("json")
            ? try? JSONValue.parse(response.body, what: request.what) : nil
        let code: String? =
            if let error = json?["error"]?.id {
                error
            } else if text.contains("refresh token is invalid") || text.contains("authorization grant") {
                "invalid_grant"
            } else if text.contains("Client authentication failed") {
                "invalid_client"
            } else {
                nil
            }
        guard code != nil || response.status == 400 || response.status == 401 else { return nil }
        let said = json?["error_description"]?.id ?? json?["message"]?.id ?? HTMLPage(response.body).errorMessage
        transport.logger.notice(
            "\(request.what) refused (HTTP \(response.status))",
            metadata: ["error": "\(code ?? "unknown")", "server said": "\(said ?? "")"])
        let server = transport.installation.serverName
        let grant = request.form?.first { $0.0 == "grant_type" }?.1
        switch code {
        case "invalid_client":
            let client = request.form?.first { $0.0 == "client_id" }?.1 ?? ""
            return .authenticationFailed(
                server: server, message: "it does not know the OAuth2 client id \"\(client)\" (oauth2_client_id)")
        case "invalid_grant" where grant == "refresh_token":
            return .authenticationFailed(
                server: server, message: "the OAuth2 login has expired or was revoked; log in again in the browser")
        case "invalid_grant":
            return .authenticationFailed(
                server: server, message: "the authorization code was spent or expired; log in again in the browser")
        default:
            return .authenticationFailed(server: server)
        }
    }
}
