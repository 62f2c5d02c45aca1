import ArgumentParser
import CourseFiles
import Daemon
import Foundation
import MetadataStore
import Refreshing
import StudIPKit

/// What `--profile` means when none is named, one text per way a command resolves the profile.
extension ArgumentHelp {
    private static let configured = "default_profile, else \"default\""
    private static let onlyMounted = "the only mounted profile, else " + configured
    private static let mountOfPaths = "the mount holding a path given, else " + onlyMounted

    private static func profile(_ fallback: String) -> ArgumentHelp {
        ArgumentHelp("Profile in config.toml (default: \(fallback)).")
    }

    /// Commands that resolve through ``ProfileOptions/defaultProfileName(paths:)`` alone.
    static let configuredProfile = profile(configured)
    /// Commands without paths that resolve through ``MountedProfiles/name(explicit:arguments:paths:)``.
    static let mountedProfile = profile(onlyMounted)
    /// Commands with paths that resolve through ``MountedProfiles/name(explicit:arguments:paths:)``.
    static let mountedProfileOfPaths = profile(mountOfPaths)
    /// ``ProfileOptions``: `mount` and `login` take the configured profile, `refresh` first the mounted one
    /// (``ProfileOptions/name(paths:inferringFrom:)``).
    static let profileOptions = profile(configured + "; for `refresh`: " + mountOfPaths)
}

/// The options every command that talks about a profile shares.
struct ProfileOptions: ParsableArguments {
    @Option(help: .profileOptions)
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

    /// The name of the profile meant: `--profile`, else the config file's default. Enough to find a running daemon,
    /// which already knows its server. With `arguments` (the paths a command was given), the mounts decide before
    /// the default does (``MountedProfiles/name(explicit:arguments:paths:)``).
    func name(paths: Paths = Paths(), inferringFrom arguments: [String]? = nil) throws(CLIError) -> String {
        let name: String
        if let arguments {
            name = try MountedProfiles.name(explicit: profile, arguments: arguments, paths: paths)
        } else if let profile {
            name = profile
        } else {
            name = try Self.defaultProfileName(paths: paths)
        }
        return try Self.checked(name)
    }

