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

    /// Typing part of a name lists the matching universities, and Enter searches again. (Ctrl-D then ends the
    /// question: nothing here reaches a real university.)
    @Test func typingPartOfANameOffersTheUniversitiesFromTheList() async throws {
        let cli = try CLI(password: nil)
        defer { cli.removeHome() }
        let login = try await cli.converse(
            ["login"],
            [
                .init(prompt: "address of a Stud.IP page: ", answer: "passa"),
                .init(prompt: "Number (or Enter to search again): ", answer: ""),
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
}
