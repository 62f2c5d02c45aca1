import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// Single sign-on through the simulated Shibboleth SP and IdP, driven like a browser without JavaScript:
/// every redirect followed, every form posted with exactly the fields the page had.
@Suite("Single sign-on: Shibboleth SP on the installation, IdP on its own listener")
struct SingleSignOnTests {
    static func start(_ variant: SingleSignOnConfiguration.Variant = .plain) async throws -> Simulator {
        try await Scenario.start(basePath: "/studip", singleSignOn: SingleSignOnConfiguration(variant: variant))
    }

    static func entry(_ sim: Simulator) -> String { "\(sim.baseURL)/index.php?again=yes&sso=shib" }

    /// From the login page's SSO button to the IdP's first view (local storage).
    static func toIdentityProvider(_ sim: Simulator, _ browser: Browser) async throws -> (HTTPResult, String) {
        let page = try await browser.get("\(sim.baseURL)/index.php?again=yes")
        let link = try #require(Browser.link(containing: "Shibboleth", in: page.text))
        #expect(link == entry(sim))
        return try await browser.follow(try await browser.get(link), from: link)
    }

    /// Submits the page's form with `fill` set and `button` pressed, and follows the redirects after it.
    static func answer(
        _ page: HTTPResult, at url: String, _ browser: Browser, fill: [String: String] = [:], pressing button: String?
    ) async throws -> (HTTPResult, String) {
        var form = try #require(Browser.forms(in: page.text).first)
        for (name, value) in fill { form.set(name, value) }
        let answer = try await browser.submit(form, page: url, pressing: button)
        return try await browser.follow(answer, from: Browser.resolve(form.action, against: url))
    }

    /// Posts the IdP's auto-submitted response to the SP and follows on to Stud.IP's start page; returns the
    /// Stud.IP session.
    static func deliver(_ page: HTTPResult, at url: String, _ sim: Simulator, _ browser: Browser) async throws
        -> String?
    {
        let (start, startURL) = try await answer(page, at: url, browser, pressing: nil)
        #expect(start.status == 200)
        #expect(startURL == "\(sim.baseURL)/dispatch.php/start")
        return browser.cookie("Seminar_Session", for: sim.baseURL)
    }

    static func routes(_ sim: Simulator) async throws -> [String: Int] {
        let stats = try #require(try await HTTP.get("\(sim.controlURL)/stats").json() as? [String: Any])
        return stats["routes"] as? [String: Int] ?? [:]
    }

    @Test func thePlainFlowStepByStepEndsInAStudIPSession() async throws {
        try await withSimulator(Self.start()) { sim async throws in
            let browser = Browser()
            let idp = try #require(sim.identityProviderURL)
            let origin = Browser.origin(sim.baseURL)
            #expect(Browser.origin(idp) != origin, "the IdP listens on a port of its own")

            let page = try await browser.get("\(sim.baseURL)/index.php?again=yes")
            let link = try #require(
                Browser.link(containing: "Login für Hochschulangehörige (Shibboleth)", in: page.text))
            #expect(page.text.contains(#"href="\#(sim.baseURL)/index.php?again=yes&amp;sso=shib""#), "escaped")

            let entry = try await browser.get(link)
            #expect(entry.status == 302)
            #expect(
                entry.header("Location")
                    == "\(origin)/Shibboleth.sso/Login?target=\(FormEncoding.encode(Self.entry(sim)))")

            let spLogin = try await browser.get(try #require(entry.header("Location")))
            #expect(spLogin.status == 302)
            let sso = try #require(spLogin.header("Location"))
            #expect(sso.hasPrefix("\(idp)/idp/profile/SAML2/Redirect/SSO?SAMLRequest="))
            #expect(sso.contains("&RelayState="))

            let conversation = try await browser.get(sso)
            #expect(conversation.status == 302)
            #expect(conversation.header("Location") == "\(idp)/idp/profile/SAML2/Redirect/SSO?execution=e1s1")
            #expect(conversation.header("Set-Cookie")?.contains("; Path=/idp; HttpOnly") == true)
            #expect(browser.cookie("JSESSIONID", for: idp) != nil)

            let e1s1URL = "\(idp)/idp/profile/SAML2/Redirect/SSO?execution=e1s1"
            let localStorage = try await browser.get(e1s1URL)
            #expect(localStorage.status == 200)
            #expect(localStorage.text.contains("<body onload="))
            let storageForm = try #require(Browser.forms(in: localStorage.text).first)
            #expect(storageForm.action == "/idp/profile/SAML2/Redirect/SSO?execution=e1s1")
            #expect(
                storageForm.fields.map(\.name) == [
                    "csrf_token", "shib_idp_ls_exception.shib_idp_session_ss",
                    "shib_idp_ls_success.shib_idp_session_ss", "shib_idp_ls_value.shib_idp_session_ss",
                    "_eventId_proceed",
                ])
            #expect(storageForm.value("shib_idp_ls_success.shib_idp_session_ss") == "false")
            let afterStorage = try await browser.submit(storageForm, page: e1s1URL)
            #expect(afterStorage.status == 302)
            #expect(afterStorage.header("Location") == "\(idp)/idp/profile/SAML2/Redirect/SSO?execution=e1s2")

