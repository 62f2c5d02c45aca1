import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// Issue 13: every message a user sees says what is wrong and what to do, in whole sentences.
@Suite("campusfs messages")
struct CLIMessagesTests {
    /// ArgumentParser wraps help text to the terminal; a line break in the source must not break a sentence.
    @Test func helpParagraphsWrapToTheTerminalNotTheSource() async throws {
        var cli = try CLI()
        defer { cli.removeHome() }
        cli.environment["COLUMNS"] = "300"
        let mount = try await cli.run(["mount", "--help"])
        #expect(mount.status == 0)
        #expect(
            mount.stdout.contains(
                "or says why it is not. The first mount of a profile fetches the whole tree first; later ones start"),
            "\(mount.stdout)")
        #expect(mount.stdout.contains("\n\nExamples:\n"), "paragraph breaks stay")
        let refresh = try await cli.run(["refresh", "--help"])
        #expect(refresh.status == 0)
        #expect(refresh.stdout.contains("with paths. While the profile is mounted, its daemon does the refresh"))
    }

    @Test func httpsTypedForAPlainHTTPServerSaysWhichSchemeToUse() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let plain = try #require(URLComponents(string: sim.baseURL))
            let hostAndPort = "\(plain.host ?? ""):\(plain.port ?? 0)"
            let result = try await cli.run([
                "refresh", "--server", "https://" + hostAndPort, "--username", "test_autor",
            ])
            #expect(result.status == 3)
            #expect(
                result.stderr
                    == "campusfs: the server at https://\(hostAndPort) does not speak HTTPS; did you mean http://\(hostAndPort)?\n"
            )
        }
    }

    /// `http://` typed for an HTTPS-only server: nginx answers such requests on its TLS port with 400 and "The
    /// plain HTTP request was sent to HTTPS port" (here a Python server answering exactly that, as nginx 1.22 does).
    @Test func httpTypedForAnHTTPSOnlyServerSaysWhichSchemeToUse() async throws {
        let portFile = FileManager.default.temporaryDirectory.appendingPathComponent("campusfs-port-\(UUID())")
        defer { try? FileManager.default.removeItem(at: portFile) }
        let server = """
            import http.server, sys
            class NginxTLSPort(http.server.BaseHTTPRequestHandler):
                def do_GET(self):
                    body = (b"<html><head><title>400 The plain HTTP request was sent to HTTPS port</title></head>"
                            b"<body><center><h1>400 Bad Request</h1></center><center>The plain HTTP request was sent "
                            b"to HTTPS port</center><hr><center>nginx/1.22.1</center></body></html>")
                    self.send_response(400)
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
            server = http.server.HTTPServer(("127.0.0.1", 0), NginxTLSPort)
            with open(sys.argv[1] + ".tmp", "w") as out:
                out.write(str(server.server_address[1]))
            import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
            server.serve_forever()
            """
        let pid = try await MountHarness.background(
            "exec python3 -c \(quoted(server)) \(quoted(portFile.path))")
        defer { kill(pid, SIGKILL) }
        var port: String?
        for _ in 0..<200 where port == nil {
            port = try? String(contentsOf: portFile, encoding: .utf8)
            if port == nil { try await Task.sleep(for: .milliseconds(25)) }
        }
        let hostAndPort = "127.0.0.1:\(try #require(port, "the server did not start"))"
        let cli = try CLI()
        defer { cli.removeHome() }
        let result = try await cli.run(
            ["refresh", "--server", "http://" + hostAndPort, "--username", "test_autor"], timeout: 30)
        #expect(result.status == 3)
        #expect(
            result.stderr
                == "campusfs: the server at http://\(hostAndPort) speaks only HTTPS; did you mean https://\(hostAndPort)?\n"
        )
    }

    @Test func aURLThatIsNotTheInstallationSaysWhatTheBaseURLIs() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let result = try await cli.run([
                "refresh", "--server", sim.baseURL + "/nothing", "--username", "test_autor",
            ])
            #expect(result.status == 3)
            #expect(
                result.stderr
                    == "campusfs: no Stud.IP API at \(sim.baseURL)/nothing: neither JSON:API (/jsonapi.php/v1) nor the "
                    + "legacy REST API (/api.php) answers there; use the installation's base URL, the address before "
                    + "/dispatch.php in the browser, e.g. https://studip.example.org/studip\n")
        }
    }

    @Test func aFailingPasswordCommandShowsWhatItSaid() async throws {
        let cli = try CLI(password: nil)
        defer { cli.removeHome() }
        let login = ["refresh", "--server", "http://127.0.0.1:9", "--username", "test_autor"]
        let failing = try await cli.run(login + ["--password-command", "sh -c 'echo nope >&2; exit 3'"])
        #expect(failing.status == 2)
        #expect(
            failing.stderr
                == "campusfs: password command `sh -c 'echo nope >&2; exit 3'` failed with exit status 3: nope; "
                + "fix it in the profile or --password-command\n")
        let missing = try await cli.run(login + ["--password-command", "no-such-password-tool"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("failed with exit status 127: "), "\(missing.stderr)")
        #expect(missing.stderr.contains("no-such-password-tool: not found"), "\(missing.stderr)")
    }

    @Test func aPasswordOptionSaysWhyThereIsNone() async throws {
        let cli = try CLI()
        defer { cli.removeHome() }
        let expected =
            "campusfs: passwords are not taken on the command line, where shell history and ps show them; set "
            + "CAMPUSFS_PASSWORD, use --password-command CMD or password_command in the profile, or type it when "
            + "`campusfs mount` or `campusfs login` asks\n"
        for option in [["--password", "secret"], ["--password=secret"], ["-p", "secret"]] {
            let result = try await cli.run(["refresh", "--server", "http://127.0.0.1:9"] + option)
            #expect(result.status == 1)
            #expect(result.stderr == expected, "\(option)")
        }
    }

    @Test func wrongValuesInTheConfigFileNameTheKeyAndTheRightForm() async throws {
        let cli = try CLI()
        defer { cli.removeHome() }
        let directory = cli.home.appendingPathComponent("config/campusfs")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("config.toml")
        func refresh(_ config: String) async throws -> CLI.Result {
            try config.write(to: file, atomically: true, encoding: .utf8)
            return try await cli.run(["refresh", "--profile", "uni"])
        }
        let notAList = try await refresh("[profiles.uni]\nurl = \"http://127.0.0.1:9\"\nsemesters = \"WS 2026/27\"\n")
        #expect(notAList.status == 1)
        #expect(
            notAList.stderr
                == "campusfs: \(file.path): profiles.uni.semesters must be a list of semester titles or ids, "
                + "e.g. semesters = [\"WS 2026/27\"]\n")
        let notAString = try await refresh("[profiles.uni]\nurl = 42\n")
        #expect(notAString.status == 1)
        #expect(notAString.stderr.contains("profiles.uni.url must be the installation's base URL in quotes"))

        let placeholder = try await refresh(
            "[profiles.uni]\nurl = \"http://127.0.0.1:9\"\nhidden_courses = [\"<course id>\"]\n")
        #expect(placeholder.status == 1)
        #expect(
            placeholder.stderr
                == "campusfs: \(file.path): profiles.uni.hidden_courses is still the placeholder \"<course id>\" "
                + "from the README; replace it with a real value: a list of course ids, e.g. hidden_courses = "
                + "[\"1fafd4798ef2af4ee2860238232af98f\"] (a course folder's user.campusfs.id)\n")
    }

    @Test func withoutATerminalAMissingPasswordNamesEverySource() async throws {
        let cli = try CLI(password: nil)
        defer { cli.removeHome() }
        let result = try await cli.run(["refresh", "--server", "http://127.0.0.1:9", "--username", "test_autor"])
        #expect(result.status == 2)
        #expect(
            result.stderr
                == "campusfs: no password for test_autor at http://127.0.0.1:9: run `campusfs login --profile default` "
                + "to store it in the keyring, or set CAMPUSFS_PASSWORD or password_command\n")
    }

    /// In a terminal, with no other source, campusfs asks for the password without echoing it (a real
    /// pseudo-terminal, driven by Python's pty module).
    @Test func inATerminalThePasswordIsAskedForWithoutEcho() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let cli = try CLI(password: nil)
            defer { cli.removeHome() }
            let login = try await cli.runInTerminal(
                ["login", "--server", sim.baseURL, "--username", "test_autor"],
                answering: "Password of test_autor (Stud.IP): ", with: "testing")
            #expect(login.status == 0, "\(login.output)")
            #expect(login.output.contains("Logged in as "), "\(login.output)")
            #expect(!login.output.contains("testing"), "the typed password is not echoed: \(login.output)")
        }
    }

    @Test func theFirstRefreshCountsPerCourseAndVerboseListsEachItem() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let login = ["refresh", "--server", sim.baseURL, "--username", "test_autor"]
            let cli = try CLI()
            defer { cli.removeHome() }
            let first = try await cli.run(login)
            #expect(first.status == 0, "\(first.stderr)")
            #expect(
                first.lines[1] == "  first refresh of this profile, so everything is new; --verbose lists each item")
            #expect(
                first.lines.contains {
                    $0.hasPrefix("  ") && $0.hasSuffix(" new in WS 2026-27/INF-101 Einführung in die Informatik")
                })
            #expect(!first.lines.contains { $0.hasPrefix("  new ") }, "\(first.stdout)")

            let verbose = try CLI()
            defer { verbose.removeHome() }
            let listed = try await verbose.run(login + ["--verbose"])
            #expect(listed.status == 0)
            #expect(listed.lines.contains("  new      WS 2026-27/INF-101 Einführung in die Informatik/README.txt"))
            #expect(!listed.stdout.contains("first refresh"))
        }
    }
}
