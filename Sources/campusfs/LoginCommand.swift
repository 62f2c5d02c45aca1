import ArgumentParser
import ControlProtocol
import Foundation
import StudIPKit

/// `campusfs login`: checks a password or token with Stud.IP and, while the profile is mounted, hands it to the
/// running daemon, which uses it from then on — no remount after a password change.
struct LoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "login",
        abstract: "Check a new password or token with Stud.IP and give it to the running mount.",
        discussion: """
            The password comes from where `campusfs mount` takes it: CAMPUSFS_TOKEN, CAMPUSFS_PASSWORD, the \
            profile's password_command or --password-command, else a prompt in the terminal. While the profile is \
            mounted, its daemon logs in with it at once and keeps using it until it ends; documents that could not \
            open because the login was refused open again. Nothing is stored: a later `campusfs mount` asks the same \
            sources again (a keyring follows).

            Examples:
              campusfs login                        # asks for the password of the profile's username
              campusfs login --profile uni
              campusfs login --password-command "pass show uni/studip"
            """)

    @OptionGroup var profile: ProfileOptions

    func run() async throws {
        try await reportingErrors {
            let paths = Paths()
            let name = try profile.name(paths: paths, inferringFrom: [])
            let socket = paths.socket(profile: name)
            guard let status = DaemonDirectory.status(socket) else {
                let resolved = try profile.resolve(paths: paths)
                try await check(resolved)
                print(
                    "Stud.IP at \(resolved.serverURL) accepted the login"
                        + (resolved.username.map { " of \($0)" } ?? "") + "; \"\(name)\" is not mounted, so nothing "
                        + "else changed: `campusfs mount` takes the password from the same place")
                return
            }
            // A profile mounted with --server needs no config entry; the username may still come from one.
            let settings = try? profile.resolve(paths: paths)
            let username = profile.username ?? settings?.username
            let credentials = try CredentialSource.resolve(
                username: username, passwordCommand: profile.passwordCommand ?? settings?.passwordCommand)
            let response: ControlResponse
            do throws(ControlSocketError) {
                response = try ControlClient.send(
                    .login(credentials: LoginCredentials(credentials)), to: socket.path)
            } catch {
                throw CLIError.other(error.description)
            }
            if let error = response.error {
                throw CLIError(
                    exitCode: response.exitCode ?? 4,
                    error + "; the mount at \(status.mountpoint) keeps serving what is cached")
            }
            print(
                "Stud.IP at \(status.serverURL) accepted the login" + (username.map { " of \($0)" } ?? "")
                    + "; the mount at \(status.mountpoint) uses it now")
        }
    }

    /// Logs in once (`users/me` or `user`) and disconnects.
    private func check(_ profile: Profile) async throws {
        let credentials = try CredentialSource.resolve(
            username: profile.username, passwordCommand: profile.passwordCommand)
        let source = try await StudIP.connect(
            ClientConfiguration(baseURL: profile.serverURL, api: profile.api.clientAPI, credentials: credentials))
        await source.shutdown()
    }
}
