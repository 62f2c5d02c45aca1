import Foundation

/// An OAuth2 client registered with the installation (Stud.IP: `dispatch.php/admin/oauth2`).
public struct OAuth2Client: Sendable, Hashable {
    public var id: String
    /// nil for a public client, which must use PKCE.
    public var secret: String?
    /// The registered redirect URIs. As on Stud.IP 6.0.2 (league/oauth2-server, RFC 8252 §7.3), a request's URI
    /// matches one exactly, except that the port is ignored for 127.0.0.1 and [::1]: the path must match, so a
    /// bare `http://127.0.0.1` admits no `/callback`, and `localhost` gets no port leeway (docs/universities.md).
    public var redirectURIs: [String]

    public init(id: String, secret: String? = nil, redirectURIs: [String] = ["http://127.0.0.1/callback"]) {
        self.id = id
        self.secret = secret
        self.redirectURIs = redirectURIs
    }

    /// The registered URI `requested` matches, nil when none does.
    func registered(matching requested: String) -> String? {
        guard let asked = URLComponents(string: requested) else { return nil }
        return redirectURIs.first { uri in
            guard var registered = URLComponents(string: uri) else { return false }
            if ["127.0.0.1", "[::1]", "::1"].contains(registered.host ?? "") { registered.port = asked.port }
            return registered.string == asked.string
        }
    }
}

/// The parts of Stud.IP's web UI a client touches: the login form at `index.php?again=yes` (pre-login session,
/// `security_token` and `login_ticket`, a new session id on success), its single sign-on entry
/// (`&sso=shib`, through ``ServiceProvider``), `dispatch.php/start`, the web download `sendfile.php`
/// (Sendfile.swift), and the OAuth2 authorization-code
/// endpoints of API.md §4.4 (`dispatch.php/api/oauth2/{authorize,token}`).
///
/// The authorize page is a plain HTML form; a test completes it without a browser by POSTing
/// `username`, `password` and `approve=1` to the same URL, which answers 302 to the redirect URI with `code`.
struct WebRoutes: Sendable {
    let authenticator: Authenticator
    let clients: [OAuth2Client]
    let settings: @Sendable () -> SimulatorSettings
    /// nil when single sign-on is not configured.
    let serviceProvider: ServiceProvider?
    /// The installation's scheme, host and port (the SP's handlers live there, outside the base path).
    let origin: String

    func handle(_ request: SimRequest, context: SimContext) -> SimResponse? {
        switch (request.method, request.segments) {
        case ("GET", ["index.php"]) where request.queryValue("sso") == "shib" && serviceProvider != nil:
            return singleSignOn(request, context: context)
        case ("GET", ["index.php"]):
            return loginPage(request, context: context, error: nil, route: "web GET login page")
        case ("POST", ["index.php"]):
            return login(request, context: context)
        case ("GET", ["sendfile.php"]), ("HEAD", ["sendfile.php"]):
            return sendfile(request, context: context)
        case ("GET", ["dispatch.php", "start"]), ("GET", ["dispatch.php", "start", "index"]):
            guard let user = request.user else {
                return SimResponse(
                    status: 302, headers: [("Location", context.baseURL + "/index.php?again=yes")],
                    route: "web GET start")
            }
            return .text(LoginPages.start(user: user), status: 200, route: "web GET start")
        case (_, ["dispatch.php", "api", "oauth2", "authorize"]) where context.flavour.hasOAuth2:
            return authorize(request, context: context)
        case ("POST", ["dispatch.php", "api", "oauth2", "token"]) where context.flavour.hasOAuth2:
            return token(request, context: context)
        case (_, ["dispatch.php", "api", "oauth2", "token"]) where context.flavour.hasOAuth2:
            return .text("Method Not Allowed", status: 405, headers: [("Allow", "POST")], route: "web oauth2 token")
        default:
            return nil
        }
    }

    /// The login page for the cookie's pre-login session (a new one when it has none), with a fresh ticket.
    func loginPage(_ request: SimRequest, context: SimContext, error: String?, route: String) -> SimResponse {
        let (id, tokens) = authenticator.preLogin(
            reusing: Authenticator.cookie(context.flavour.sessionCookie, in: request.header("cookie")))
        let page = LoginPages.studIP(
            action: context.baseURL + "/index.php?again=yes", tokens: tokens, error: error,
            singleSignOn: serviceProvider.map { _ in context.baseURL + "/index.php?again=yes&sso=shib" },
            assets: context.baseURL + "/assets", release: context.flavour.release)
        return .text(
            page, status: 200,
            headers: [("Set-Cookie", "\(context.flavour.sessionCookie)=\(id); path=/; HttpOnly")], route: route)
    }

