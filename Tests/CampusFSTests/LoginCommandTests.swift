import Foundation
import StudIPKit
import TestSupport
import Testing

@testable import StudIPSimulator
@testable import campusfs

/// `campusfs login` without a mount: what it writes into a config file a person already edited, and the list of
/// universities on a terminal.
struct LoginCommandTests {
    static let edited = """
        # My CampusFS settings — comments stay.
        default_profile = "uni"

        [profiles.uni]
        url = "https://studip.example.org/studip"   # the old one
        username = "jdoe"
        semesters = ["WS 2026/27"]

        [profiles."my.work"]
        url = "https://old.example.org"
        username = "old"
        cache_limit = "2G"   # keep this
        """

    @Test func loginWritesItsProfileAndLeavesTheRestOfTheFileAsWritten() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let file = cli.configFile
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Self.edited.write(to: file, atomically: true, encoding: .utf8)

            // A profile whose name has a dot, already in the file: its settings change in place.
            let work = try await cli.run([
                "login", "--profile", "my.work", "--server", sim.baseURL, "--username", "test_autor",
            ])
            #expect(work.status == 0, "\(work.stderr)")
            // A new profile: appended.
            let new = try await cli.run([
                "login", "--profile", "second", "--server", sim.baseURL + "/dispatch.php/start", "--username",
                "test_autor",
            ])
            #expect(new.status == 0, "\(new.stderr)")

