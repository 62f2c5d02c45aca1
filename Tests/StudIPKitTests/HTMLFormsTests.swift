import Foundation
import StudIPWire
import Testing

/// The login pages' scanner on pages shaped like Stud.IP 5.x's and a Shibboleth IdP 4's, and on the corners a
/// browser tolerates.
@Suite("HTML form scanner")
struct HTMLFormsTests {
    static let pages = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Fixtures/login-pages")

    static func page(_ name: String) throws -> HTMLPage {
        HTMLPage(try Data(contentsOf: pages.appending(path: name)))
    }

    @Test("Stud.IP's login page: the real form (not the one in a script or a comment), its fields, box and links")
    func studIPLoginPage() throws {
        let page = try Self.page("studip-login.html")
        #expect(page.forms.count == 1)
        let form = try #require(page.loginForm)
        #expect(form.name == "login")
        #expect(form.method == "post")
        #expect(form.action == "https://studip.example.org/studip/index.php?again=yes&cancel_login=1")
        #expect(form.input(named: "loginname")?.type == "text")
        #expect(form.input(named: "password")?.type == "password")
        #expect(form.presetFields.map(\.0) == ["security_token", "login_ticket", "resolution", "device_pixel_ratio"])
        #expect(form.presetFields.map(\.1) == ["ZmI3Y2E5'MjQ=", "8f1b7c6e0a1d2b3c4d5e6f708192a3b4", "", "1"])
        #expect(form.buttons == [HTMLButton(name: "Login", value: "", text: "Anmelden")])
        #expect(page.errorMessage?.hasPrefix("Nachrichtenbox schließen Bei der Anmeldung trat ein Fehler auf!") == true)
        #expect(page.errorMessage?.hasSuffix("Benutzername oder Passwort falsch.") == true)
        let shibboleth = try #require(page.links.first { $0.href.contains("sso=") })
        #expect(shibboleth.href == "/studip/index.php?again=yes&sso=shib")
        #expect(shibboleth.text == "Login für Hochschulangehörige (Shibboleth)")
        #expect(page.links.contains(HTMLLink(href: "dispatch.php/privacy", text: "Datenschutzerklärung & Impressum")))
    }

    @Test("IdP local-storage page: hidden fields only, the empty ones included, and the noscript button")
    func localStoragePage() throws {
        let form = try #require(try Self.page("shib-localstorage.html").forms.first)
        #expect(form.action == "/idp/profile/SAML2/Redirect/SSO?execution=e1s1")
        #expect(form.inputs.allSatisfy { $0.type == "hidden" })
        #expect(
            form.presetFields.map(\.0) == [
                "csrf_token", "shib_idp_ls_exception.shib_idp_session_ss", "shib_idp_ls_success.shib_idp_session_ss",
                "shib_idp_ls_value.shib_idp_session_ss", "shib_idp_ls_supported", "_eventId_proceed",
            ])
        #expect(form.input(named: "shib_idp_ls_success.shib_idp_session_ss")?.value == "false")
        #expect(form.buttons.map(\.name) == ["_eventId_proceed"])
    }

    @Test("IdP login page: username and password inputs, unchecked boxes not sent, the error line")
    func idpLoginPage() throws {
        let page = try Self.page("shib-login.html")
        let form = try #require(page.loginForm)
        #expect(form.input(named: "j_username")?.id == "username")
        #expect(form.presetFields.map(\.0) == ["csrf_token"])
        #expect(form.presetFields.first?.1 == "_c41f6d2e&9b")
        #expect(form.buttons.map(\.name) == ["_eventId_proceed"])
        #expect(form.buttons.first?.text == "Login")
        #expect(page.errorMessage == "The password you entered was incorrect.")
        #expect(page.links.first?.text == "› Forgot your password?")
    }

    @Test("consent page: the attributes, the checked radio, submit inputs as buttons")
    func consentPage() throws {
        let form = try #require(try Self.page("shib-consent.html").forms.first)
        #expect(
            form.inputs.filter { $0.name == "_shib_idp_consentIds" }.map(\.value) == [
                "mail", "displayName", "eduPersonPrincipalName",
            ])
        #expect(
            form.presetFields.filter { $0.0 == "_shib_idp_consentOptions" }.map(\.1) == ["_shib_idp_rememberConsent"])
        #expect(
            form.buttons == [
                HTMLButton(name: "_eventId_AttributeReleaseRejected", value: "Reject", text: "Reject"),
                HTMLButton(name: "_eventId_proceed", value: "Accept", text: "Accept"),
            ])
    }

    @Test("SAML POST page: hex entities in the action and the values, an XML prolog and doctype skipped")
    func samlPostPage() throws {
        let form = try #require(try Self.page("shib-saml-post.html").forms.first)
        #expect(form.action == "https://studip.example.org/Shibboleth.sso/SAML2/POST")
        #expect(form.input(named: "RelayState")?.value == "ss:mem:5f1e2d3c4b5a")
        #expect(
            form.input(named: "SAMLResponse")?.value
                == "PD94bWwgdmVyc2lvbj0iMS4wIiBlbmNvZGluZz0iVVRGLTgiPz4+PHNhbWwycDpSZXNwb25zZQ==")
    }

    @Test("quoting, case, entities and self-closing tags as browsers read them")
    func tolerance() {
        let page = HTMLPage(
            """
            <FoRm ACTION='/a?x=1&amp;y=2' Method=POST><INPUT TYPE=HIDDEN NAME=a VALUE=b/><input name="c" value='d&quot;e'>
            <input type=hidden name=f value="&#60;&#x3E;&unknown;&amp"><input type="radio" name=r value=1 CHECKED>
            <button name=go value=1>Go <b>now</b></button></form><form><input type=password name=p></form>
            """)
        #expect(page.forms.count == 2)
        let form = page.forms[0]
        #expect(form.action == "/a?x=1&y=2")
        #expect(form.method == "post")
        #expect(form.input(named: "a")?.value == "b/")
        #expect(form.input(named: "c")?.type == "text")
        #expect(form.input(named: "c")?.value == "d\"e")
        #expect(form.input(named: "f")?.value == "<>&unknown;&amp")
        #expect(form.presetFields.map(\.0) == ["a", "f", "r"])
        #expect(form.buttons == [HTMLButton(name: "go", value: "1", text: "Go now")])
        #expect(page.forms[1].method == "get")
        #expect(page.forms[1].action == nil)
        #expect(page.loginForm == page.forms[1])
    }

    @Test("garbage and cut-off pages never crash; a huge page is read in bounded time")
    func garbage() {
        for text in [
            "<", "<<<", "<input", "<form action=\"", "<!--", "<script>", "<a href=x>", "&#xFFFFFFFF;", "&#0;",
            "<input value='", "</", "<!", "<?", "<div class=messagebox_error>unclosed", "<a href=\"x\"><a href=y>t</a>",
        ] {
            _ = HTMLPage(text)
        }
        #expect(HTMLPage("&#0;&#xD800;").forms.isEmpty)
        #expect(HTMLPage("<a href=x><a href=y>t</a>").links.map(\.href) == ["y", "x"])
        let clock = ContinuousClock()
        let huge = String(repeating: "<a href=x><div class=messagebox_error><input name=", count: 200_000)
        let elapsed = clock.measure { _ = HTMLPage(huge) }
        #expect(elapsed < .seconds(10))
    }
}