            let e1s2URL = "\(idp)/idp/profile/SAML2/Redirect/SSO?execution=e1s2"
            let login = try await browser.get(e1s2URL)
            #expect(login.status == 200)
            var loginForm = try #require(Browser.forms(in: login.text).first)
            #expect(loginForm.action == "/idp/profile/SAML2/Redirect/SSO?execution=e1s2")
            #expect(loginForm.fields.map(\.name) == ["csrf_token", "j_username", "j_password"])
            #expect(loginForm.value("csrf_token") != storageForm.value("csrf_token"), "a new token per view")
            #expect(loginForm.buttons.keys.contains("_eventId_proceed"))
            loginForm.set("j_username", "test_autor")
            loginForm.set("j_password", "sso-testing")
            let response = try await browser.submit(loginForm, page: e1s2URL, pressing: "_eventId_proceed")
            #expect(response.status == 200)
            #expect(response.text.contains(#"<body onload="document.forms[0].submit()">"#))
            let responseForm = try #require(Browser.forms(in: response.text).first)
            #expect(responseForm.action == "\(origin)/Shibboleth.sso/SAML2/POST")
            #expect(responseForm.fields.map(\.name) == ["RelayState", "SAMLResponse"])

            let consumed = try await browser.submit(responseForm, page: e1s2URL)
            #expect(consumed.status == 302, "\(consumed.text)")
            #expect(consumed.header("Location") == Self.entry(sim))
            let spCookie = try #require(browser.cookieNames(for: origin).first { $0.hasPrefix("_shibsession_") })
            #expect(consumed.header("Set-Cookie")?.hasPrefix(spCookie + "=") == true)

            let back = try await browser.get(Self.entry(sim))
            #expect(back.status == 302)
            #expect(back.header("Location") == "\(sim.baseURL)/dispatch.php/start")
            let session = try #require(browser.cookie("Seminar_Session", for: sim.baseURL))
            let me = try await HTTP.get(
                "\(sim.baseURL)/jsonapi.php/v1/users/me",
                headers: [("Cookie", "Seminar_Session=\(session)"), HTTP.jsonAPIAccept])
            #expect(me.status == 200)
            #expect(me.text.contains("\"test_autor\""))

