import AsyncHelpers
import Foundation
import StudIPModel
import StudIPWire

/// What a browser does during a login: sends cookies back to the origin that set them and follows redirects by
/// hand, so the flows see every hop (and every cookie) and decide where a password may go.
struct LoginBrowser {
    let transport: HTTPTransport
    var jar = CookieJar()
    /// Hops one login may take, redirects and forms together; a Shibboleth login needs about ten.
    static let maxHops = 20
    private(set) var hops = 0

    init(transport: HTTPTransport) { self.transport = transport }

    /// Sends one request and follows its redirects (302/303 become GETs, 307/308 keep method and form); returns
    /// the first answer that is no redirect and the URL that gave it.
    mutating func open(
        _ url: String, method: HTTPRequest.Method = .get, form: [(String, String)]? = nil, what: String
    ) async throws(StudIPError) -> (response: HTTPResponse, url: String) {
        var request = HTTPRequest(method: method, url: url, form: form, what: what)
        while true {
            let response = try await send(request)
            guard Redirect.isRedirect(status: response.status), let location = response.header("location") else {
                return (response, request.url)
            }
            guard let next = Redirect.target(of: location, from: request.url) else {
                throw .malformedResponse(what: what, detail: "a redirect to an unusable address")
            }
            if response.status != 307, response.status != 308 {
                request.method = .get
                request.form = nil
            } else if request.form != nil, Origin(next) != Origin(request.url) {
                // A form (it may hold a password) goes again only where it was sent, never to another origin.
                throw .unsafeLogin(
                    server: Origin(request.url)?.description ?? request.url,
                    detail: "redirects a submitted form to \(Origin(next)?.description ?? "another site")")
            }
            request.url = next
        }
    }

    /// One request with the jar's cookies; stores the cookies of the answer. An identity provider that cannot be
    /// reached is named as itself, not as the installation.
    mutating func send(_ request: HTTPRequest) async throws(StudIPError) -> HTTPResponse {
        hops += 1
        guard hops <= Self.maxHops else {
            throw .malformedResponse(what: request.what, detail: "more than \(Self.maxHops) pages and redirects")
        }
        var request = request
        request.headers["Cookie"] = jar.header(for: request.url)
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch .unreachable(let server, let detail) {
            let own = transport.installation.isOwnOrigin(request.url)
            throw .unreachable(server: own ? server : Origin(request.url)?.description ?? server, detail: detail)
        }
        jar.store(response, from: request.url)
        return response
    }

    /// The form's action as an absolute URL (its page when missing).
    static func action(of form: HTMLForm, on page: String) throws(StudIPError) -> String {
        guard let target = Redirect.target(of: form.action ?? page, from: page) else {
            throw .malformedResponse(what: "a login page", detail: "a form whose action is not a web address")
        }
        return target
    }
}

/// Stud.IP's web login form (`index.php?again=yes`), walked as a browser does: the page's hidden fields
/// (`security_token`, `login_ticket`) are bound to the session cookie it sets, so all of them go back with it.
///
/// Success is what the server does, not a cookie's name: Stud.IP 5 calls its session `Seminar_Session`, 6.0
/// `Studip_Session`, and both answer a right password with a redirect away from the login page (docs/login.md).
enum WebLogin {
    /// The `Cookie` header of the new session: every cookie the installation set, whatever it names them.
    static func logIn(username: String, password: String, transport: HTTPTransport) async throws(StudIPError)
        -> String
    {
        let installation = transport.installation
        var browser = LoginBrowser(transport: transport)
        let loginPage = installation.baseURL + "/index.php?again=yes"
        transport.logger.debug("web login: opening the login page")
        let (response, pageURL) = try await browser.open(loginPage, what: "the web login page")
        guard response.status == 200 else { throw transport.error(for: response, what: "the web login page") }
        guard let form = HTMLPage(response.body).loginForm else {
            throw .malformedResponse(what: "the web login page", detail: "no login form (a form with a password field)")
        }
        let before = browser.jar.header(for: installation.baseURL)
        let target = try LoginBrowser.action(of: form, on: pageURL)
        guard installation.isOwnOrigin(target) else {
            throw .unsafeLogin(
                server: installation.serverName,
                detail: "has a login form that posts to \(Origin(target)?.description ?? "another site")")
        }
        transport.logger.debug("web login: sending the login form")
        let answer = try await browser.send(
            HTTPRequest(
                method: .post, url: target, form: fill(form, username: username, password: password),
                what: "the web login"))
        var refusal: HTMLPage?
        switch answer.status {
        case 300..<400:
            guard let location = answer.header("location"), let next = Redirect.target(of: location, from: target)
            else {
                throw .malformedResponse(what: "the web login", detail: "a redirect without a usable address")
            }
            if isLoginPage(next, of: installation) {
                // Sent to the front page: a refusal if it shows the login form again (with what it says there).
                let (answer, _) = try await browser.open(next, what: "the web login page")
                let page = HTMLPage(answer.body)
                if answer.status != 200 || page.loginForm != nil { refusal = page }
            }
        case 200:
            // A page without the form (a second factor, maintenance) is no login unless the session is new.
            let page = HTMLPage(answer.body)
            if page.loginForm != nil || browser.jar.header(for: installation.baseURL) == before { refusal = page }
        default:
            throw transport.error(for: answer, what: "the web login")
        }
        if let refusal {
            // The page's words go to the log; the user gets one sentence of ours (StudIPError).
            transport.logger.notice(
                "the web login form refused the login",
                metadata: refusal.errorMessage.map { ["page said": "\($0)"] } ?? [:])
            throw .authenticationFailed(server: installation.serverName)
        }
        guard let session = browser.jar.header(for: installation.baseURL) else {
            throw .malformedResponse(what: "the web login", detail: "the server accepted it but set no session cookie")
        }
        transport.logger.info("logged in through the web login form")
        return session
    }

