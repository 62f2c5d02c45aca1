import ArgumentParser
import ControlProtocol
import Desktop
import Foundation
import Logging
import SecretStore
import StudIPKit
import StudIPModel
import SystemSupport

/// `campusfs login`: finds the installation, finds out how to log in there, logs in once, stores the secret in the
/// keyring and the profile in config.toml, and hands the login to a running mount.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Log in to your university's Stud.IP and remember it (keyring + config.toml).",
        discussion: """
            Without arguments, asks for your university (type part of its name, or paste the address of any Stud.IP \
            page), finds out which APIs and login methods the installation offers, asks only what it needs, checks the \
            login by fetching your user, stores the password or tokens in the desktop's keyring (GNOME Keyring, \
            KWallet; where none answers, a file only you can read, with a warning) and writes the profile to \
            config.toml. Then `campusfs mount` needs no questions. While the profile is mounted, the mount uses the new \
            login at once, without a remount.

            Login methods: the Stud.IP username and password (HTTP Basic, or Stud.IP's login form where Basic does not \
            reach Stud.IP), your university's single sign-on (its identity provider's login form), or OAuth2 in the \
            browser (Stud.IP 5.2+, where the installation registered CampusFS; no password is stored, only tokens).

            For scripts: --server/--username with CAMPUSFS_PASSWORD or --password-command log in without questions; \
            CAMPUSFS_TOKEN checks an OAuth2 access token (not stored). --check verifies the stored login; `campusfs \
            logout` forgets it.

            Uploads: the first login at a terminal asks once whether files saved into folders where Stud.IP lets you \
            write may be published to the course (uploads = true in the profile); a login without a terminal leaves \
            them off. Change it in config.toml at any time.
            """
                + HelpText.examples(
                    """
                    campusfs login            # asks for everything
                    campusfs login Passau     # a university from the built-in list
                    campusfs login https://studip.example.org/studip/dispatch.php/my_courses
                    campusfs login --profile work --method sso https://studip.example.org/studip
                    CAMPUSFS_PASSWORD=… campusfs login --server https://studip.example.org/studip --username jdoe
                    campusfs login --check
                    """))

    @OptionGroup var profile: ProfileOptions

    @Argument(help: "A university's name (or part of it) from the built-in list, or the address of any Stud.IP page.")
    var university: String?

    @Option(help: "How to log in: basic, web, sso or oauth2 (default: ask, or what the installation offers).")
    var method: LoginMethod?

    @Option(help: "The OAuth2 client id the installation registered for CampusFS (dispatch.php/admin/oauth2).")
    var oauth2ClientID: String?

    @Flag(help: "OAuth2: print the address to open instead of starting a browser; paste where it ends.")
    var noBrowser = false

    @Flag(help: "Single sign-on: accept the identity provider's attribute release page at every login.")
    var acceptConsent = false

    @Flag(help: "Only check that the stored login still works; change nothing.")
    var check = false

    @Flag(help: "Show the log lines of the login (steps, the server's answers) here too; they go to the profile's log.")
    var verbose = false

    func run() async throws {
        let paths = Paths()
        // The dialogue shows only its own lines; the library's log goes to the profile's log file (docs/login.md).
        let log = DialogueLog(verbose: verbose)
        let logFile = paths.log(profile: (try? profile.name(paths: paths)) ?? "default")
        do {
            try await run(paths: paths, logger: log.logger)
        } catch {
            await BlockingPool.shared.run { log.save(to: logFile) }
            throw error
        }
        await BlockingPool.shared.run { log.save(to: logFile) }
    }

    private func run(paths: Paths, logger: Logger) async throws {
        try await reportingErrors {
            if check {
                try await checkStoredLogin(paths, logger: logger)
                return
            }
            let name = try profile.name(paths: paths)
            let file = try await BlockingPool.shared.run { () throws(CLIError) in
                try ConfigFile.load(from: paths.configFile)
            }
            let existing = file.profiles[name]
            let place = try await installation(existing: existing)
            let survey = try await StudIP.survey(place.url, logger: logger)
            let remembered = Self.remembered(existing, at: survey.baseURL)
            let clientID = oauth2ClientID ?? place.oauth2ClientID ?? remembered?.oauth2ClientID
            printError(
                "Found \(survey.generation) at \(survey.baseURL) (\(Self.offers(survey, oauth2ClientID: clientID)))")
            // A running mount serves one server: another one's login must not reach it.
            if let status = DaemonDirectory.status(paths.socket(profile: name)), status.serverURL != survey.baseURL {
                throw CLIError.usage(
                    "\"\(name)\" is mounted at \(status.mountpoint) for \(status.serverURL), not \(survey.baseURL): "
                        + "`campusfs unmount --profile \(name)` first, or log in with another --profile")
            }
            var login = Login(
                profile: name, paths: paths, baseURL: survey.baseURL, university: place.name,
                api: profile.api ?? existing?.api.flatMap(ProfileOptions.APIChoice.init) ?? .auto,
                logger: logger, isFirstProfile: file.profiles.isEmpty)
            login.asksAboutUploads = existing?.uploads == nil
            if let token = SecretEnvironment.values["CAMPUSFS_TOKEN"], !token.isEmpty {
                try await checkToken(token, login: login)
                return
            }
            let chosen = try await chooseMethod(survey, clientID: clientID, place: place, remembered: remembered)
            let credentials: Credentials
            do throws(CLIError) {
                credentials = try await logIn(chosen, survey: survey, existing: existing, login: &login)
            } catch {
                guard let status = DaemonDirectory.status(paths.socket(profile: name)) else { throw error }
                throw CLIError(
                    exitCode: error.exitCode, "\(error); the mount at \(status.mountpoint) keeps serving what is cached"
                )
            }
            try await finish(login, credentials: credentials)
        }
    }

    // MARK: - Where

    /// An installation, and what the list (or the profile) says about it.
    struct Place {
        var url: String
        var name: String?
        var oauth2ClientID: String?
        /// The `sso=` value of the single sign-on link its students use, where the login page has several.
        var sso: String?

        init(url: String, name: String? = nil, oauth2ClientID: String? = nil, sso: String? = nil) {
            (self.url, self.name, self.oauth2ClientID, self.sso) = (url, name, oauth2ClientID, sso)
        }

        init(_ university: University) {
            self.init(
                url: university.url, name: university.name, oauth2ClientID: university.oauth2ClientID,
                sso: university.sso)
        }
    }

    /// The argument, `--server`, the profile's URL, or the person's answer: a URL, or a name from the list.
    private func installation(existing: ProfileSettings?) async throws(CLIError) -> Place {
        if let given = university ?? profile.server { return try await place(for: given) }
        if let url = existing?.url { return Place(url: url, name: existing?.university) }
        guard Terminal.isInteractive else {
            throw .usage(
                "which university? pass its name or the address of a Stud.IP page, e.g. `campusfs login Passau`, "
                    + "or --server URL")
        }
        return try await BlockingPool.shared.run { () throws(CLIError) -> Place in
            try Self.pick(nil, in: try UniversityList.load())
        }
    }

    /// A URL as given, or the one university a name matches; several: the person picks (or narrows).
    private func place(for given: String) async throws(CLIError) -> Place {
        if Self.looksLikeURL(given) { return Place(url: Self.withScheme(given)) }
        let list = try await BlockingPool.shared.run { () throws(CLIError) in try UniversityList.load() }
        let matches = UniversityList.matching(given, in: list)
        if matches.count == 1, let only = matches.first { return Place(only) }
        guard !matches.isEmpty else {
            throw .usage(
                "no university in the list matches \"\(given)\"; pass the address of any page of your Stud.IP instead, "
                    + "e.g. https://studip.example.org/studip")
        }
        guard Terminal.isInteractive else {
            throw .usage(
                "\"\(given)\" matches \(matches.count) universities ("
                    + matches.prefix(4).map(\.name).joined(separator: ", ") + "); be more precise or pass the URL")
        }
        return try await BlockingPool.shared.run { () throws(CLIError) -> Place in try Self.pick(given, in: list) }
    }

    /// How many matches the picker numbers at once: one digit to type.
    static let shownMatches = 9

    /// The terminal's university picker: a part of the name (or an address), then a number. More matches than
    /// fit are counted, and any answer that is not a number searches again, so "uni" narrows to "uni ros".
    static func pick(_ first: String?, in list: [University]) throws(CLIError) -> Place {
        var query = first
        while true {
            guard let answer = query ?? Terminal.ask("University (part of its name) or the address of a Stud.IP page: ")
            else { throw .usage("no university chosen") }
            query = nil
            if looksLikeURL(answer) { return Place(url: withScheme(answer)) }
            let matches = UniversityList.matching(answer, in: list)
            if matches.isEmpty {
                printError(
                    "No university in the list matches \"\(answer)\"; try another part of the name, or "
                        + "paste the address of any page of your Stud.IP.")
                continue
            }
            let shown = Array(matches.prefix(shownMatches))
            if matches.count > shown.count {
                printError(
                    "\(matches.count) universities match \"\(answer)\"; the first \(shown.count) (type more of the name "
                        + "to see the others):")
            }
            for (number, university) in shown.enumerated() {
                printError("  \(number + 1)) \(university.name) — \(university.url)")
            }
            guard let reply = Terminal.ask("Number, or a name to search again: ") else { continue }
            if let number = Int(reply) {
                guard shown.indices.contains(number - 1) else {
                    printError("No number \(number) in the list.")
                    query = answer
                    continue
                }
                return Place(shown[number - 1])
            }
            query = reply
        }
    }

    static func looksLikeURL(_ text: String) -> Bool {
        text.contains("://") || (text.contains(".") && text.contains("/") && !text.contains(" "))
    }

    static func withScheme(_ text: String) -> String {
        text.contains("://") ? text : "https://" + text
    }

    /// "JSON:API, legacy REST, OAuth2, login form, single sign-on: Shibboleth". OAuth2 only with a client id to
    /// use it with: Stud.IP has no dynamic registration, and a student cannot know one (docs/login.md).
    static func offers(_ survey: InstallationSurvey, oauth2ClientID: String?) -> String {
        var parts: [String] = []
        if survey.jsonAPI { parts.append("JSON:API") }
        if survey.legacyREST { parts.append("legacy REST") }
        if survey.oauth2, oauth2ClientID != nil { parts.append("OAuth2") }
        if survey.webLoginForm { parts.append("login form") }
        parts += survey.singleSignOn.map { "single sign-on: \($0.label)" }
        return parts.isEmpty ? "no API answered" : parts.joined(separator: ", ")
    }

    // MARK: - How

    /// `--method`, else the one method there is, else the person's choice; without a terminal, the password.
    private func chooseMethod(
        _ survey: InstallationSurvey, clientID: String?, place: Place, remembered: ProfileSettings?
    ) async throws(CLIError) -> Method {
        var methods: [Method] = []
        if survey.oauth2, let clientID { methods.append(.oauth2(clientID: clientID)) }
        let entries = Self.ordered(survey.singleSignOn, preferring: place.sso)
        methods += entries.map { Method.singleSignOn($0) }
        if survey.jsonAPI || survey.legacyREST { methods.append(.password) }
        if let method {
            switch method {
            case .basic, .web: return .password
            case .sso:
                guard let entry = entries.first else {
                    throw .usage("\(survey.baseURL) shows no single sign-on link on its login page")
                }
                return .singleSignOn(entry)
            case .oauth2:
                guard survey.oauth2 else {
                    throw .usage("\(survey.baseURL) has no OAuth2 endpoints (Stud.IP 5.2 or newer has them)")
                }
                guard let clientID else {
                    throw .usage(
                        "OAuth2 needs the client id the installation registered for CampusFS: pass --oauth2-client-id "
                            + "(its admins find it at dispatch.php/admin/oauth2)")
                }
                return .oauth2(clientID: clientID)
            }
        }
        guard methods.count > 1 else {
            guard let only = methods.first else {
                throw .other("\(survey.baseURL) answers neither JSON:API nor the legacy REST API; nothing to log in to")
            }
            return only
        }
        // Logging in again: the way the profile logged in before, while the installation still offers it.
        if let again = methods.first(where: { $0.isSame(as: remembered) }) { return again }
        let offered = methods
        guard Terminal.isInteractive else {
            // A script that gives a password means the Stud.IP account; anything else must say so.
            guard methods.contains(where: \.isPassword) else {
                throw .usage("pass --method sso or oauth2: \(survey.baseURL) offers \(methods.count) ways to log in")
            }
            return .password
        }
        let chosen = await BlockingPool.shared.run { () -> Int? in
            printError("How do you log in at \(place.name ?? survey.baseURL)?")
            return Terminal.choose("Number: ", offered.map(\.title))
        }
        guard let chosen else { throw .usage("no login method chosen; pass --method basic, web, sso or oauth2") }
        return offered[chosen]
    }

    /// The login page's single sign-on links, the one the list names (`sso=<value>`) first: `--method sso` takes
    /// the first, and the question shows it first.
    static func ordered(_ entries: [SSOEntry], preferring sso: String?) -> [SSOEntry] {
        guard let sso else { return entries }
        let known = { (entry: SSOEntry) in
            URLComponents(string: entry.url)?.queryItems?.contains { $0.name == "sso" && $0.value == sso } == true
        }
        return entries.filter(known) + entries.filter { !known($0) }
    }

    /// The profile's settings when it is for this installation: what it remembers (the method, the client id)
    /// does not carry over to another server.
    static func remembered(_ existing: ProfileSettings?, at baseURL: String) -> ProfileSettings? {
        guard let existing, let url = existing.url, (try? LoginSurvey.baseURL(from: url)) == baseURL else { return nil }
        return existing
    }

    /// A way to log in the installation offers.
    enum Method {
        case password
        case singleSignOn(SSOEntry)
        case oauth2(clientID: String)

        var isPassword: Bool {
            if case .password = self { true } else { false }
        }

        /// Whether this is how `profile` logged in (its `login`, and for single sign-on its link).
        func isSame(as profile: ProfileSettings?) -> Bool {
            switch (self, profile?.login.flatMap(LoginMethod.init(rawValue:))) {
            case (.password, .basic), (.password, .web), (.oauth2, .oauth2): true
            case (.singleSignOn(let entry), .sso): entry.url == profile?.ssoURL
            default: false
            }
        }

        var title: String {
            switch self {
            case .password: "Stud.IP username and password"
            case .singleSignOn(let entry): "\(entry.label) (single sign-on)"
            case .oauth2: "In the browser (OAuth2; no password stored)"
            }
        }
    }

    // MARK: - Logging in

    /// What `campusfs login` writes and stores once the login worked.
    struct Login {
        var profile: String
        var paths: Paths
        var baseURL: String
        var university: String?
        var api: ProfileOptions.APIChoice
        /// Where the library's lines go: the profile's log file, not the dialogue (``DialogueLog``).
        var logger: Logger
        /// Whether config.toml has no profile yet: then this one becomes `default_profile`.
        var isFirstProfile = false
        /// Whether the profile has no `uploads` setting yet: a person at a terminal is asked once.
        var asksAboutUploads = false
        var username: String?
        var method: LoginMethod = .basic
        var ssoURL: String?
        var oauth2ClientID: String?
        var acceptsConsent: Bool?
        /// The password or the token pair's JSON to store; nil when it came from a password command.
        var secret: String?
        var fullName: String?

        /// The profile as the other commands will resolve it.
        var resolved: Profile {
            Profile(
                name: profile, paths: paths, serverURL: baseURL, api: api, university: university,
                username: username, login: method, ssoURL: ssoURL, oauth2ClientID: oauth2ClientID,
                acceptsConsent: acceptsConsent ?? false, passwordCommand: nil, semesters: [], hiddenCourses: [],
                courseNameTemplate: "")
        }
    }

    private func logIn(
        _ chosen: Method, survey: InstallationSurvey, existing: ProfileSettings?, login: inout Login
    ) async throws(CLIError) -> Credentials {
        switch chosen {
        case .password:
            return try await askingAgain(existing: existing, prompt: "Stud.IP") {
                (username, password) async throws(CLIError) -> Result<Credentials, StudIPError> in
                login.username = username
                login.secret = password.stored
                let basic = Credentials.basic(username: username, password: password.value)
                let web = Credentials.webLogin(username: username, password: password.value)
                // The form first where there is one: its answer tells a wrong password from HTTP Basic that never
                // reaches Stud.IP (PHP behind FastCGI), so a typo costs one failed login, not two. With the password
                // known to be right, Basic is tried once more: it needs no session, so the mount uses it where it
                // works.
                guard survey.webLoginForm, method != .basic else {
                    let only = method == .web ? web : basic
                    do throws(StudIPError) {
                        login.fullName = try await verify(only, login: login)
                    } catch {
                        return .failure(error)
                    }
                    login.method = method == .web ? .web : .basic
                    return .success(only)
                }
                do throws(StudIPError) {
                    login.fullName = try await verify(web, login: login)
                } catch {
                    return .failure(error)
                }
                // `try?` would flatten a Basic login that works but names nobody into a refused one.
                if method != .web, case .success(let name) = await verification(of: basic, login: login) {
                    (login.fullName, login.method) = (name ?? login.fullName, .basic)
                    return .success(basic)
                }
                login.method = .web
                return .success(web)
            }
        case .singleSignOn(let entry):
            (login.method, login.ssoURL) = (.sso, entry.url)
            var consent = acceptConsent
            return try await askingAgain(existing: existing, prompt: entry.label) {
                (username, password) async throws(CLIError) -> Result<Credentials, StudIPError> in
                (login.username, login.secret) = (username, password.stored)
                while true {
                    let credentials = Credentials.singleSignOn(
                        username: username, password: password.value, entry: entry.url, acceptsConsent: consent)
                    do throws(StudIPError) {
                        login.fullName = try await verify(credentials, login: login)
                        login.acceptsConsent = consent ? true : nil
                        return .success(credentials)
                    } catch {
                        guard !consent, case .consentRequired(let provider, let attributes) = error else {
                            return .failure(error)
                        }
                        let agreed = await BlockingPool.shared.run {
                            Terminal.confirm(
                                "\(provider) asks to release \(attributes.joined(separator: ", ")) to Stud.IP. CampusFS "
                                    + "logs in again whenever the session ends and would accept this each time. Accept?"
                            )
                        }
                        guard agreed else {
                            throw .auth(
                                "\(provider) asks for your consent to release \(attributes.joined(separator: ", ")); "
                                    + "run `campusfs login` in a terminal to answer, or pass --accept-consent")
                        }
                        consent = true
                    }
                }
            }
        case .oauth2(let clientID):
            (login.method, login.oauth2ClientID) = (.oauth2, clientID)
            let tokens = try await authorizeInBrowser(baseURL: survey.baseURL, clientID: clientID, logger: login.logger)
            let credentials = Credentials.bearer(tokens)
            do throws(StudIPError) {
                login.fullName = try await verify(credentials, login: login)
            } catch {
                throw CLIError(error)
            }
            guard let encoded = try? JSONEncoder().encode(tokens) else {
                throw .other("cannot encode the OAuth2 tokens")
            }
            login.secret = String(decoding: encoded, as: UTF8.self)
            return credentials
        }
    }

    /// A password and whether to store it: not when it came from a password command (that stays its source).
    struct Password {
        var value: String
        var stored: String?
        /// Typed at the prompt, so worth asking again when refused.
        var typed = false
    }

    /// Tries a typed password may take before the login ends.
    static let passwordTries = 3

    /// Asks for username and password and runs `attempt` with them. A typed password that is refused is asked for
    /// again, three tries in all, keeping the university and the method chosen; any other failure ends the login
    /// (docs/login.md).
    private func askingAgain(
        existing: ProfileSettings?, prompt: String,
        _ attempt: (String, Password) async throws(CLIError) -> Result<Credentials, StudIPError>
    ) async throws(CLIError) -> Credentials {
        var tries = 0
        while true {
            tries += 1
            let (username, password) = try await usernameAndPassword(existing: existing, prompt: prompt)
            switch try await attempt(username, password) {
            case .success(let credentials):
                return credentials
            case .failure(let error):
                guard case .authenticationFailed(let server, _) = error, password.typed, tries < Self.passwordTries
                else { throw CLIError(error) }
                let left = Self.passwordTries - tries
                printError(
                    "\(server) did not accept that username and password; try again (\(left) \(left == 1 ? "try" : "tries") "
                        + "left).")
            }
        }
    }

    /// `--username`, the profile's, or asked; the password from CAMPUSFS_PASSWORD, the password command, or asked.
    private func usernameAndPassword(
        existing: ProfileSettings?, prompt: String
    ) async throws(CLIError) -> (String, Password) {
        let command = profile.passwordCommand
        let known = profile.username ?? existing?.username
        return try await BlockingPool.shared.run { () throws(CLIError) -> (String, Password) in
            let username = known ?? Terminal.ask("Username (\(prompt)): ")
            guard let username else {
                throw .usage("no username: pass --username NAME (or run `campusfs login` in a terminal)")
            }
            if let password = SecretEnvironment.values["CAMPUSFS_PASSWORD"], !password.isEmpty {
                return (username, Password(value: password, stored: password))
            }
            if let command {
                return (username, Password(value: try PasswordCommand.run(command), stored: nil))
            }
            guard let password = Terminal.askSecret("Password of \(username) (\(prompt)): ") else {
                throw .usage("no password: type it in a terminal, or set CAMPUSFS_PASSWORD or --password-command")
            }
            return (username, Password(value: password, stored: password, typed: true))
        }
    }

    /// OAuth2 authorization code with PKCE (RFC 7636) and a loopback redirect (RFC 8252): the browser logs in and
    /// comes back to a listener on 127.0.0.1; without a browser, the person pastes where it ended.
    private func authorizeInBrowser(
        baseURL: String, clientID: String, logger: Logger
    ) async throws(CLIError) -> OAuthTokens {
        let listener: LoopbackRedirect
        do throws(StudIPError) {
            listener = try await LoopbackRedirect.start()
        } catch {
            throw CLIError(error)
        }
        let authorization: OAuth2Authorization
        do throws(StudIPError) {
            authorization = try OAuth2Authorization(
                baseURL: baseURL, clientID: clientID, redirectURI: listener.redirectURI)
        } catch {
            await listener.stop()
            throw CLIError(error)
        }
        listener.expect(state: authorization.state)
        let url = authorization.authorizeURL
        let opened = noBrowser ? false : await BlockingPool.shared.run { Opener.open(url) }
        let code: Result<String, StudIPError>
        if opened {
            printError(
                "Log in in the browser window that opened; if none did, open:\n  \(url)\nWaiting up to "
                    + "\(Self.browserWait.components.seconds / 60) minutes for the browser to come back.")
            code = await Self.codeFromBrowserOrPaste(authorization, listener: listener, timeout: Self.browserWait)
        } else {
            await listener.stop()
            printError("Open this address in a browser, log in, and allow CampusFS:\n  \(url)")
            let pasted = await BlockingPool.shared.run {
                Terminal.ask("Then paste the address the browser ended on (it may say it cannot connect): ")
            }
            guard let pasted else {
                throw .usage(
                    "no browser opened and nothing was pasted: run `campusfs login` in a terminal to paste where the "
                        + "browser ended, or where a browser can open")
            }
            code = Result { () throws(StudIPError) in try authorization.code(fromPasted: pasted) }
        }
        do throws(StudIPError) {
            return try await authorization.exchange(code: try code.get(), logger: logger)
        } catch {
            throw CLIError(error)
        }
    }

    /// How long `campusfs login` waits for the browser; Stud.IP's authorization code lives 10 minutes anyway.
    static let browserWait = Duration.seconds(600)

    /// The code from whichever comes first: the browser at the loopback listener, or the address the person pastes.
    /// The paste is for when the browser cannot reach the listener: Stud.IP 6.0 sends "Deny" to the registered
    /// redirect without the port (docs/login.md), and a browser on another machine never reaches it.
    static func codeFromBrowserOrPaste(
        _ authorization: OAuth2Authorization, listener: LoopbackRedirect, timeout: Duration
    ) async -> Result<String, StudIPError> {
        let stop = StopSignal()
        return await withTaskGroup(of: Result<String, StudIPError>?.self) { group in
            group.addTask {
                do throws(StudIPError) {
                    return .success(try await listener.code(state: authorization.state, timeout: timeout))
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                let pasted = await BlockingPool.shared.run {
                    Terminal.ask("Or paste the address the browser ends on if it cannot open it: ", until: stop)
                }
                // Nothing pasted (the browser came back, or no terminal): the listener answers.
                guard let pasted else { return nil }
                return Result { () throws(StudIPError) in try authorization.code(fromPasted: pasted) }
            }
            var outcome: Result<String, StudIPError>?
            while outcome == nil, let next = await group.next() { outcome = next }
            stop.set()
            await listener.stop()
            return outcome
                ?? .failure(.authenticationFailed(server: authorization.baseURL, message: "no authorization arrived"))
        }
    }

    /// Logs in once (`users/me`, or `user` on the legacy API) and returns the user's full name.
    /// ``verify(_:login:asMounted:)`` as a value: the name Stud.IP knows (nil: none), or why it refused.
    private func verification(of credentials: Credentials, login: Login) async -> Result<String?, StudIPError> {
        do throws(StudIPError) {
            return .success(try await verify(credentials, login: login))
        } catch {
            return .failure(error)
        }
    }

    private func verify(
        _ credentials: Credentials, login: Login, asMounted: Bool = false
    ) async throws(StudIPError) -> String? {
        var configuration = login.resolved.clientConfiguration(credentials)
        configuration.logger = login.logger
        // Logging in, Basic is tried to learn whether it works; the form has its own try (docs/login.md).
        if !asMounted { configuration.basicFallsBackToWebLogin = false }
        let source = try await StudIP.connect(configuration)
        let name = source.userFullName
        await source.shutdown()
        return name
    }

    // MARK: - Remembering

    private func finish(_ login: Login, credentials: Credentials) async throws(CLIError) {
        let resolved = login.resolved
        if let secret = login.secret {
            let kind: SecretKind = login.method == .oauth2 ? .oauth2Tokens : .password
            if let warning = try await Secrets.save(secret, kind, of: resolved) { printError("campusfs: \(warning)") }
        }
        let remove = ConfigWriter.Value.remove
        var settings: [(key: String, value: ConfigWriter.Value)] = [
            ("url", .string(login.baseURL)), ("university", login.university.map { .string($0) } ?? remove),
            ("username", login.username.map { .string($0) } ?? remove), ("login", .string(login.method.rawValue)),
            ("sso_url", login.ssoURL.map { .string($0) } ?? remove),
            ("sso_accept_consent", login.acceptsConsent.map { .bool($0) } ?? remove),
            ("oauth2_client_id", login.oauth2ClientID.map { .string($0) } ?? remove),
        ]
        if let command = profile.passwordCommand {
            settings.append(("password_command", .string(command)))
        } else if login.secret != nil {
            // The stored secret is the source from now on: an old command would win over it (CredentialSource).
            settings.append(("password_command", remove))
        }
        if let api = profile.api { settings.append(("api", .string(api.rawValue))) }
        if login.asksAboutUploads, Terminal.isInteractive {
            settings.append(("uploads", .bool(await BlockingPool.shared.run { Self.askAboutUploads() })))
        }
        let option = try await BlockingPool.shared.run { [settings] () throws(CLIError) -> String in
            try ConfigWriter.write(
                profile: login.profile, settings: settings, makeDefault: login.isFirstProfile, paths: login.paths)
            return try ProfileOptions.defaultProfileName(paths: login.paths) == login.profile
                ? "" : " --profile \(login.profile)"
        }
        let who = login.fullName ?? login.username ?? "you"
        let place = login.university ?? login.baseURL
        guard let status = DaemonDirectory.status(login.paths.socket(profile: login.profile)) else {
            print("Logged in as \(who) at \(place); mount with `campusfs mount\(option)`")
            return
        }
        try await hand(credentials, to: login.paths.socket(profile: login.profile), mountpoint: status.mountpoint)
        print("Logged in as \(who) at \(place); the mount at \(status.mountpoint) uses it now")
    }

    /// The one question about writing (docs/writing.md, "When writing is on"), asked once per profile: the answer is
    /// written as `uploads`, and a script's login (no terminal) never asks, leaving uploads off.
    static func askAboutUploads() -> Bool {
        printError(
            "Uploads: with them on, a file you save or copy into a folder where Stud.IP lets you write is published to "
                + "that course (into a homework folder: handed in). Change it later with uploads = true|false.")
        return Terminal.confirm("Allow uploads?")
    }

    /// Gives a running daemon the new login (it accepts only what the server accepts).
    private func hand(_ credentials: Credentials, to socket: URL, mountpoint: String) async throws(CLIError) {
        let message = LoginCredentials(credentials)
        // The daemon logs in before it answers: a wait on a socket, so not on Swift's pool.
        let response = try await BlockingPool.shared.run { () throws(CLIError) -> ControlResponse in
            do throws(ControlSocketError) {
                return try ControlClient.send(.login(credentials: message), to: socket.path)
            } catch {
                throw .other(error.description)
            }
        }
        if let error = response.error {
            throw CLIError(
                exitCode: response.exitCode ?? 4, error + "; the mount at \(mountpoint) keeps serving what is cached")
        }
    }

    /// `CAMPUSFS_TOKEN`: checked and handed to a running mount, not stored (an access token lives an hour).
    private func checkToken(_ token: String, login: Login) async throws(CLIError) {
        let credentials = Credentials.bearer(OAuthTokens(accessToken: token, refreshToken: nil))
        let who: String
        do throws(StudIPError) {
            who = try await verify(credentials, login: login) ?? "you"
        } catch {
            throw CLIError(error)
        }
        if let status = DaemonDirectory.status(login.paths.socket(profile: login.profile)) {
            try await hand(credentials, to: login.paths.socket(profile: login.profile), mountpoint: status.mountpoint)
            print("The token logs in as \(who); the mount at \(status.mountpoint) uses it now (it is not stored)")
        } else {
            print("The token logs in as \(who) at \(login.baseURL); it is not stored (CAMPUSFS_TOKEN)")
        }
    }

    /// The running daemon's state after it asked the server (control request `checkLogin`); nil when no daemon
    /// runs. A daemon that does not answer it is an error, not a reason to check beside it.
    private func mountedLoginCheck(_ socket: URL) async throws(CLIError) -> DaemonStatus? {
        // The daemon asks the server before it answers: a wait on a socket, so not on Swift's pool.
        let response = try await BlockingPool.shared.run { () throws(CLIError) -> ControlResponse? in
            do throws(ControlSocketError) {
                return try ControlClient.send(.checkLogin, to: socket.path)
            } catch {
                if case .notRunning = error { return nil }
                throw .other(error.description)
            }
        }
        guard let response else { return nil }
        guard let status = response.status else {
            throw CLIError(exitCode: response.exitCode ?? 4, response.error ?? "the daemon did not check its login")
        }
        return status
    }

    /// `--check`: the profile's stored login, as `mount` would use it, without asking anything.
    private func checkStoredLogin(_ paths: Paths, logger: Logger) async throws(CLIError) {
        let resolved = try profile.resolve(paths: paths)
        // Mounted, the daemon's login is the one that counts, and checking beside it could spend its OAuth2 refresh
        // token: the daemon asks the server now (its last state may be older than a revoked grant).
        if let status = try await mountedLoginCheck(paths.socket(profile: resolved.name)) {
            guard status.server != .loginNeeded else {
                throw .auth(
                    "the mount at \(status.mountpoint) needs a login (\(status.serverDetail ?? "refused")); run "
                        + "`campusfs login\(resolved.option)`")
            }
            print("The mount at \(status.mountpoint) is \(status.server.rawValue) at \(resolved.serverName)")
            return
        }
        // Its errors say what to do (log in, unlock the keyring, fix the password command).
        let credentials = try await CredentialSource.resolve(resolved, interactive: false)
        // As the mount would: the profile's method and OAuth2 client id (a refresh with another id is refused).
        var login = Login(
            profile: resolved.name, paths: paths, baseURL: resolved.serverURL, university: resolved.university,
            api: resolved.api, logger: logger)
        (login.method, login.username, login.oauth2ClientID) = (
            resolved.login, resolved.username, resolved.oauth2ClientID
        )
        do throws(StudIPError) {
            let who = try await verify(credentials, login: login, asMounted: true) ?? resolved.username ?? "you"
            print("Logged in as \(who) at \(resolved.serverName) (login: \(resolved.login.rawValue))")
        } catch {
            guard error.exitCode == 2 else { throw CLIError(error) }
            throw .auth("\(error); run `campusfs login\(resolved.option)`")
        }
    }
}
