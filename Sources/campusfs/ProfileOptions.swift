import ArgumentParser
import Foundation

/// The options every command that talks about a profile shares.
struct ProfileOptions: ParsableArguments {
    @Option(help: "Profile in config.toml (default: default_profile, else \"default\").")
    var profile: String?

    @Option(help: "Stud.IP base URL, e.g. https://studip.example.org/studip (overrides the profile).")
    var server: String?

    @Option(help: "Stud.IP username (overrides the profile).")
    var username: String?

    @Option(help: "Command that prints the password (the password itself never goes on the command line).")
    var passwordCommand: String?

    @Option(help: "Which API to use: auto, jsonapi or rest.")
    var api: APIChoice?

    enum APIChoice: String, ExpressibleByArgument, CaseIterable {
        case auto, jsonapi, rest
    }

    /// The profile commands use when none is named: the config file's `default_profile`, else "default".
    static func defaultProfileName(paths: Paths = Paths()) throws(CLIError) -> String {
        try ConfigFile.load(from: paths.configFile).defaultProfile ?? "default"
    }

    /// The profile's effective settings: command line over config file over defaults.
    func resolve(paths: Paths = Paths()) throws(CLIError) -> Profile {
        let file = try ConfigFile.load(from: paths.configFile)
        let name = profile ?? file.defaultProfile ?? "default"
        guard name.range(of: #"^[A-Za-z0-9._-]+$"#, options: .regularExpression) != nil, name != ".", name != ".."
        else {
            throw .usage("profile name \"\(name)\" may only contain letters, digits, '.', '_' and '-'")
        }
        let settings = file.profiles[name]
        if profile != nil, settings == nil, server == nil {
            throw .usage("no profile \"\(name)\" in \(paths.configFile.path); add it or pass --server and --username")
        }
        guard let url = server ?? settings?.url else {
            throw .usage(
                "no Stud.IP server configured: pass --server URL --username NAME, or add a profile to \(paths.configFile.path)"
            )
        }
        guard let parsed = URL(string: url), parsed.scheme == "http" || parsed.scheme == "https", parsed.host != nil
        else {
            throw .usage("\"\(url)\" is not an http(s) URL")
        }
        let apiName = api?.rawValue ?? settings?.api ?? "auto"
        guard let choice = APIChoice(rawValue: apiName) else {
            throw .usage("api must be auto, jsonapi or rest, not \"\(apiName)\"")
        }
        return Profile(
            name: name, paths: paths, serverURL: url.hasSuffix("/") ? String(url.dropLast()) : url, api: choice,
            username: username ?? settings?.username, passwordCommand: passwordCommand ?? settings?.passwordCommand,
            semesters: settings?.semesters ?? [], hiddenCourses: Set(settings?.hiddenCourses ?? []),
            courseNameTemplate: settings?.courseName ?? "{number} {title}")
    }
}

/// A profile after resolution: everything a command needs to reach the server and the store.
struct Profile: Sendable {
    var name: String
    var paths: Paths
    var serverURL: String
    var api: ProfileOptions.APIChoice
    var username: String?
    var passwordCommand: String?
    /// Semester titles or ids to show; empty: all.
    var semesters: [String]
    var hiddenCourses: Set<String>
    var courseNameTemplate: String

    var databaseURL: URL { paths.database(profile: name) }
}
