import Foundation
import StudIPKit

/// Finds the secret for a profile without ever taking it from the command line (DESIGN.md §1.1):
/// `CAMPUSFS_TOKEN` (an OAuth2 access token), `CAMPUSFS_PASSWORD`, or the output of `--password-command`.
enum CredentialSource {
    static func resolve(
        username: String?, passwordCommand: String?, environment: [String: String] = ProcessInfo.processInfo.environment
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
        throw .usage(
            "no password for \(username): set CAMPUSFS_PASSWORD, use --password-command CMD, or CAMPUSFS_TOKEN")
    }

    /// Runs the command with `/bin/sh -c` and takes the first line of its output.
    private static func run(_ command: String) throws(CLIError) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let output = Pipe()
        process.standardOutput = output
        do {
            try process.run()
        } catch {
            throw .usage("password command could not start: \(error.localizedDescription)")
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw .auth("password command failed with exit status \(process.terminationStatus)")
        }
        let password =
            String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .first.map(String.init) ?? ""
        guard !password.isEmpty else { throw .auth("password command printed nothing") }
        return password
    }
}
