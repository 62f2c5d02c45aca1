import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// `campusfs login` as a student meets it, then `campusfs mount` without a question: every login method against the
/// simulator, the interactive ones on a real pseudo-terminal, the secrets in a real GNOME Keyring on a real session
/// bus, and nowhere else.
@Suite(.serialized)
struct LoginFlowTests {
    typealias Setup = DaemonTests.Setup

    /// A simulator, a CLI home without any password in its environment, and a mountpoint (``DaemonTests/Setup``);
    /// with `keyring`, the CLI reaches the test process's keyring (only its bus: the CLI keeps its own HOME and XDG
    /// directories, as a user's session has one bus for all).
    static func with(
        _ configuration: SimulatorConfiguration, keyring: Bool = true, _ body: (inout Setup) async throws -> Void
    ) async throws {
        let bus = keyring ? try await KeyringSession.processWide().environment["DBUS_SESSION_BUS_ADDRESS"] : nil
        try await DaemonTests.with(configuration, password: nil) { setup in
            setup.cli.environment["DBUS_SESSION_BUS_ADDRESS"] = bus
            try await body(&setup)
        }
    }

    static func simulator(
        _ flavour: Flavour = .v50, sso: SingleSignOnConfiguration? = nil
    ) -> SimulatorConfiguration {
        var configuration = SimulatorConfiguration(dataset: .fixtures507, flavour: flavour)
        configuration.singleSignOn = sso
        return configuration
    }

    // MARK: - Password (HTTP Basic)

    @Test func aStudentPicksTheInstallationTypesThePasswordAndMountsWithoutQuestions() async throws {
        try await Self.with(Self.simulator()) { setup in
            let page = setup.sim.baseURL + "/dispatch.php/my_courses?cid=29f7bd5e79910822b1be93be3c53a72c#top"
            let login = try await setup.cli.converse(
                ["login"],
                [
                    .init(prompt: "address of a Stud.IP page: ", answer: page),
                    .init(prompt: "Username (Stud.IP): ", answer: "test_autor"),
                    .init(prompt: "Password of test_autor (Stud.IP): ", answer: "testing"),
                    .init(prompt: "Allow uploads? [y/N] ", answer: "n"),
                ])
            #expect(login.status == 0, "\(login.output)")
            #expect(login.output.contains("Logged in as "), "\(login.output)")
            #expect(login.output.contains("mount with `campusfs mount`"), "\(login.output)")
            #expect(!login.output.contains("testing\r"), "the password is not echoed")

            let profile = try await setup.profile()
            #expect(profile["url"] as? String == setup.sim.baseURL, "the base, not the page: \(profile)")
            #expect(profile["login"] as? String == "basic")
            #expect(profile["username"] as? String == "test_autor")
            #expect(!setup.config.contains("testing"), "no password in config.toml")
            #expect(try await setup.stored("password") == "testing")

            try await setup.mountAndRead()
            try await setup.secretIsNowhereElse("testing")

            let check = try await setup.campusfs(["login", "--check"])
            #expect(check.status == 0, "\(check.stderr)")
            #expect(check.stdout.contains(" is online "), "mounted, the daemon answers: \(check.stdout)")

            // A password a script gives in the environment reaches the daemon through a pipe, not its environment.
            #expect(try await setup.campusfs(["unmount", setup.mountpoint]).status == 0)
            setup.cli.environment["CAMPUSFS_PASSWORD"] = "testing"
            #expect(try await setup.campusfs(["mount", setup.mountpoint]).status == 0)
            try await setup.daemonDoesNotHold("testing")
        }
    }

