import Foundation

/// HTML text and attribute escaping, and its reverse for the values the simulator reads back.
enum HTML {
    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "'", with: "&#039;")
    }

    static func unescape(_ text: String) -> String {
        text.replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
            .replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#039;", with: "'")
            .replacingOccurrences(of: "&#39;", with: "'").replacingOccurrences(of: "&amp;", with: "&")
    }
}

/// The pages of the login surfaces, shaped like the real ones (Stud.IP 5.x's `index.php?again=yes`, the
/// Shibboleth IdP 4 views, the Shibboleth SP's error page) but reduced to what a client parses: forms, hidden
/// fields, message boxes. Every value that lands in an attribute is escaped.
enum LoginPages {
    /// Stud.IP's login page; `singleSignOn` is the URL of the SSO button when SSO is configured. Its assets carry
    /// the release (`?v=5.0.7`), as the real page's do. An error's first line is the box's text, the others its
    /// details, as 5.0.7 shows a wrong password ("Bei der Anmeldung trat ein Fehler auf!", details "intern: Das
    /// Passwort ist falsch!", the close button's "Nachrichtenbox schließen").
    static func studIP(
        action: String, tokens: Authenticator.PreLogin, error: String?, singleSignOn: String?, assets: String,
        release: String
    ) -> String {
        let message =
            error.map { text in
                let lines = text.split(separator: "\n").map { HTML.escape(String($0)) }
                let details = lines.dropFirst().map { "<li>\($0)</li>" }.joined()
                return #"<div class="messagebox messagebox_error"><div class="messagebox_buttons">"#
                    + ##"<a class="close" href="#"><span>Nachrichtenbox schließen</span></a></div>"##
                    + (lines.first ?? "")
                    + (details.isEmpty ? "" : #"<div class="messagebox_details"><ul>\#(details)</ul></div>"#)
                    + "</div>"
            } ?? ""
        let button =
            singleSignOn.map {
                #"<a class="button" href="\#(HTML.escape($0))">Login für Hochschulangehörige (Shibboleth)</a>"#
            } ?? ""
        let version = HTML.escape(release)
        return """
            <!DOCTYPE html>
            <html class="no-js" lang="de-DE"><head><meta charset="utf-8"><title>Stud.IP - Login</title>
            <link href="\(HTML.escape(assets))/stylesheets/studip-base.css?v=\(version)" rel="stylesheet" media="screen">
            <script src="\(HTML.escape(assets))/javascripts/studip-base.js?v=\(version)"></script></head>
            <body id="login"><div id="content"><div id="loginbox">
            \(message)
            <form class="default" name="login" method="post" action="\(HTML.escape(action))">
            <section><label for="loginname">Benutzername</label>
            <input type="text" id="loginname" name="loginname" value="" autofocus autocomplete="username" required></section>
            <section><label for="password">Passwort</label>
            <input type="password" id="password" name="password" autocomplete="current-password" required></section>
            <input type="hidden" name="security_token" value="\(HTML.escape(tokens.securityToken))">
            <input type="hidden" name="login_ticket" value="\(HTML.escape(tokens.loginTicket))">
            <input type="hidden" name="resolution" value="">
            <input type="hidden" name="device_pixel_ratio" value="">
            <footer><button type="submit" class="accept button" name="Login">Anmelden</button></footer>
            </form>
            \(button)
            </div></div></body></html>
            """
    }

    /// `dispatch.php/start` for a logged-in user.
    static func start(user: User) -> String {
        """
        <!DOCTYPE html>
        <html lang="de-DE"><head><meta charset="utf-8"><title>Startseite - Stud.IP</title></head>
        <body id="start"><div id="header"><span id="avatar-menu" title="\(HTML.escape(user.username))">\
        \(HTML.escape("\(user.givenName) \(user.familyName)"))</span></div>
        <div id="content"><h1>Meine Startseite</h1></div></body></html>
        """
    }

    /// The IdP's views share one frame, as the `views/*.vm` templates do.
    private static func idpFrame(_ body: String, onload: String = "") -> String {
        """
        <!DOCTYPE html>
        <html><head><meta charset="utf-8"><title>Web Login Service</title></head>
        <body\(onload)><div class="wrapper"><div class="container"><main class="content">
        \(body)
        </main></div></div></body></html>
        """
    }

    /// IdP 4's client-storage read (`e1s1`): JavaScript fills the fields and submits; a client without
    /// JavaScript posts the form as it is.
    static func idpLocalStorage(action: String, csrf: String) -> String {
        idpFrame(
            """
            <noscript><p>Since your browser does not support JavaScript, you must press the Continue button.</p></noscript>
            <form name="form1" action="\(HTML.escape(action))" method="post">
            <input type="hidden" name="csrf_token" value="\(HTML.escape(csrf))">
            <input name="shib_idp_ls_exception.shib_idp_session_ss" type="hidden">
            <input name="shib_idp_ls_success.shib_idp_session_ss" type="hidden" value="false">
            <input name="shib_idp_ls_value.shib_idp_session_ss" type="hidden">
            <input name="_eventId_proceed" type="hidden">
            <noscript><button type="submit">Continue</button></noscript>
            </form>
            <script>/* reads localStorage into the fields */</script>
            """, onload: #" onload="doLoad()""#)
    }

    /// The IdP's username/password view (`e1s2`), with the error line after a wrong password.
    static func idpLogin(action: String, csrf: String, error: String?, service: String) -> String {
        let message = error.map { #"<p class="output-message output--error">\#(HTML.escape($0))</p>"# } ?? ""
        return idpFrame(
            """
            <p>Anmelden bei <strong>\(HTML.escape(service))</strong></p>
            <form action="\(HTML.escape(action))" method="post">
            <input type="hidden" name="csrf_token" value="\(HTML.escape(csrf))">
            \(message)
            <div class="form-element-wrapper"><label for="username">Username</label>
            <input class="form-element form-field" id="username" name="j_username" type="text" value=""></div>
            <div class="form-element-wrapper"><label for="password">Password</label>
            <input class="form-element form-field" id="password" name="j_password" type="password" value=""></div>
            <div class="form-element-wrapper"><input type="checkbox" name="donotcache" value="1" id="donotcache">
            <label for="donotcache">Don't Remember Login</label></div>
            <div class="form-element-wrapper"><button class="form-element form-button" type="submit" \
            name="_eventId_proceed">Login</button></div>
            </form>
            """)
    }

    /// The attribute release view (`e1s3` after a login): one checked box per attribute, the three
    /// remember options, Accept and Reject.
    static func idpConsent(action: String, csrf: String, service: String, attributes: [(id: String, value: String)])
        -> String
    {
        let rows = attributes.map { attribute in
            """
            <tr><td>\(HTML.escape(attribute.id))</td><td>\(HTML.escape(attribute.value))</td>\
            <td><input type="checkbox" name="_shib_idp_consentIds" value="\(HTML.escape(attribute.id))" checked></td></tr>
            """
        }.joined(separator: "\n")
        return idpFrame(
            """
            <form action="\(HTML.escape(action))" method="post">
            <input type="hidden" name="csrf_token" value="\(HTML.escape(csrf))">
            <p>You are about to access the service: <strong>\(HTML.escape(service))</strong></p>
            <p>Information to be Provided to Service</p>
            <table>\(rows)</table>
            <p>Select an information release consent duration:</p>
            <input id="_shib_idp_doNotRememberConsent" type="radio" name="_shib_idp_consentOptions" \
            value="_shib_idp_doNotRememberConsent">
            <label for="_shib_idp_doNotRememberConsent">Ask me again at next login</label>
            <input id="_shib_idp_rememberConsent" type="radio" name="_shib_idp_consentOptions" \
            value="_shib_idp_rememberConsent" checked>
            <label for="_shib_idp_rememberConsent">Ask me again if information to be provided to this service changes</label>
            <input id="_shib_idp_globalConsent" type="radio" name="_shib_idp_consentOptions" \
            value="_shib_idp_globalConsent">
            <label for="_shib_idp_globalConsent">Do not ask me again</label>
            <input type="submit" name="_eventId_AttributeReleaseRejected" value="Reject">
            <input type="submit" name="_eventId_proceed" value="Accept">
            </form>
            """)
    }

    /// The HTTP-POST binding's auto-submitted form that carries the response to the SP.
    static func idpPostResponse(action: String, relayState: String, samlResponse: String) -> String {
        idpFrame(
            """
            <noscript><p><strong>Note:</strong> Since your browser does not support JavaScript, \
            you must press the Continue button once to proceed.</p></noscript>
            <form action="\(HTML.escape(action))" method="post">
            <div><input type="hidden" name="RelayState" value="\(HTML.escape(relayState))"/>
            <input type="hidden" name="SAMLResponse" value="\(HTML.escape(samlResponse))"/></div>
            <noscript><div><input type="submit" value="Continue"/></div></noscript>
            </form>
            """, onload: #" onload="document.forms[0].submit()""#)
    }

    /// An IdP error view (stale request, rejected release, unknown service).
    static func idpError(_ title: String, _ message: String) -> String {
        idpFrame(
            """
            <h1>\(HTML.escape(title))</h1>
            <p class="output-message output--error">\(HTML.escape(message))</p>
            """)
    }

    /// The Shibboleth SP's error page for a message it does not accept.
    static func serviceProviderError(_ message: String) -> String {
        """
        <!DOCTYPE html>
        <html><head><title>Shibboleth Error</title></head><body>
        <h1>Unauthorized</h1><p>The system encountered an error.</p>
        <p>opensaml::FatalProfileException: \(HTML.escape(message))</p></body></html>
        """
    }
}