            let idpSession = try #require(browser.cookie("JSESSIONID", for: idp))
            let crossed = try await HTTP.get(
                "\(sim.baseURL)/jsonapi.php/v1/users/me",
                headers: [("Cookie", "Seminar_Session=\(idpSession); JSESSIONID=\(idpSession)"), HTTP.jsonAPIAccept])
            #expect(crossed.status == 401, "the IdP's session is no Stud.IP session")
            let routes = try await Self.routes(sim)
            #expect(routes["idp POST login"] == 1)
            #expect(routes["sp POST SAML2"] == 1)
            #expect(routes["web GET sso"] == 2)
        }
    }

    @Test func aWrongIdPPasswordShowsTheLoginFormAgain() async throws {
        try await withSimulator(Self.start()) { sim async throws in
            let browser = Browser()
            let (storage, storageURL) = try await Self.toIdentityProvider(sim, browser)
            let (login, loginURL) = try await Self.answer(storage, at: storageURL, browser, pressing: nil)
            let (wrong, _) = try await Self.answer(
                login, at: loginURL, browser, fill: ["j_username": "test_autor", "j_password": "testing"],
                pressing: "_eventId_proceed")
            #expect(wrong.status == 200)
            #expect(
                wrong.text.contains(
                    #"<p class="output-message output--error">The password you entered was incorrect.</p>"#))
            #expect(!wrong.text.contains("SAMLResponse"))
            let retry = try #require(Browser.forms(in: wrong.text).first)
            #expect(retry.action.hasSuffix("execution=e1s2"))

            let (replayed, _) = try await Self.answer(
                login, at: loginURL, browser, fill: ["j_username": "test_autor", "j_password": "sso-testing"],
                pressing: "_eventId_proceed")
            #expect(replayed.status == 400, "the first login page's csrf_token is stale")
            #expect(!replayed.text.contains("SAMLResponse"))

            let (response, responseURL) = try await Self.answer(
                wrong, at: loginURL, browser, fill: ["j_username": "test_autor", "j_password": "sso-testing"],
                pressing: "_eventId_proceed")
            #expect(response.text.contains("SAMLResponse"))
            let session = try await Self.deliver(response, at: responseURL, sim, browser)
            #expect(try await LoginSurfaceTests.me(sim, cookie: session) == 200)
        }
    }

    @Test func skippingTheLocalStorageStepOrMakingUpTokensFails() async throws {
        try await withSimulator(Self.start()) { sim async throws in
            let browser = Browser()
            let (storage, storageURL) = try await Self.toIdentityProvider(sim, browser)
            #expect(storageURL.hasSuffix("execution=e1s1"))
            let idp = try #require(sim.identityProviderURL)
            let credentials = [
                ("csrf_token", "made-up"), ("j_username", "test_autor"), ("j_password", "sso-testing"),
                ("_eventId_proceed", ""),
            ]
            let skipped = try await browser.send(
                .POST, "\(idp)/idp/profile/SAML2/Redirect/SSO?execution=e1s2", form: credentials)
            #expect(skipped.status == 400)
            #expect(skipped.text.contains("Stale Request"))
            #expect(!skipped.text.contains("SAMLResponse"))

            var forged = try #require(Browser.forms(in: storage.text).first)
            forged.set("csrf_token", "made-up")
            let madeUp = try await browser.submit(forged, page: storageURL)
            #expect(madeUp.status == 400)

            let noCookie = try await HTTP.request(
                .POST, "\(idp)/idp/profile/SAML2/Redirect/SSO?execution=e1s1",
                headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: Data(
                    "csrf_token=\(try #require(Browser.forms(in: storage.text).first?.value("csrf_token")))".utf8))
            #expect(noCookie.status == 400, "the token counts only with the session it belongs to")

            let (login, _) = try await Self.answer(storage, at: storageURL, browser, pressing: nil)
            #expect(login.text.contains(#"name="j_password""#), "the genuine step still works")
        }
    }

    @Test func aTamperedOrReplayedResponseIsRefused() async throws {
        try await withSimulator(Self.start()) { sim async throws in
            let browser = Browser()
            let (storage, storageURL) = try await Self.toIdentityProvider(sim, browser)
            let (login, loginURL) = try await Self.answer(storage, at: storageURL, browser, pressing: nil)
            let (response, _) = try await Self.answer(
                login, at: loginURL, browser, fill: ["j_username": "test_autor", "j_password": "sso-testing"],
                pressing: "_eventId_proceed")
            let genuine = try #require(Browser.forms(in: response.text).first)
            let acs = genuine.action
            let xml = String(
                decoding: try #require(Data(base64Encoded: genuine.value("SAMLResponse") ?? "")), as: UTF8.self)
            #expect(xml.contains("<saml:NameID>test_autor</saml:NameID>"))

            var tampered = genuine
            tampered.set(
                "SAMLResponse",
                Data(xml.replacingOccurrences(of: ">test_autor<", with: ">test_dozent<").utf8).base64EncodedString())
            let refused = try await browser.submit(tampered, page: acs)
            #expect(refused.status == 400)
            #expect(refused.text.contains("signature could not be verified"))
            #expect(!browser.cookieNames(for: acs).contains { $0.hasPrefix("_shibsession_") })
            let noSession = try await browser.get(Self.entry(sim))
            #expect(noSession.header("Location")?.contains("/Shibboleth.sso/Login?") == true)

            #expect(try await browser.submit(genuine, page: acs).status == 302)
            #expect(browser.cookieNames(for: acs).contains { $0.hasPrefix("_shibsession_") })
            let replay = try await HTTP.request(
                .POST, acs, headers: [("Content-Type", "application/x-www-form-urlencoded")],
                body: Data(
                    genuine.fields.map { "\($0.name)=\(FormEncoding.encode($0.value))" }.joined(separator: "&").utf8))
            #expect(replay.status == 400, "a response is accepted once")
            #expect(replay.header("Set-Cookie") == nil)
        }
    }

    @Test func consentIsAskedUntilRememberedAndRejectingItLogsNobodyIn() async throws {
        try await withSimulator(Self.start(.consent)) { sim async throws in
            let browser = Browser()
            let (storage, storageURL) = try await Self.toIdentityProvider(sim, browser)
            let (login, loginURL) = try await Self.answer(storage, at: storageURL, browser, pressing: nil)
            let (consent, consentURL) = try await Self.answer(
                login, at: loginURL, browser, fill: ["j_username": "test_autor", "j_password": "sso-testing"],
                pressing: "_eventId_proceed")
            #expect(consentURL.hasSuffix("execution=e1s3"))
            let form = try #require(Browser.forms(in: consent.text).first)
            #expect(form.fields.filter { $0.name == "_shib_idp_consentIds" }.map(\.value).contains("mail"))
            #expect(consent.text.contains(#"value="_shib_idp_doNotRememberConsent""#))
            #expect(consent.text.contains(#"value="_shib_idp_globalConsent""#))
            #expect(form.value("_shib_idp_consentOptions") == "_shib_idp_rememberConsent")
            #expect(form.buttons == ["_eventId_proceed": "Accept", "_eventId_AttributeReleaseRejected": "Reject"])

            let (rejected, _) = try await Self.answer(
                consent, at: consentURL, browser, pressing: "_eventId_AttributeReleaseRejected")
            #expect(rejected.text.contains("Attribute Release Rejected"))
            #expect(!rejected.text.contains("SAMLResponse"))
            #expect(
                try await LoginSurfaceTests.me(sim, cookie: browser.cookie("Seminar_Session", for: sim.baseURL)) == 401)

            // The IdP still knows the login: after local storage comes the release page again, now as e1s2.
            let (again, againURL) = try await Self.toIdentityProvider(sim, browser)
            let (consentAgain, consentAgainURL) = try await Self.answer(again, at: againURL, browser, pressing: nil)
            var release = try #require(Browser.forms(in: consentAgain.text).first)
            #expect(release.action.hasSuffix("execution=e1s2"))
            release.fields.removeAll { $0 == ("_shib_idp_consentIds", "mail") }
            let accepted = try await browser.submit(release, page: consentAgainURL, pressing: "_eventId_proceed")
            let (response, responseURL) = try await browser.follow(accepted, from: consentAgainURL)
            let xml = try #require(
                Browser.forms(in: response.text).first?.value("SAMLResponse").flatMap { Data(base64Encoded: $0) })
            #expect(String(decoding: xml, as: UTF8.self).contains(#"Name="uid""#))
            #expect(!String(decoding: xml, as: UTF8.self).contains(#"Name="mail""#), "an unchecked attribute stays")
            let session = try await Self.deliver(response, at: responseURL, sim, browser)
            #expect(try await LoginSurfaceTests.me(sim, cookie: session) == 200)

            // Stud.IP's and the SP's sessions end, the IdP's stays: straight from local storage to the response.
            _ = try await HTTP.control(.POST, "\(sim.controlURL)/sessions/expire")
            #expect(try await LoginSurfaceTests.me(sim, cookie: session) == 401)
            let (third, thirdURL) = try await Self.toIdentityProvider(sim, browser)
            let (direct, directURL) = try await Self.answer(third, at: thirdURL, browser, pressing: nil)
            #expect(direct.text.contains("SAMLResponse"))
            let renewed = try await Self.deliver(direct, at: directURL, sim, browser)
            #expect(try await LoginSurfaceTests.me(sim, cookie: renewed) == 200)

            // A new browser logs in again but is not asked again: the consent is kept by the IdP.
            let fresh = Browser()
            let (freshStorage, freshStorageURL) = try await Self.toIdentityProvider(sim, fresh)
            let (freshLogin, freshLoginURL) = try await Self.answer(
                freshStorage, at: freshStorageURL, fresh, pressing: nil)
            let (freshResponse, freshResponseURL) = try await Self.answer(
                freshLogin, at: freshLoginURL, fresh, fill: ["j_username": "test_autor", "j_password": "sso-testing"],
                pressing: "_eventId_proceed")
            #expect(freshResponse.text.contains("SAMLResponse"))
            #expect(
                try await LoginSurfaceTests.me(
                    sim, cookie: try await Self.deliver(freshResponse, at: freshResponseURL, sim, fresh)) == 200)
            #expect(try await Self.routes(sim)["idp GET consent"] == 2)
        }
    }
}
