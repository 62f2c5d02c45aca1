import Daemon
import Foundation
import StudIPKit
import Synchronization
import SystemSupport

/// Finds the secret for a profile without ever taking it from the command line (DESIGN.md §1.1):
/// `CAMPUSFS_TOKEN` (an OAuth2 access token), `CAMPUSFS_PASSWORD`, the output of `--password-command`, or, in a
/// terminal, what the user types when asked.
enum CredentialSource {
    static func resolve(
        username: String?, passwordCommand: String?,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        interactive: Bool = true
    ) throws(CLIError) -> Credentials {
        if let token = environment["CAMPUSFS_TOKEN"], !token.isEmpty {
            return .bearer(OAuthTokens(accessToken: token, refreshToken: nil, expiresAt: nil))
        }
        guard let username, !username.isEmpty else {
            throw .usage("no username: pass --username NAME or set username in the profile")
        }
        if let password = environment["CAMPUSFS_PASSWORD"], !password.isEmpty {
            return .basic(username: username, password: password)
        }
        if let command = passwordCommand {
            return .basic(username: username, password: try run(command))
        }
        if interactive, let password = ask(username) { return .basic(username: username, password: password) }
        throw .usage(
            "no password for \(username): set CAMPUSFS_PASSWORD, use --password-command CMD or password_command "
                + "in the profile, or CAMPUSFS_TOKEN for OAuth2 (in a terminal, campusfs asks for it)")
    }

    /// The daemon's way to look the credentials up again after the server refused them: the same sources, never a
    /// prompt (a daemon has no terminal, a foreground one must not block on it), and the password command on a
    /// thread of its own, not the cooperative pool.
    static func lookup(username: String?, passwordCommand: String?) -> ServerLink.CredentialLookup {
        { () async throws(CredentialsUnavailable) -> Credentials in
            let result = await withCheckedContinuation {
                (continuation: CheckedContinuation<Result<Credentials, CLIError>, Never>) in
                Thread {
                    continuation.resume(
                        returning: Result { () throws(CLIError) -> Credentials in
                            try resolve(username: username, passwordCommand: passwordCommand, interactive: false)
                        })
                }.start()
            }
            switch result {
            case .success(let credentials): return credentials
            case .failure(let error): throw CredentialsUnavailable(error.description)
            }
        }
    }

    /// `campusfs mount` asks in the terminal when no other source has the password, and hands the answer to its
    /// daemon in `CAMPUSFS_PASSWORD` (the daemon has no terminal; the environment is never on a command line).
    static func askForTheDaemon(
        username: String?, passwordCommand: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        guard passwordCommand == nil, environment["CAMPUSFS_TOKEN"] ?? "" == "",
            environment["CAMPUSFS_PASSWORD"] ?? "" == "", let username, !username.isEmpty,
            let password = ask(username)
        else { return }
        setenv("CAMPUSFS_PASSWORD", password, 1)
    }

    /// Asks for the password on the terminal without echoing it, as ssh and sudo do; nil without a terminal
    /// (a script, a daemon) or when nothing was typed.
    private static func ask(_ username: String) -> String? {
        guard isatty(STDIN_FILENO) == 1 else { return nil }
        var saved = termios()
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else { return nil }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        // Echo goes off before the prompt shows: TCSAFLUSH drops what was typed before, and a quick answer
        // (pasted, or a script on a pty) would be lost.
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet)
        FileHandle.standardError.write(Data("Stud.IP password for \(username): ".utf8))
        let line = readLine(strippingNewline: true)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
        FileHandle.standardError.write(Data("\n".utf8))
        guard let line, !line.isEmpty else { return nil }
        return line
    }

    /// Runs the command with `/bin/sh -c` and takes the first line of its output. Its stderr is read alongside
    /// (a full pipe would stall it) and its first lines shown when it fails: an exit status alone says nothing.
    private static func run(_ command: String) throws(CLIError) -> String {
        let output: Subprocess.Output
        do throws(SubprocessError) {
            output = try Subprocess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", command], inheritingInput: true)
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
