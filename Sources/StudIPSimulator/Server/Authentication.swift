import Digests
import Foundation
import Synchronization

/// Sessions, OAuth2 codes and tokens, and credential checks for every API.
///
/// Which credentials count depends on the API and release (API.md §2.2, §3.2): Basic and the session cookie
/// everywhere; Bearer tokens only on JSON:API from 5.2 on. Invalid credentials simply authenticate nobody —
/// the route then answers 401 the way its API does.
final class Authenticator: Sendable {
    struct AccessToken: Sendable {
        var userID: String
        var expires: Date
    }

    struct AuthorizationCode: Sendable {
        var userID: String
        var clientID: String
        var redirectURI: String
        var codeChallenge: String?
        var expires: Date
    }

    /// The tokens the login page binds to a pre-login session: `security_token` stays for the session,
    /// `login_ticket` is replaced by every rendering of the page, so only the latest page's ticket counts.
    struct PreLogin: Sendable {
        var securityToken: String
        var loginTicket: String
    }

    private struct State: Sendable {
        /// Session id → user id.
        var sessions: [String: String] = [:]
        /// Pre-login session id → the tokens of the login page it was last shown.
        var preLogins: [String: PreLogin] = [:]
        var accessTokens: [String: AccessToken] = [:]
        /// Refresh token → user id. Refresh tokens rotate: each is accepted once.
        var refreshTokens: [String: String] = [:]
        var codes: [String: AuthorizationCode] = [:]
    }

    private let state = Mutex(State())

    enum Scheme {
        case basic, cookie, bearer
    }

    /// The user these headers authenticate on an API that accepts `schemes`.
    func user(
        headers: [String: String], schemes: Set<Scheme>, in university: University, flavour: Flavour,
        now: Date = Date()
    ) -> User? {
        if schemes.contains(.basic), let (name, password) = Self.basicCredentials(headers["authorization"]),
            let user = university.user(named: name), user.password == password
        {
            return user
        }
        if schemes.contains(.bearer), let token = Self.bearerToken(headers["authorization"]),
            let userID = state.withLock({ $0.accessTokens[token] }).flatMap({ $0.expires > now ? $0.userID : nil })
        {
            return university.users[userID]
        }
        if schemes.contains(.cookie), let session = Self.cookie(flavour.sessionCookie, in: headers["cookie"]),
            let userID = state.withLock({ $0.sessions[session] })
        {
            return university.users[userID]
        }
        return nil
    }

    /// Starts a web session (what the login form does) and returns its cookie value.
    func startSession(for user: User) -> String {
        let id = Self.randomToken(bytes: 16)
        state.withLock { $0.sessions[id] = user.id }
        return id
    }

    /// The pre-login session a login page is rendered for: the cookie's one when it is still a pre-login
    /// session, else a new one; either way with a fresh `login_ticket`.
    func preLogin(reusing id: String?) -> (id: String, tokens: PreLogin) {
        let ticket = Self.randomToken(bytes: 16)
        return state.withLock { state in
            if let id, var tokens = state.preLogins[id] {
                tokens.loginTicket = ticket
                state.preLogins[id] = tokens
                return (id, tokens)
            }
            let id = Self.randomToken(bytes: 16)
            let tokens = PreLogin(securityToken: Self.randomToken(bytes: 12), loginTicket: ticket)
            state.preLogins[id] = tokens
            return (id, tokens)
        }
    }

    /// Whether a login POST carries the tokens of the last login page shown to its pre-login session.
    func preLoginMatches(_ id: String?, securityToken: String?, loginTicket: String?) -> Bool {
        guard let id, let tokens = state.withLock({ $0.preLogins[id] }) else { return false }
        return tokens.securityToken == securityToken && tokens.loginTicket == loginTicket
    }

    /// Ends a pre-login session and starts the logged-in one under a new id (as PHP's
    /// `session_regenerate_id` after a login), so the pre-login id never authenticates.
    func completeLogin(preLogin id: String, user: User) -> String {
        _ = state.withLock { $0.preLogins.removeValue(forKey: id) }
        return startSession(for: user)
    }

    /// Ends every web session and pre-login session, as a server restart with a wiped session store would.
    func expireSessions() {
        state.withLock {
            $0.sessions.removeAll()
            $0.preLogins.removeAll()
        }
    }

    /// Revokes every access token, refresh token and unredeemed code (an administrator revoking all grants).
    func revokeTokens() {
        state.withLock {
            $0.accessTokens.removeAll()
            $0.refreshTokens.removeAll()
            $0.codes.removeAll()
        }
    }

    func issueCode(_ code: AuthorizationCode) -> String {
        let value = Self.randomToken(bytes: 20)
        state.withLock { $0.codes[value] = code }
        return value
    }

    /// Redeems an authorization code once; checks client, redirect URI and the PKCE verifier (S256 or plain).
    func redeemCode(_ value: String, clientID: String, redirectURI: String, verifier: String?, now: Date = Date())
        -> String?
    {
        guard let code = state.withLock({ $0.codes.removeValue(forKey: value) }), code.expires > now,
            code.clientID == clientID, code.redirectURI == redirectURI
        else { return nil }
        if let challenge = code.codeChallenge {
            guard let verifier, Self.pkceChallenge(verifier) == challenge || verifier == challenge else { return nil }
        }
        return code.userID
    }

    /// Issues an access and a refresh token for a user.
    func issueTokens(userID: String, lifetime: Int, now: Date = Date()) -> (access: String, refresh: String) {
        let access = Self.randomToken(bytes: 32)
        let refresh = Self.randomToken(bytes: 32)
        state.withLock {
            $0.accessTokens[access] = AccessToken(userID: userID, expires: now.addingTimeInterval(Double(lifetime)))
            $0.refreshTokens[refresh] = userID
        }
        return (access, refresh)
    }

    /// Consumes a refresh token (rotation) and returns its user.
    func redeemRefreshToken(_ token: String) -> String? {
        state.withLock { $0.refreshTokens.removeValue(forKey: token) }
    }

    /// Makes every access token expire now, so tests can exercise the refresh path.
    func expireAccessTokens() {
        state.withLock { state in
            for key in state.accessTokens.keys { state.accessTokens[key]?.expires = .distantPast }
        }
    }

    static func pkceChallenge(_ verifier: String) -> String {
        Data(Digest.sha256(Data(verifier.utf8))).base64URLEncoded()
    }

    private static func basicCredentials(_ header: String?) -> (String, String)? {
        guard let header, header.lowercased().hasPrefix("basic "),
            let data = Data(base64Encoded: String(header.dropFirst(6)).trimmingCharacters(in: .whitespaces)),
            let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return nil }
        return (String(text[..<colon]), String(text[text.index(after: colon)...]))
    }

    private static func bearerToken(_ header: String?) -> String? {
        guard let header, header.lowercased().hasPrefix("bearer ") else { return nil }
        return String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
    }

    static func cookie(_ name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0] == name { return pair[1] }
        }
        return nil
    }

    static func randomToken(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}

extension Flavour {
    /// The web session's cookie: `Seminar_Session` up to 5.x (captured on 5.0.7), `Studip_Session` on 6.0.
    var sessionCookie: String { self == .v6 ? "Studip_Session" : "Seminar_Session" }

    /// The release its pages name in their assets' `?v=` (5.0.7's login page: `studip-base.js?v=5.0.7`).
    var release: String {
        switch self {
        case .v50: "5.0.7"
        case .v55: "5.5.4"
        case .v6: "6.0.2"
        }
    }
}

extension Data {
    func base64URLEncoded() -> String {
        base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
