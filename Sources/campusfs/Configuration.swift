import Foundation
import TOMLKit

/// `config.toml`: named profiles, one per Stud.IP account.
///
/// ```toml
/// default_profile = "uni"
///
/// [profiles.uni]
/// url = "https://studip.example.org/studip"   # the installation's base URL
/// university = "Universität Beispiel"         # how messages name it (`campusfs login` writes it)
/// username = "jdoe"
/// login = "basic"                             # basic | web | sso | oauth2 (`campusfs login` finds out)
/// sso_url = "https://…/index.php?again=yes&sso=shib"   # where single sign-on starts (login = "sso")
/// sso_accept_consent = true                   # the identity provider may release attributes at every login
/// oauth2_client_id = "12"                     # the installation's client id for CampusFS (login = "oauth2")
/// api = "auto"                                # auto | jsonapi | rest
/// password_command = "pass show studip"       # else the keyring, CAMPUSFS_PASSWORD, or CAMPUSFS_TOKEN
/// semesters = ["WS 2026/27"]                  # titles or ids; empty or missing: all
/// hidden_courses = ["<course id>"]
/// course_name = "{number} {title}"
/// mountpoint = "~/Uni"                        # where `campusfs mount` (and campusfs@uni.service) mounts
/// language = "de"                             # de | en: names of the generated files (Ankündigungen, Termine.ics)
/// announcements = true                        # a course's announcements as Markdown files
/// dates = true                                # a course's dates as Termine.ics
/// timetable = true                            # a semester's timetable as Stundenplan.ics
/// notifications = true                        # desktop notifications about new documents and a refused login
/// notification_interval = "1m"                # at most one notification about new documents per interval
/// ```
struct ConfigFile: Decodable, Sendable {
    var defaultProfile: String?
    var profiles: [String: ProfileSettings] = [:]

    enum CodingKeys: String, CodingKey {
        case defaultProfile = "default_profile"
        case profiles
    }

    init() {}

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        defaultProfile = try container.decodeIfPresent(String.self, forKey: .defaultProfile)
        profiles = try container.decodeIfPresent([String: ProfileSettings].self, forKey: .profiles) ?? [:]
    }

    /// Reads the file; a missing file is an empty configuration, a broken one an error naming line and column.
    static func load(from url: URL) throws(CLIError) -> ConfigFile {
        guard let text = try text(of: url) else { return ConfigFile() }
        let file: ConfigFile
        do {
            file = try TOMLDecoder(strictDecoding: true).decode(ConfigFile.self, from: text)
        } catch let error as TOMLParseError {
            throw .usage("\(url.path): \(error.description) (\(error.source.begin.debugDescription))")
        } catch let error as UnexpectedKeysError {
            let keys = error.keys.values.map { $0.map(\.stringValue).joined(separator: ".") }.sorted()
            throw .usage("\(url.path): unknown setting \(keys.joined(separator: ", ")) (typo?)")
        } catch DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.keyNotFound(_, let context)
        {
            let path = context.codingPath.map(\.stringValue)
            guard let key = path.last(where: { forms[$0] != nil }), let form = forms[key] else {
                throw .usage("\(url.path): \(path.joined(separator: ".")) has the wrong type")
            }
            let shown = path.prefix { $0 != key }.joined(separator: ".")
            throw .usage("\(url.path): \(shown.isEmpty ? "" : shown + ".")\(key) must be \(form)")
        } catch {
            throw .usage("\(url.path): \(error)")
        }
        for (name, settings) in file.profiles.sorted(by: { $0.key < $1.key }) {
            for (key, value) in settings.values where value.hasPrefix("<") && value.hasSuffix(">") {
                throw .usage(
                    "\(url.path): profiles.\(name).\(key) is still the placeholder \"\(value)\" from the README; "
                        + "replace it with a real value: \(forms[key] ?? "")")
            }
        }
        return file
    }

    /// The file's text; nil when there is no file. One that cannot be read (permissions, not UTF-8) is an error, never
    /// an empty configuration: `campusfs login` would otherwise write a new file over the person's.
    static func text(of url: URL) throws(CLIError) -> String? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw .usage("\(url.path) cannot be read (permissions?); fix it or move it away")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw .usage("\(url.path) is not UTF-8 text; save it as UTF-8 (e.g. `iconv -f latin1 -t utf-8`)")
        }
        return text
    }

    /// What each setting must look like, with an example, for messages about a wrong value.
    static let forms: [String: String] = [
        "default_profile": #"a profile name in quotes, e.g. default_profile = "uni""#,
        "profiles": "tables, one per profile, e.g. [profiles.uni]",
        "url": #"the installation's base URL in quotes, e.g. url = "https://studip.example.org/studip""#,
        "username": #"a string in quotes, e.g. username = "jdoe""#,
        "university": #"a name in quotes, e.g. university = "Universität Beispiel""#,
        "login": #"one of "basic", "web", "sso" or "oauth2" in quotes, e.g. login = "basic""#,
        "sso_url":
            #"the address single sign-on starts at, e.g. sso_url = "https://studip.example.org/index.php?again=yes&sso=shib""#,
        "oauth2_client_id": #"the client id in quotes, e.g. oauth2_client_id = "12""#,
        "sso_accept_consent": "true or false without quotes, e.g. sso_accept_consent = true",
        "api": #"one of "auto", "jsonapi" or "rest" in quotes, e.g. api = "auto""#,
        "password_command": #"a command in quotes, e.g. password_command = "pass show studip""#,
        "semesters": #"a list of semester titles or ids, e.g. semesters = ["WS 2026/27"]"#,
        "hidden_courses":
            #"a list of course ids, e.g. hidden_courses = ["1fafd4798ef2af4ee2860238232af98f"] "#
            + "(a course folder's user.campusfs.id)",
        "course_name": #"a template in quotes, e.g. course_name = "{number} {title}""#,
        "mountpoint": #"a directory in quotes, e.g. mountpoint = "~/Uni/TU Beispiel""#,
        "cache_limit": #"a size in quotes, e.g. cache_limit = "10G""#,
        "refresh_interval": #"a duration in quotes, e.g. refresh_interval = "10m""#,
        "removal_grace": #"a duration in quotes, e.g. removal_grace = "7d""#,
        "refresh_timeout": #"a duration in quotes, e.g. refresh_timeout = "10m""#,
        "language": #""de" or "en" in quotes, e.g. language = "en""#,
        "announcements": "true or false without quotes, e.g. announcements = false",
        "dates": "true or false without quotes, e.g. dates = false",
        "timetable": "true or false without quotes, e.g. timetable = false",
        "notifications": "true or false without quotes, e.g. notifications = false",
        "notification_interval": #"a duration in quotes, e.g. notification_interval = "5m""#,
    ]
}

