import Foundation
import StudIPModel
import StudIPWire

/// A Shibboleth login (IdP 4/5, SAML 2 form flow) walked without a browser: from the installation's SSO link
/// through the service provider's redirect to the IdP, its local-storage page, login form and consent page, and
/// the auto-submitted SAML response back to Stud.IP.
///
/// The IdP password goes only to the origin whose page asks for it, and only over HTTPS (plain HTTP only when that
/// page came from this machine, for tests). Logs name each step, never a value.
enum SingleSignOn {
    /// What a page of the flow asks for.
    enum Step: Equatable {
        /// Hidden fields posted by a script (`shib_idp_ls_*`, `SAMLResponse`/`RelayState`): post them as they are.
        case autoSubmit
        case login
        /// The attribute release page; the attributes are the ones it lists.
        case consent(attributes: [String])
    }

    /// The `Cookie` header of the new Stud.IP session (every cookie the installation set: see ``WebLogin``).
    static func logIn(
        username: String, password: String, entry: String, acceptsConsent: Bool, transport: HTTPTransport
    ) async throws(StudIPError) -> String {
        let installation = transport.installation
        guard installation.isOwnOrigin(entry) else {
            throw .unsafeLogin(
                server: installation.serverName,
                detail:
                    "is not where the single sign-on link points (\(Origin(entry)?.description ?? "not a web address")); "
                    + "use the link on the installation's own login page")
        }
        var browser = LoginBrowser(transport: transport)
        var postedLogin = false
        /// Whether an identity provider's answer (a SAML response) went back to the installation: before that, a
        /// session cookie is the pre-login one the entry page set.
        var postedAssertion = false
        transport.logger.debug("single sign-on: opening the entry link")
        var (response, url) = try await browser.open(entry, what: "the single sign-on")
        while true {
            guard response.status == 200 else { throw transport.error(for: response, what: "the single sign-on") }
            let page = HTMLPage(response.body)
            if postedAssertion, installation.isOwnOrigin(url), page.loginForm == nil,
                let session = browser.jar.header(for: url)
            {
                transport.logger.info("logged in through single sign-on")
                return session
            }
            let provider = Origin(url).map(\.host) ?? url
            guard let (form, step) = page.forms.lazy.compactMap({ form in step(of: form).map { (form, $0) } }).first
            else {
                throw .malformedResponse(
                    what: "the single sign-on at \(provider)", detail: "a page without a form to continue with")
            }
            let target = try LoginBrowser.action(of: form, on: url)
            var fields = form.presetFields
            switch step {
            case .autoSubmit:
                transport.logger.debug("single sign-on: submitting an automatic form at \(provider)")
                if let proceed = form.buttons.first(where: { $0.name == "_eventId_proceed" }) {
                    fields.append(("_eventId_proceed", proceed.value))
                }
                if form.inputs.contains(where: { $0.name == "SAMLResponse" }) { postedAssertion = true }
            case .login:
                if postedLogin {
                    throw .authenticationFailed(server: provider, message: page.errorMessage)
                }
                try checkPasswordTarget(target, page: url)
                guard form.method == "post" else {
                    throw .unsafeLogin(
                        server: provider, detail: "has a login form that would put the password into the address")
                }
                transport.logger.debug("single sign-on: sending the login form at \(provider)")
                fields = WebLogin.fill(form, username: username, password: password)
                postedLogin = true
            case .consent(let attributes):
                guard acceptsConsent else { throw .consentRequired(provider: provider, attributes: attributes) }
                transport.logger.debug("single sign-on: accepting the attribute release at \(provider)")
                fields.removeAll { $0.0 == "_shib_idp_consentOptions" }
                fields += [("_shib_idp_consentOptions", "_shib_idp_rememberConsent"), ("_eventId_proceed", "")]
            }
            let method: HTTPRequest.Method = form.method == "post" ? .post : .get
            (response, url) =
                if method == .post {
                    try await browser.open(target, method: .post, form: fields, what: "the single sign-on")
                } else {
                    try await browser.open(withQuery(target, fields), what: "the single sign-on")
                }
        }
    }

    /// What `form` asks for, nil when it is none of the flow's forms (a search box, a language menu).
    static func step(of form: HTMLForm) -> Step? {
        if form.inputs.contains(where: { $0.name == "_shib_idp_consentIds" }) {
            return .consent(attributes: form.inputs.filter { $0.name == "_shib_idp_consentIds" }.map(\.value))
        }
        if form.hasPassword { return .login }
        let names = form.inputs.compactMap(\.name)
        let automatic =
            !form.inputs.isEmpty && form.inputs.allSatisfy { $0.type == "hidden" }
            || names.contains("SAMLResponse") || names.contains { $0.hasPrefix("shib_idp_ls_") }
        return automatic ? .autoSubmit : nil
    }

    /// The password goes only back to the origin that served the form, and only encrypted, unless both are on
    /// this machine (tests).
    static func checkPasswordTarget(_ target: String, page: String) throws(StudIPError) {
        guard let from = Origin(page), let to = Origin(target) else {
            throw .unsafeLogin(server: page, detail: "has a login form without a usable address")
        }
        guard from == to else {
            throw .unsafeLogin(server: from.description, detail: "has a login form that posts to \(to)")
        }
        guard to.mayCarrySecrets else {
            throw .unsafeLogin(server: from.description, detail: "asks for the password over unencrypted HTTP")
        }
    }

    private static func withQuery(_ url: String, _ fields: [(String, String)]) -> String {
        guard !fields.isEmpty else { return url }
        let query = fields.map { "\(Installation.encode($0.0))=\(Installation.encode($0.1))" }.joined(separator: "&")
        let base = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        return base + "?" + query
    }
}
