import ArgumentParser
import ContentCache
import ControlProtocol
import Daemon
import Foundation
import MetadataStore
import StudIPKit

/// `campusfs mount`: the profile's tree as a folder, served by a daemon until `campusfs unmount`.
struct MountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mount",
        abstract: "Mount your Stud.IP as a folder (default ~/Uni).",
        discussion: """
            Starts a daemon in the background and returns once the mount is ready, or says why it is not. The first \
            mount of a profile fetches the whole tree first; later ones start from the metadata cache at once, also \
            offline, and refresh in the background. The daemon refreshes every refresh_interval (default 10m), logs to \
            $XDG_STATE_HOME/campusfs/<profile>.log and answers `campusfs status`, `refresh` and `unmount`.

            Under systemd (`systemctl --user enable --now campusfs@PROFILE`, installed by Scripts/install) the \
            foreground daemon speaks the notify protocol: READY=1 once the mount answers, a STATUS= line that \
            `systemctl --user status` shows (online, offline, login needed, the last refresh), STOPPING=1 before it \
            unmounts, and WATCHDOG=1 when the unit sets WatchdogSec=. A mount a crashed daemon left behind is \
            replaced. With a session bus, new documents and a refused login become desktop notifications (profile \
            settings notifications and notification_interval).
            """
                + HelpText.examples(
                    """
                    CAMPUSFS_PASSWORD=… campusfs mount --server https://studip.example.org/studip --username jdoe
                    campusfs mount ~/Uni --profile uni
                    campusfs mount --foreground      # stay attached; Ctrl-C unmounts
                    """))

    @OptionGroup var profile: ProfileOptions

    @Argument(help: "An empty directory to mount on (default: the profile's mountpoint or ~/Uni, created if missing).")
    var mountpoint: String?

    @Flag(help: "Serve in this process instead of a background daemon; Ctrl-C or SIGTERM unmounts.")
    var foreground = false

    @Flag(help: "Never touch the network: browse and open what is cached.")
    var offline = false

    @Option(help: .hidden)
    var readyFD: Int32?

    @Option(help: .hidden)
    var credentialsFD: Int32?

    func run() async throws {
        try await reportingErrors {
            let profile = try profile.resolve()
            if let stale = try MountRecord.replaceStale(profile: profile.name, paths: profile.paths) {
                printError(
                    "campusfs: replacing the mount at \(stale) that a stopped daemon of \"\(profile.name)\" left behind"
                )
            }
            let mountpoint = try Mountpoint.prepare(
                mountpoint, default: profile.mountpoint ?? profile.paths.defaultMountpoint)
            let socket = profile.paths.socket(profile: profile.name)
            if ControlClient.isServing(socket.path) {
                throw CLIError.usage(
                    "profile \"\(profile.name)\" is already mounted (see `campusfs status`); unmount it first")
            }
            for directory in [
                profile.databaseURL.deletingLastPathComponent(), profile.paths.cache(profile: profile.name),
                profile.paths.runtime, profile.paths.state,
            ] {
                try Paths.ensureDirectory(directory)
            }
            // Again after creating it: another user may have made it first.
            try profile.paths.checkRuntime()
            if foreground || readyFD != nil {
                try await serve(profile, at: mountpoint)
            } else {
                let credentials = try await CredentialSource.resolve(profile)
                let warning = try DaemonLauncher.launch(
                    arguments: daemonArguments(mountpoint: mountpoint),
                    credentials: try CredentialPipe.encode(credentials), log: profile.paths.log(profile: profile.name))
                print("mounted \"\(profile.name)\" at \(mountpoint)")
                if let warning {
                    printError("campusfs: \(warning.message)")
                    if warning.exitCode != 0 { throw ExitCode(warning.exitCode) }
                }
            }
        }
    }

    /// This command line again, for the daemon: the same options, an absolute mountpoint, and the pipe to report on.
    private func daemonArguments(mountpoint: String) -> [String] {
        var arguments = [
            "mount", mountpoint, "--ready-fd", String(ReadinessPipe.descriptor), "--credentials-fd",
            String(CredentialPipe.descriptor),
        ]
        let options: [(String, String?)] = [
            ("--profile", profile.profile), ("--server", profile.server), ("--username", profile.username),
            ("--password-command", profile.passwordCommand), ("--api", profile.api?.rawValue),
        ]
        for case (let name, let value?) in options { arguments += [name, value] }
        if offline { arguments.append("--offline") }
        return arguments
    }

    /// The daemon itself: mounts, reports, serves until unmounted.
    private func serve(_ profile: Profile, at mountpoint: String) async throws {
        // Started by `campusfs mount`: leave its session, so the terminal closing does not end the mount.
        if readyFD != nil { setsid() }
        // Started by systemd (`campusfs@.service`): it hears READY=1 once the mount answers.
        let serviceManager = ServiceManager.fromEnvironment()
        do throws(CLIError) {
            let storage = KeyringTokenStorage(profile: profile)
            let credentials: Credentials
            if let credentialsFD {
                credentials = try CredentialPipe.read(credentialsFD).credentials(storage: storage)
            } else {
                credentials = try await CredentialSource.resolve(profile)
            }
            let daemon = try await DaemonRunner.start(
                profile, mountpoint: mountpoint, credentials: credentials, lookup: CredentialSource.lookup(profile),
                tokenStorage: storage, offline: offline, serviceManager: serviceManager)
            let warning = await DaemonRunner.warning(daemon, profile: profile)
            if let readyFD {
                ReadinessPipe.send(.ready(warning: warning), to: readyFD)
            } else {
                printNow("mounted \"\(profile.name)\" at \(mountpoint); Ctrl-C unmounts")
                if let warning { printError("campusfs: \(warning.message)") }
            }
            await daemon.waitUntilUnmounted()
            await DaemonRunner.shutDown(daemon, profile: profile)
        } catch {
            if let readyFD {
                ReadinessPipe.send(.failed(exitCode: error.exitCode, message: error.description), to: readyFD)
            }
            throw error
        }
    }
}