            let text = try String(contentsOf: file, encoding: .utf8)
            for line in [
                "# My CampusFS settings — comments stay.",
                #"url = "https://studip.example.org/studip"   # the old one"#,
                #"cache_limit = "2G"   # keep this"#, #"semesters = ["WS 2026/27"]"#,
            ] {
                #expect(text.contains(line), "kept: \(line)\n\(text)")
            }
            #expect(!text.contains("testing"), "no password in the file")
            let config = try await cli.configuration()
            #expect(config["default_profile"] as? String == "uni", "the default stays")
            let profiles = try #require(config["profiles"] as? [String: [String: Any]])
            #expect(profiles["uni"]?["username"] as? String == "jdoe")
            #expect(profiles["my.work"]?["url"] as? String == sim.baseURL)
            #expect(profiles["my.work"]?["username"] as? String == "test_autor")
            #expect(profiles["my.work"]?["login"] as? String == "basic")
            #expect(profiles["my.work"]?["cache_limit"] as? String == "2G")
            #expect(profiles["second"]?["url"] as? String == sim.baseURL, "the base, not the page")
            #expect(text.components(separatedBy: "[profiles.\"my.work\"]").count == 2, "one table, not two")
        }
    }

    /// Uploads publish to a course, so they are off until the person says so: a login at a terminal asks once and
    /// writes the answer (`uploads`), a later login of the profile does not ask again, and a script's login never
    /// asks and writes nothing. The settings are read back by a real TOML parser and by `campusfs` itself.
    @Test func uploadsAreAskedOnceAtATerminalAndNeverInAScript() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let question = "Allow uploads? [y/N] "
            let first = try await cli.converse(
                ["login", "--server", sim.baseURL, "--username", "test_autor"],
                [.init(prompt: question, answer: "y")])
            #expect(first.status == 0, "\(first.output)")
            #expect(first.output.contains("published to that course"), "the question says why: \(first.output)")
            var profiles = try #require(try await cli.configuration()["profiles"] as? [String: [String: Any]])
            #expect(profiles["default"]?["uploads"] as? Bool == true, "\(profiles)")

            let again = try await cli.converse(["login", "--server", sim.baseURL, "--username", "test_autor"], [])
            #expect(again.status == 0, "\(again.output)")
            #expect(!again.output.contains(question), "asked once: \(again.output)")
            profiles = try #require(try await cli.configuration()["profiles"] as? [String: [String: Any]])
            #expect(profiles["default"]?["uploads"] as? Bool == true, "the answer stays: \(profiles)")

            let script = try await cli.run([
                "login", "--profile", "script", "--server", sim.baseURL, "--username", "test_autor",
            ])
            #expect(script.status == 0, "\(script.stderr)")
            #expect(!script.stderr.contains("uploads"), "\(script.stderr)")
            profiles = try #require(try await cli.configuration()["profiles"] as? [String: [String: Any]])
            #expect(profiles["script"] != nil && profiles["script"]?["uploads"] == nil, "\(profiles)")

            // A wrong value is refused with its line, as every setting is.
            try String(contentsOf: cli.configFile, encoding: .utf8).appending("upload_terms = \"own work\"\n")
                .write(to: cli.configFile, atomically: true, encoding: .utf8)
            let broken = try await cli.run(["status", "--profile", "script"])
            #expect(broken.status == 1, "\(broken.stderr)")
            #expect(
                broken.stderr.contains("profiles.script.upload_terms must be a terms-of-use id"), "\(broken.stderr)")
        }
    }

    /// Typing part of a name lists the matching universities, and Enter searches again. (Ctrl-D then ends the
    /// question: nothing here reaches a real university.)
    @Test func typingPartOfANameOffersTheUniversitiesFromTheList() async throws {
        let cli = try CLI(password: nil)
        defer { cli.removeHome() }
        let login = try await cli.converse(
            ["login"],
            [
                .init(prompt: "address of a Stud.IP page: ", answer: "passa"),
                .init(prompt: "Number, or a name to search again: ", answer: ""),
                .init(prompt: "address of a Stud.IP page: ", answer: "\u{4}"),
            ])
        #expect(login.status == 1, "\(login.output)")
        #expect(login.output.contains("1) Universität Passau — https://studip.uni-passau.de/studip"), "\(login.output)")
        #expect(!login.output.contains("Göttingen"), "only what matches: \(login.output)")
        #expect(login.output.contains("no university chosen"), "\(login.output)")
    }

    /// A login that fails changes nothing: no secret, no profile.
    @Test func aRefusedLoginLeavesConfigAndSecretsAlone() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let cli = try CLI(password: "wrong")
            defer { cli.removeHome() }
            try FileManager.default.createDirectory(
                at: cli.configFile.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Self.edited.write(to: cli.configFile, atomically: true, encoding: .utf8)
            let before = sim.statistics.snapshot().routes
            let login = try await cli.run(["login", "--server", sim.baseURL, "--username", "test_autor"])
            #expect(login.status == 2, "\(login.stderr)")
            #expect(try String(contentsOf: cli.configFile, encoding: .utf8) == Self.edited)
            #expect(
                !FileManager.default.fileExists(atPath: cli.home.appendingPathComponent("data/campusfs/secrets").path))
            let after = sim.statistics.snapshot().routes
            let failed = (after["web POST login"] ?? 0) - (before["web POST login"] ?? 0)
            #expect(failed == 1, "one failed login for a wrong password, not one per method: \(after)")
        }
    }

    /// A file campusfs cannot read as it is stays as it is; a symlinked one is written through the link.
    @Test func aConfigFileThatIsNotUTF8IsRefusedAndASymlinkStaysALink() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let directory = cli.configFile.deletingLastPathComponent()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let latin1 = Data("# Einstellungen f".utf8) + Data([0xFC]) + Data("r die Uni\n[profiles.default]\n".utf8)
            try latin1.write(to: cli.configFile)
            let refused = try await cli.run(["login", "--profile", "work", "--server", sim.baseURL, "--username", "x"])
            #expect(refused.status == 1, "\(refused.stderr)")
            #expect(refused.stderr.contains("not UTF-8"), "\(refused.stderr)")
            #expect(try Data(contentsOf: cli.configFile) == latin1, "unchanged")

            let dotfile = cli.home.appendingPathComponent("dotfiles-config.toml")
            try Self.edited.write(to: dotfile, atomically: true, encoding: .utf8)
            try FileManager.default.removeItem(at: cli.configFile)
            try FileManager.default.createSymbolicLink(at: cli.configFile, withDestinationURL: dotfile)
            let login = try await cli.run([
                "login", "--profile", "work", "--server", sim.baseURL, "--username", "test_autor",
            ])
            #expect(login.status == 0, "\(login.stderr)")
            #expect(
                (try? FileManager.default.destinationOfSymbolicLink(atPath: cli.configFile.path)) == dotfile.path,
                "still a link")
            #expect(try String(contentsOf: dotfile, encoding: .utf8).contains("[profiles.work]"))
            #expect(
                try await cli.configuration()["default_profile"] as? String == "uni",
                "a file with profiles keeps its default")
        }
    }

    /// Where the login page has several single sign-on links, the list's (`"sso": "shibldap"`) comes first.
    @Test func theListsSingleSignOnLinkIsOfferedFirst() {
        let base = "https://studip.example.org/index.php?again=yes&sso="
        let entries = [
            SSOEntry(label: "Shibboleth", url: base + "shib"), SSOEntry(label: "LDAP", url: base + "shibldap"),
        ]
        #expect(LoginCommand.ordered(entries, preferring: "shibldap").map(\.label) == ["LDAP", "Shibboleth"])
        #expect(LoginCommand.ordered(entries, preferring: "shib").map(\.label) == ["Shibboleth", "LDAP"])
        #expect(LoginCommand.ordered(entries, preferring: nil) == entries)
    }

    /// More matches than numbers: the picker says how many and that typing more narrows; a name typed at the number
    /// prompt searches again.
    @Test func manyMatchesAreCountedAndNarrowedByTypingMore() async throws {
        let cli = try CLI(password: nil)
        defer { cli.removeHome() }
        let login = try await cli.converse(
            ["login"],
            [
                .init(prompt: "address of a Stud.IP page: ", answer: "uni"),
                .init(prompt: "Number, or a name to search again: ", answer: "rostock"),
                .init(prompt: "Number, or a name to search again: ", answer: "\u{4}"),
                .init(prompt: "address of a Stud.IP page: ", answer: "\u{4}"),
            ])
        #expect(login.status == 1, "\(login.output)")
        let count = try #require(
            login.output.firstMatch(of: /(\d+) universities match "uni"; the first 9 \(type more of the name/),
            "\(login.output)")
        #expect(Int(count.1) ?? 0 > 9)
        #expect(login.output.contains("1) Universität Rostock — "), "narrowed: \(login.output)")
    }

    /// A typo costs a question, not the dialogue: the password is asked again (three tries) without choosing the
    /// university again; the refusal is one sentence of ours, the server's page text goes to the log file, and no
    /// log line reaches the terminal.
    @Test func aWrongPasswordIsAskedAgainAndTheServersTextGoesToTheLog() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let cli = try CLI(password: nil)
            defer { cli.removeHome() }
            let prompt = "Password of test_autor (Stud.IP): "
            let login = try await cli.converse(
                ["login", "--server", sim.baseURL, "--username", "test_autor"],
                [
                    .init(prompt: prompt, answer: "wrong"), .init(prompt: prompt, answer: "testing"),
                    .init(prompt: "Allow uploads? [y/N] ", answer: "n"),
                ])
            #expect(login.status == 0, "\(login.output)")
            #expect(
                login.output.contains("did not accept that username and password; try again (2 tries left)."),
                "\(login.output)")
            #expect(login.output.contains("Logged in as Testaccount Autor"), "\(login.output)")
            for noise in ["Nachrichtenbox", "Das Passwort ist falsch", "campusfs.studip", "logged in through"] {
                #expect(!login.output.contains(noise), "no \(noise) in the dialogue: \(login.output)")
            }
            let log = try String(
                contentsOf: cli.home.appendingPathComponent("state/campusfs/default.log"), encoding: .utf8)
            #expect(log.contains("intern: Das Passwort ist falsch!"), "\(log)")
            #expect(log.contains("logged in through the web login form"), "\(log)")
            #expect(!log.contains("testing"), "no password in the log")

            // Three refusals end it, with the exit code for a login failure.
            let again = try await cli.converse(
                ["login", "--server", sim.baseURL, "--username", "test_autor"],
                [
                    .init(prompt: prompt, answer: "one"), .init(prompt: prompt, answer: "two"),
                    .init(prompt: prompt, answer: "three"),
                ])
            #expect(again.status == 2, "\(again.output)")
            #expect(again.output.contains("(1 try left)"), "\(again.output)")
        }
    }

    /// Stud.IP 6.0.2: the login form answers a right password with a redirect to `dispatch.php/start/index` and a
    /// `Studip_Session`; the default dialogue logs in. OAuth2 is not announced without a client id to use it with.
    @Test func theDefaultDialogueLogsInOnSixAndAnnouncesNoOAuth2WithoutAClientID() async throws {
        try await withSimulator(.fixtures507, flavour: .v6) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let login = try await cli.run(["login", "--server", sim.baseURL, "--username", "test_autor"])
            #expect(login.status == 0, "\(login.stderr)")
            #expect(
                login.stderr.contains("Found Stud.IP 6.0.2 at \(sim.baseURL) (JSON:API, login form)"), "\(login.stderr)"
            )
            let offered = try await cli.run([
                "login", "--server", sim.baseURL, "--username", "test_autor", "--oauth2-client-id", "12", "--method",
                "basic",
            ])
            #expect(offered.stderr.contains("(JSON:API, OAuth2, login form)"), "\(offered.stderr)")
        }
    }

    /// OAuth2 on a Stud.IP 6.0 where CampusFS is client "12": a later plain login keeps the method, `login --check`
    /// refreshes with the profile's client id, and a revoked grant is "login needed" with the command to run.
    @Test func oauth2IsRememberedCheckedWithTheProfilesClientAndARevokedGrantAsksForALogin() async throws {
        var configuration = SimulatorConfiguration(dataset: .fixtures507, flavour: .v6)
        configuration.oauth2Clients = [OAuth2Client(id: "12")]
        try await withSimulator(try await Simulator.start(configuration)) { sim async throws in
            let cli = try CLI(password: nil)
            defer { cli.removeHome() }
            let browse = """
                url=$(printf '%s' "$TRANSCRIPT" | grep -o 'http://[^ ]*oauth2/authorize[^ ]*' | tr -d '\\r' | tail -1)
                curl -s -o /dev/null -w '%{redirect_url}' -d username=test_autor -d password=testing -d approve=1 "$url"
                """
            let first = try await cli.converse(
                ["login", "--method", "oauth2", "--oauth2-client-id", "12", "--no-browser", sim.baseURL],
                [
                    .init(prompt: "paste the address the browser ended on", command: browse),
                    .init(prompt: "Allow uploads? [y/N] ", answer: "n"),
                ])
            #expect(first.status == 0, "\(first.output)")
            let again = try await cli.converse(
                ["login", "--no-browser"], [.init(prompt: "paste the address the browser ended on", command: browse)])
            #expect(again.status == 0, "\(again.output)")
            #expect(!again.output.contains("How do you log in"), "the profile says oauth2: \(again.output)")

            _ = try await shell("curl -sf -X POST \(sim.controlURL)/oauth2/expire")
            let check = try await cli.run(["login", "--check"])
            #expect(check.status == 0, "refreshed as client 12: \(check.stderr)")

            _ = try await shell("curl -sf -X POST \(sim.controlURL)/oauth2/revoke")
            _ = try await shell("curl -sf -X POST \(sim.controlURL)/oauth2/expire")
            let revoked = try await cli.run(["login", "--check"])
            #expect(revoked.status == 2, "\(revoked.stderr)")
            #expect(revoked.stderr.contains("expired or was revoked"), "\(revoked.stderr)")
            #expect(revoked.stderr.contains("run `campusfs login"), "\(revoked.stderr)")
            let refresh = try await cli.run(["refresh"])
            #expect(refresh.status == 2, "\(refresh.stderr)")
            #expect(refresh.stderr.contains("expired or was revoked"), "\(refresh.stderr)")
            #expect(refresh.stderr.contains("run `campusfs login --profile default`"), "\(refresh.stderr)")
        }
    }

    /// "Deny" on 6.0 sends the browser to `http://127.0.0.1/callback?error=access_denied` (no port), which the
    /// listener never hears: the dialogue says how long it waits and takes the pasted address instead.
    @Test func aDenialTheListenerCannotHearIsPasted() async throws {
        try await withSimulator(.fixtures507, flavour: .v6) { sim async throws in
            var cli = try CLI(password: nil)
            defer { cli.removeHome() }
            let landed = cli.home.appendingPathComponent("browser-landed").path
            let browser = cli.home.appendingPathComponent("browser")
            try """
            #!/bin/sh
            curl -s -o /dev/null -w '%{redirect_url}' -d username=test_autor -d password=testing -d deny=1 "$1" > \(landed).part
            mv \(landed).part \(landed)
            """.write(to: browser, atomically: true, encoding: .utf8)
            chmod(browser.path, 0o755)
            cli.environment["BROWSER"] = browser.path
            let started = Date()
            let login = try await cli.converse(
                ["login", "--method", "oauth2", "--oauth2-client-id", "campusfs", sim.baseURL],
                [
                    .init(
                        prompt: "Or paste the address the browser ends on",
                        command: "while [ ! -s \(landed) ]; do sleep 0.1; done; cat \(landed)")
                ])
            #expect(login.status == 2, "\(login.output)")
            #expect(login.output.contains("Waiting up to 10 minutes"), "\(login.output)")
            #expect(login.output.contains("access was denied in the browser"), "\(login.output)")
            #expect(Date().timeIntervalSince(started) < 60, "not the listener's 10 minutes")
            let address = try String(contentsOfFile: landed, encoding: .utf8)
            #expect(address.hasPrefix("http://127.0.0.1/callback?error=access_denied"), "\(address)")
        }
    }

    /// A password in a keyring that is locked, or that cannot be asked (no session bus, as over ssh), is not "no
    /// password, run campusfs login": the message says what is in the way and how to unlock. A keyring of its own
    /// (`dbus-run-session`, GNOME Keyring) as a desktop has.
    @Test func aLockedOrUnreachableKeyringIsSaidSoNotNoPassword() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let cli = try CLI(password: nil)
            defer { cli.removeHome() }
            let runtime = cli.home.appendingPathComponent("run")
            try FileManager.default.createDirectory(
                at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let binary = CLI.binary.path
            let lock =
                "dbus-send --session --print-reply --dest=org.freedesktop.secrets /org/freedesktop/secrets "
                + "org.freedesktop.Secret.Service.Lock array:objpath:/org/freedesktop/secrets/collection/login"
            let script = """
                printf %s unlock-pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null || exit 9
                CAMPUSFS_PASSWORD=testing \(binary) login --server \(sim.baseURL) --username test_autor >/dev/null 2>&1 \\
                  || exit 8
                \(binary) login --check 2>&1 || exit 7
                \(lock) >/dev/null || exit 6
                \(binary) login --check 2>&1
                echo "status=$?"
                """
            let environment = cli.environment.map { "\($0.key)=\(quoted($0.value))" }.joined(separator: " ")
            let session = try await shell(
                "env -i \(environment) dbus-run-session -- sh -c \(quoted(script)) 2>/dev/null", timeout: 90)
            #expect(session.stdout.contains("Logged in as Testaccount Autor"), "\(session.stdout)")
            #expect(session.stdout.contains("stayed locked. Unlock the keyring"), "\(session.stdout)")
            #expect(session.stdout.contains("status=2"), "\(session.stdout)")
            #expect(!session.stdout.contains("no password for"), "\(session.stdout)")
            #expect(
                !session.stdout.contains("try again; run `campusfs login"), "unlocking is the advice: \(session.stdout)"
            )

            // The same profile without a session bus: the keyring cannot be asked, and the message says so.
            let unreachable = try await cli.run(["login", "--check"])
            #expect(unreachable.status == 2, "\(unreachable.stderr)")
            #expect(unreachable.stderr.contains("no D-Bus session bus"), "\(unreachable.stderr)")
            #expect(unreachable.stderr.contains("unlock"), "\(unreachable.stderr)")
            #expect(!unreachable.stderr.contains("no password for"), "\(unreachable.stderr)")
            // In a terminal the password may be typed instead, but not without saying why it is asked for.
            let asked = try await cli.converse(
                ["refresh"], [.init(prompt: "Password of test_autor at ", answer: "testing")])
            #expect(asked.status == 0, "\(asked.output)")
            let reason = try #require(asked.output.range(of: "the keyring cannot be asked (this session has no D-Bus"))
            let prompt = try #require(asked.output.range(of: "Password of test_autor at "))
            #expect(reason.upperBound < prompt.lowerBound, "\(asked.output)")
        }
    }
}