    /// Where PHP never sees an Authorization header, the same password logs in through Stud.IP's form; a session the
    /// server ends is renewed with exactly one login.
    @Test func withoutBasicTheWebFormLogsInAndASessionIsRenewedOnce() async throws {
        try await Self.with(Self.simulator()) { setup in
            _ = setup.sim.settings.update { $0.basicAuthReachesPHP = false }
            setup.cli.environment["CAMPUSFS_PASSWORD"] = "testing"
            let login = try await setup.campusfs(["login", "--server", setup.sim.baseURL, "--username", "test_autor"])
            #expect(login.status == 0, "\(login.stderr)")
            #expect(try await setup.profile()["login"] as? String == "web")
            setup.cli.environment["CAMPUSFS_PASSWORD"] = nil

            try await setup.mountAndRead()
            let logins = setup.served("web POST login")
            _ = try await shell("curl -sf -X POST \(setup.sim.controlURL)/sessions/expire")
            let refresh = try await setup.campusfs(["refresh"])
            #expect(refresh.status == 0, "\(refresh.stderr)")
            #expect(setup.served("web POST login") == logins + 1, "one new login after the session ended")
        }
    }

    // MARK: - Single sign-on

    @Test func singleSignOnThroughTheIdentityProvidersFormThenMount() async throws {
        try await Self.with(Self.simulator(.v55, sso: SingleSignOnConfiguration(variant: .plain))) { setup in
            let login = try await setup.cli.converse(
                ["login", setup.sim.baseURL],
                [
                    .init(prompt: "Number: ", answer: "1"),
                    .init(prompt: "Username (", answer: "test_autor"),
                    .init(prompt: "Password of test_autor (", answer: "sso-testing"),
                    .init(prompt: "Allow uploads? [y/N] ", answer: "n"),
                ])
            #expect(login.status == 0, "\(login.output)")
            #expect(login.output.contains("single sign-on"), "the method was offered: \(login.output)")
            let profile = try await setup.profile()
            #expect(profile["login"] as? String == "sso")
            #expect((profile["sso_url"] as? String)?.contains("sso=shib") == true, "\(profile)")
            #expect(try await setup.stored("password") == "sso-testing")

            try await setup.mountAndRead()
            try await setup.secretIsNowhereElse("sso-testing")

            // The Stud.IP session ends: the daemon goes through the identity provider again, once.
            let before = setup.served("sp POST SAML2")
            _ = try await shell("curl -sf -X POST \(setup.sim.controlURL)/sessions/expire")
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            #expect(setup.served("sp POST SAML2") == before + 1, "one new single sign-on")
        }
    }

    @Test func theConsentPageIsAskedAndTheAnswerKeptInTheProfile() async throws {
        try await Self.with(Self.simulator(.v55, sso: SingleSignOnConfiguration(variant: .consent))) { setup in
            let login = try await setup.cli.converse(
                ["login", "--method", "sso", setup.sim.baseURL],
                [
                    .init(prompt: "Username (", answer: "test_autor"),
                    .init(prompt: "Password of test_autor (", answer: "sso-testing"),
                    .init(prompt: "Accept? [y/N] ", answer: "y"),
                    .init(prompt: "Allow uploads? [y/N] ", answer: "n"),
                ])
            #expect(login.status == 0, "\(login.output)")
            #expect(try await setup.profile()["sso_accept_consent"] as? Bool == true)
            try await setup.mountAndRead()
        }
    }

    // MARK: - OAuth2

    /// A "browser" for `xdg-open`: a script that does what the person does on the authorize page — logs in and
    /// allows — and follows the redirect to CampusFS's loopback listener.
    static func browserScript(in directory: URL) throws -> String {
        let script = directory.appendingPathComponent("browser")
        try """
        #!/bin/sh
        location=$(curl -s -o /dev/null -w '%{redirect_url}' -d username=test_autor -d password=testing \\
          -d approve=1 "$1")
        curl -sf "$location" > /dev/null
        """.write(to: script, atomically: true, encoding: .utf8)
        chmod(script.path, 0o755)
        return script.path
    }