/// Builds a daemon's configuration from a profile and starts it.
enum DaemonRunner {
    static func start(
        _ profile: Profile, mountpoint: String, credentials: Credentials, lookup: ServerLink.CredentialLookup? = nil,
        tokenStorage: (any TokenStorage)? = nil, offline: Bool, serviceManager: ServiceManager? = nil
    ) async throws(CLIError) -> CampusDaemon {
        var configuration = configuration(
            profile, mountpoint: mountpoint, credentials: credentials, lookup: lookup, tokenStorage: tokenStorage,
            offline: offline)
        configuration.serviceManager = serviceManager
        let daemon: CampusDaemon
        do throws(DaemonError) {
            daemon = try await CampusDaemon.start(configuration)
        } catch {
            throw CLIError(exitCode: error.exitCode, "cannot mount at \(mountpoint): \(error)")
        }
        let record = profile.paths.mountRecord(profile: profile.name)
        do throws(CLIError) {
            guard let current = MountRecord.current(profile: profile.name, mountpoint: mountpoint) else {
                throw .other("the mount table does not show \(mountpoint)")
            }
            try current.write(to: record)
        } catch {
            printError(
                "campusfs: \(error); should this daemon be killed, `fusermount3 -u -z \(mountpoint)` detaches its mount"
            )
        }
        return daemon
    }

