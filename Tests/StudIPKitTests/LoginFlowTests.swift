import AsyncHTTPClient
import Foundation
import Logging
import StudIPModel
import TestSupport
import Testing

@testable import StudIPKit
@testable import StudIPSimulator

/// The web login form and the Shibboleth single sign-on against the simulator's Stud.IP 5.x login surface:
/// every field and cookie a browser would send, one login per expired session, no blind POST retries, and the
/// password only where it belongs.
@Suite("Web login and single sign-on")
struct LoginFlowTests {
    static let loginPage = "web GET login page"
    static let loginPost = "web POST login"

    static func routes(_ sim: Simulator) -> [String: Int] { sim.statistics.snapshot().routes }

    static func webLogin(_ sim: Simulator, password: String = Harness.password) -> ClientConfiguration {
        Harness.configuration(sim, credentials: .webLogin(username: "test_autor", password: password))
    }

    @Test("the web login walks the form: one page, one POST, the session works with both APIs")
    func webLogin() async throws {
        for api in [ClientConfiguration.API.jsonAPI, .legacyREST] {
            try await withSimulator { sim async throws in
                var configuration = Self.webLogin(sim)
                configuration.api = api
                try await withSource(configuration) { source in
                    #expect(source.userFullName == "Testaccount Autor")
                    let courses = try await source.overview().courses
                    #expect(courses.count == 5)
                }
                #expect(Self.routes(sim)[Self.loginPage] == 1, "\(Self.routes(sim))")
                #expect(Self.routes(sim)[Self.loginPost] == 1, "\(Self.routes(sim))")
            }
        }
    }

    /// Stud.IP 6.0.2 calls its session `Studip_Session` and lands on `dispatch.php/start/index`; 5.0.7 calls it
    /// `Seminar_Session`. The login is what the server does (a redirect away from the login page), whatever the
    /// cookie's name, and the API takes the session it set.
    @Test("the web login on 6.x: another cookie name, another landing page, the same login")
    func webLoginOnSix() async throws {
        for flavour in Flavour.allCases {
            try await withSimulator(flavour: flavour) { sim async throws in
                var configuration = Self.webLogin(sim)
                configuration.api = .jsonAPI
                try await withSource(configuration) { source in
                    #expect(source.userFullName == "Testaccount Autor", "\(flavour)")
                    let courses = try await source.overview().courses
                    #expect(!courses.isEmpty)
                }
                #expect(Self.routes(sim)[Self.loginPost] == 1, "\(flavour): \(Self.routes(sim))")
            }
        }
    }

    @Test("a wrong password is authenticationFailed in our words after one POST; the page's text goes to the log")
    func webLoginWrongPassword() async throws {
        try await withSimulator { sim async throws in
            let log = LogCapture()
            var configuration = Self.webLogin(sim, password: "wrong")
            configuration.logger = log.logger
            let error = await Harness.error { () async throws(StudIPError) in
                try await StudIP.connect(configuration)
            }
            #expect(error == .authenticationFailed(server: sim.baseURL), "no page text in the message")
            #expect(error?.exitCode == 2)
            #expect(log.text.contains("intern: Das Passwort ist falsch!"), "\(log.text)")
            #expect(!(error?.description.contains("Nachrichtenbox") ?? true))
            #expect(Self.routes(sim)[Self.loginPost] == 1)
        }
    }

