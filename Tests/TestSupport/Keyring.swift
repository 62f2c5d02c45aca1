import Foundation
import Synchronization
import SystemSupport

/// A Secret Service of the tests' own: a session bus (`dbus-run-session`) with an unlocked GNOME Keyring whose files
/// live under a temporary HOME, never a user's keyring. Its unlock password is not empty, so the keyring file on
/// disk is encrypted as a user's is. One per test process (``processWide()``): libsecret only talks to the process's
/// session bus (docs/secrets.md).
public final class KeyringSession: Sendable {
    /// The temporary HOME; the keyring's files are under `data/keyrings`.
    public let directory: URL
    /// What a child (or a `SecretStore`) needs to reach the keyring: `DBUS_SESSION_BUS_ADDRESS` and the session's
    /// HOME and XDG directories.
    public let environment: [String: String]
    /// `dbus-run-session`, whose stdin's end stops it.
    private let child: Mutex<Child?>

    private static let shared = Mutex<Result<KeyringSession, KeyringSessionError>?>(nil)

    private init(directory: URL, environment: [String: String], child: Child) {
        self.directory = directory
        self.environment = environment
        self.child = Mutex(child)
    }

    /// The test process's session, started on first use, with the process's `DBUS_SESSION_BUS_ADDRESS` pointing at
    /// it from then on (for libsecret; children get ``environment``). It ends with the process: its stdin closes.
    public static func processWide() async throws(KeyringSessionError) -> KeyringSession {
        let result = await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(
                    returning: shared.withLock { state in
                        if let state { return state }
                        let started = Result { () throws(KeyringSessionError) in try start() }
                        if case .success(let session) = started {
                            setenv("DBUS_SESSION_BUS_ADDRESS", session.environment["DBUS_SESSION_BUS_ADDRESS"] ?? "", 1)
                        }
                        state = started
                        return started
                    })
            }.start()
        }
        return try result.get()
    }

    /// The secret `secret-tool` (libsecret's command line client, not our code) finds for CampusFS's attributes.
    public func lookup(profile: String, server: String, kind: String) async throws -> String? {
        let arguments = ["lookup", "application", "campusfs", "profile", profile, "server", server, "kind", kind]
        let environment = environment
        let output = try await BlockingPool.shared.run { () throws(SubprocessError) in
            try Subprocess.run(URL(fileURLWithPath: "/usr/bin/secret-tool"), arguments, environment: environment)
        }
        // secret-tool prints the secret as it is (no newline to a pipe), and nothing with status 1 when none.
        return output.status == 0 ? String(decoding: output.stdout, as: UTF8.self) : nil
    }

    /// Starts the bus and the keyring; blocks until the keyring answers.
    private static func start() throws(KeyringSessionError) -> KeyringSession {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("campusfs-keyring-\(UUID())")
        let runtime = directory.appendingPathComponent("run")
        var environment = [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": directory.path,
            "XDG_DATA_HOME": directory.appendingPathComponent("data").path,
            "XDG_CONFIG_HOME": directory.appendingPathComponent("config").path,
            "XDG_CACHE_HOME": directory.appendingPathComponent("cache").path,
            "XDG_RUNTIME_DIR": runtime.path,
        ]
        do {
            try FileManager.default.createDirectory(
                at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw KeyringSessionError(reason: "cannot create \(runtime.path): \(error)")
        }
        // The first line of stdin is the unlock password; the shell then waits for stdin's end (``stop()``, or
        // this process's end), removes the session's HOME, and dbus-run-session ends the bus; the keyring daemon,
        // which daemonizes, leaves with its bus.
        // The script's messages (and the keyring daemon's) go to session.log, read when the session fails.
        let script = """
            exec 2>"$1"
            IFS= read -r password
            printf %s "$password" | gnome-keyring-daemon --unlock --components=secrets >/dev/null || exit 1
            echo "$DBUS_SESSION_BUS_ADDRESS"
            cat >/dev/null
            rm -rf "$HOME"
            """
        let log = directory.appendingPathComponent("session.log")
        let child: Child
        do {
            child = try Subprocess.launch(
                URL(fileURLWithPath: "/usr/bin/dbus-run-session"), ["--", "/bin/sh", "-c", script, "sh", log.path],
                environment: environment, input: .pipe)
            try child.stdin?.write(contentsOf: Data("keyring-unlock-password\n".utf8))
        } catch {
            throw KeyringSessionError(reason: "cannot start dbus-run-session: \(error)")
        }
        var printed = Data()
        while !printed.contains(UInt8(ascii: "\n")) {
            let more = child.stdout.availableData
            if more.isEmpty { break }
            printed.append(more)
        }
        let address = String(decoding: printed, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        environment["DBUS_SESSION_BUS_ADDRESS"] = address
        let session = KeyringSession(directory: directory, environment: environment, child: child)
        guard !address.isEmpty else {
            let messages = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            session.stop()
            throw KeyringSessionError(reason: "the session printed no bus address: \(messages)")
        }
        return session
    }

    /// Ends the session: stdin's end stops the shell, dbus-run-session then stops the bus it started, and the
    /// keyring daemon exits with its bus. Kills nothing by name. Blocks until dbus-run-session is gone.
    public func stop() {
        guard let child = child.withLock({ $0.take() }) else { return }
        try? child.stdin?.close()
        child.reap()
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Why a keyring session could not start.
public struct KeyringSessionError: Error, Sendable, CustomStringConvertible {
    public let reason: String
    public var description: String { "keyring session: \(reason)" }
}
