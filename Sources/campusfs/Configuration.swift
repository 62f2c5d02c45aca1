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
/// uploads = false                             # saving into writable folders publishes to the course (docs/writing.md)
/// upload_terms = "SELFMADE_NONPUB"            # the terms of use sent with an upload; default: own, unpublished work
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

    /// Reads the file; a missing file is an empty configuration. A broken one is an error that lists every problem
    /// in it (a syntax error stops the reading, so it comes alone), each as `FILE:LINE:COLUMN: what to write`, the
    /// form editors jump to: one edit fixes them all.
    static func load(from url: URL) throws(CLIError) -> ConfigFile {
        guard let text = try text(of: url) else { return ConfigFile() }
        return try parse(text, path: url.path)
    }

    /// `text` as the file at `path` holds it.
    static func parse(_ text: String, path: String) throws(CLIError) -> ConfigFile {
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            let position = (line: error.source.begin.line, column: error.source.begin.column)
            throw ConfigProblem.report([ConfigProblem(position, error.description)], path: path)
        } catch {
            throw .usage("\(path): \(error)")
        }
        let problems = check(table, positions: KeyPositions(text))
        guard problems.isEmpty else { throw ConfigProblem.report(problems, path: path) }
        do {
            return try TOMLDecoder(strictDecoding: true).decode(ConfigFile.self, from: table)
        } catch {
            // `check` found nothing, so the decoder has nothing to object to either.
            throw .usage("\(path): \(error)")
        }
    }

    /// Every problem of the file: unknown keys, wrong types, values no command could use, placeholders left from the
    /// README, and settings that need another one. `ProfileOptions.resolve` relies on these checks.
    private static func check(_ table: TOMLTable, positions: KeyPositions) -> [ConfigProblem] {
        var problems: [ConfigProblem] = []
        func add(_ path: [String], _ message: String) {
            problems.append(ConfigProblem(positions[path], message))
        }
        func wrongType(_ path: [String]) {
            let key = path.last ?? ""
            add(path, "\(path.joined(separator: ".")) must be \(forms[key] ?? "something else")")
        }
        for key in table.keys {
            switch key {
            case "default_profile": if table[key]?.string == nil { wrongType([key]) }
            case "profiles": if table[key]?.table == nil { wrongType([key]) }
            default: add([key], "unknown setting \(key) (typo?)")
            }
        }
        for name in table["profiles"]?.table?.keys ?? [] {
            guard let profile = table["profiles"]?.table?[name]?.table else {
                add(["profiles", name], "profiles.\(name) must be a table, e.g. [profiles.\(name)]")
                continue
            }
            for key in profile.keys {
                let path = ["profiles", name, key]
                let shown = path.joined(separator: ".")
                guard let kind = ProfileSettings.CodingKeys(rawValue: key).map(ProfileSettings.kind) else {
                    add(path, "unknown setting \(shown) (typo?)")
                    continue
                }
                let strings: [String]
                switch kind {
                case .bool:
                    if profile[key]?.bool == nil { wrongType(path) }
                    continue
                case .string:
                    guard let value = profile[key]?.string else {
                        wrongType(path)
                        continue
                    }
                    strings = [value]
                case .strings:
                    let values = profile[key]?.array?.map(\.string) ?? [nil]
                    guard !values.contains(nil) else {
                        wrongType(path)
                        continue
                    }
                    strings = values.compactMap { $0 }
                }
                for value in strings {
                    if value.hasPrefix("<") && value.hasSuffix(">") {
                        add(
                            path,
                            "\(shown) is still the placeholder \"\(value)\" from the README; replace it with a real "
                                + "value: \(forms[key] ?? "")")
                    } else if let valid = ProfileSettings.validators[key], !valid(value) {
                        add(path, "\(shown) must be \(forms[key] ?? "something else"), not \"\(value)\"")
                    }
                }
            }
            let login = profile["login"]?.string
            for (method, needed) in [("sso", "sso_url"), ("oauth2", "oauth2_client_id")]
            where login == method && profile[needed] == nil {
                add(
                    ["profiles", name, "login"],
                    "login = \"\(method)\" needs \(needed) in profiles.\(name): run `campusfs login --profile \(name)`")
            }
        }
        return problems.sorted { ($0.line ?? .max, $0.column ?? .max) < ($1.line ?? .max, $1.column ?? .max) }
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
        "mountpoint": #"absolute or start with ~/, in quotes, e.g. mountpoint = "~/Uni/TU Beispiel""#,
        "cache_limit": #"a size in quotes, e.g. cache_limit = "10G" or "500M""#,
        "refresh_interval": #"a duration of at least 1m in quotes, e.g. refresh_interval = "10m""#,
        "removal_grace": #"a duration in quotes, e.g. removal_grace = "7d""#,
        "refresh_timeout": #"a duration in quotes, e.g. refresh_timeout = "10m""#,
        "language": #""de" or "en" in quotes, e.g. language = "en""#,
        "announcements": "true or false without quotes, e.g. announcements = false",
        "dates": "true or false without quotes, e.g. dates = false",
        "timetable": "true or false without quotes, e.g. timetable = false",
        "notifications": "true or false without quotes, e.g. notifications = false",
        "notification_interval": #"a duration in quotes, e.g. notification_interval = "5m""#,
        "uploads": "true or false without quotes, e.g. uploads = true",
        "upload_terms":
            #"a terms-of-use id of the installation in quotes, e.g. upload_terms = "SELFMADE_NONPUB""#,
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
    var uploads: Bool?
    var uploadTerms: String?

    enum CodingKeys: String, CodingKey {
        case url, university, username, login, api, semesters, language, announcements, dates, timetable, notifications
        case mountpoint, uploads
        case notificationInterval = "notification_interval"
        case uploadTerms = "upload_terms"
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

    /// What each setting holds, for ``ConfigFile``'s checks.
    enum Kind { case string, bool, strings }

    /// The kind of each setting, by its coding key: exhaustive, so a key added there cannot be "unknown" here.
    static func kind(of key: CodingKeys) -> Kind {
        switch key {
        case .ssoAcceptConsent, .announcements, .dates, .timetable, .notifications, .uploads: .bool
        case .semesters, .hiddenCourses: .strings
        case .url, .university, .username, .login, .api, .language, .mountpoint, .notificationInterval, .ssoURL,
            .oauth2ClientID, .passwordCommand, .courseName, .cacheLimit, .refreshInterval, .removalGrace,
            .refreshTimeout, .uploadTerms:
            .string
        }
    }

    /// The string settings only some values of which work; `ProfileOptions.resolve` converts them as these accept.
    static let validators: [String: @Sendable (String) -> Bool] = [
        "url": { ProfileOptions.isServerURL($0) },
        "login": { LoginMethod(rawValue: $0) != nil },
        "api": { ProfileOptions.APIChoice(rawValue: $0) != nil },
        "cache_limit": { ProfileOptions.bytes($0) != nil },
        "refresh_interval": { (ProfileOptions.seconds($0) ?? 0) >= 60 },
        "removal_grace": { ProfileOptions.seconds($0) != nil },
        "refresh_timeout": { ProfileOptions.seconds($0) != nil },
        "notification_interval": { ProfileOptions.seconds($0) != nil },
        "language": { ["de", "en"].contains($0) },
        "mountpoint": { $0 == "~" || $0.hasPrefix("~/") || $0.hasPrefix("/") },
        "upload_terms": { !$0.isEmpty && !$0.contains(where: \.isWhitespace) },
    ]
}

/// One problem in config.toml and where it is (1-based; nil where the key cannot be found, as in an inline table).
struct ConfigProblem: Sendable {
    var line: Int?
    var column: Int?
    var message: String

    init(_ position: (line: Int, column: Int)?, _ message: String) {
        self.line = position?.line
        self.column = position?.column
        self.message = message
    }

    /// One usage error naming the file at `path` in every line.
    static func report(_ problems: [ConfigProblem], path: String) -> CLIError {
        let lines = problems.map { problem in
            let position = problem.line.map { ":\($0):\(problem.column ?? 1)" } ?? ""
            return "\(path)\(position): \(problem.message)"
        }
        guard lines.count > 1 else { return .usage(lines.first ?? path) }
        return .usage("\(path) has \(lines.count) errors:\n" + lines.joined(separator: "\n"))
    }
}

/// Where each key of a TOML text is written: the table headers and `key = value` lines, dotted and quoted keys
/// included. Enough for config.toml's messages; keys in inline tables or multi-line strings are not found.
struct KeyPositions {
    private var positions: [[String]: (line: Int, column: Int)] = [:]

    init(_ text: String) {
        var table: [String] = []
        // `\.isNewline`: a CRLF file's "\r\n" is one Character, which a split at "\n" would never find.
        for (index, line) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let indent = line.prefix { $0 == " " || $0 == "\t" }.count
            let rest = line.dropFirst(indent)
            let position = (line: index + 1, column: indent + 1)
            if rest.hasPrefix("[") {
                let inner = rest.drop { $0 == "[" }
                guard let (keys, after) = Self.keys(inner), after.first == "]" else { continue }
                table = keys
                if positions[keys] == nil { positions[keys] = position }
            } else if let (keys, after) = Self.keys(rest), after.first == "=" {
                if positions[table + keys] == nil { positions[table + keys] = position }
            }
        }
    }

    subscript(path: [String]) -> (line: Int, column: Int)? { positions[path] }

    /// A dotted key at the start of `text` (bare or quoted parts) and what follows it, spaces skipped.
    private static func keys(_ text: Substring) -> ([String], Substring)? {
        var keys: [String] = []
        var rest = text
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" }
            if let quote = rest.first, quote == "\"" || quote == "'" {
                guard let end = rest.dropFirst().firstIndex(of: quote) else { return nil }
                keys.append(String(rest[rest.index(after: rest.startIndex)..<end]))
                rest = rest[rest.index(after: end)...]
            } else {
                let bare = rest.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" }
                guard !bare.isEmpty else { return nil }
                keys.append(String(bare))
                rest = rest.dropFirst(bare.count)
            }
            rest = rest.drop { $0 == " " || $0 == "\t" }
            guard rest.first == "." else { return (keys, rest) }
            rest = rest.dropFirst()
        }
    }
}