    private func login(_ request: SimRequest, context: SimContext) -> SimResponse {
        let route = "web POST login"
        let form = FormEncoding.decode(request.body)
        let preLogin = Authenticator.cookie(context.flavour.sessionCookie, in: request.header("cookie"))
        guard
            let preLogin,
            authenticator.preLoginMatches(
                preLogin, securityToken: form["security_token"], loginTicket: form["login_ticket"])
        else {
            return loginPage(
                request, context: context,
                error: "Ungültiges oder abgelaufenes Sicherheitstoken. Bitte laden Sie die Seite neu und melden "
                    + "Sie sich erneut an.", route: route)
        }
        guard let user = context.university.user(named: form["loginname"] ?? ""), user.password == form["password"]
        else {
            return loginPage(
                request, context: context,
                error: "Bei der Anmeldung trat ein Fehler auf!\nintern: Das Passwort ist falsch!", route: route)
        }
        return sessionStarted(
            authenticator.completeLogin(preLogin: preLogin, user: user), context: context, route: route)
    }

    /// `index.php?again=yes&sso=shib`: Stud.IP's Shibboleth auth plugin. Without an SP session it sends the
    /// browser to the SP's login handler; with one it logs the mapped user in.
    private func singleSignOn(_ request: SimRequest, context: SimContext) -> SimResponse {
        let route = "web GET sso"
        guard let serviceProvider,
            let username = serviceProvider.username(cookies: request.header("cookie"), origin: origin)
        else {
            let target = context.baseURL + "/index.php?again=yes&sso=shib"
            return SimResponse(
                status: 302,
                headers: [("Location", origin + "/Shibboleth.sso/Login?target=" + FormEncoding.encode(target))],
                route: route)
        }
        guard let user = context.university.user(named: username) else {
            return loginPage(
                request, context: context, error: "Ihr Benutzername \(username) ist in Stud.IP nicht bekannt.",
                route: route)
        }
        return sessionStarted(authenticator.startSession(for: user), context: context, route: route)
    }

    private func sessionStarted(_ session: String, context: SimContext, route: String) -> SimResponse {
        SimResponse(
            status: 302,
            headers: [
                ("Set-Cookie", "\(context.flavour.sessionCookie)=\(session); path=/; HttpOnly"),
                // 6.0.2 lands on `dispatch.php/start/index`, 5.x on `dispatch.php/start` (docs/login.md).
                (
                    "Location",
                    context.baseURL + (context.flavour == .v6 ? "/dispatch.php/start/index" : "/dispatch.php/start")
                ),
            ],
            route: route)
    }

