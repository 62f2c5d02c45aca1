import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

@Suite("Authentication: Basic, session cookie, OAuth2 with PKCE")
struct AuthenticationTests {
    @Test func basicAuthOnBothAPIs() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let me = "\(sim.baseURL)/jsonapi.php/v1/users/me"

            let ok = try await HTTP.get(me, headers: [HTTP.basic("test_autor"), HTTP.jsonAPIAccept])
            #expect(ok.status == 200)
            #expect(ok.text.contains("\"test_autor\""))

            for headers in [[HTTP.basic("test_autor", "wrong"), HTTP.jsonAPIAccept], [HTTP.jsonAPIAccept]] {
                let denied = try await HTTP.get(me, headers: headers)
                #expect(denied.status == 401)
                #expect(denied.header("WWW-Authenticate") == #"Basic realm="Stud.IP JSON-API""#)
                #expect(denied.body.isEmpty)
            }

            let legacy = try await HTTP.get("\(sim.baseURL)/api.php/user", headers: [HTTP.basic("test_autor", "wrong")])
            #expect(legacy.status == 401)
            #expect(legacy.header("WWW-Authenticate") == #"Basic realm="test-installation""#)
            #expect(legacy.text == "HTTP/1.1 401 Unauthorized (no consumer)")
        }
    }

    @Test func sessionCookieFromTheLoginFormOnBothAPIs() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let cookie = "Seminar_Session=" + (try await LoginSurfaceTests.formLogin(sim))
            let me = try await HTTP.get(
                "\(sim.baseURL)/jsonapi.php/v1/users/me", headers: [("Cookie", cookie), HTTP.jsonAPIAccept])
            #expect(me.status == 200)
            let legacy = try await HTTP.get("\(sim.baseURL)/api.php/user", headers: [("Cookie", cookie)])
            #expect(legacy.status == 200)
            let forged = try await HTTP.get(
                "\(sim.baseURL)/jsonapi.php/v1/users/me",
                headers: [("Cookie", "Seminar_Session=forged"), HTTP.jsonAPIAccept])
            #expect(forged.status == 401)
        }
    }

    @Test func oauth2AuthorizationCodeWithPKCEAndRotatingRefreshTokens() async throws {
        try await withSimulator(Scenario.start(flavour: .v55)) { sim async throws in
            let flow = OAuth2Flow(baseURL: sim.baseURL)

            let page = try await HTTP.get(flow.authorizeURL)
            #expect(page.status == 200)
            #expect(page.text.contains("<form"))

            let code = try await flow.approve()
            let wrongVerifier = try await flow.token([
                "grant_type": "authorization_code", "code": code, "code_verifier": "x",
            ])
            #expect(wrongVerifier.status == 400)
            #expect(wrongVerifier.text.contains("invalid_grant"))

            let secondCode = try await flow.approve()
            let tokens = try await flow.exchange(secondCode)
            #expect(tokens.expiresIn == 3600)
            let me = "\(sim.baseURL)/jsonapi.php/v1/users/me"
            #expect(
                try await HTTP.get(me, headers: [("Authorization", "Bearer \(tokens.access)"), HTTP.jsonAPIAccept])
                    .status
                    == 200)
            let replay = try await flow.token(
                ["grant_type": "authorization_code", "code": secondCode, "code_verifier": flow.verifier])
            #expect(replay.status == 400, "an authorization code is accepted once")

            _ = try await HTTP.control(.POST, "\(sim.controlURL)/oauth2/expire")
            #expect(
                try await HTTP.get(me, headers: [("Authorization", "Bearer \(tokens.access)"), HTTP.jsonAPIAccept])
                    .status
                    == 401)

            let refreshed = try await flow.refresh(tokens.refresh)
            #expect(refreshed.access != tokens.access)
            #expect(
                try await HTTP.get(me, headers: [("Authorization", "Bearer \(refreshed.access)"), HTTP.jsonAPIAccept])
                    .status == 200)
            let reused = try await flow.token(["grant_type": "refresh_token", "refresh_token": tokens.refresh])
            #expect(reused.status == 400, "refresh tokens rotate")

            let legacy = try await HTTP.get(
                "\(sim.baseURL)/api.php/user", headers: [("Authorization", "Bearer \(refreshed.access)")])
            #expect(legacy.status == 401, "legacy REST has no Bearer auth")
        }
    }

    @Test func oauth2DeniedAndPublicClientWithoutPKCE() async throws {
        try await withSimulator(Scenario.start(flavour: .v6)) { sim async throws in
            let flow = OAuth2Flow(baseURL: sim.baseURL)
            let denied = try await HTTP.request(
                .POST, flow.authorizeURL, body: Data("username=test_autor&password=testing&deny=1".utf8))
            #expect(denied.status == 302)
            // As 6.0.2 does: "Deny" goes to the registered URI, without the port the request named.
            #expect(denied.header("Location")?.hasPrefix("http://127.0.0.1/callback?error=access_denied") == true)

            let noPKCE = try await HTTP.get(
                "\(sim.baseURL)/dispatch.php/api/oauth2/authorize?response_type=code&client_id=campusfs"
                    + "&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcallback&state=s")
            #expect(noPKCE.header("Location")?.contains("error=invalid_request") == true)

            let unknownClient = try await HTTP.get(
                flow.authorizeURL.replacingOccurrences(of: "client_id=campusfs", with: "client_id=evil"))
            #expect(unknownClient.status == 400)
        }
    }

    /// The port is ignored for 127.0.0.1, the path is not; a bare address or `localhost` matches nothing.
    @Test func redirectURIsMatchAsOnSixZero() {
        let client = OAuth2Client(id: "campusfs")
        #expect(client.registered(matching: "http://127.0.0.1:41234/callback") == "http://127.0.0.1/callback")
        #expect(client.registered(matching: "http://127.0.0.1/callback") == "http://127.0.0.1/callback")
        #expect(client.registered(matching: "http://127.0.0.1:41234/other") == nil)
        #expect(client.registered(matching: "http://localhost:41234/callback") == nil)
        let bare = OAuth2Client(id: "bare", redirectURIs: ["http://127.0.0.1"])
        #expect(bare.registered(matching: "http://127.0.0.1:41234/callback") == nil)
    }

    /// Stud.IP 6.0 answers an OAuth2 error with its HTML error page and 500; 5.5 with RFC 6749's JSON and 400.
    @Test func oauth2TokenErrorsPerRelease() async throws {
        for (flavour, status, type) in [(Flavour.v6, 500, "text/html"), (.v55, 400, "application/json")] {
            try await withSimulator(Scenario.start(flavour: flavour)) { sim async throws in
                let answer = try await HTTP.request(
                    .POST, "\(sim.baseURL)/dispatch.php/api/oauth2/token",
                    body: Data("grant_type=refresh_token&refresh_token=spent&client_id=campusfs".utf8))
                #expect(answer.status == status, "\(flavour)")
                #expect(answer.header("Content-Type")?.hasPrefix(type) == true, "\(flavour)")
                #expect(answer.text.contains("The refresh token is invalid."), "\(flavour)")
            }
        }
    }

    @Test func stableReleaseHasNoOAuth2() async throws {
        try await withSimulator(Scenario.start(flavour: .v50)) { sim async throws in
            let flow = OAuth2Flow(baseURL: sim.baseURL)
            #expect(try await HTTP.get(flow.authorizeURL).status == 404)
        }
    }
}