    /// What a daemon for `profile` is told: its paths, its server, and the profile's settings.
    static func configuration(
        _ profile: Profile, mountpoint: String, credentials: Credentials, lookup: ServerLink.CredentialLookup? = nil,
        tokenStorage: (any TokenStorage)? = nil, offline: Bool
    ) -> DaemonConfiguration {
        var cache = ContentCacheConfiguration()
        if let limit = profile.cacheLimit { cache.sizeLimit = limit }
        var configuration = DaemonConfiguration(
            profile: profile.name, mountpoint: mountpoint, databasePath: profile.databaseURL.path,
            cacheDirectory: profile.paths.cache(profile: profile.name).path,
            socketPath: profile.paths.socket(profile: profile.name).path,
            client: profile.clientConfiguration(credentials),
            tree: profile.treeOptions, semesters: profile.semesterFilter, cache: cache,
            refreshInterval: profile.refreshInterval ?? .seconds(600), offline: offline, credentialLookup: lookup)
        configuration.tokenStorage = tokenStorage
        if let grace = profile.removalGrace { configuration.removalGrace = grace }
        if let timeout = profile.refreshTimeout { configuration.refreshTimeout = timeout }
        configuration.courseFiles = profile.courseFiles
        configuration.loginCommand = "campusfs login" + profile.option
        if profile.uploads {
            configuration.uploads = UploadSettings(
                dataDirectory: profile.dataDirectory.path, terms: profile.uploadTerms)
        }
        if profile.notifications, let bus = ProcessInfo.processInfo.environment["DBUS_SESSION_BUS_ADDRESS"],
            !bus.isEmpty
        {
            configuration.notifications = NotificationSettings(
                busAddress: bus, minimumInterval: profile.notificationInterval ?? .seconds(60))
        }
        return configuration
    }

    /// What `campusfs mount` adds on stderr although the mount works: a mount from the store whose server refuses
    /// the login or is gone (exit 0: the cached tree is all there, but the user should know why documents may not
    /// open). A first mount returns before its courses are read, so a course that cannot be read shows later: its
    /// folder fails to list (`EIO`) and `campusfs status` names it.
    static func warning(
        _ daemon: CampusDaemon, profile: Profile
    ) async -> ReadinessPipe.Warning? {
        let status = await daemon.status()
        switch status.server {
        case .loginNeeded:
            return ReadinessPipe.Warning(
                exitCode: 0,
                message: "Stud.IP at \(status.serverURL) refused the login"
                    + (profile.username.map { " of \($0)" } ?? "")
                    + ": the cached tree is mounted, but documents not downloaded yet cannot open (Permission denied). "
                    + "Run `campusfs login\(profile.option)`, or fix password_command; the mount takes the new login "
                    + "without a remount")
        case .offline:
            return ReadinessPipe.Warning(
                exitCode: 0,
                message: (status.serverDetail ?? "Stud.IP at \(status.serverURL) cannot be reached")
                    + ": the cached tree is mounted and catches up once the server answers")
        case .unknown, .online:
            return nil
        }
    }

    /// Unmounts and stops the daemon, and forgets its mount (``MountRecord``).
    static func shutDown(_ daemon: CampusDaemon, profile: Profile) async {
        await daemon.shutdown()
        try? FileManager.default.removeItem(at: profile.paths.mountRecord(profile: profile.name))
    }
}

/// Checks a mountpoint before anything starts, so the user hears about it in plain words.
enum Mountpoint {
    /// The absolute path to mount on: an existing, empty directory that nothing is mounted on. The default
    /// (`~/Uni`) is created when missing; a named one must exist.
    static func prepare(_ given: String?, default fallback: URL) throws(CLIError) -> String {
        let url = given.map { URL(fileURLWithPath: $0) } ?? fallback
        let path = url.standardizedFileURL.path
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard given == nil else { throw .usage("mountpoint \(path) does not exist: mkdir -p \"\(path)\" first") }
            try Paths.ensureDirectory(url)
            isDirectory = true
        }
        guard isDirectory.boolValue else { throw .usage("mountpoint \(path) is not a directory") }
        if isMounted(path) {
            throw .usage("something is already mounted at \(path); `campusfs unmount \"\(path)\"` first")
        }
        let contents = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        guard contents.isEmpty else {
            let shown = contents.sorted().prefix(3).joined(separator: ", ") + (contents.count > 3 ? ", …" : "")
            let entries = contents.count == 1 ? "its 1 entry" : "its \(contents.count) entries"
            throw .usage("mountpoint \(path) is not empty; mounting would hide \(entries) (\(shown))")
        }
        return path
    }

    /// Whether the kernel's mount table lists `path`.
    static func isMounted(_ path: String) -> Bool {
        MountEntry.table().contains { $0.path == path }
    }
}