    /// Whether `url` is the installation's login page (`index.php`, where a refused login is sent back).
    static func isLoginPage(_ url: String, of installation: Installation) -> Bool {
        guard installation.isOwnOrigin(url), let components = URLComponents(string: url),
            let base = URLComponents(string: installation.baseURL)
        else { return false }
        return components.path == base.path + "/index.php" || components.path == base.path + "/"
            || components.path == base.path
    }

    /// The fields a browser sends when the user types into a login form and presses its first named button:
    /// preset fields, the username into the username field (`j_username`, `username`, `loginname`, else the
    /// first text or e-mail input), the password into the password input.
    static func fill(_ form: HTMLForm, username: String, password: String) -> [(String, String)] {
        var fields = form.presetFields
        let named = ["loginname", "j_username", "username"]
        let userInput =
            form.inputs.first { named.contains($0.name ?? "") }
            ?? form.inputs.first { ($0.type == "text" || $0.type == "email") && $0.name != nil }
        if let name = userInput?.name { fields.append((name, username)) }
        if let name = form.inputs.first(where: { $0.type == "password" })?.name { fields.append((name, password)) }
        if let button = form.buttons.first(where: { $0.name != nil }), let name = button.name {
            fields.append((name, button.value))
        }
        return fields
    }
}

/// Credentials that are a web session: logs in on first use and again when the API rejects the session.
actor SessionAuthenticator: Authenticator {
    typealias LogIn = @Sendable (HTTPTransport) async throws(StudIPError) -> String
    private let logInOnce: LogIn
    private var cookie: String?
    /// Requests that meet an expired session at the same time share one login.
    private let loggingIn = SingleFlight<String, StudIPError>()

    init(logIn: @escaping LogIn) { logInOnce = logIn }

    /// A session from Stud.IP's login form with this username and password.
    static func webForm(username: String, password: String) -> SessionAuthenticator {
        SessionAuthenticator { transport async throws(StudIPError) in
            try await WebLogin.logIn(username: username, password: password, transport: transport)
        }
    }

    func headers(transport: HTTPTransport) async throws(StudIPError) -> [String: String] {
        if let cookie { return Self.headers(cookie) }
        return Self.headers(try await logIn(replacing: nil, transport: transport))
    }

    func renew(afterRejecting rejected: [String: String], transport: HTTPTransport) async throws(StudIPError) -> Bool {
        guard let cookie, rejected == Self.headers(cookie) else { return true }
        transport.logger.info("the web session expired; logging in again")
        _ = try await logIn(replacing: cookie, transport: transport)
        return true
    }

    private static func headers(_ cookie: String) -> [String: String] {
        ["Cookie": cookie]
    }

    /// Logs in unless another task already replaced `stale`; joins a login in progress.
    private func logIn(replacing stale: String?, transport: HTTPTransport) async throws(StudIPError) -> String {
        if let cookie, cookie != stale { return cookie }
        let logInOnce = logInOnce
        let fresh = try await loggingIn.run { () async throws(StudIPError) in try await logInOnce(transport) }
        cookie = fresh
        return fresh
    }
}
