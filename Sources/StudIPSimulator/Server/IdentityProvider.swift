import Foundation
import Hummingbird
import Synchronization

/// Single sign-on through a Shibboleth IdP, configured when the simulator starts.
public struct SingleSignOnConfiguration: Sendable {
    /// `plain`: local storage, login, response. `consent`: an attribute release page after the login, until
    /// the user accepts with a remembered or global consent.
    public enum Variant: String, Sendable, CaseIterable {
        case plain, consent
    }

    public var variant: Variant
    /// IdP password by username; every other user of the dataset has `sso-` + their Stud.IP password.
    public var passwords: [String: String]

    public init(variant: Variant = .plain, passwords: [String: String] = [:]) {
        self.variant = variant
        self.passwords = passwords
    }
}

/// A Shibboleth IdP 4/5 on its own listener: the SAML2 Redirect SSO profile as a Spring Web Flow conversation
/// (`execution=e1sN`, one view per step, a new `csrf_token` per view), its own `JSESSIONID` cookie (path
/// `/idp`), a login that outlives the SP's and Stud.IP's sessions, and consent remembered per user.
final class IdentityProvider: Sendable {
    static let ssoPath = "/idp/profile/SAML2/Redirect/SSO"

    private enum View: Sendable {
        case localStorage
        case login(error: String?)
        case consent

        /// For the request counters: `idp GET login`, `idp POST consent`, ….
        var name: String {
            switch self {
            case .localStorage: "local-storage"
            case .login: "login"
            case .consent: "consent"
            }
        }
    }

    /// One run of the SSO flow: the request it answers and the view it shows now.
    private struct Conversation: Sendable {
        var request: SAML.AuthnRequest
        var relayState: String
        var view: View
        var step: Int
        var csrf: String
        var execution: String { "e1s\(step)" }
    }

    private struct Session: Sendable {
        var username: String?
        var conversation: Conversation?
    }

    private struct State: Sendable {
        /// `JSESSIONID` → session.
        var sessions: [String: Session] = [:]
        /// Users who accepted the release with "remember" or "global"; they skip the consent view.
        var consents: Set<String> = []
    }

    private let configuration: SingleSignOnConfiguration
    private let key: Data
    private let store: UniversityStore
    private let state = Mutex(State())

    init(configuration: SingleSignOnConfiguration, key: Data, store: UniversityStore) {
        self.configuration = configuration
        self.key = key
        self.store = store
    }

    /// Answers one request to the IdP; `origin` is the IdP's own, `serviceProvider` the installation's origin
    /// (the only SP in its metadata).
    func handle(_ request: SimRequest, origin: String, serviceProvider: String) -> SimResponse {
        guard request.segments == ["idp", "profile", "SAML2", "Redirect", "SSO"] else {
            return .text(LoginPages.idpError("Not Found", "No such page."), status: 404, route: "idp unknown")
        }
        let cookie = Authenticator.cookie("JSESSIONID", in: request.header("cookie"))
        if request.method == "GET", let encoded = request.queryValue("SAMLRequest") {
            return start(
                encoded, relayState: request.queryValue("RelayState") ?? "", cookie: cookie, origin: origin,
                serviceProvider: serviceProvider)
        }
        guard let cookie, let execution = request.queryValue("execution") else {
            return stale("idp \(request.method) SSO")
        }
        if request.method == "GET" { return show(cookie, execution: execution) }
        guard let view = state.withLock({ $0.sessions[cookie]?.conversation?.view }) else {
            return stale("idp POST SSO")
        }
        var response = submit(cookie, execution: execution, body: request.body, origin: origin)
        response.route = "idp POST " + view.name
        return response
    }

    /// A new AuthnRequest: checks it comes from the known SP, starts a conversation and redirects to its first view.
    private func start(
        _ encoded: String, relayState: String, cookie: String?, origin: String, serviceProvider: String
    ) -> SimResponse {
        let route = "idp GET SSO"
        guard let request = SAML.AuthnRequest(encoded: encoded),
            request.issuer == ServiceProvider.entityID(origin: serviceProvider),
            request.assertionConsumerService == ServiceProvider.assertionConsumerService(origin: serviceProvider)
        else {
            return .text(
                LoginPages.idpError("Unsupported Request", "The application you have accessed is not registered."),
                status: 400, route: route)
        }
        let conversation = Conversation(
            request: request, relayState: relayState, view: .localStorage, step: 1,
            csrf: Authenticator.randomToken(bytes: 16))
        let id: String = state.withLock { state in
            let id = cookie.flatMap { state.sessions[$0] != nil ? $0 : nil } ?? Authenticator.randomToken(bytes: 16)
            state.sessions[id, default: Session()].conversation = conversation
            return id
        }
        var headers = [("Location", origin + Self.ssoPath + "?execution=" + conversation.execution)]
        if id != cookie { headers.append(("Set-Cookie", "JSESSIONID=\(id); Path=/idp; HttpOnly")) }
        return SimResponse(status: 302, headers: headers, route: route)
    }

    private func show(_ cookie: String, execution: String) -> SimResponse {
        guard let conversation = state.withLock({ $0.sessions[cookie]?.conversation }),
            conversation.execution == execution
        else { return stale("idp GET SSO") }
        return render(conversation, username: state.withLock { $0.sessions[cookie]?.username })
    }