    /// `name` when it can name files and sockets: no slashes, no `..`.
    static func checked(_ name: String) throws(CLIError) -> String {
        guard name.range(of: #"^[A-Za-z0-9._-]+$"#, options: .regularExpression) != nil, name != ".", name != ".."
        else {
            throw .usage("profile name \"\(name)\" may only contain letters, digits, '.', '_' and '-'")
        }
        // `$XDG_DATA_HOME/campusfs/secrets` is the keyring's fallback file, beside the profiles' directories.
        guard name != "secrets" else { throw .usage("\"secrets\" cannot name a profile; choose another name") }
        return name
    }

    /// A profile named on the command line that the config file does not know, and the profiles it does know.
    /// `serverOptions`: the command also takes --server and --username instead of a profile (`mount`, `refresh`).
    static func unknown(_ name: String, paths: Paths, serverOptions: Bool = true) -> CLIError {
        let known = (try? ConfigFile.load(from: paths.configFile))?.profiles.keys.sorted() ?? []
        let has = known.isEmpty ? "it has none" : "it has " + known.map { "\"\($0)\"" }.joined(separator: ", ")
        let remedy =
            "`campusfs login --profile \(name)` adds it" + (serverOptions ? ", or pass --server and --username" : "")
        return .usage("no profile \"\(name)\" in \(paths.configFile.path) (\(has)); \(remedy)")
    }

    /// The profile's effective settings: command line over config file over defaults.
    func resolve(paths: Paths = Paths()) throws(CLIError) -> Profile {
        let file = try ConfigFile.load(from: paths.configFile)
        let name = try name(paths: paths)
        let settings = file.profiles[name]
        if profile != nil, settings == nil, server == nil { throw Self.unknown(name, paths: paths) }
        guard let url = server ?? settings?.url else {
            throw .usage(
                "no Stud.IP server configured: pass --server URL --username NAME, or add a profile to \(paths.configFile.path)"
            )
        }
        guard Self.isServerURL(url), let host = URL(string: url)?.host else {
            throw .usage("\"\(url)\" is not an http(s) URL")
        }
        let fileAPI = try Self.setting("api", settings?.api, APIChoice.init(rawValue:))
        let choice = api ?? fileAPI ?? .auto
        let login = try Self.setting("login", settings?.login, LoginMethod.init(rawValue:)) ?? .basic
        let cacheLimit = try Self.setting("cache_limit", settings?.cacheLimit, Self.bytes)
        let refreshInterval = try Self.setting("refresh_interval", settings?.refreshInterval) {
            (text: String) -> Duration? in
            Self.seconds(text).flatMap { $0 >= 60 ? Duration.seconds($0) : nil }
        }
        let removalGrace = try Self.setting("removal_grace", settings?.removalGrace, Self.duration)
        let refreshTimeout = try Self.setting("refresh_timeout", settings?.refreshTimeout, Self.duration)
        let notificationInterval = try Self.setting(
            "notification_interval", settings?.notificationInterval, Self.duration)
        let language =
            try Self.setting("language", settings?.language) { (text: String) -> CourseFilesLanguage? in
                ["de": CourseFilesLanguage.german, "en": .english][text]
            }
            ?? .german
        var profile = Profile(
            name: name, paths: paths, serverURL: url.hasSuffix("/") ? String(url.dropLast()) : url, api: choice,
            university: settings?.university, username: username ?? settings?.username, login: login,
            ssoURL: settings?.ssoURL, oauth2ClientID: settings?.oauth2ClientID,
            acceptsConsent: settings?.ssoAcceptConsent ?? false,
            passwordCommand: passwordCommand ?? settings?.passwordCommand,
            semesters: settings?.semesters ?? [], hiddenCourses: Set(settings?.hiddenCourses ?? []),
            courseNameTemplate: settings?.courseName ?? "{number} {title}", cacheLimit: cacheLimit,
            refreshInterval: refreshInterval, removalGrace: removalGrace, refreshTimeout: refreshTimeout)
        profile.courseFiles = CourseFilesOptions(
            language: language, announcements: settings?.announcements ?? true, dates: settings?.dates ?? true,
            timetable: settings?.timetable ?? true, host: host)
        profile.notifications = settings?.notifications ?? true
        profile.mountpoint = try Self.setting("mountpoint", settings?.mountpoint) { (path: String) -> URL? in
            if path == "~" || path.hasPrefix("~/") { return URL(fileURLWithPath: paths.home.path + path.dropFirst()) }
            return path.hasPrefix("/") ? URL(fileURLWithPath: path) : nil
        }
        profile.notificationInterval = notificationInterval
        profile.uploads = settings?.uploads ?? false
        profile.uploadTerms = settings?.uploadTerms
        return profile
    }

    /// "10G", "500M", "64K" or plain bytes (powers of 1024).
    static func bytes(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        let trimmed = text.trimmingCharacters(in: .whitespaces).uppercased().replacingOccurrences(of: "IB", with: "")
            .replacingOccurrences(of: "B", with: "")
        guard let last = trimmed.last else { return nil }
        let (number, unit) = units[last].map { (trimmed.dropLast(), $0) } ?? (Substring(trimmed), 1)
        guard let value = Int64(number), value > 0, value <= Int64.max / unit else { return nil }
        return value * unit
    }

    /// A setting of the file converted; nil when unset. ``ConfigFile/parse(_:path:)`` has rejected, with its line,
    /// every value `convert` refuses, so the error here is only a safeguard.
    private static func setting<T>(
        _ key: String, _ value: String?, _ convert: (String) -> T?
    ) throws(CLIError) -> T? {
        guard let value else { return nil }
        guard let converted = convert(value) else {
            throw .usage("\(key) must be \(ConfigFile.forms[key] ?? "something else"), not \"\(value)\"")
        }
        return converted
    }

    /// An http(s) URL with a host: what `--server` and `url` must be.
    static func isServerURL(_ text: String) -> Bool {
        guard let url = URL(string: text), url.scheme == "http" || url.scheme == "https" else { return false }
        return url.host != nil
    }

    private static func duration(_ text: String) -> Duration? { seconds(text).map { .seconds($0) } }

    /// "90s", "10m", "2h", "30d" or plain seconds.
    static func seconds(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        guard let last = trimmed.last else { return nil }
        let (number, unit) = units[last].map { (trimmed.dropLast(), $0) } ?? (Substring(trimmed), 1)
        guard let value = Int64(number), value > 0, value <= Int64.max / unit else { return nil }
        return value * unit
    }
}

/// A profile after resolution: everything a command needs to reach the server and the store.
struct Profile: Sendable {
    var name: String
    var paths: Paths
    var serverURL: String
    var api: ProfileOptions.APIChoice
    /// The university's name for messages (`university`), when `campusfs login` found it in the list.
    var university: String?
    var username: String?
    var login: LoginMethod
    /// Where single sign-on starts (`sso_url`), for ``LoginMethod/sso``.
    var ssoURL: String?
    /// The installation's OAuth2 client id for CampusFS (`oauth2_client_id`), for ``LoginMethod/oauth2``.
    var oauth2ClientID: String?
    /// Whether the person agreed in `campusfs login` that the identity provider may release their attributes to
    /// Stud.IP at every login (`sso_accept_consent`); without it a consent page ends a login with "login needed".
    var acceptsConsent = false
    var passwordCommand: String?
    /// Semester titles or ids to show; empty: all.
    var semesters: [String]
    var hiddenCourses: Set<String>
    var courseNameTemplate: String
    /// Bytes the content cache may hold (`cache_limit`); nil: the default of 10 GiB.
    var cacheLimit: Int64?
    /// How often a mounted profile refreshes (`refresh_interval`); nil: every 10 minutes.
    var refreshInterval: Duration?
    /// How long cached copies, tags and pins of what Stud.IP removed are kept (`removal_grace`); nil: 7 days.
    var removalGrace: Duration?
    /// The longest one refresh of a mounted profile may take (`refresh_timeout`); nil: 10 minutes.
    var refreshTimeout: Duration?
    /// Announcements, dates and timetables (`language`, `announcements`, `dates`, `timetable`); German, all on.
    var courseFiles = CourseFilesOptions()
    /// Where `campusfs mount` mounts without an argument (`mountpoint`, `~/` for the home); nil: `~/Uni`. A second
    /// profile under systemd needs one of its own.
    var mountpoint: URL?
    /// Desktop notifications (`notifications`); on unless turned off, sent only with a session bus.
    var notifications = true
    /// At most one notification about new documents per this (`notification_interval`); nil: a minute.
    var notificationInterval: Duration?
    /// Whether saving into a folder Stud.IP lets the user write to uploads (`uploads`, docs/writing.md, "When writing
    /// is on"): off unless the person said yes, since every upload is published to a course.
    var uploads = false
    /// The terms-of-use id sent with an upload (`upload_terms`); nil: the installation's entry for a student's own
    /// work, as the client picks it.
    var uploadTerms: String?

