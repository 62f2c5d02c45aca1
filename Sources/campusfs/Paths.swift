import Foundation

/// Where CampusFS keeps things (DESIGN.md §1.2), after the XDG base directory specification.
///
/// Setting `XDG_CONFIG_HOME`, `XDG_DATA_HOME`, `XDG_CACHE_HOME`, `XDG_STATE_HOME` and `XDG_RUNTIME_DIR`
/// isolates a run completely (the tests do). Directories are created 0700 when first needed.
struct Paths: Sendable {
    var config: URL
    var data: URL
    var cache: URL
    var state: URL
    var runtime: URL
    var home: URL

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let home = URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory())
        self.home = home
        func directory(_ variable: String, _ fallback: String) -> URL {
            if let value = environment[variable], value.hasPrefix("/") { return URL(fileURLWithPath: value) }
            return home.appendingPathComponent(fallback)
        }
        config = directory("XDG_CONFIG_HOME", ".config").appendingPathComponent("campusfs")
        data = directory("XDG_DATA_HOME", ".local/share").appendingPathComponent("campusfs")
        cache = directory("XDG_CACHE_HOME", ".cache").appendingPathComponent("campusfs")
        state = directory("XDG_STATE_HOME", ".local/state").appendingPathComponent("campusfs")
        let runtimeBase = environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 : nil }
        runtime = URL(fileURLWithPath: runtimeBase ?? NSTemporaryDirectory()).appendingPathComponent("campusfs")
    }

    var configFile: URL { config.appendingPathComponent("config.toml") }

    /// `$XDG_DATA_HOME/campusfs/<profile>/campusfs.sqlite`: the tree and the user's tags, highlights and pins.
    func database(profile: String) -> URL {
        data.appendingPathComponent(profile).appendingPathComponent("campusfs.sqlite")
    }

    /// OAuth2 tokens of a profile (0600), next to the database they belong with.
    func tokens(profile: String) -> URL {
        data.appendingPathComponent(profile).appendingPathComponent("tokens.json")
    }

    /// `$XDG_CACHE_HOME/campusfs/<profile>/`: document blobs; safe to delete while nothing is mounted.
    func cache(profile: String) -> URL {
        cache.appendingPathComponent(profile)
    }

    /// `$XDG_RUNTIME_DIR/campusfs/<profile>.sock`: where a mounted profile's daemon listens.
    func socket(profile: String) -> URL {
        runtime.appendingPathComponent(profile + ".sock")
    }

    /// `$XDG_RUNTIME_DIR/campusfs/<profile>.mount`: which mount a profile's daemon serves (``MountRecord``).
    func mountRecord(profile: String) -> URL {
        runtime.appendingPathComponent(profile + ".mount")
    }

    /// `$XDG_STATE_HOME/campusfs/<profile>.log`: the daemon's log (no secrets, ever).
    func log(profile: String) -> URL {
        state.appendingPathComponent(profile + ".log")
    }

    /// `~/Uni`, where `campusfs mount` mounts without an argument.
    var defaultMountpoint: URL { home.appendingPathComponent("Uni") }

    /// Creates a directory and its missing parents with mode 0700.
    static func ensureDirectory(_ url: URL) throws(CLIError) {
        do {
            try FileManager.default.createDirectory(
                at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw CLIError.other("cannot create \(url.path): \(error.localizedDescription)")
        }
    }
}
