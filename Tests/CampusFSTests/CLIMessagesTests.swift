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

    /// Issue 28: an example in `--help` is a line to copy into a shell, so no terminal width may break it; every
    /// command's help (found through the SUBCOMMANDS sections, from the root down) at 40 and 80 columns shows each
    /// example line as it is at 1,000 columns, with ordinary spaces.
    @Test func helpExamplesAreVerbatimLinesInEveryCommand() async throws {
        var cli = try CLI()
        defer { cli.removeHome() }
        func help(_ command: [String], columns: Int) async throws -> String {
            cli.environment["COLUMNS"] = String(columns)
            let result = try await cli.run(command + ["--help"])
            #expect(result.status == 0, "\(command): \(result.stderr)")
            return result.stdout
        }
        let wide = try await Self.everyCommandsHelp(&cli)
        var examples: [String: [String]] = [:]
        for (command, lines) in wide {
            if let start = lines.firstIndex(of: "Examples:") {
                examples[command] = Array(lines[(start + 1)...].prefix { $0.hasPrefix("  ") })
            }
        }
        #expect(wide.count >= 20, "\(wide.keys.sorted())")
        #expect(examples.count >= 13, "\(examples.keys.sorted())")
        #expect(
            examples["login"]?.contains("  campusfs login Passau     # a university from the built-in list") == true)
        for (command, lines) in examples {
            #expect(!lines.isEmpty, "\(command)")
            for columns in [40, 80] {
                let words = command.split(separator: " ").map(String.init)
                let narrow = try await help(words, columns: columns)
                #expect(!narrow.contains("\u{00A0}"), "\(command): no-break spaces reach the reader")
                let shown = Set(narrow.split(separator: "\n").map(String.init))
                for line in lines {
                    let whole = shown.contains(line)
                    #expect(whole, "`campusfs \(command) --help` at \(columns) columns breaks \(line)")
                }
            }
        }
    }

    /// Every command's `--help` at 1,000 columns as lines, by its words after `campusfs` ("" for `campusfs`
    /// itself), found through the SUBCOMMANDS sections from the root down.
    private static func everyCommandsHelp(_ cli: inout CLI) async throws -> [String: [String]] {
        cli.environment["COLUMNS"] = "1000"
        var commands: [[String]] = [[]]
        var helps: [String: [String]] = [:]
        var index = 0
        while index < commands.count {
            let command = commands[index]
            index += 1
            let result = try await cli.run(command + ["--help"])
            #expect(result.status == 0, "\(command): \(result.stderr)")
            let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            if let start = lines.firstIndex(of: "SUBCOMMANDS:") {
                for line in lines[(start + 1)...].prefix(while: { !$0.isEmpty }) {
                    let name = line.split(separator: " ").first.map(String.init) ?? ""
                    if !name.isEmpty, name != "help" { commands.append(command + [name]) }
                }
            }
            helps[command.joined(separator: " ")] = lines
        }
        return helps
    }

    /// Issue 29: `--profile` says which profile a command takes when none is named. Commands that go through
    /// `MountedProfiles` (the tree's, the index's, `status`, `refresh`) take a mounted profile before the config
    /// file's default and say so; `mount`, `login`, `logout` and `unmount` take the config file's.
    @Test func profileHelpSaysWhichProfileACommandTakes() async throws {
        var cli = try CLI()
        defer { cli.removeHome() }
        let configured = "default_profile, else \"default\""
        let onlyMounted = "the only mounted profile, else " + configured
        let ofPaths = "the mount holding a path given, else " + onlyMounted
        let shared = configured + "; for `refresh`: " + ofPaths
        var expected: [String: String] = [:]
        for (commands, fallback) in [
            (["mount", "login", "refresh"], shared), (["logout", "unmount"], configured),
            (
                [
                    "status", "tags", "new", "index", "search", "cache show", "outbox list", "outbox retry",
                    "outbox discard",
                ],
                onlyMounted
            ),
            (["ls", "tree", "grep", "tag", "pin", "unpin", "cache clean", "upload"], ofPaths),
        ] {
            for command in commands { expected[command] = "Profile in config.toml (default: \(fallback))." }
        }
        var said: [String: String] = [:]
        for (command, lines) in try await Self.everyCommandsHelp(&cli) {
            let option = lines.first { $0.trimmingCharacters(in: .whitespaces).hasPrefix("--profile <profile>") }
            guard let line = option else { continue }
            said[command] = line.components(separatedBy: "--profile <profile>").last?
                .trimmingCharacters(in: .whitespaces)
        }
        #expect(said == expected)
    }

    @Test func versionIsTheOneOfTheSource() async throws {
        let cli = try CLI()
        defer { cli.removeHome() }
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/campusfs/CampusFSCommand.swift")
        let text = try String(contentsOf: source, encoding: .utf8)
        let written = try #require(text.firstMatch(of: /static let version = "([^"]+)"/)?.output.1)
        let result = try await cli.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == "\(written)\n")
        #expect(written.wholeMatch(of: /[0-9]+\.[0-9]+\.[0-9]+/) != nil, "a release number: \(written)")
    }

    /// Issue 28: a mountpoint with one entry says "1 entry" and names it; several are counted and the first named.
    @Test func aMountpointThatIsNotEmptyNamesWhatItWouldHide() async throws {
        let cli = try CLI()
        defer { cli.removeHome() }
        let directory = cli.home.appendingPathComponent("Uni")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: directory.appendingPathComponent("notes.txt"))
        let mount = ["mount", directory.path, "--server", "http://127.0.0.1:9", "--username", "test_autor"]
        let one = try await cli.run(mount)
        #expect(one.status == 1)
        #expect(
            one.stderr
                == "campusfs: mountpoint \(directory.path) is not empty; mounting would hide its 1 entry (notes.txt)\n")
        for name in ["a", "b", "c"] { try Data().write(to: directory.appendingPathComponent(name)) }
        let four = try await cli.run(mount)
        #expect(four.stderr.hasSuffix("mounting would hide its 4 entries (a, b, c, …)\n"), "\(four.stderr)")
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
                == "campusfs: \(file.path):3:1: profiles.uni.semesters must be a list of semester titles or ids, "
                + "e.g. semesters = [\"WS 2026/27\"]\n")
        let notAString = try await refresh("[profiles.uni]\n  url = 42\n")
        #expect(notAString.status == 1)
        #expect(
            notAString.stderr.hasPrefix(
                "campusfs: \(file.path):2:3: profiles.uni.url must be the installation's base URL"))

        let placeholder = try await refresh(
            "[profiles.uni]\nurl = \"http://127.0.0.1:9\"\nhidden_courses = [\"<course id>\"]\n")
        #expect(placeholder.status == 1)
        #expect(
            placeholder.stderr
                == "campusfs: \(file.path):3:1: profiles.uni.hidden_courses is still the placeholder \"<course id>\" "
                + "from the README; replace it with a real value: a list of course ids, e.g. hidden_courses = "
                + "[\"1fafd4798ef2af4ee2860238232af98f\"] (a course folder's user.campusfs.id)\n")
        let login = try await refresh("[profiles.uni]\nurl = \"http://127.0.0.1:9\"\nlogin = \"kerberos\"\n")
        #expect(
            login.stderr
                == "campusfs: \(file.path):3:1: profiles.uni.login must be one of \"basic\", \"web\", \"sso\" or "
                + "\"oauth2\" in quotes, e.g. login = \"basic\", not \"kerberos\"\n")
        let sso = try await refresh("[profiles.uni]\nurl = \"http://127.0.0.1:9\"\nlogin = \"sso\"\n")
        #expect(
            sso.stderr
                == "campusfs: \(file.path):3:1: login = \"sso\" needs sso_url in profiles.uni: run "
                + "`campusfs login --profile uni`\n")
    }

    /// Issue 28: every command that reads config.toml reports a broken one (`status` did not), with every problem
    /// at its line and column, not only the first; a syntax error with where the reading stopped.
    @Test func everyCommandReportsEveryProblemOfTheConfigFile() async throws {
        let cli = try CLI()
        defer { cli.removeHome() }
        try FileManager.default.createDirectory(
            at: cli.configFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        let path = cli.configFile.path
        try Data(
            """
            default_profile = "uni"

            [profiles.uni]
            url = "http://127.0.0.1:9"
            usernme = "jdoe"
            refresh_interval = "30s"
                login = "kerberos"
            notifications = "yes"
            """.utf8
        ).write(to: cli.configFile)
        let problems = """
            \(path) has 4 errors:
            \(path):5:1: unknown setting profiles.uni.usernme (typo?)
            \(path):6:1: profiles.uni.refresh_interval must be a duration of at least 1m in quotes, e.g. \
            refresh_interval = "10m", not "30s"
            \(path):7:5: profiles.uni.login must be one of "basic", "web", "sso" or "oauth2" in quotes, e.g. \
            login = "basic", not "kerberos"
            \(path):8:1: profiles.uni.notifications must be true or false without quotes, e.g. notifications = false

            """
        let commands = [
            ["status"], ["status", "--profile", "uni"], ["ls"], ["ls", "--profile", "uni"], ["tree"], ["new"],
            ["tags"], ["cache"], ["index"], ["refresh"], ["mount"], ["unmount"], ["logout"], ["search", "x"],
            ["grep", "x"],
        ]
        for command in commands {
            let result = try await cli.run(command)
            #expect(result.status == (["search", "grep"].contains(command[0]) ? 2 : 1), "\(command)")
            #expect(result.stderr == (command[0] == "grep" ? "campusfs grep: " : "campusfs: ") + problems, "\(command)")
        }
        try Data("[profiles.uni]\nurl = \"http://127.0.0.1:9\"\nlogin = basic\n".utf8).write(to: cli.configFile)
        let syntax = try await cli.run(["status"])
        #expect(syntax.status == 1)
        #expect(syntax.stderr.hasPrefix("campusfs: \(path):3:9: "), "\(syntax.stderr)")
    }

    /// Issue 28: `status` has no --server to suggest, and `ls` of a profile nobody configured is a typo, not a
    /// profile to refresh; a configured one never refreshed names itself in the refresh to run.
    @Test func anUnknownProfileIsCalledUnknownWithTheKnownOnes() async throws {
        let cli = try CLI()
        defer { cli.removeHome() }
        try FileManager.default.createDirectory(
            at: cli.configFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("[profiles.uni]\nurl = \"http://127.0.0.1:9\"\n[profiles.work]\nurl = \"http://127.0.0.1:9\"\n".utf8)
            .write(to: cli.configFile)
        let unknown =
            "campusfs: no profile \"nothere\" in \(cli.configFile.path) (it has \"uni\", \"work\"); "
            + "`campusfs login --profile nothere` adds it\n"
        for command in [["status"], ["ls"], ["tree"], ["tags"]] {
            let result = try await cli.run(command + ["--profile", "nothere"])
            #expect(result.status == 1, "\(command)")
            #expect(result.stderr == unknown, "\(command)")
        }
        let refresh = try await cli.run(["refresh", "--profile", "nothere"])
        #expect(refresh.stderr.hasSuffix("adds it, or pass --server and --username\n"), "\(refresh.stderr)")
        let never = try await cli.run(["ls", "--profile", "work"])
        #expect(never.status == 1)
        #expect(
            never.stderr
                == "campusfs: nothing known about profile \"work\" yet: run `campusfs refresh --profile work` first\n")
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
            let login = try await cli.converse(
                ["login", "--server", sim.baseURL, "--username", "test_autor"],
                [
                    .init(prompt: "Password of test_autor (Stud.IP): ", answer: "testing"),
                    .init(prompt: "Allow uploads? [y/N] ", answer: "n"),
                ])
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