    @Test("an expired session: concurrent requests share one new login")
    func webLoginExpiry() async throws {
        try await withSimulator { sim async throws in
            try await withSource(Self.webLogin(sim)) { source in
                let overview = try await source.overview()
                try await OAuth2FlowTests.control(sim, "sessions/expire")
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for course in overview.courses {
                        group.addTask { _ = try await source.content(of: course) }
                    }
                    try await group.waitForAll()
                }
                #expect(Self.routes(sim)[Self.loginPost] == 2, "\(Self.routes(sim))")
            }
        }
    }

    @Test("the login POST answered 503 is sent once, and the error says so")
    func webLoginPostNotRetried() async throws {
        try await withSimulator { sim async throws in
            sim.inject(Fault(action: .status(503), pathContains: "index.php", method: "POST"))
            let error = await Harness.error { () async throws(StudIPError) in
                try await StudIP.connect(Self.webLogin(sim))
            }
            #expect(error == .serverError(status: 503, what: "the web login"))
            #expect(sim.served == 2, "the login page and one POST: \(Self.routes(sim))")
        }
    }

    @Test("a login POST whose connection breaks is not sent again")
    func webLoginPostBrokenNotRetried() async throws {
        try await withSimulator { sim async throws in
            sim.inject(Fault(action: .resetAfterBytes(0), pathContains: "index.php", method: "POST"))
            let error = await Harness.error { () async throws(StudIPError) in
                try await StudIP.connect(Self.webLogin(sim))
            }
            guard case .unreachable(let server, let detail) = error else {
                Issue.record("expected unreachable, got \(String(describing: error))")
                return
            }
            #expect(server == sim.baseURL)
            #expect(detail.contains("after sending the web login; not sent again"), "\(detail)")
            #expect(sim.served == 2, "the login page and one POST: \(Self.routes(sim))")
        }
    }

    @Test("a login form that posts to another origin gets no password")
    func webLoginForeignAction() async throws {
        try await withSimulator { sim async throws in
            let page = """
                <form method="post" action="http://127.0.0.2:9/steal"><input name="loginname">\
                <input type="password" name="password"></form>
                """
            sim.inject(Fault(action: .body(page), pathContains: "index.php", method: "GET"))
            let error = await Harness.error { () async throws(StudIPError) in
                try await StudIP.connect(Self.webLogin(sim))
            }
            guard case .unsafeLogin = error else {
                Issue.record("expected unsafeLogin, got \(String(describing: error))")
                return
            }
            #expect(sim.served == 1)
        }
    }

    @Test(
        "the IdP password goes only back to the page's own origin, over HTTPS unless on this machine",
        arguments: [
            ("https://idp.example.org/idp/a", "https://idp.example.org/idp/b", true),
            ("https://idp.example.org/idp/a", "https://evil.example.org/idp/b", false),
            ("https://idp.example.org/idp/a", "https://idp.example.org:8443/idp/b", false),
            ("http://idp.example.org/idp/a", "http://idp.example.org/idp/b", false),
            ("http://127.0.0.1:8080/idp/a", "http://127.0.0.1:8080/idp/b", true),
            ("http://localhost:8080/idp/a", "http://localhost:8080/idp/b", true),
        ])
    func passwordTarget(page: String, target: String, allowed: Bool) {
        let error = Self.syncError { () throws(StudIPError) in
            try SingleSignOn.checkPasswordTarget(target, page: page)
        }
        #expect((error == nil) == allowed, "\(String(describing: error))")
    }

    // MARK: Single sign-on

    static let idpLoginPost = "idp POST login"

    static func withSSO<T: Sendable>(
        _ variant: SingleSignOnConfiguration.Variant, flavour: Flavour = .v55, _ body: (Simulator) async throws -> T
    ) async throws -> T {
        try await withSimulator(
            Simulator.start(
                SimulatorConfiguration(
                    dataset: .fixtures507, flavour: flavour,
                    singleSignOn: SingleSignOnConfiguration(variant: variant))),
            body)
    }

    static func sso(
        _ sim: Simulator, password: String = "sso-testing", acceptsConsent: Bool = false, logger: Logger? = nil
    ) -> ClientConfiguration {
        Harness.configuration(
            sim,
            credentials: .singleSignOn(
                username: "test_autor", password: password, entry: sim.baseURL + "/index.php?again=yes&sso=shib",
                acceptsConsent: acceptsConsent),
            logger: logger)
    }

    @Test("single sign-on: through the IdP's pages to a Stud.IP session; an expired one logs in once more")
    func singleSignOn() async throws {
        try await Self.withSSO(.plain) { sim async throws in
            let capture = LogCapture()
            try await withSource(Self.sso(sim, logger: capture.logger)) { source in
                #expect(source.userFullName == "Testaccount Autor")
                let overview = try await source.overview()
                #expect(overview.user.username == "test_autor")
                #expect(Self.routes(sim)[Self.idpLoginPost] == 1, "\(Self.routes(sim))")
                #expect(Self.routes(sim)["sp POST SAML2"] == 1, "\(Self.routes(sim))")

                try await OAuth2FlowTests.control(sim, "sessions/expire")
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for course in overview.courses {
                        group.addTask { _ = try await source.content(of: course) }
                    }
                    try await group.waitForAll()
                }
                #expect(Self.routes(sim)["sp POST SAML2"] == 2, "one new login: \(Self.routes(sim))")
            }
            #expect(!capture.text.contains("sso-testing"))
            #expect(capture.text.contains("single sign-on: sending the login form"))
        }
    }

    @Test("single sign-on with a wrong IdP password: authenticationFailed with the IdP's message, one POST")
    func singleSignOnWrongPassword() async throws {
        try await Self.withSSO(.plain) { sim async throws in
            let error = await Harness.error { () async throws(StudIPError) in
                try await StudIP.connect(Self.sso(sim, password: "testing"))
            }
            let idpHost = try #require(sim.identityProviderURL.flatMap { URLComponents(string: $0)?.host })
            #expect(
                error == .authenticationFailed(server: idpHost, message: "The password you entered was incorrect."))
            #expect(Self.routes(sim)[Self.idpLoginPost] == 1)
        }
    }

    @Test("the attribute release page: refused without consent, accepted and remembered with it")
    func singleSignOnConsent() async throws {
        try await Self.withSSO(.consent) { sim async throws in
            let error = await Harness.error { () async throws(StudIPError) in
                try await StudIP.connect(Self.sso(sim))
            }
            guard case .consentRequired(_, let attributes) = error else {
                Issue.record("expected consentRequired, got \(String(describing: error))")
                return
            }
            #expect(attributes.contains("mail"))
            #expect(error?.exitCode == 2)
            #expect(Self.routes(sim)["idp POST consent"] == nil)

            try await withSource(Self.sso(sim, acceptsConsent: true)) { source in
                let courses = try await source.overview().courses
                #expect(courses.count == 5)
            }
            #expect(Self.routes(sim)["idp POST consent"] == 1)
            // Remembered by the IdP: the next login does not ask, so it needs no permission.
            try await withSource(Self.sso(sim)) { source in
                let courses = try await source.overview().courses
                #expect(courses.count == 5)
            }
            #expect(Self.routes(sim)["idp POST consent"] == 1)
        }
    }

    @Test("single sign-on: a password form posting elsewhere gets nothing; an unreachable IdP is named as itself")
    func singleSignOnRefusals() async throws {
        try await withSimulator { sim async throws in
            var elsewhere = Self.sso(sim)
            elsewhere.credentials = .singleSignOn(
                username: "test_autor", password: "sso-testing", entry: "http://127.0.0.2:9/sso", acceptsConsent: false)
            let offSite = await Harness.error { () async throws(StudIPError) in try await StudIP.connect(elsewhere) }
            guard case .unsafeLogin = offSite else {
                Issue.record("expected unsafeLogin, got \(String(describing: offSite))")
                return
            }
            #expect(sim.served == 0)

            let foreign = """
                <form method="post" action="http://127.0.0.2:9/steal"><input name="j_username">\
                <input type="password" name="j_password"></form>
                """
            sim.inject(Fault(action: .body(foreign), pathContains: "index.php", method: "GET", remaining: 1))
            let error = await Harness.error { () async throws(StudIPError) in try await StudIP.connect(Self.sso(sim)) }
            #expect(
                error
                    == .unsafeLogin(
                        server: Origin(sim.baseURL)?.description ?? "",
                        detail: "has a login form that posts to http://127.0.0.2:9"))
            #expect(sim.served == 1)

            let automatic = """
                <body onload="document.forms[0].submit()"><form method="post" action="http://127.0.0.1:1/idp/SSO">\
                <input type="hidden" name="RelayState" value="r"></form></body>
                """
            sim.inject(Fault(action: .body(automatic), pathContains: "index.php", method: "GET", remaining: 1))
            let unreachable = await Harness.error { () async throws(StudIPError) in
                try await StudIP.connect(Self.sso(sim))
            }
            #expect(
                unreachable == .unreachable(server: "http://127.0.0.1:1", detail: "connection refused or host unknown"))
        }
    }

    @Test("the survey lists the login page's single sign-on link")
    func surveyFindsSSO() async throws {
        try await Self.withSSO(.plain) { sim async throws in
            let survey = try await StudIP.survey(sim.baseURL + "/dispatch.php/start")
            #expect(survey.singleSignOn.map(\.url) == [sim.baseURL + "/index.php?again=yes&sso=shib"])
            #expect(survey.singleSignOn.first?.label.contains("Shibboleth") == true)
            #expect(survey.webLoginForm)
        }
    }

    @Test("basic_auth_reaches_php off: Basic fails, the web login still works")
    func basicAuthNotReachingPHP() async throws {
        try await withSimulator(settings: SimulatorSettings(basicAuthReachesPHP: false)) { sim async throws in
            let basic = await Harness.error { () async throws(StudIPError) in
                try await StudIP.connect(Harness.configuration(sim))
            }
            #expect(basic == .authenticationFailed(server: sim.baseURL))
            try await withSource(Self.webLogin(sim)) { source in
                let courses = try await source.overview().courses
                #expect(courses.count == 5)
            }
        }
    }

    /// A profile that logged in with Basic, on a server whose proxy stops passing Basic on: the login form takes
    /// over by itself, once; a wrong password is still refused (by the form, once), not let through.
    @Test("Basic that stops reaching PHP falls back to the login form by itself")
    func basicFallsBackToTheForm() async throws {
        try await withSimulator(settings: SimulatorSettings(basicAuthReachesPHP: false)) { sim async throws in
            let log = LogCapture()
            var configuration = Harness.configuration(sim, logger: log.logger)
            configuration.basicFallsBackToWebLogin = true
            try await withSource(configuration) { source in
                let overview = try await source.overview()
                #expect(overview.courses.count == 5)
                for course in overview.courses { _ = try await source.content(of: course) }
            }
            #expect(Self.routes(sim)[Self.loginPost] == 1, "one form login for all requests: \(Self.routes(sim))")
            #expect(log.text.contains("Basic no longer reaches Stud.IP"), "\(log.text)")

            var wrong = Harness.configuration(sim, password: "wrong")
            wrong.basicFallsBackToWebLogin = true
            let error = await Harness.error { () async throws(StudIPError) in try await StudIP.connect(wrong) }
            #expect(error == .authenticationFailed(server: sim.baseURL))
            #expect(Self.routes(sim)[Self.loginPost] == 2, "one more form login, refused")
        }
    }

    static func syncError(_ body: () throws(StudIPError) -> Void) -> StudIPError? {
        do {
            try body()
            return nil
        } catch {
            return error
        }
    }
}
