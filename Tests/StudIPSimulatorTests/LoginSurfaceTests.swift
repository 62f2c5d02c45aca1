import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// Stud.IP's web login form (`index.php?again=yes`), Basic behind FastCGI, and the control API's session and
/// grant switches.
@Suite("Login surfaces: the web form, Basic at the web server, expiring sessions, revoked grants")
struct LoginSurfaceTests {
    static func me(_ sim: Simulator, cookie: String?) async throws -> Int {
        try await HTTP.get(
            "\(sim.baseURL)/jsonapi.php/v1/users/me",
            headers: [HTTP.jsonAPIAccept] + (cookie.map { [("Cookie", "Seminar_Session=\($0)")] } ?? [])
        ).status
    }

    /// Loads the login page in `browser` and returns its login form.
    static func loginForm(_ sim: Simulator, _ browser: Browser) async throws -> HTMLForm {
        let page = try await browser.get("\(sim.baseURL)/index.php?again=yes")
        #expect(page.status == 200)
        return try #require(Browser.forms(in: page.text).first)
    }

    /// Logs in through the form; returns the new session id.
    static func formLogin(_ sim: Simulator, _ browser: Browser = Browser()) async throws -> String {
        var form = try await loginForm(sim, browser)
        form.set("loginname", "test_autor")
        form.set("password", "testing")
        let answer = try await browser.submit(form, page: "\(sim.baseURL)/index.php?again=yes", pressing: "Login")
        #expect(answer.status == 302)
        return try #require(browser.cookie("Seminar_Session", for: sim.baseURL))
    }

