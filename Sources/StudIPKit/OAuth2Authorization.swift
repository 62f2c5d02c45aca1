import Digests
import Foundation
import Logging
import StudIPModel
import StudIPWire

/// One OAuth2 authorization-code login with PKCE (RFC 7636, S256) against Stud.IP 5.2+
/// (`dispatch.php/api/oauth2/authorize` and `…/token`, API.md §4.4).
///
/// The user opens ``authorizeURL`` in a browser and agrees; the browser comes back to `redirectURI` with a code
/// (``LoopbackRedirect``, or pasted: ``code(fromPasted:)``), which ``exchange(code:logger:)`` turns into tokens.
/// `state` ties the answer to this login, the verifier the code to this client.
public struct OAuth2Authorization: Sendable {
    private let installation: Installation
    public let clientID: String
    public let redirectURI: String
    public let state: String
    let codeVerifier: String

    public init(baseURL: String, clientID: String, redirectURI: String) throws(StudIPError) {
        installation = try Installation(baseURL)
        self.clientID = clientID
        self.redirectURI = redirectURI
        state = Self.randomToken(bytes: 16)
        codeVerifier = Self.randomToken(bytes: 32)
    }

    public var baseURL: String { installation.baseURL }

    /// `BASE64URL(SHA256(verifier))`, without padding.
    var codeChallenge: String {
        Self.base64URL(Data(Digest.sha256(Data(codeVerifier.utf8))))
    }

    /// The page the user opens to agree.
    public var authorizeURL: String {
        installation.web(
            ["api", "oauth2", "authorize"],
            query: [
                ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI), ("scope", "api"),
                ("state", state), ("code_challenge", codeChallenge), ("code_challenge_method", "S256"),
            ])
    }

    /// The code in what a user pasted: the bare code, or the whole address the browser was sent to (then its
    /// `state` must be this login's, and an `error` there is the user's refusal).
    public func code(fromPasted pasted: String) throws(StudIPError) -> String {
        let text = pasted.trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.contains("?") || text.contains("://"), let components = URLComponents(string: text) else {
            guard !text.isEmpty, !text.contains(where: \.isWhitespace) else {
                throw .authenticationFailed(server: baseURL, message: "no authorization code was pasted")
            }
            return text
        }
        return try Self.code(fromQuery: components.queryItems ?? [], state: state, server: baseURL)
    }

    /// The code of a redirect's query, checked against the login's `state`; `server` names the login in errors.
    static func code(fromQuery items: [URLQueryItem], state: String, server: String) throws(StudIPError) -> String {
        let query = Dictionary(items.map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { first, _ in first })
        if let error = query["error"] {
            let message =
                error == "access_denied" ? "access was denied in the browser" : "the authorization failed (\(error))"
            throw .authenticationFailed(server: server, message: message)
        }
        guard query["state"] == state else {
            throw .unsafeLogin(
                server: server, detail: "sent back an authorization for another login (its state differs); start again")
        }
        guard let code = query["code"], !code.isEmpty else {
            throw .authenticationFailed(server: server, message: "the redirect carries no authorization code")
        }
        return code
    }

    /// Trades the code for tokens at the token endpoint; a spent or wrong code is `.authenticationFailed`.
    public func exchange(code: String, logger: Logger = Logger(label: "campusfs.studip")) async throws(StudIPError)
        -> OAuthTokens
    {
        let transport = HTTPTransport(
            configuration: ClientConfiguration(
                baseURL: baseURL, credentials: .sessionCookie(""), oauthClientID: clientID, logger: logger),
            installation: installation)
        let request = HTTPRequest(
            method: .post, url: installation.web(["api", "oauth2", "token"]), headers: ["Accept": "application/json"],
            form: [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirectURI),
                ("client_id", clientID), ("code_verifier", codeVerifier),
            ],
            what: "the OAuth2 code exchange")
        let result: Result<OAuthTokens, StudIPError>
        do {
            result = .success(try await BearerAuthenticator.requestTokens(request, transport: transport))
        } catch {
            result = .failure(error)
        }
        await transport.shutdown()
        return try result.get()
    }

    private static func randomToken(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return base64URL(Data((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }))
    }

    static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacing("+", with: "-").replacing("/", with: "_").replacing("=", with: "")
    }
}