/// One profile's settings as written in the file; every field optional, command-line options win.
struct ProfileSettings: Decodable, Sendable {
    var url: String?
    var university: String?
    var username: String?
    var login: String?
    var ssoURL: String?
    var oauth2ClientID: String?
    var ssoAcceptConsent: Bool?
    var api: String?
    var passwordCommand: String?
    var semesters: [String]?
    var hiddenCourses: [String]?
    var courseName: String?
    var mountpoint: String?
    var cacheLimit: String?
    var refreshInterval: String?
    var removalGrace: String?
    var refreshTimeout: String?
    var language: String?
    var announcements: Bool?
    var dates: Bool?
    var timetable: Bool?
    var notifications: Bool?
    var notificationInterval: String?

    enum CodingKeys: String, CodingKey {
        case url, university, username, login, api, semesters, language, announcements, dates, timetable, notifications
        case mountpoint
        case notificationInterval = "notification_interval"
        case ssoURL = "sso_url"
        case oauth2ClientID = "oauth2_client_id"
        case ssoAcceptConsent = "sso_accept_consent"
        case passwordCommand = "password_command"
        case hiddenCourses = "hidden_courses"
        case courseName = "course_name"
        case cacheLimit = "cache_limit"
        case refreshInterval = "refresh_interval"
        case removalGrace = "removal_grace"
        case refreshTimeout = "refresh_timeout"
    }

    /// Every string set, with its key, so that all are checked alike.
    var values: [(key: String, value: String)] {
        let single: [(CodingKeys, String?)] = [
            (.url, url), (.university, university), (.username, username), (.login, login), (.ssoURL, ssoURL),
            (.oauth2ClientID, oauth2ClientID), (.api, api), (.passwordCommand, passwordCommand),
            (.courseName, courseName), (.cacheLimit, cacheLimit), (.refreshInterval, refreshInterval),
            (.removalGrace, removalGrace), (.refreshTimeout, refreshTimeout), (.language, language),
            (.notificationInterval, notificationInterval), (.mountpoint, mountpoint),
        ]
        let lists: [(CodingKeys, [String]?)] = [(.semesters, semesters), (.hiddenCourses, hiddenCourses)]
        return single.compactMap { key, value in value.map { (key: key.rawValue, value: $0) } }
            + lists.flatMap { key, values in (values ?? []).map { (key: key.rawValue, value: $0) } }
    }
}
