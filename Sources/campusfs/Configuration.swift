import Foundation
import TOMLKit

/// `config.toml`: named profiles, one per Stud.IP account.
///
/// ```toml
/// default_profile = "uni"
///
/// [profiles.uni]
/// url = "https://studip.example.org/studip"   # the installation's base URL
/// username = "jdoe"
/// api = "auto"                                # auto | jsonapi | rest
/// password_command = "pass show studip"       # or CAMPUSFS_PASSWORD, or CAMPUSFS_TOKEN for OAuth2
/// semesters = ["WS 2026/27"]                  # titles or ids; empty or missing: all
/// hidden_courses = ["<course id>"]
/// course_name = "{number} {title}"
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
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return ConfigFile() }
        do {
            return try TOMLDecoder(strictDecoding: true).decode(ConfigFile.self, from: text)
        } catch let error as TOMLParseError {
            throw .usage("\(url.path): \(error.description) (\(error.source.begin.debugDescription))")
        } catch let error as UnexpectedKeysError {
            let keys = error.keys.values.map { $0.map(\.stringValue).joined(separator: ".") }.sorted()
            throw .usage("\(url.path): unknown setting \(keys.joined(separator: ", ")) (typo?)")
        } catch {
            throw .usage("\(url.path): \(error)")
        }
    }
}

/// One profile's settings as written in the file; every field optional, command-line options win.
struct ProfileSettings: Decodable, Sendable {
    var url: String?
    var username: String?
    var api: String?
    var passwordCommand: String?
    var semesters: [String]?
    var hiddenCourses: [String]?
    var courseName: String?
    var cacheLimit: String?
    var refreshInterval: String?

    enum CodingKeys: String, CodingKey {
        case url, username, api, semesters
        case passwordCommand = "password_command"
        case hiddenCourses = "hidden_courses"
        case courseName = "course_name"
        case cacheLimit = "cache_limit"
        case refreshInterval = "refresh_interval"
    }
}
