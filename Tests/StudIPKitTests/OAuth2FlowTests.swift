import AsyncHTTPClient
import Foundation
import NIOCore
import StudIPModel
import TestSupport
import Testing

@testable import StudIPKit
@testable import StudIPSimulator

/// The OAuth2 authorization-code flow with PKCE end to end: a test browser agrees on the simulator's authorize
/// page and lands on the loopback listener, the code becomes tokens, the tokens list courses.
@Suite("OAuth2 authorization code with PKCE and the loopback redirect")
struct OAuth2FlowTests {
    /// The browser: follows no redirect by itself, so the test sees the one to the loopback listener; a refused
    /// connection fails at once (the stopped listener).
    static let browser: HTTPClient = {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow, timeout: .init(connect: .seconds(5), read: .seconds(30)))
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// Agrees on the authorize page as `user` (POST of the page's form) and returns where it redirects.
    static func agree(_ url: String, user: String = "test_autor", approve: Bool = true) async throws -> String {
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        let form = "username=\(user)&password=testing" + (approve ? "&approve=1" : "&deny=1")
        request.body = .bytes(ByteBuffer(string: form))
        let response = try await browser.execute(request, timeout: .seconds(30))
        #expect(response.status.code == 302)
        return try #require(response.headers.first(name: "Location"))
    }

