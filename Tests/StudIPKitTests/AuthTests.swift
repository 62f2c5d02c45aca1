import Foundation
import StudIPKit
import StudIPModel
import Synchronization
import TestSupport
import Testing

@testable import StudIPSimulator

/// Records what the client persists after a token refresh.
final class TokenRecorder: TokenStorage {
    private let saved = Mutex<[OAuthTokens]>([])

    var tokens: [OAuthTokens] { saved.withLock { $0 } }

    func save(_ tokens: OAuthTokens) async throws {
        saved.withLock { $0.append(tokens) }
    }
}

@Suite("Authentication: Basic, Bearer with refresh, session cookie; no secret in errors or logs")
struct AuthTests {
    static let tokenRoute = "web POST oauth2 token"

    @Test(
        "wrong Basic credentials: authenticationFailed after one request, no retries",
        arguments: [
            ClientConfiguration.API.auto, .jsonAPI, .legacyREST,
        ])
    func basicFailure(api: ClientConfiguration.API) async throws {
        try await withSimulator { sim in
            let capture = LogCapture()
            let configuration = Harness.configuration(sim, password: "wrong", api: api, logger: capture.logger)
            let error = await Harness.error { () async throws(StudIPError) in try await StudIP.connect(configuration) }
            #expect(error == .authenticationFailed(server: sim.baseURL))
            #expect(error?.exitCode == 2)
            #expect(sim.served == 1 + capture.retries, "\(sim.statistics.snapshot().routes)")
            #expect(!capture.text.contains("retrying GET"), "a 401 is never retried")
        }
    }

    /// Tokens as the authorization-code flow would have issued them (the flow itself is the CLI's job).
    static func issueTokens(_ sim: Simulator, lifetime: Int = 3600) throws -> OAuthTokens {
        let user = try #require(sim.university.user(named: "test_autor"))
        let issued = sim.authenticator.issueTokens(userID: user.id, lifetime: lifetime)
        return OAuthTokens(accessToken: issued.access, refreshToken: issued.refresh, expiresAt: nil)
    }

