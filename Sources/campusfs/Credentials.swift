import Daemon
import Foundation
import SecretStore
import StudIPKit
import Synchronization
import SystemSupport

/// Finds the secret for a profile without ever taking it from the command line (docs/architecture.md, "Exit codes"),
/// from the first source that has one: `CAMPUSFS_TOKEN` (an OAuth2 access token), `CAMPUSFS_PASSWORD`, the output of
/// `--password-command`, what `campusfs login` stored in the keyring, or, in a terminal, what the user types.
///
/// The profile's `login` says what a password is for: HTTP Basic, the web login form, or the single sign-on
/// form; with `login = "oauth2"` the keyring holds the token pair. Everything here blocks (a password command, a
/// D-Bus call, a prompt), so the async entry points run on ``BlockingPool``.
enum CredentialSource {
    /// The credentials `campusfs mount`, `refresh` and `login --check` use.
    static func resolve(
        _ profile: Profile, environment: [String: String] = SecretEnvironment.values,
        interactive: Bool = true
    ) async throws(CLIError) -> Credentials {
        try await BlockingPool.shared.run { () throws(CLIError) -> Credentials in
            try find(profile, environment: environment, interactive: interactive)
        }
    }

    /// The daemon's way to look the credentials up again after the server refused them: the same sources, never a
    /// prompt (a daemon has no terminal; a foreground one must not block on it).
    static func lookup(_ profile: Profile) -> ServerLink.CredentialLookup {
        { () async throws(CredentialsUnavailable) -> Credentials in
            do throws(CLIError) {
                return try await resolve(profile, interactive: false)
            } catch {
                throw CredentialsUnavailable(error.description)
            }
        }
    }

    private static func find(
        _ profile: Profile, environment: [String: String], interactive: Bool
    ) throws(CLIError) -> Credentials {
        if let token = environment["CAMPUSFS_TOKEN"], !token.isEmpty {
            return .bearer(OAuthTokens(accessToken: token, refreshToken: nil, expiresAt: nil))
        }
        if profile.login == .oauth2 {
            let stored: String
            switch try Secrets.find(.oauth2Tokens, of: profile) {
            case .found(let tokens): stored = tokens
            case .keyringUnreachable(let reason) where Secrets.loggedInBefore(profile):
                throw Secrets.unreachable(reason, what: "OAuth2 login", of: profile)
            case .missing, .keyringUnreachable:
                throw .auth(
                    "not logged in to \(profile.serverName): run `campusfs login\(profile.option)` "
                        + "(it opens the browser), or set CAMPUSFS_TOKEN")
            }
            guard let tokens = try? JSONDecoder().decode(OAuthTokens.self, from: Data(stored.utf8)) else {
                throw .auth(
                    "the stored OAuth2 login of \"\(profile.name)\" is unreadable: run `campusfs login\(profile.option)`"
                )
            }
            return .bearer(tokens, storage: KeyringTokenStorage(profile: profile))
        }
        guard let username = profile.username, !username.isEmpty else {
            throw .usage(
                "no username: run `campusfs login\(profile.option)`, pass --username NAME or set username in the profile"
            )
        }
        if let password = environment["CAMPUSFS_PASSWORD"], !password.isEmpty {
            return credentials(profile, username: username, password: password)
        }
        if let command = profile.passwordCommand {
            return credentials(profile, username: username, password: try PasswordCommand.run(command))
        }
        let lookup = try Secrets.find(.password, of: profile)
        if case .found(let password) = lookup {
            return credentials(profile, username: username, password: password)
        }
        var unreachable: String?
        if case .keyringUnreachable(let reason) = lookup, Secrets.loggedInBefore(profile) { unreachable = reason }
        if interactive, Terminal.isInteractive {
            // Say why the stored password is not used before asking for it again.
            if let unreachable {
                printError("campusfs: the keyring cannot be asked (\(unreachable)); unlock it and try again, or:")
            }
            if let password = Terminal.askSecret("Password of \(username) at \(profile.serverName): ") {
                return credentials(profile, username: username, password: password)
            }
        }
        if let unreachable { throw Secrets.unreachable(unreachable, what: "password of \(username)", of: profile) }
        throw .auth(
            "no password for \(username) at \(profile.serverName): run `campusfs login\(profile.option)` to store it "
                + "in the keyring, or set CAMPUSFS_PASSWORD or password_command")
    }

    /// What a password means for the profile's login method.
    static func credentials(_ profile: Profile, username: String, password: String) -> Credentials {
        switch profile.login {
        case .web:
            return .webLogin(username: username, password: password)
        case .sso:
            return .singleSignOn(
                username: username, password: password, entry: profile.ssoURL ?? profile.serverURL,
                acceptsConsent: profile.acceptsConsent)
        case .basic, .oauth2:
            return .basic(username: username, password: password)
        }
    }
}