    private func authorize(_ request: SimRequest, context: SimContext) -> SimResponse {
        let route = "web \(request.method) oauth2 authorize"
        let query = Dictionary(request.query.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
        guard let client = clients.first(where: { $0.id == query["client_id"] }),
            let redirectURI = query["redirect_uri"], let registered = client.registered(matching: redirectURI)
        else {
            return .text(
                oauthErrorPage("Unbekannter Client oder ungültige Weiterleitungsadresse."), status: 400, route: route)
        }
        let state = query["state"]
        guard query["response_type"] == "code" else {
            return redirect(to: redirectURI, ["error": "unsupported_response_type", "state": state], route: route)
        }
        if client.secret == nil, query["code_challenge"] == nil {
            return redirect(to: redirectURI, ["error": "invalid_request", "state": state], route: route)
        }
        guard request.method == "POST" else {
            return .text(consentPage(clientID: client.id), status: 200, route: route)
        }
        let form = FormEncoding.decode(request.body)
        guard let user = context.university.user(named: form["username"] ?? ""), user.password == form["password"]
        else {
            return .text(oauthErrorPage("Benutzername oder Passwort falsch."), status: 200, route: route)
        }
        guard form["approve"] == "1" else {
            // Stud.IP 6.0.2 sends "Deny" to the registered URI, without the loopback port the request named.
            return redirect(to: registered, ["error": "access_denied", "state": state], route: route)
        }
        let code = authenticator.issueCode(
            .init(
                userID: user.id, clientID: client.id, redirectURI: redirectURI, codeChallenge: query["code_challenge"],
                expires: Date().addingTimeInterval(600)))
        return redirect(to: redirectURI, ["code": code, "state": state], route: route)
    }

    private func token(_ request: SimRequest, context: SimContext) -> SimResponse {
        let route = "web POST oauth2 token"
        let form = FormEncoding.decode(request.body)
        func refuse(_ code: String, _ message: String, status: Int = 400) -> SimResponse {
            tokenError(code, message, status: status, flavour: context.flavour, route: route)
        }
        guard let client = clients.first(where: { $0.id == form["client_id"] }),
            client.secret == nil || client.secret == form["client_secret"]
        else {
            return refuse("invalid_client", "Client authentication failed", status: 401)
        }
        let userID: String?
        switch form["grant_type"] {
        case "authorization_code":
            userID = authenticator.redeemCode(
                form["code"] ?? "", clientID: client.id, redirectURI: form["redirect_uri"] ?? "",
                verifier: form["code_verifier"])
            guard userID != nil else {
                return refuse(
                    "invalid_grant",
                    "The provided authorization grant (e.g., authorization code, resource owner credentials) or "
                        + "refresh token is invalid, expired, revoked, does not match the redirection URI used in "
                        + "the authorization request, or was issued to another client.")
            }
        case "refresh_token":
            userID = authenticator.redeemRefreshToken(form["refresh_token"] ?? "")
            guard userID != nil else { return refuse("invalid_grant", "The refresh token is invalid.") }
        default:
            return refuse("unsupported_grant_type", "The authorization grant type is not supported.")
        }
        guard let userID, context.university.users[userID] != nil else {
            return refuse("invalid_grant", "The refresh token is invalid.")
        }
        let lifetime = settings().accessTokenLifetimeSeconds
        let tokens = authenticator.issueTokens(userID: userID, lifetime: lifetime)
        let body: JSON = [
            "token_type": "Bearer", "expires_in": .int(lifetime), "access_token": .string(tokens.access),
            "refresh_token": .string(tokens.refresh),
        ]
        return .json(body, contentType: "application/json; charset=UTF-8", route: route)
    }

    /// league/oauth2-server's refusal: RFC 6749's JSON on 5.x; Stud.IP 6.0 turns every OAuth2 error into its
    /// HTML error page with status 500 (seen on 6.0.2: "Fehler! … The refresh token is invalid.").
    private func tokenError(_ code: String, _ message: String, status: Int, flavour: Flavour, route: String)
        -> SimResponse
    {
        guard flavour != .v6 else {
            let page = """
                <!DOCTYPE html><html lang="de-DE"><head><title>Fehler - Stud.IP</title></head><body>
                <div class="messagebox messagebox_error">Fehler! \(HTML.escape(message))</div></body></html>
                """
            return .text(page, status: 500, contentType: "text/html; charset=UTF-8", route: route)
        }
        return .json(
            ["error": .string(code), "error_description": .string(message), "message": .string(message)],
            status: status, contentType: "application/json; charset=UTF-8", route: route)
    }

    private func redirect(to uri: String, _ parameters: [String: String?], route: String) -> SimResponse {
        let query = parameters.compactMapValues { $0 }.sorted { $0.key < $1.key }
            .map { "\($0.key)=\(FormEncoding.encode($0.value))" }.joined(separator: "&")
        let separator = uri.contains("?") ? "&" : "?"
        return SimResponse(status: 302, headers: [("Location", uri + separator + query)], route: route)
    }

    private func consentPage(clientID: String) -> String {
        """
        <!DOCTYPE html><html><body><form method="post">
        <p>Die Anwendung „\(clientID)“ möchte auf Ihre Daten zugreifen.</p>
        <input name="username"><input name="password" type="password">
        <button name="approve" value="1">Erlauben</button><button name="deny" value="1">Verweigern</button>
        </form></body></html>
        """
    }

    private func oauthErrorPage(_ message: String) -> String {
        #"<!DOCTYPE html><html><body><div class="messagebox messagebox_error">\#(message)</div></body></html>"#
    }
}

/// `application/x-www-form-urlencoded`, as PHP reads it.
enum FormEncoding {
    static func decode(_ body: Data) -> [String: String] {
        Dictionary(pairs(String(decoding: body, as: UTF8.self)), uniquingKeysWith: { first, _ in first })
    }

    static func pairs(_ text: String) -> [(name: String, value: String)] {
        text.split(separator: "&").map { part in
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            return (decodeComponent(pair[0]), pair.count > 1 ? decodeComponent(pair[1]) : "")
        }
    }

    static func decodeComponent(_ text: String) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    static func encode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