    @Test("an expired access token is refreshed once, persisted, and the requests succeed")
    func bearerRefreshAfterExpiry() async throws {
        try await withSimulator(flavour: .v55) { sim async throws in
            let tokens = try Self.issueTokens(sim)
            let recorder = TokenRecorder()
            let configuration = Harness.configuration(sim, credentials: .bearer(tokens, storage: recorder))
            try await withSource(configuration) { source in
                #expect(source.apiName == "JSON:API")
                let overview = try await source.overview()
                #expect(recorder.tokens.isEmpty)

                sim.authenticator.expireAccessTokens()
                // Many requests at once meet the expired token; one refresh serves them all.
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for course in overview.courses {
                        group.addTask { try await source.content(of: course).documents.count }
                    }
                    var documents = 0
                    for try await count in group { documents += count }
                    #expect(documents == 24)
                }
                #expect(sim.statistics.snapshot().routes[Self.tokenRoute] == 1)
                let saved = try #require(recorder.tokens.first)
                #expect(recorder.tokens.count == 1)
                #expect(saved.accessToken != tokens.accessToken)
                #expect(saved.refreshToken != tokens.refreshToken, "refresh tokens rotate")
                #expect(saved.expiresAt.map { $0 > Date() } == true)
            }
        }
    }

    @Test("a token known to be expired is refreshed before the request, without a 401")
    func bearerProactiveRefresh() async throws {
        try await withSimulator(flavour: .v6) { sim async throws in
            var tokens = try Self.issueTokens(sim)
            tokens.expiresAt = Date(timeIntervalSinceNow: -60)
            let recorder = TokenRecorder()
            let configuration = Harness.configuration(sim, credentials: .bearer(tokens, storage: recorder))
            try await withSource(configuration) { source in
                _ = try await source.overview()
                let routes = sim.statistics.snapshot().routes
                #expect(routes[Self.tokenRoute] == 1)
                #expect(routes["jsonapi GET users/me"] == 1, "no request was answered 401")
                #expect(recorder.tokens.count == 1)
            }
        }
    }

    /// RFC 6749's 400 JSON `invalid_grant` (5.5) and Stud.IP 6.0's 500 HTML page ("The refresh token is invalid.")
    /// are the same news: log in again; not "answered 500, try again later" for ever.
    @Test(
        "a spent (rotated) refresh token is login needed, in both the RFC's and Stud.IP 6.0's form",
        arguments: [
            Flavour.v55, .v6,
        ])
    func rotatedRefreshTokenReused(flavour: Flavour) async throws {
        try await withSimulator(flavour: flavour) { sim async throws in
            let tokens = try Self.issueTokens(sim)
            let first = Harness.configuration(sim, credentials: .bearer(tokens, storage: TokenRecorder()))
            try await withSource(first) { source in
                sim.authenticator.expireAccessTokens()
                _ = try await source.overview()
            }
            sim.authenticator.expireAccessTokens()
            let stale = Harness.configuration(sim, credentials: .bearer(tokens, storage: TokenRecorder()))
            let error = await Harness.error { () async throws(StudIPError) in try await StudIP.connect(stale) }
            #expect(
                error
                    == .authenticationFailed(
                        server: sim.baseURL,
                        message: "the OAuth2 login has expired or was revoked; log in again in the browser"))
            #expect(error?.exitCode == 2)

            // A client id the installation does not know: a login failure that names it.
            var unknown = Harness.configuration(sim, credentials: .bearer(try Self.issueTokens(sim)))
            unknown.oauthClientID = "not-registered"
            sim.authenticator.expireAccessTokens()
            let refused = await Harness.error { () async throws(StudIPError) in try await StudIP.connect(unknown) }
            #expect(refused?.isLoginFailure == true, "\(String(describing: refused))")
            #expect(refused?.description.contains("\"not-registered\"") == true)
        }
    }

    @Test("an access token without refresh token fails cleanly once expired")
    func accessTokenOnly() async throws {
        try await withSimulator(flavour: .v55) { sim async throws in
            var tokens = try Self.issueTokens(sim)
            tokens.refreshToken = nil
            let configuration = Harness.configuration(sim, credentials: .bearer(tokens))
            try await withSource(configuration) { source in
                sim.authenticator.expireAccessTokens()
                let error = await Harness.error { () async throws(StudIPError) in try await source.overview() }
                #expect(error == .authenticationFailed(server: sim.baseURL))
                #expect(sim.statistics.snapshot().routes[Self.tokenRoute] == nil)
            }
        }
    }

    @Test("Bearer with legacy REST is refused up front")
    func bearerWithLegacy() async throws {
        try await withSimulator(flavour: .v55) { sim async throws in
            let configuration = Harness.configuration(
                sim, api: .legacyREST, credentials: .bearer(try Self.issueTokens(sim)))
            let error = await Harness.error { () async throws(StudIPError) in try await StudIP.connect(configuration) }
            guard case .apiUnavailable = error else {
                Issue.record("expected apiUnavailable, got \(String(describing: error))")
                return
            }
        }
    }

    @Test(
        "the web login form's session cookie works with both APIs",
        arguments: [
            ClientConfiguration.API.jsonAPI, .legacyREST,
        ])
    func webLogin(api: ClientConfiguration.API) async throws {
        try await withSimulator { sim in
            let capture = LogCapture()
            let configuration = Harness.configuration(
                sim, api: api, credentials: .webLogin(username: "test_autor", password: "testing"),
                logger: capture.logger)
            try await withSource(configuration) { source in
                let overview = try await source.overview()
                #expect(overview.user.username == "test_autor")
                #expect(overview.courses.count == 5)
            }
            // One login shared by all concurrent requests; a login POST is never sent twice.
            #expect(sim.statistics.snapshot().routes["web POST login"] == 1)
            #expect(!capture.text.contains("retrying POST"))

            let wrong = Harness.configuration(
                sim, api: api, credentials: .webLogin(username: "test_autor", password: "nope"))
            let error = await Harness.error { () async throws(StudIPError) in try await StudIP.connect(wrong) }
            #expect(error == .authenticationFailed(server: sim.baseURL), "our sentence; the page's text is logged")
        }
    }

    @Test("a given session cookie works; a bogus one is authenticationFailed")
    func sessionCookie() async throws {
        try await withSimulator { sim in
            let user = try #require(sim.university.user(named: "test_autor"))
            let session = sim.authenticator.startSession(for: user)
            let configuration = Harness.configuration(sim, credentials: .sessionCookie(session))
            try await withSource(configuration) { source in
                let overview = try await source.overview()
                #expect(overview.user.id == user.id)
            }
            let bogus = Harness.configuration(sim, credentials: .sessionCookie("forged"))
            let error = await Harness.error { () async throws(StudIPError) in try await StudIP.connect(bogus) }
            #expect(error == .authenticationFailed(server: sim.baseURL))
        }
    }

    @Test("credentials appear neither in error descriptions nor in logs")
    func noSecretsLeak() async throws {
        let password = "Zebra-Pässwort-7391"
        try await withSimulator(flavour: .v55) { sim async throws in
            let capture = LogCapture()
            var secrets = [password, Data("test_autor:\(password)".utf8).base64EncodedString()]
            for api in ClientConfiguration.API.allCases {
                for credentials in [
                    Credentials.basic(username: "test_autor", password: password),
                    .webLogin(username: "test_autor", password: password),
                    .singleSignOn(
                        username: "test_autor", password: password,
                        entry: sim.baseURL + "/index.php?again=yes&sso=shib",
                        acceptsConsent: false),
                ] {
                    let configuration = Harness.configuration(
                        sim, api: api, credentials: credentials, logger: capture.logger)
                    let error = try #require(
                        await Harness.error { () async throws(StudIPError) in try await StudIP.connect(configuration) })
                    #expect(!error.description.contains(password))
                    #expect(!String(reflecting: error).contains(password))
                    #expect(!"\(credentials)".contains(password))
                    var dumped = ""
                    dump(configuration, to: &dumped)
                    #expect(!dumped.contains(password))
                    #expect(!String(reflecting: configuration).contains(password))
                }
            }

            // A refresh logs, but never the tokens.
            let tokens = try Self.issueTokens(sim)
            let recorder = TokenRecorder()
            let configuration = Harness.configuration(
                sim, credentials: .bearer(tokens, storage: recorder), logger: capture.logger)
            try await withSource(configuration) { source in
                sim.authenticator.expireAccessTokens()
                _ = try await source.overview()
            }
            let fresh = try #require(recorder.tokens.first)
            secrets += [tokens.accessToken, tokens.refreshToken ?? "", fresh.accessToken, fresh.refreshToken ?? ""]
            #expect(!"\(fresh)".contains(fresh.accessToken))
            let logs = capture.text
            #expect(logs.contains("refreshed the OAuth2 access token"), "the capture works")
            #expect(logs.contains("GET"))
            for secret in secrets where !secret.isEmpty {
                #expect(!logs.contains(secret))
            }
        }
    }
}