    @Test func theLoginFormStartsANewSessionThatAuthenticates() async throws {
        try await withSimulator(Scenario.start(basePath: "/studip")) { sim async throws in
            let browser = Browser()
            let page = try await browser.get("\(sim.baseURL)/index.php?again=yes")
            #expect(page.status == 200)
            #expect(page.header("Content-Type")?.hasPrefix("text/html") == true)
            #expect(page.header("Set-Cookie")?.hasSuffix("; path=/; HttpOnly") == true)
            let preLogin = try #require(browser.cookie("Seminar_Session", for: sim.baseURL))
            #expect(page.text.contains(#"name="login""#))
            #expect(!page.text.contains("sso=shib"), "no SSO button without SSO")
            var form = try #require(Browser.forms(in: page.text).first)
            #expect(form.action == "\(sim.baseURL)/index.php?again=yes")
            #expect(form.method == "post")
            #expect(
                form.fields.map(\.name).sorted() == [
                    "device_pixel_ratio", "login_ticket", "loginname", "password", "resolution", "security_token",
                ])
            #expect(form.value("security_token")?.isEmpty == false)
            #expect(form.value("login_ticket")?.isEmpty == false)
            #expect(form.buttons == ["Login": ""])

            form.set("loginname", "test_autor")
            form.set("password", "testing")
            let login = try await browser.submit(form, page: "\(sim.baseURL)/index.php?again=yes", pressing: "Login")
            #expect(login.status == 302)
            #expect(login.header("Location") == "\(sim.baseURL)/dispatch.php/start")
            let session = try #require(browser.cookie("Seminar_Session", for: sim.baseURL))
            #expect(session != preLogin, "a login starts a new session id")

            #expect(try await Self.me(sim, cookie: session) == 200)
            #expect(try await Self.me(sim, cookie: preLogin) == 401, "the pre-login id never authenticates")
            let start = try await browser.get("\(sim.baseURL)/dispatch.php/start")
            #expect(start.status == 200)
            #expect(start.text.contains("Testaccount Autor"))
            let stats = try #require(try await HTTP.get("\(sim.controlURL)/stats").json() as? [String: Any])
            #expect((stats["routes"] as? [String: Int])?["web POST login"] == 1)
        }
    }

    @Test func loginsWithoutTheLatestTokensOrWithAWrongPasswordFail() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let url = "\(sim.baseURL)/index.php?again=yes"
            let browser = Browser()
            let stale = try await Self.loginForm(sim, browser)
            var current = try await Self.loginForm(sim, browser)
            #expect(current.value("security_token") == stale.value("security_token"), "one token per session")
            #expect(current.value("login_ticket") != stale.value("login_ticket"), "a new ticket per page")

            var attempts: [(String, HTMLForm)] = []
            var withoutTokens = current
            withoutTokens.fields.removeAll { $0.name == "security_token" || $0.name == "login_ticket" }
            attempts.append(("without tokens", withoutTokens))
            attempts.append(("with the previous page's ticket", stale))
            for (label, var form) in attempts {
                form.set("loginname", "test_autor")
                form.set("password", "testing")
                let answer = try await browser.submit(form, page: url, pressing: "Login")
                #expect(answer.status == 200, "\(label)")
                #expect(answer.text.contains(#"<div class="messagebox messagebox_error">"#), "\(label)")
                #expect(answer.text.contains("Sicherheitstoken"), "\(label)")
                let cookie = browser.cookie("Seminar_Session", for: sim.baseURL)
                #expect(try await Self.me(sim, cookie: cookie) == 401, "\(label)")
                // The error page is a login page of its own, with a ticket that now is the only valid one.
                current = try #require(Browser.forms(in: answer.text).first)
            }

            current.set("loginname", "test_autor")
            current.set("password", "wrong")
            let wrong = try await browser.submit(current, page: url, pressing: "Login")
            #expect(wrong.status == 200)
            #expect(wrong.text.contains("Bei der Anmeldung trat ein Fehler auf!"))
            #expect(try await Self.me(sim, cookie: browser.cookie("Seminar_Session", for: sim.baseURL)) == 401)

            let old = try await HTTP.request(
                .POST, "\(sim.baseURL)/dispatch.php/login",
                headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: Data("loginname=test_autor&password=testing".utf8))
            #expect(old.status == 404, "the pre-5.x login route is gone")
        }
    }

    @Test func basicAuthThatNeverReachesPHPAuthenticatesNobody() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let me = "\(sim.baseURL)/jsonapi.php/v1/users/me"
            #expect(try await HTTP.get(me, headers: [HTTP.basic("test_autor"), HTTP.jsonAPIAccept]).status == 200)

            let settings = try await HTTP.control(
                .PUT, "\(sim.controlURL)/settings", #"{"basic_auth_reaches_php": false}"#)
            #expect((try settings.json() as? [String: Any])?["basic_auth_reaches_php"] as? Bool == false)
            #expect(try await HTTP.get(me, headers: [HTTP.basic("test_autor"), HTTP.jsonAPIAccept]).status == 401)
            #expect(
                try await HTTP.get("\(sim.baseURL)/api.php/user", headers: [HTTP.basic("test_autor")]).status == 401)

            let session = try await Self.formLogin(sim)
            #expect(try await Self.me(sim, cookie: session) == 200, "the form and its cookie still work")
        }
    }

    @Test func expiringSessionsEndsWebSessionsUntilTheNextLogin() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let session = try await Self.formLogin(sim)
            #expect(try await Self.me(sim, cookie: session) == 200)

            let expired = try await HTTP.control(.POST, "\(sim.controlURL)/sessions/expire")
            #expect(expired.status == 200)
            #expect(try await Self.me(sim, cookie: session) == 401)
            #expect(
                try await HTTP.get("\(sim.baseURL)/api.php/user", headers: [("Cookie", "Seminar_Session=\(session)")])
                    .status == 401)
            let start = try await HTTP.get(
                "\(sim.baseURL)/dispatch.php/start", headers: [("Cookie", "Seminar_Session=\(session)")])
            #expect(start.status == 302)
            #expect(start.header("Location") == "\(sim.baseURL)/index.php?again=yes", "back to the login page")

            let again = try await Self.formLogin(sim)
            #expect(try await Self.me(sim, cookie: again) == 200)
        }
    }

    @Test func revokingOAuth2GrantsStopsAccessAndRefreshTokens() async throws {
        try await withSimulator(Scenario.start(flavour: .v55)) { sim async throws in
            let flow = OAuth2Flow(baseURL: sim.baseURL)
            let tokens = try await flow.exchange(try await flow.approve())
            let me = "\(sim.baseURL)/jsonapi.php/v1/users/me"
            let bearer = [("Authorization", "Bearer \(tokens.access)"), HTTP.jsonAPIAccept]
            #expect(try await HTTP.get(me, headers: bearer).status == 200)

            #expect(try await HTTP.control(.POST, "\(sim.controlURL)/oauth2/revoke").status == 200)
            #expect(try await HTTP.get(me, headers: bearer).status == 401)
            let refresh = try await flow.token(["grant_type": "refresh_token", "refresh_token": tokens.refresh])
            #expect(refresh.status == 400)
            #expect(refresh.text.contains("invalid_grant"))
        }
    }
}