    /// Opens `url` as the browser does after the redirect; returns status and page.
    static func open(_ url: String) async throws -> (Int, String) {
        let response = try await browser.execute(HTTPClientRequest(url: url), timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), String(buffer: body))
    }

    /// `POST /__sim/<path>`, as a test driving a running simulator would.
    static func control(_ sim: Simulator, _ path: String) async throws {
        var request = HTTPClientRequest(url: sim.controlURL + "/" + path)
        request.method = .POST
        let response = try await browser.execute(request, timeout: .seconds(30))
        #expect((200..<300).contains(Int(response.status.code)), "\(path)")
    }

    @Test("browser → loopback → exchange → Bearer lists the courses; refresh after expiry; revoked → login needed")
    func fullFlow() async throws {
        try await withSimulator(flavour: .v55) { sim async throws in
            let redirect = try await LoopbackRedirect.start()
            #expect(redirect.redirectURI.hasPrefix("http://127.0.0.1:"))
            #expect(redirect.redirectURI.hasSuffix("/callback"))
            let authorization = try OAuth2Authorization(
                baseURL: sim.baseURL, clientID: "campusfs", redirectURI: redirect.redirectURI)
            let authorize = try #require(URLComponents(string: authorization.authorizeURL))
            let query = Dictionary(uniqueKeysWithValues: (authorize.queryItems ?? []).map { ($0.name, $0.value ?? "") })
            #expect(authorize.path.hasSuffix("/dispatch.php/api/oauth2/authorize"))
            #expect(query["scope"] == "api")
            #expect(query["code_challenge_method"] == "S256")
            #expect(authorization.codeVerifier.count == 43)
            #expect(query["code_challenge"] == Authenticator.pkceChallenge(authorization.codeVerifier))
            #expect(query["state"] == authorization.state)

            async let code = redirect.code(state: authorization.state, timeout: .seconds(30))
            let location = try await Self.agree(authorization.authorizeURL)
            #expect(location.hasPrefix(redirect.redirectURI + "?"))
            let (status, page) = try await Self.open(location)
            #expect(status == 200)
            #expect(page.contains("return to the terminal"))
            let tokens = try await authorization.exchange(code: try await code)
            #expect(tokens.refreshToken != nil)
            #expect(tokens.expiresAt != nil)
            // The listener stopped after the one redirect.
            await #expect(throws: (any Error).self) { _ = try await Self.open(location) }

            let recorder = TokenRecorder()
            var configuration = Harness.configuration(sim, credentials: .bearer(tokens, storage: recorder))
            configuration.api = .jsonAPI
            try await withSource(configuration) { source in
                #expect(source.userFullName == "Testaccount Autor")
                let courses = try await source.overview().courses
                #expect(courses.count == 5)
                try await Self.control(sim, "oauth2/expire")
                let again = try await source.overview().courses
                #expect(again.count == 5)
                #expect(recorder.tokens.count == 1, "refreshed once after the expiry")
                try await Self.control(sim, "oauth2/revoke")
                let error = await Harness.error { () async throws(StudIPError) in try await source.overview() }
                #expect(error?.isLoginFailure == true, "\(String(describing: error))")
                #expect(error?.description.contains("expired or was revoked") == true)
            }
        }
    }

    @Test("a code is redeemed only with this login's verifier; a spent code is authenticationFailed")
    func verifierAndSpentCode() async throws {
        try await withSimulator(flavour: .v6) { sim async throws in
            let redirectURI = "http://127.0.0.1:9/callback"
            let authorization = try OAuth2Authorization(
                baseURL: sim.baseURL, clientID: "campusfs", redirectURI: redirectURI)
            let other = try OAuth2Authorization(baseURL: sim.baseURL, clientID: "campusfs", redirectURI: redirectURI)
            let location = try await Self.agree(authorization.authorizeURL)
            let code = try authorization.code(fromPasted: location)
            #expect(try authorization.code(fromPasted: "  \(code)\n") == code)
            let wrongVerifier = await Harness.error { () async throws(StudIPError) in
                try await other.exchange(code: code)
            }
            // Stud.IP 6.0 refuses with 500 and an HTML page; the refusal is still a login failure.
            #expect(wrongVerifier?.isLoginFailure == true, "\(String(describing: wrongVerifier))")
            #expect(wrongVerifier?.description.contains("authorization code was spent or expired") == true)
            // The server spends a code at its first use, verified or not.
            let fresh = try authorization.code(fromPasted: try await Self.agree(authorization.authorizeURL))
            sim.resetStatistics()
            _ = try await authorization.exchange(code: fresh)
            let spent = await Harness.error { () async throws(StudIPError) in
                try await authorization.exchange(code: fresh)
            }
            #expect(spent?.isLoginFailure == true, "\(String(describing: spent))")
            #expect(sim.statistics.snapshot().routes[AuthTests.tokenRoute] == 2)
        }
    }

    @Test("pasted redirects: another login's state is refused, a refusal in the browser is a clear error")
    func pastedRedirects() async throws {
        try await withSimulator(flavour: .v55) { sim async throws in
            let redirectURI = "http://127.0.0.1:9/callback"
            let authorization = try OAuth2Authorization(
                baseURL: sim.baseURL, clientID: "campusfs", redirectURI: redirectURI)
            let other = try OAuth2Authorization(baseURL: sim.baseURL, clientID: "campusfs", redirectURI: redirectURI)
            let location = try await Self.agree(other.authorizeURL)
            let wrongState = await Harness.error { () async throws(StudIPError) in
                try authorization.code(fromPasted: location)
            }
            guard case .unsafeLogin = wrongState else {
                Issue.record("expected unsafeLogin, got \(String(describing: wrongState))")
                return
            }
            let denied = try await Self.agree(authorization.authorizeURL, approve: false)
            let error = await Harness.error { () async throws(StudIPError) in try authorization.code(fromPasted: denied)
            }
            #expect(error == .authenticationFailed(server: sim.baseURL, message: "access was denied in the browser"))
        }
    }

    @Test("the loopback listener refuses a callback with a wrong state, and times out")
    func loopbackRefusals() async throws {
        let redirect = try await LoopbackRedirect.start()
        async let code = Harness.error { () async throws(StudIPError) in
            try await redirect.code(state: "expected", timeout: .seconds(30))
        }
        let (favicon, _) = try await Self.open(redirect.redirectURI.replacing("/callback", with: "/favicon.ico"))
        #expect(favicon == 404)
        let (status, page) = try await Self.open(redirect.redirectURI + "?code=abc&state=forged")
        #expect(status == 400)
        #expect(page.contains("did not succeed"))
        guard case .unsafeLogin = await code else {
            Issue.record("a forged state was accepted")
            return
        }

        let idle = try await LoopbackRedirect.start()
        let clock = ContinuousClock()
        let started = clock.now
        let timedOut = await Harness.error { () async throws(StudIPError) in
            try await idle.code(state: "s", timeout: .milliseconds(300))
        }
        guard case .authenticationFailed = timedOut else {
            Issue.record("expected a timeout, got \(String(describing: timedOut))")
            return
        }
        #expect(clock.now - started < .seconds(10))
    }

    @Test("the code exchange is a POST: a 503 is not sent again")
    func exchangeNotRetried() async throws {
        try await withSimulator(flavour: .v55) { sim async throws in
            let authorization = try OAuth2Authorization(
                baseURL: sim.baseURL, clientID: "campusfs", redirectURI: "http://127.0.0.1:9/callback")
            let code = try authorization.code(fromPasted: try await Self.agree(authorization.authorizeURL))
            sim.inject(Fault(action: .status(503), pathContains: "oauth2/token", method: "POST"))
            sim.resetStatistics()
            let error = await Harness.error { () async throws(StudIPError) in
                try await authorization.exchange(code: code)
            }
            #expect(error == .serverError(status: 503, what: "the OAuth2 code exchange"))
            #expect(sim.served == 1)
        }
    }
}
