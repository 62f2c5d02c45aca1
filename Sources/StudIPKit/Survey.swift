import Foundation
import Logging
import StudIPModel
import StudIPWire

/// What an installation offers for logging in, learned without credentials: for `campusfs login` to propose a
/// method from any address the user pasted.
public struct InstallationSurvey: Sendable, Hashable {
    /// The installation's base URL, derived from the pasted address.
    public var baseURL: String
    /// `jsonapi.php/v1` answers (200 or 401).
    public var jsonAPI: Bool
    /// `api.php` answers (Stud.IP before 6).
    public var legacyREST: Bool
    /// The release has Stud.IP's OAuth2 server (5.2+). Learned from the release, never by asking the endpoints: an
    /// anonymous request there is a PHP error on 5.0.7 and a 500 on a 6.0 without keys. Whether the installation set
    /// it up for CampusFS only a client id tells (docs/login.md).
    public var oauth2: Bool
    /// `index.php?again=yes` shows a login form with a password field.
    public var webLoginForm: Bool
    /// The login page's single sign-on links.
    public var singleSignOn: [SSOEntry]
    /// The release the login page's assets name (`studip-base.js?v=5.0.7`), when they do.
    public var release: String?
    /// "Stud.IP 5.0.7" where the release is known, else a phrase like "Stud.IP 6", "Stud.IP 4.5–5.1".
    public var generation: String

    public init(
        baseURL: String, jsonAPI: Bool, legacyREST: Bool, oauth2: Bool, webLoginForm: Bool, singleSignOn: [SSOEntry],
        release: String? = nil, generation: String
    ) {
        self.release = release
        self.baseURL = baseURL
        self.jsonAPI = jsonAPI
        self.legacyREST = legacyREST
        self.oauth2 = oauth2
        self.webLoginForm = webLoginForm
        self.singleSignOn = singleSignOn
        self.generation = generation
    }
}

/// A single sign-on link of the login page, e.g. "Login für Hochschulangehörige (Shibboleth)".
public struct SSOEntry: Sendable, Hashable {
    public var label: String
    /// Absolute: what ``Credentials/singleSignOn(username:password:entry:acceptsConsent:)`` starts at.
    public var url: String

    public init(label: String, url: String) {
        self.label = label
        self.url = url
    }
}

/// The parts of ``StudIP/survey(_:logger:)`` that need no server.
public enum LoginSurvey {
    /// Path parts below which every Stud.IP address continues; the base URL ends before them.
    static let scripts = [
        "/dispatch.php", "/index.php", "/jsonapi.php", "/api.php", "/plugins.php", "/seminar_main.php",
        "/sendfile.php",
    ]

    /// The base URL in any address of an installation: `https://host/studip/dispatch.php/my_courses?cid=x#y`
    /// → `https://host/studip`. Query, fragment, credentials and trailing slashes go.
    public static func baseURL(from pasted: String) throws(StudIPError) -> String {
        var text = pasted.trimmingCharacters(in: .whitespacesAndNewlines)
        if !text.contains("://") { text = "https://" + text }
        guard var components = URLComponents(string: text) else {
            return try Installation(text).baseURL
        }
        components.query = nil
        components.fragment = nil
        var path = components.path
        for script in scripts {
            if let range = path.range(of: script + "/") ?? (path.hasSuffix(script) ? path.range(of: script) : nil) {
                path = String(path[..<range.lowerBound])
                break
            }
        }
        while path.hasSuffix("/") { path.removeLast() }
        components.path = path
        return try Installation(components.string ?? text).baseURL
    }

    /// The release in a login page's asset addresses (`assets/javascripts/studip-base.js?v=5.0.7`): Stud.IP
    /// appends its version to every asset, so the page it shows anyone tells it without a request that fails.
    public static func release(fromLoginPage body: Data) -> String? {
        let text = String(decoding: body.prefix(256 << 10), as: UTF8.self)
        let versions = text.matches(of: /studip-base\.(?:js|css)\?v=(\d+\.\d+(?:\.\d+)?)/).map { String($0.1) }
        return versions.first
    }