/// `password_command`: a program that prints the password (`pass show studip`, `secret-tool lookup …`).
enum PasswordCommand {
    /// Runs the command with `/bin/sh -c` and takes the first line of its output. Its stderr is read alongside
    /// (a full pipe would stall it) and its first lines shown when it fails: an exit status alone says nothing.
    static func run(_ command: String) throws(CLIError) -> String {
        let output: Subprocess.Output
        do throws(SubprocessError) {
            output = try Subprocess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", command], input: .inherited)
        } catch {
            throw .usage("password command could not start: \(error.reason)")
        }
        guard output.status == 0 else {
            let said = String(decoding: output.stderr, as: UTF8.self)
                .split(separator: "\n").prefix(3).joined(separator: " / ")
            throw .auth(
                "password command `\(command)` failed with exit status \(output.status)"
                    + (said.isEmpty ? "" : ": \(said)") + "; fix it in the profile or --password-command")
        }
        let password =
            String(decoding: output.stdout, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .first.map(String.init) ?? ""
        guard !password.isEmpty else { throw .auth("password command printed nothing") }
        return password
    }
}

/// The profile's secrets in the desktop's keyring (``SecretStore``), keyed by profile and server, so two profiles
/// on one server, or one profile moved to another server, never see each other's.
enum Secrets {
    static func store(_ paths: Paths) -> SecretStore {
        SecretStore(fallbackFile: paths.secretsFile)
    }

    static func key(_ kind: SecretKind, of profile: Profile) -> SecretKey {
        SecretKey(profile: profile.name, server: profile.serverURL, kind: kind)
    }

    /// Blocks (D-Bus): call from ``BlockingPool``. A keyring that answers but stays locked is an error that says
    /// how to unlock it.
    static func find(_ kind: SecretKind, of profile: Profile) throws(CLIError) -> SecretLookup {
        do throws(SecretStoreError) {
            return try store(profile.paths).find(key(kind, of: profile))
        } catch {
            throw .auth(error.description)
        }
    }

    /// Whether `campusfs login` wrote this profile for this server (its `login` key), so a secret may wait in a
    /// keyring that did not answer; a profile made of `--server` and `--username` has none anywhere. Blocks.
    static func loggedInBefore(_ profile: Profile) -> Bool {
        guard let stored = (try? ConfigFile.load(from: profile.paths.configFile))?.profiles[profile.name],
            stored.login != nil, let url = stored.url
        else { return false }
        return (try? LoginSurvey.baseURL(from: url)) == (try? LoginSurvey.baseURL(from: profile.serverURL))
    }

    /// The secret is not in the file and the keyring could not be asked: say so, and how to reach it, rather
    /// than "run campusfs login", which would have the person type it again (docs/secrets.md).
    static func unreachable(_ reason: String, what: String, of profile: Profile) -> CLIError {
        .auth(
            "cannot read the stored \(what) at \(profile.serverName): \(reason). Start and unlock your keyring (log in "
                + "to the desktop, or `gnome-keyring-daemon --start --components=secrets` in this session and unlock "
                + "it in Seahorse), then try again; if campusfs login never stored it there, run "
                + "`campusfs login\(profile.option)` or set CAMPUSFS_PASSWORD or password_command")
    }

    /// Stores `secret`; returns the one-line warning to show when it went to the file instead of a keyring.
    static func save(_ secret: String, _ kind: SecretKind, of profile: Profile) async throws(CLIError) -> String? {
        let store = store(profile.paths)
        let key = key(kind, of: profile)
        let location = try await BlockingPool.shared.run { () throws(CLIError) -> SecretLocation in
            do throws(SecretStoreError) {
                return try store.save(secret, for: key)
            } catch {
                throw .other(error.description)
            }
        }
        return SecretStore.warning(location)
    }
}

/// Where a daemon puts the OAuth2 tokens it refreshes: Stud.IP accepts each refresh token once, so the new pair
/// must reach the keyring before the old one is forgotten.
struct KeyringTokenStorage: TokenStorage {
    let profile: Profile

    func save(_ tokens: OAuthTokens) async throws {
        let data = try JSONEncoder().encode(tokens)
        _ = try await Secrets.save(String(decoding: data, as: UTF8.self), .oauth2Tokens, of: profile)
    }
}

/// `CAMPUSFS_PASSWORD` and `CAMPUSFS_TOKEN`, taken out of the process's environment as it starts: every child
/// (the daemon, `pdftotext`, a password command, the browser) inherits the environment, and `/proc/<pid>/environ`
/// shows it to the user's other processes for as long as one runs.
enum SecretEnvironment {
    static let names = ["CAMPUSFS_PASSWORD", "CAMPUSFS_TOKEN"]
    private static let captured = Mutex<[String: String]>([:])

    static var values: [String: String] { captured.withLock { $0 } }

    /// The two variables by getenv, not `ProcessInfo.environment`, which copies the whole environment into a
    /// dictionary at every command's start (docs/performance.md, "Process start").
    static func take() {
        captured.withLock { values in
            for name in names {
                if let value = getenv(name) { values[name] = String(cString: value) }
                unsetenv(name)
            }
        }
    }
}
