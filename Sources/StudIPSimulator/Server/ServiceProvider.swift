import Digests
import Foundation
import Synchronization

/// The Shibboleth SP in front of the installation (`{origin}/Shibboleth.sso/…`, on the installation's
/// listener, outside the base path as mod_shib's handler is): sends the browser to the IdP, accepts the
/// IdP's POSTed response once, and keeps SP sessions in `_shibsession_…` cookies.
final class ServiceProvider: Sendable {
    /// The HMAC key shared with the IdP, which signs its responses with it.
    let key: Data

    private struct PendingRequest: Sendable {
        var requestID: String
        var target: String
    }

    private struct State: Sendable {
        /// RelayState → the AuthnRequest it belongs to and where to go afterwards; each is used once.
        var pending: [String: PendingRequest] = [:]
        /// SP session id → username.
        var sessions: [String: String] = [:]
    }

    private let state = Mutex(State())

    init(key: Data) {
        self.key = key
    }

    static func entityID(origin: String) -> String { origin + "/shibboleth" }
    static func assertionConsumerService(origin: String) -> String { origin + "/Shibboleth.sso/SAML2/POST" }

    /// `_shibsession_` + a hash of the SP's entity id, as mod_shib names its cookie.
    static func cookieName(origin: String) -> String {
        "_shibsession_"
            + Digest.sha256(Data(entityID(origin: origin).utf8)).prefix(16)
            .map { String(format: "%02x", $0) }.joined()
    }

    /// Answers `/Shibboleth.sso/…`; `origin` is the installation's scheme, host and port, `identityProvider`
    /// the IdP's.
    func handle(_ request: SimRequest, origin: String, identityProvider: String) -> SimResponse {
        switch (request.method, request.segments) {
        case ("GET", ["Shibboleth.sso", "Login"]):
            let target = request.queryValue("target") ?? origin + "/"
            let authnRequest = SAML.AuthnRequest(
                id: "_" + Authenticator.randomToken(bytes: 16), issuer: Self.entityID(origin: origin),
                assertionConsumerService: Self.assertionConsumerService(origin: origin))
            let relayState = "ss:mem:" + Authenticator.randomToken(bytes: 16)
            state.withLock {
                $0.pending[relayState] = PendingRequest(requestID: authnRequest.id, target: target)
            }
            let location =
                identityProvider + IdentityProvider.ssoPath + "?SAMLRequest="
                + FormEncoding.encode(authnRequest.encoded)
                + "&RelayState=" + FormEncoding.encode(relayState)
            return SimResponse(status: 302, headers: [("Location", location)], route: "sp GET Login")
        case ("POST", ["Shibboleth.sso", "SAML2", "POST"]):
            return consume(FormEncoding.decode(request.body), origin: origin)
        default:
            return .text(
                LoginPages.serviceProviderError("no handler for \(request.segments.joined(separator: "/"))"),
                status: 404, route: "sp unknown")
        }
    }

    /// Verifies a response (signature, audience, destination, the request it answers) and starts an SP session.
    private func consume(_ form: [String: String], origin: String) -> SimResponse {
        let route = "sp POST SAML2"
        guard let response = SAML.Response(encoded: form["SAMLResponse"] ?? "", key: key) else {
            return .text(
                LoginPages.serviceProviderError("Message was signed, but signature could not be verified."),
                status: 400, route: route)
        }
        guard response.audience == Self.entityID(origin: origin),
            response.destination == Self.assertionConsumerService(origin: origin)
        else {
            return .text(
                LoginPages.serviceProviderError("Assertion is not addressed to this service provider."), status: 400,
                route: route)
        }
        let relayState = form["RelayState"] ?? ""
        let session = Authenticator.randomToken(bytes: 16)
        let target: String? = state.withLock { state in
            guard let pending = state.pending[relayState], pending.requestID == response.inResponseTo else {
                return nil
            }
            state.pending[relayState] = nil
            state.sessions[session] = response.username
            return pending.target
        }
        guard let target else {
            return .text(
                LoginPages.serviceProviderError("Rejecting unsolicited or replayed response (InResponseTo unknown)."),
                status: 400, route: route)
        }
        return SimResponse(
            status: 302,
            headers: [
                ("Set-Cookie", "\(Self.cookieName(origin: origin))=\(session); path=/; HttpOnly"),
                ("Location", target),
            ], route: route)
    }

    /// The username of a valid SP session in this cookie header.
    func username(cookies: String?, origin: String) -> String? {
        guard let session = Authenticator.cookie(Self.cookieName(origin: origin), in: cookies) else { return nil }
        return state.withLock { $0.sessions[session] }
    }

    /// Ends every SP session (and forgets pending requests), as an SP restart does.
    func expireSessions() {
        state.withLock { $0 = State() }
    }
}