    /// Whether `release` ("5.0.7", "6.0.2") has the OAuth2 server, which came with 5.2 (API.md §0.1).
    static func hasOAuth2(release: String) -> Bool {
        let parts = release.split(separator: ".").compactMap { Int($0) }
        guard let major = parts.first else { return false }
        return major > 5 || (major == 5 && (parts.dropFirst().first ?? 0) >= 2)
    }

    /// The generation the answering endpoints point to (API.md §0.1), or the release itself where known.
    static func generation(jsonAPI: Bool, legacyREST: Bool, release: String?) -> String {
        if let release { return "Stud.IP \(release)" }
        return switch (jsonAPI, legacyREST) {
        case (true, false): "Stud.IP 6"
        case (true, true): "Stud.IP 4.5 or newer"
        case (false, _): "Stud.IP before 4.5"
        }
    }
}

extension StudIP {
    /// Asks the installation behind `pastedURL` (any of its addresses) which APIs and login methods it offers,
    /// without credentials and without a request that makes the server log an error: the two APIs' user routes
    /// (401 to anyone) and the login page, none retried into a wait. Throws `.apiUnavailable` when no Stud.IP
    /// answers there.
    public static func survey(_ pastedURL: String, logger: Logger = Logger(label: "campusfs.studip"))
        async throws(StudIPError) -> InstallationSurvey
    {
        let baseURL = try LoginSurvey.baseURL(from: pastedURL)
        let installation = try Installation(baseURL)
        var configuration = ClientConfiguration(baseURL: baseURL, credentials: .sessionCookie(""), logger: logger)
        configuration.retry = RetryPolicy(attempts: 1)
        configuration.requestTimeout = .seconds(15)
        let transport = HTTPTransport(configuration: configuration, installation: installation)
        let result: Result<InstallationSurvey, StudIPError>
        do {
            result = .success(try await survey(installation, transport: transport))
        } catch {
            result = .failure(error)
        }
        await transport.shutdown()
        return try result.get()
    }

    private static func survey(_ installation: Installation, transport: HTTPTransport) async throws(StudIPError)
        -> InstallationSurvey
    {
        func probe(_ url: String, _ what: String) async throws(StudIPError) -> HTTPResponse {
            try await transport.send(HTTPRequest(method: .get, url: url, what: what))
        }
        /// An API answers an anonymous request with 401, or with JSON where it is public.
        func answers(_ response: HTTPResponse) -> Bool {
            response.status == 401 || (response.status == 200 && isJSON(response))
        }
        let jsonAPI = answers(try await probe(installation.jsonAPI(["users", "me"]), "the JSON:API probe"))
        let legacyREST = answers(try await probe(installation.legacy(["user"]), "the legacy REST probe"))
        var browser = LoginBrowser(transport: transport)
        let (page, pageURL) = try await browser.open(
            installation.baseURL + "/index.php?again=yes", what: "the login page")
        let html = page.status == 200 ? HTMLPage(page.body) : HTMLPage()
        let entries = html.links.compactMap { link -> SSOEntry? in
            guard link.href.contains("sso="), let url = Redirect.target(of: link.href, from: pageURL) else {
                return nil
            }
            return SSOEntry(label: link.text, url: url)
        }
        guard jsonAPI || legacyREST || html.loginForm != nil else {
            throw .apiUnavailable(
                server: installation.serverName,
                detail:
                    "no Stud.IP answers there; use the address of a Stud.IP page, e.g. https://studip.example.org/studip"
            )
        }
        let release = page.status == 200 ? LoginSurvey.release(fromLoginPage: page.body) : nil
        // Without a release on the page, only 6.x (JSON:API, no legacy REST) surely has the OAuth2 server.
        let oauth2 = release.map(LoginSurvey.hasOAuth2(release:)) ?? (jsonAPI && !legacyREST)
        return InstallationSurvey(
            baseURL: installation.baseURL, jsonAPI: jsonAPI, legacyREST: legacyREST, oauth2: oauth2,
            webLoginForm: html.loginForm != nil, singleSignOn: entries, release: release,
            generation: LoginSurvey.generation(jsonAPI: jsonAPI, legacyREST: legacyREST, release: release))
    }

    private static func isJSON(_ response: HTTPResponse) -> Bool {
        (response.header("content-type") ?? "").contains("json")
    }
}
