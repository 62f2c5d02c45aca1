import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// The CLI's contract with users and scripts: credentials, profiles, XDG isolation, messages and exit codes.
@Suite("campusfs command line")
struct CLIBehaviourTests {
    @Test func loginFailureNetworkFailureAndUsageErrorsHaveTheirExitCodes() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let wrong = try CLI(password: "not-the-password")
            defer { wrong.removeHome() }
            let denied = try await wrong.run(["refresh", "--server", sim.baseURL, "--username", "test_autor"])
            #expect(denied.status == 2)
            #expect(denied.stderr.contains("login needed"))
            #expect(!denied.stderr.contains("not-the-password"), "the password never appears in messages")

            let cli = try CLI()
            defer { cli.removeHome() }
            let unreachable = try await cli.run([
                "refresh", "--server", "http://127.0.0.1:9", "--username", "test_autor",
            ])
            #expect(unreachable.status == 3)
            #expect(unreachable.stderr.contains("cannot reach"))

            let noServer = try await cli.run(["refresh"])
            #expect(noServer.status == 1)
            #expect(noServer.stderr.contains("--server URL --username NAME"))
            let passwordOption = try await cli.run(["refresh", "--server", sim.baseURL, "--password", "testing"])
            #expect(passwordOption.status == 1, "there is no way to put a password on the command line")
            let nothingYet = try await cli.run(["tree"])
            #expect(nothingYet.status == 1)
            #expect(nothingYet.stderr.contains("run `campusfs refresh` first"))

            let noPassword = try CLI(password: nil)
            defer { noPassword.removeHome() }
            let missing = try await noPassword.run(["refresh", "--server", sim.baseURL, "--username", "test_autor"])
            #expect(missing.status == 2, "not logged in")
            #expect(missing.stderr.contains("CAMPUSFS_PASSWORD"))
        }
    }

    @Test func passwordCommandAndTokenInsteadOfAPassword() async throws {
        try await withSimulator(.fixtures507, flavour: .v55) { sim async throws in
            let command = try CLI(password: nil)
            defer { command.removeHome() }
            let viaCommand = try await command.run([
                "refresh", "--server", sim.baseURL, "--username", "test_autor", "--password-command", "echo testing",
            ])
            #expect(viaCommand.status == 0, "\(viaCommand.stderr)")

            let user = try #require(sim.university.user(named: "test_autor"))
            let tokens = sim.authenticator.issueTokens(userID: user.id, lifetime: 3600)
            var token = try CLI(password: nil)
            defer { token.removeHome() }
            token.environment["CAMPUSFS_TOKEN"] = tokens.access
            let viaToken = try await token.run(["refresh", "--server", sim.baseURL])
            #expect(viaToken.status == 0, "\(viaToken.stderr)")
            let tree = try await token.run(["tree", "--paths"])
            #expect(tree.lines.contains("Ongoing/Test Studiengruppe"))
        }
    }

    @Test func profilesFromTheConfigFileAndXDGIsolation() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let config = cli.home.appendingPathComponent("config/campusfs")
            try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
            try """
            default_profile = "uni"

            [profiles.uni]
            url = "\(sim.baseURL)"
            username = "test_autor"
            api = "rest"
            semesters = ["WS 2026/27"]
            hidden_courses = ["1fafd4798ef2af4ee2860238232af98f"]
            course_name = "{title} ({number})"
            """.write(to: config.appendingPathComponent("config.toml"), atomically: true, encoding: .utf8)

            let refresh = try await cli.run(["refresh"])
            #expect(refresh.status == 0, "\(refresh.stderr)")
            #expect(refresh.stdout.contains("(legacy REST)"))
            let top = try await cli.run(["ls"])
            #expect(top.lines == ["Ongoing", "WS 2026-27"], "the semester filter keeps open-ended courses only")
            let semester = try await cli.run(["ls", "WS 2026-27"])
            #expect(semester.lines == ["Einführung in die Informatik (INF-101)"], "template applied, BS-202 hidden")

            let database = cli.database(profile: "uni")
            let attributes = try FileManager.default.attributesOfItem(atPath: database.path)
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            let directory = try FileManager.default.attributesOfItem(atPath: database.deletingLastPathComponent().path)
            #expect((directory[.posixPermissions] as? Int) == 0o700)

            try "[profiles.uni]\nurl = \"\(sim.baseURL)\"\nusernme = \"typo\"\n".write(
                to: config.appendingPathComponent("config.toml"), atomically: true, encoding: .utf8)
            let typo = try await cli.run(["refresh", "--profile", "uni"])
            #expect(typo.status == 1)
            #expect(typo.stderr.contains("usernme"))
        }
    }

    /// `status` treats an unknown profile as `mount` does: exit 1, naming the config file; known ones are merely
    /// "not mounted".
    @Test func statusOfAnUnknownProfileFails() async throws {
        let cli = try CLI()
        defer { cli.removeHome() }
        let config = cli.home.appendingPathComponent("config/campusfs")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        try "[profiles.uni]\nurl = \"http://127.0.0.1:9\"\n".write(
            to: config.appendingPathComponent("config.toml"), atomically: true, encoding: .utf8)

        let unknown = try await cli.run(["status", "--profile", "nosuch"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no profile \"nosuch\""), "\(unknown.stderr)")
        let known = try await cli.run(["status", "--profile", "uni"])
        #expect(known.status == 0, "\(known.stderr)")
        #expect(known.stdout == "profile \"uni\": not mounted\n")
    }
}
