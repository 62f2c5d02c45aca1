import Foundation

/// Where CampusFS keeps things (docs/architecture.md, "Paths"), after the XDG base directory specification.
///
/// Setting `XDG_CONFIG_HOME`, `XDG_DATA_HOME`, `XDG_CACHE_HOME`, `XDG_STATE_HOME` and `XDG_RUNTIME_DIR`
/// isolates a run completely (the tests do). Directories are created 0700 when first needed.
///
/// The runtime directory holds the control sockets, which answer for a mount: without `XDG_RUNTIME_DIR` it is
/// `$TMPDIR/campusfs-<uid>` (a shared `/tmp/campusfs` would let another user create it first and stand in for the
/// daemon), and a runtime directory that is not this user's alone is refused (``checkRuntime()``).
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
        runtime =
            runtimeBase.map { URL(fileURLWithPath: $0).appendingPathComponent("campusfs") }
            ?? URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("campusfs-\(getuid())")
    }

    var configFile: URL { config.appendingPathComponent("config.toml") }

    /// `$XDG_DATA_HOME/campusfs/<profile>/campusfs.sqlite`: the tree and the user's tags, highlights and pins.
    func database(profile: String) -> URL {
        data.appendingPathComponent(profile).appendingPathComponent("campusfs.sqlite")
    }

    /// `$XDG_DATA_HOME/campusfs/secrets` (0600): the passwords and tokens of every profile, only where no keyring
    /// (Secret Service) answers.
    var secretsFile: URL { data.appendingPathComponent("secrets") }

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

    /// Refuses a runtime directory another user owns or can write to: whoever can replace a socket there can
    /// answer `status` and `unmount` for the daemon. Missing is fine; `mount` creates it 0700.
    func checkRuntime() throws(CLIError) {
        var info = stat()
        guard lstat(runtime.path, &info) == 0 else { return }
        if info.st_mode & S_IFMT != S_IFDIR {
            throw .other("\(runtime.path) is not a directory; remove it, or set XDG_RUNTIME_DIR")
        }
        if info.st_uid != getuid() {
            throw .other(
                "\(runtime.path) belongs to another user (uid \(info.st_uid)), so its sockets cannot be trusted; "
                    + "set XDG_RUNTIME_DIR to a directory of yours, or have it removed")
        }
        if info.st_mode & 0o077 != 0 {
            throw .other(
                "\(runtime.path) is open to other users (mode \(String(info.st_mode & 0o777, radix: 8))), so its "
                    + "sockets cannot be trusted; `chmod 700 \(runtime.path)` or remove it")
        }
    }

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
