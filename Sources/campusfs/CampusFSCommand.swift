import ArgumentParser
import Foundation

/// `campusfs`: your university's Stud.IP as a folder, and the commands around it.
@main
struct CampusFSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "campusfs",
        abstract: "Your university's Stud.IP as a folder.",
        discussion: """
            Start with `campusfs login`: it asks for your university, logs you in, and keeps the password or tokens \
            in your desktop's keyring, so `campusfs mount` needs no questions. Everything works from the metadata \
            cache, so `ls` and `tree` need no network. Credentials never go on the command line: scripts set \
            CAMPUSFS_PASSWORD, use --password-command, or CAMPUSFS_TOKEN for OAuth2.

            Exit codes: 0 ok, 1 usage, 2 login failed, 3 network, 4 other; `search` and `grep` exit as grep does: \
            0 found, 1 nothing found, 2 error.
            """
                + HelpText.examples(
                    """
                    campusfs demo                  # a made-up university, mounted at ~/Uni-Demo
                    campusfs login                 # once: your university, your login
                    campusfs mount                 # at ~/Uni
                    CAMPUSFS_PASSWORD=… campusfs mount --server https://studip.example.org/studip --username jdoe
                    campusfs status
                    CAMPUSFS_PASSWORD=… campusfs refresh --server https://studip.example.org/studip --username jdoe
                    campusfs tree --paths
                    campusfs ls -l "WS 2026-27/INF-101 Einführung in die Informatik"
                    campusfs search 'b-baum OR suchbaum'
                    campusfs upload Blatt3.pdf ~/Uni/"SS 2022"/"12345 Test Lehrveranstaltung"/Hausaufgaben
                    """),
        version: version,
        subcommands: [
            MountCommand.self, UnmountCommand.self, StatusCommand.self, LoginCommand.self, LogoutCommand.self,
            RefreshCommand.self,
            ListCommand.self, TreeCommand.self, NewCommand.self, TagCommand.self, TagsCommand.self, PinCommand.self,
            UnpinCommand.self, CacheCommand.self, IndexCommand.self, SearchCommand.self, GrepCommand.self,
            UploadCommand.self, OutboxCommand.self, DemoCommand.self,
        ])

    /// The release, the one place it is written: `campusfs --version` prints it, for bug reports, and
    /// Scripts/package takes the Debian package's version from that (docs/install.md).
    static let version = "0.1.0"

    /// Commands whose exit status follows grep's (0 found, 1 nothing found, 2 error), usage errors included, so that
    /// scripts can tell "nothing" from "failed".
    static let grepLikeCommands = [SearchCommand.configuration.commandName, GrepCommand.configuration.commandName]
        .compactMap { $0 }

    /// Parses and runs like ArgumentParser does, but with the exit codes of docs/architecture.md, "Exit codes": a usage
    /// error is 1.
    static func main() async {
        SecretEnvironment.take()
        // A reader that went away (a daemon that died before reading its credentials) is an error, not a death.
        signal(SIGPIPE, SIG_IGN)
        if passwordOnTheCommandLine(CommandLine.arguments.dropFirst()) {
            printError(
                "campusfs: passwords are not taken on the command line, where shell history and ps show them; set "
                    + "CAMPUSFS_PASSWORD, use --password-command CMD or password_command in the profile, or type it "
                    + "when `campusfs mount` or `campusfs login` asks")
            Foundation.exit(1)
        }
        let arguments = GrepCommand.normalized(Array(CommandLine.arguments.dropFirst()))
        let grepLike = arguments.first.map(grepLikeCommands.contains) == true
        do {
            var command = try parseAsRoot(arguments)
            do throws(CLIError) {
                try Paths().checkRuntime()
            } catch {
                printError("campusfs: \(error)")
                Foundation.exit(grepLike ? 2 : error.exitCode)
            }
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            // As `exit(withError:)`, but help, `--version` and dump-help (all exit 0) as a person copies them
            // (``HelpText``); an error's text, which may quote the user's input, as it is.
            let code = exitCode(for: error)
            let message = code == .success ? HelpText.printable(fullMessage(for: error)) : fullMessage(for: error)
            if code == .validationFailure {
                printError(message)
                Foundation.exit(grepLike ? 2 : 1)
            }
            if !message.isEmpty { code == .success ? print(message) : printError(message) }
            Foundation.exit(code.rawValue)
        }
    }

    /// `--password` or `-p` before a `--`: ArgumentParser would call it an unknown option without saying why
    /// there is none. `tag` takes `-TAG`, so `-p` there removes the tag "p".
    static func passwordOnTheCommandLine(_ arguments: ArraySlice<String>) -> Bool {
        let options = arguments.prefix { $0 != "--" }
        return options.contains { $0 == "--password" || $0.hasPrefix("--password=") }
            || (options.first != "tag" && options.contains("-p"))
    }
}