    /// The installation registered CampusFS as client "12" (Stud.IP numbers its clients): refreshes must say so.
    @Test func oauth2InTheBrowserStoresTokensThatTheMountRefreshes() async throws {
        var configuration = Self.simulator(.v55)
        configuration.oauth2Clients = [OAuth2Client(id: "12")]
        try await Self.with(configuration) { setup in
            setup.cli.environment["BROWSER"] = try Self.browserScript(in: setup.cli.home)
            setup.cli.environment["PATH"] = "/usr/bin:/bin"
            let login = try await setup.campusfs([
                "login", "--method", "oauth2", "--oauth2-client-id", "12", setup.sim.baseURL,
            ])
            #expect(login.status == 0, "\(login.stderr)")
            #expect(try await setup.profile()["login"] as? String == "oauth2")
            let tokens = try #require(try await setup.stored("oauth2-tokens"))

            try await setup.mountAndRead()
            let refreshToken = try #require(
                (try JSONSerialization.jsonObject(with: Data(tokens.utf8)) as? [String: Any])?["refreshToken"]
                    as? String)
            try await setup.secretIsNowhereElse(refreshToken)

            // Expired access tokens are refreshed, and the rotated pair reaches the keyring.
            _ = try await shell("curl -sf -X POST \(setup.sim.controlURL)/oauth2/expire")
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            #expect(try await setup.stored("oauth2-tokens") != tokens, "the refreshed pair was stored")

            // A revoked grant turns into "login needed", with the command to run: at once for `login --check`, which
            // asks the server through the mount (the daemon's last request was before the revocation).
            #expect(try await setup.campusfs(["login", "--check"]).status == 0)
            _ = try await shell("curl -sf -X POST \(setup.sim.controlURL)/oauth2/revoke")
            let check = try await setup.campusfs(["login", "--check"], timeout: 20)
            #expect(check.status == 2, "\(check.stdout)\(check.stderr)")
            #expect(check.stderr.contains("campusfs login --profile default"), "\(check.stderr)")
            _ = try await shell("curl -sf -X POST \(setup.sim.controlURL)/oauth2/expire")
            _ = try await setup.campusfs(["refresh"])
            let status = try await setup.campusfs(["status"], timeout: 20)
            #expect(status.stdout.contains("login needed"), "\(status.stdout)")
            #expect(status.stdout.contains("campusfs login --profile default"), "\(status.stdout)")
        }
    }

    /// Without a browser, the address is printed; the person opens it elsewhere and pastes where it ended.
    @Test func oauth2WithoutABrowserTakesThePastedAddress() async throws {
        try await Self.with(Self.simulator(.v6)) { setup in
            let browse = """
                url=$(printf '%s' "$TRANSCRIPT" | grep -o 'http://[^ ]*oauth2/authorize[^ ]*' | tr -d '\\r' | head -1)
                curl -s -o /dev/null -w '%{redirect_url}' -d username=test_autor -d password=testing -d approve=1 "$url"
                """
            let login = try await setup.cli.converse(
                ["login", "--method", "oauth2", "--oauth2-client-id", "campusfs", "--no-browser", setup.sim.baseURL],
                [
                    .init(prompt: "paste the address the browser ended on", command: browse),
                    .init(prompt: "Allow uploads? [y/N] ", answer: "n"),
                ])
            #expect(login.status == 0, "\(login.output)")
            #expect(try await setup.stored("oauth2-tokens") != nil)
            try await setup.mountAndRead()
        }
    }

    // MARK: - Secrets

    @Test func withoutAKeyringTheSecretGoesToAPrivateFileWithAWarning() async throws {
        try await Self.with(Self.simulator(), keyring: false) { setup in
            setup.cli.environment["CAMPUSFS_PASSWORD"] = "testing"
            let login = try await setup.campusfs(["login", "--server", setup.sim.baseURL, "--username", "test_autor"])
            #expect(login.status == 0, "\(login.stderr)")
            let file = setup.cli.home.appendingPathComponent("data/campusfs/secrets").path
            #expect(login.stderr.contains(file), "one line says where: \(login.stderr)")
            var info = stat()
            #expect(stat(file, &info) == 0 && info.st_mode & 0o777 == 0o600)
            setup.cli.environment["CAMPUSFS_PASSWORD"] = nil
            try await setup.mountAndRead()
        }
    }

    @Test func logoutForgetsThisProfilesSecretsOnlyAndEndsTheMountsLogin() async throws {
        try await Self.with(Self.simulator()) { setup in
            setup.cli.environment["CAMPUSFS_PASSWORD"] = "testing"
            for profile in ["default", "other"] {
                let login = try await setup.campusfs([
                    "login", "--profile", profile, "--server", setup.sim.baseURL, "--username", "test_autor",
                ])
                #expect(login.status == 0, "\(login.stderr)")
            }
            try await setup.mountAndRead()

            // Another installation's login never reaches this mount.
            try await withSimulator(.fixtures507) { other async throws in
                let elsewhere = try await setup.campusfs([
                    "login", "--server", other.baseURL, "--username", "test_autor",
                ])
                #expect(elsewhere.status == 1, "\(elsewhere.stderr)")
                #expect(elsewhere.stderr.contains("campusfs unmount --profile default"), "\(elsewhere.stderr)")
                #expect(other.statistics.snapshot().routes["web POST login"] == nil, "no login was sent there")
            }
            setup.cli.environment["CAMPUSFS_PASSWORD"] = nil

            let logout = try await setup.campusfs(["logout"])
            #expect(logout.status == 0, "\(logout.stderr)")
            #expect(try await setup.stored("password") == nil)
            #expect(try await setup.stored("password", profile: "other") == "testing", "another profile's stays")
            let status = try await setup.campusfs(["status"], timeout: 20)
            #expect(status.stdout.contains("login needed"), "\(status.stdout)")
            let check = try await setup.campusfs(["login", "--check"])
            #expect(check.status == 2, "\(check.stdout)")
            #expect(check.stderr.contains("campusfs login --profile default"), "\(check.stderr)")
        }
    }
}