/// Drives the authorization-code flow the way a CLI without a browser would.
struct OAuth2Flow {
    let baseURL: String
    let verifier = "campusfs-test-verifier-0123456789-abcdefghijklmnopqrstuvwxyz"
    let redirectURI = "http://127.0.0.1:9/callback"

    var authorizeURL: String {
        let challenge = Authenticator.pkceChallenge(verifier)
        return "\(baseURL)/dispatch.php/api/oauth2/authorize?response_type=code&client_id=campusfs"
            + "&redirect_uri=\(FormEncoding.encode(redirectURI))&state=xyz&scope=api"
            + "&code_challenge=\(challenge)&code_challenge_method=S256"
    }

    /// Logs in on the consent page and approves; returns the code from the redirect.
    func approve() async throws -> String {
        let response = try await HTTP.request(
            .POST, authorizeURL, headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: Data("username=test_autor&password=testing&approve=1".utf8))
        #expect(response.status == 302)
        let location = try #require(response.header("Location"))
        #expect(location.hasPrefix(redirectURI))
        let items = URLComponents(string: location)?.queryItems ?? []
        #expect(items.first { $0.name == "state" }?.value == "xyz")
        return try #require(items.first { $0.name == "code" }?.value)
    }

    func token(_ form: [String: String]) async throws -> HTTPResult {
        var fields = form
        fields["client_id"] = "campusfs"
        fields["redirect_uri"] = redirectURI
        let body = fields.map { "\($0.key)=\(FormEncoding.encode($0.value))" }.joined(separator: "&")
        return try await HTTP.request(
            .POST, "\(baseURL)/dispatch.php/api/oauth2/token",
            headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Data(body.utf8))
    }

    struct Tokens {
        var access: String
        var refresh: String
        var expiresIn: Int
    }

    func exchange(_ code: String) async throws -> Tokens {
        try parse(try await token(["grant_type": "authorization_code", "code": code, "code_verifier": verifier]))
    }

    func refresh(_ token: String) async throws -> Tokens {
        try parse(try await self.token(["grant_type": "refresh_token", "refresh_token": token]))
    }

    private func parse(_ response: HTTPResult) throws -> Tokens {
        #expect(response.status == 200)
        let json = try #require(try response.json() as? [String: Any])
        #expect(json["token_type"] as? String == "Bearer")
        return Tokens(
            access: try #require(json["access_token"] as? String),
            refresh: try #require(json["refresh_token"] as? String),
            expiresIn: try #require(json["expires_in"] as? Int))
    }
}