    private func render(_ conversation: Conversation, username: String?) -> SimResponse {
        let action = Self.ssoPath + "?execution=" + conversation.execution
        let service = conversation.request.issuer
        let page: String
        switch conversation.view {
        case .localStorage:
            page = LoginPages.idpLocalStorage(action: action, csrf: conversation.csrf)
        case .login(let error):
            page = LoginPages.idpLogin(action: action, csrf: conversation.csrf, error: error, service: service)
        case .consent:
            let attributes = username.flatMap { self.attributes(of: $0) } ?? [:]
            page = LoginPages.idpConsent(
                action: action, csrf: conversation.csrf, service: service,
                attributes: attributes.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
        }
        return .text(page, status: 200, route: "idp GET " + conversation.view.name)
    }

    /// A POST to the current view with its `csrf_token`; anything else is a stale request. The caller names
    /// the route after the view that was posted.
    private func submit(_ cookie: String, execution: String, body: Data, origin: String) -> SimResponse {
        let form = FormEncoding.decode(body)
        guard let session = state.withLock({ $0.sessions[cookie] }), var conversation = session.conversation,
            conversation.execution == execution, form["csrf_token"] == conversation.csrf
        else { return stale("idp POST SSO") }
        var username = session.username
        switch conversation.view {
        case .localStorage:
            break
        case .login:
            let name = form["j_username"] ?? ""
            guard let user = store.snapshot().user(named: name),
                form["j_password"] == configuration.passwords[name] ?? "sso-" + user.password
            else {
                conversation.view = .login(error: "The password you entered was incorrect.")
                conversation.csrf = Authenticator.randomToken(bytes: 16)
                update(cookie) { $0.conversation = conversation }
                return render(conversation, username: nil)
            }
            username = user.username
            update(cookie) { $0.username = user.username }
        case .consent:
            guard let username, form["_eventId_proceed"] != nil else {
                update(cookie) { $0.conversation = nil }
                return .text(
                    LoginPages.idpError(
                        "Attribute Release Rejected", "You declined to release information to the service."),
                    status: 200, route: "idp POST consent")
            }
            let option = form["_shib_idp_consentOptions"]
            if option == "_shib_idp_rememberConsent" || option == "_shib_idp_globalConsent" {
                _ = state.withLock { $0.consents.insert(username) }
            }
            let released = FormEncoding.pairs(String(decoding: body, as: UTF8.self))
                .filter { $0.name == "_shib_idp_consentIds" }.map(\.value)
            return respond(conversation, username: username, cookie: cookie, released: Set(released))
        }
        guard let username else {
            return advance(&conversation, to: .login(error: nil), cookie: cookie, origin: origin)
        }
        if configuration.variant == .consent, !state.withLock({ $0.consents.contains(username) }) {
            return advance(&conversation, to: .consent, cookie: cookie, origin: origin)
        }
        return respond(conversation, username: username, cookie: cookie)
    }

    /// The next view of the conversation (POST-redirect-GET, as Spring Web Flow does).
    private func advance(_ conversation: inout Conversation, to view: View, cookie: String, origin: String)
        -> SimResponse
    {
        conversation.view = view
        conversation.step += 1
        conversation.csrf = Authenticator.randomToken(bytes: 16)
        let next = conversation
        update(cookie) { $0.conversation = next }
        return SimResponse(
            status: 302, headers: [("Location", origin + Self.ssoPath + "?execution=" + next.execution)],
            route: "idp POST SSO")
    }

    /// Ends the conversation with the auto-submitted response for the SP.
    /// `released` limits the attributes to those the user left checked on the consent view.
    private func respond(
        _ conversation: Conversation, username: String, cookie: String, released: Set<String>? = nil
    ) -> SimResponse {
        update(cookie) { $0.conversation = nil }
        let request = conversation.request
        let response = SAML.Response(
            id: "_" + Authenticator.randomToken(bytes: 16), inResponseTo: request.id,
            destination: request.assertionConsumerService, audience: request.issuer, username: username,
            attributes: (attributes(of: username) ?? [:]).filter { released?.contains($0.key) ?? true })
        return .text(
            LoginPages.idpPostResponse(
                action: request.assertionConsumerService, relayState: conversation.relayState,
                samlResponse: response.encoded(key: key)),
            status: 200, route: "idp POST SSO")
    }

    private func attributes(of username: String) -> [String: String]? {
        guard let user = store.snapshot().user(named: username) else { return nil }
        return [
            "uid": user.username, "mail": user.email, "givenName": user.givenName, "sn": user.familyName,
            "eduPersonPrincipalName": user.username + "@idp.example.org",
        ]
    }

    private func update(_ cookie: String, _ change: (inout Session) -> Void) {
        state.withLock { change(&$0.sessions[cookie, default: Session()]) }
    }

    private func stale(_ route: String) -> SimResponse {
        .text(
            LoginPages.idpError(
                "Stale Request",
                "You may be seeing this page because you used the Back button while browsing a secure web site or "
                    + "application, or the request did not carry the token of the page you were shown."),
            status: 400, route: route)
    }
}

/// The IdP's listener: decodes the request, asks ``IdentityProvider``, counts the route.
struct IdentityProviderResponder: HTTPResponder {
    typealias Context = BasicRequestContext

    let identityProvider: IdentityProvider
    let statistics: Statistics
    let settings: SettingsBox
    let addresses: PortCollector

    func respond(to request: Request, context: Context) async throws -> Response {
        var request = request
        let body = Data(buffer: try await request.collectBody(upTo: 1 << 20))
        let simRequest = SimRequest(
            method: request.method.rawValue,
            segments: request.uri.path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) },
            query: request.uri.query.map(FormEncoding.pairs) ?? [],
            headers: InstallationResponder.headerDictionary(request.headers), body: body)
        let origin = "http://127.0.0.1:\(await addresses.identityProvider ?? 0)"
        let serviceProvider = "http://127.0.0.1:\(await addresses.installation ?? 0)"
        let response = identityProvider.handle(simRequest, origin: origin, serviceProvider: serviceProvider)
        statistics.count(route: response.route)
        return Streamer(statistics: statistics, settings: settings).response(response, bodyFault: nil)
    }
}