extension DaemonTests.Setup {
    var config: String { (try? String(contentsOf: cli.configFile, encoding: .utf8)) ?? "" }

    /// The profile's table in config.toml as Python's tomllib reads it.
    func profile(_ name: String = "default") async throws -> [String: Any] {
        (try await cli.configuration()["profiles"] as? [String: Any])?[name] as? [String: Any] ?? [:]
    }

    /// What the keyring holds for the profile, asked with `secret-tool`, not with CampusFS's code.
    func stored(_ kind: String, profile: String = "default") async throws -> String? {
        try await KeyringSession.processWide().lookup(profile: profile, server: sim.baseURL, kind: kind)
    }

    /// How often the simulator served `route` (its statistics).
    func served(_ route: String) -> Int { sim.statistics.snapshot().routes[route] ?? 0 }

    /// Mounts at the default profile's settings (no password in the environment) and reads the slides.
    func mountAndRead() async throws {
        let mounted = try await campusfs(["mount", mountpoint])
        #expect(mounted.status == 0, "\(mounted.stderr)")
        #expect(try await LoginTests.slidesMatchTheServer(self), "the slides read through the mount")
    }

    /// No file CampusFS wrote, and neither the daemon's command line nor its environment, holds `secret`.
    func secretIsNowhereElse(_ secret: String) async throws {
        let directories = ["data/campusfs", "state/campusfs", "cache/campusfs", "config/campusfs"]
            .map { quoted(cli.home.appendingPathComponent($0).path) }.joined(separator: " ")
        let found = try await shell("grep -rlF -- \(quoted(secret)) \(directories) 2>/dev/null; true")
        #expect(found.stdout.isEmpty, "the secret is in \(found.stdout)")
        try await daemonDoesNotHold(secret)
    }

    /// Neither the daemon's command line nor its environment (which its children inherit) holds `secret`.
    func daemonDoesNotHold(_ secret: String) async throws {
        let pid = try #require(try await status()["pid"] as? Int)
        let process = try await shell("tr '\\0' '\\n' < /proc/\(pid)/cmdline; tr '\\0' '\\n' < /proc/\(pid)/environ")
        #expect(process.status == 0)
        #expect(!process.stdout.contains(secret), "the daemon's command line or environment holds the secret")
    }
}