    var databaseURL: URL { paths.database(profile: name) }

    /// `$XDG_DATA_HOME/campusfs/<profile>/`: the store, and with uploads the drafts and the outbox.
    var dataDirectory: URL { databaseURL.deletingLastPathComponent() }

    /// How messages name the server: the university's name, else the URL.
    var serverName: String { university ?? serverURL }

    /// How the client reaches this profile's installation with `credentials`; OAuth2 refreshes go out under the
    /// profile's client id, which the installation registered (a token refreshed under another id is refused).
    func clientConfiguration(_ credentials: Credentials) -> ClientConfiguration {
        var configuration = ClientConfiguration(baseURL: serverURL, api: api.clientAPI, credentials: credentials)
        if let oauth2ClientID { configuration.oauthClientID = oauth2ClientID }
        // Basic that a proxy stops passing on: the form with the same password takes over (docs/login.md).
        configuration.basicFallsBackToWebLogin = login == .basic
        return configuration
    }

    /// The `--profile` option that names this profile in a command to suggest.
    var option: String { " --profile \(name)" }

    /// How the tree names and hides what the server lists, for the daemon's and `campusfs refresh`'s refresher.
    var treeOptions: TreeOptions {
        TreeOptions(courseNameTemplate: courseNameTemplate, hiddenCourseIDs: hiddenCourses)
    }

    /// The semesters the refresher keeps; nil: all.
    var semesterFilter: Set<String>? { semesters.isEmpty ? nil : Set(semesters) }
}

/// How a profile logs in to Stud.IP (`login` in config.toml); `campusfs login` finds out which works.
enum LoginMethod: String, Sendable, CaseIterable, ExpressibleByArgument {
    /// HTTP Basic with the Stud.IP username and password (local and LDAP accounts).
    case basic
    /// Stud.IP's login form and its session cookie: the same account, where Basic does not reach Stud.IP.
    case web
    /// The university's single sign-on (a SAML identity provider's login form).
    case sso
    /// OAuth2 in the browser (Stud.IP 5.2+); tokens, no password.
    case oauth2
}
