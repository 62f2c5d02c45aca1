import ArgumentParser
import ControlProtocol
import Foundation
import SecretStore
import SystemSupport

/// `campusfs logout`: forgets the profile's stored secrets, and the login of its running mount.
struct LogoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "logout",
        abstract: "Forget the profile's password or tokens (keyring and file) and end its mount's login.",
        discussion: """
            Removes what `campusfs login` stored for the profile from the keyring (and from the fallback file), and \
            only that: other profiles' secrets stay. A running mount keeps serving what is cached, but fetches nothing \
            until the next `campusfs login`. The profile's settings in config.toml, the tree and the tags stay. \
            Stud.IP offers no way to revoke an OAuth2 grant from a client: see your grants at \
            dispatch.php/api/oauth2/applications.
            """
                + HelpText.examples(
                    """
                    campusfs logout
                    campusfs logout --profile work
                    """))

    @Option(help: .configuredProfile)
    var profile: String?

    func run() async throws {
        try await reportingErrors {
            let paths = Paths()
            let name = try ProfileOptions.checked(profile ?? ProfileOptions.defaultProfileName(paths: paths))
            let store = Secrets.store(paths)
            let removed = try await BlockingPool.shared.run { () throws(CLIError) -> Int in
                do throws(SecretStoreError) {
                    return try store.deleteAll(profile: name)
                } catch {
                    throw .other(error.description)
                }
            }
            var said = removed == 0 ? "nothing was stored for \"\(name)\"" : "forgot the login of \"\(name)\""
            let socket = paths.socket(profile: name)
            if let status = DaemonDirectory.status(socket) {
                let response = try await BlockingPool.shared.run { () throws(CLIError) -> ControlResponse in
                    do throws(ControlSocketError) {
                        return try ControlClient.send(.logout, to: socket.path)
                    } catch {
                        throw .other(error.description)
                    }
                }
                if let error = response.error { throw CLIError(exitCode: response.exitCode ?? 4, error) }
                said +=
                    "; the mount at \(status.mountpoint) keeps what is cached and fetches nothing until "
                    + "`campusfs login --profile \(name)`"
            }
            print(said)
        }
    }
}
