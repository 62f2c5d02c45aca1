import CSpawn
import ControlProtocol
import Foundation
import Glibc
import StudIPKit
import SystemSupport

/// Starts the daemon for `campusfs mount` and waits until it reports the mount ready or failed.
///
/// The daemon is this executable again, started with `posix_spawn` — never `fork` after threads exist (docs/mount.md,
/// "Processes") — with standard input from `/dev/null`, its output appended to the profile's log and no other
/// inherited descriptor but the readiness pipe; it then starts a session of its own (`setsid`), so closing the
/// terminal does not end it. The credentials this command found reach it through a pipe on file descriptor 4 that
/// it reads once (``CredentialPipe``): never on a command line, and never in its environment, which
/// `/proc/<pid>/environ` shows for as long as it runs and every child (`pdftotext`) inherits
/// (``SecretEnvironment`` took `CAMPUSFS_PASSWORD` and `CAMPUSFS_TOKEN` out of this process's at start). It reports on
/// file descriptor 3 with one line: `ok`, or `ok <exit code> <warning>` (mounted, with something to say) or
/// `<exit code> <message>` (``ReadinessPipe``).
enum DaemonLauncher {
    /// How long the first mount of a profile may take: it fetches the whole tree before it is ready.
    static let readinessTimeout: Int32 = 600_000

    /// Returns the daemon's warning, if it mounted with one (the login refused, the server gone, courses missing).
    static func launch(arguments: [String], credentials: Data, log: URL) throws(CLIError) -> ReadinessPipe.Warning? {
        let (readEnd, writeEnd) = try pipeAboveTen()
        defer { close(readEnd) }
        let secret: (readEnd: Int32, writeEnd: Int32)
        do throws(CLIError) {
            secret = try pipeAboveTen()
        } catch {
            close(writeEnd)
            throw error
        }

        // A few hundred bytes: the pipe's buffer takes them before the daemon exists to read them.
        let written = credentials.withUnsafeBytes { bytes in write(secret.writeEnd, bytes.baseAddress, bytes.count) }
        close(secret.writeEnd)
        guard written == credentials.count else {
            close(secret.readEnd)
            close(writeEnd)
            throw .other("cannot hand the credentials to the daemon: \(errnoText())")
        }
        let spawned = Result<pid_t, CLIError> { () throws(CLIError) in
            try spawn(arguments: arguments, readiness: writeEnd, credentials: secret.readEnd, log: log)
        }
        close(writeEnd)
        close(secret.readEnd)
        let pid = try spawned.get()
        let line = readLine(readEnd)
        switch ReadinessPipe.parse(line) {
        case .ready(let warning):
            return warning
        case .failed(let code, let message):
            throw CLIError(exitCode: code, message)
        case nil:
            var status: Int32 = 0
            let exited = waitpid(pid, &status, WNOHANG) == pid
            let detail = exited ? "the daemon exited (status \(status >> 8 & 0xff))" : "the daemon did not report"
            throw .other("\(detail) before the mount was ready; see \(log.path)")
        }
    }

    /// A pipe whose ends are close-on-exec and numbered 10 or above: never 3 or 4 themselves, since dup2 onto the same
    /// number would keep FD_CLOEXEC and the daemon would not see it.
    private static func pipeAboveTen() throws(CLIError) -> (readEnd: Int32, writeEnd: Int32) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw .other("cannot create a pipe: \(errnoText())") }
        let readEnd = fcntl(ends[0], F_DUPFD_CLOEXEC, 10)
        let writeEnd = fcntl(ends[1], F_DUPFD_CLOEXEC, 10)
        close(ends[0])
        close(ends[1])
        guard readEnd >= 0, writeEnd >= 0 else {
            if readEnd >= 0 { close(readEnd) }
            if writeEnd >= 0 { close(writeEnd) }
            throw .other("cannot create a pipe: \(errnoText())")
        }
        return (readEnd, writeEnd)
    }

    private static func spawn(
        arguments: [String], readiness: Int32, credentials: Int32, log: URL
    ) throws(CLIError) -> pid_t {
        let executable = Self.executable
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        posix_spawn_file_actions_init(&actions)
        posix_spawnattr_init(&attributes)
        defer {
            posix_spawn_file_actions_destroy(&actions)
            posix_spawnattr_destroy(&attributes)
        }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log.path, O_WRONLY | O_APPEND | O_CREAT, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_adddup2(&actions, readiness, ReadinessPipe.descriptor)
        posix_spawn_file_actions_adddup2(&actions, credentials, CredentialPipe.descriptor)
        // Nothing else this command inherited crosses over: a pipe of the caller's would stay open for the
        // daemon's lifetime, and `$(campusfs mount)` or a test harness would wait for ever.
        posix_spawn_file_actions_addclosefrom_np(&actions, max(ReadinessPipe.descriptor, CredentialPipe.descriptor) + 1)
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard result == 0 else {
            throw .other("cannot start the daemon \(executable): \(String(cString: strerror(result)))")
        }
        return pid
    }

    /// This program's file, symlinks resolved (`/proc/self/exe`): what the daemon runs, and what `campusfs demo`'s
    /// hints name.
    static var executable: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }

    /// Reads one line, waiting at most ``readinessTimeout``; nil on EOF, error or timeout.
    private static func readLine(_ fd: Int32) -> String? {
        var data = [UInt8]()
        var byte: UInt8 = 0
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        while data.count < 4096 {
            guard let ready = try? systemCall("poll", { poll(&poller, 1, readinessTimeout) }), ready > 0,
                let count = try? systemCall("read", { read(fd, &byte, 1) }), count == 1
            else { return nil }
            if byte == UInt8(ascii: "\n") { break }
            data.append(byte)
        }
        return String(decoding: data, as: UTF8.self)
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }
}

/// The credentials `campusfs mount` found, handed to its daemon: one JSON document (``LoginCredentials``), read once
/// at start until the command closes its end.
enum CredentialPipe {
    static let descriptor: Int32 = 4

    static func encode(_ credentials: Credentials) throws(CLIError) -> Data {
        do {
            return try JSONEncoder().encode(LoginCredentials(credentials))
        } catch {
            throw .other("cannot encode the credentials for the daemon: \(error)")
        }
    }

    /// Reads the credentials and closes the descriptor.
    static func read(_ fd: Int32) throws(CLIError) -> LoginCredentials {
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while data.count < 1 << 20 {
            let count = Glibc.read(fd, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            data.append(contentsOf: buffer[..<count])
        }
        guard let credentials = try? JSONDecoder().decode(LoginCredentials.self, from: data), credentials.isComplete
        else {
            throw .other("the daemon got no credentials from `campusfs mount` (descriptor \(fd))")
        }
        return credentials
    }
}

/// The daemon's one-line report to the command that started it.
enum ReadinessPipe {
    static let descriptor: Int32 = 3

    enum Report: Equatable {
        case ready(warning: Warning?)
        case failed(exitCode: Int32, message: String)
    }

    /// Mounted, but with something the user must hear; `exitCode` is what `campusfs mount` exits with.
    struct Warning: Equatable {
        var exitCode: Int32
        var message: String
    }

    static func parse(_ line: String?) -> Report? {
        guard let line else { return nil }
        if line == "ok" { return .ready(warning: nil) }
        if line.hasPrefix("ok ") {
            let parts = line.dropFirst(3).split(separator: " ", maxSplits: 1)
            guard parts.count == 2, let code = Int32(parts[0]) else { return nil }
            return .ready(warning: Warning(exitCode: code, message: String(parts[1])))
        }
        let parts = line.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, let code = Int32(parts[0]) else { return nil }
        return .failed(exitCode: code, message: String(parts[1]))
    }

    /// Writes the report and closes the descriptor (the command stops waiting).
    static func send(_ report: Report, to fd: Int32) {
        let line: String
        switch report {
        case .ready(nil): line = "ok\n"
        case .ready(let warning?):
            line = "ok \(warning.exitCode) \(warning.message.replacingOccurrences(of: "\n", with: " "))\n"
        case .failed(let code, let message):
            line = "\(code) \(message.replacingOccurrences(of: "\n", with: " "))\n"
        }
        var bytes = Array(line.utf8)
        _ = write(fd, &bytes, bytes.count)
        close(fd)
    }
}

extension CLIError {
    init(exitCode: Int32, _ message: String) {
        switch exitCode {
        case 1: self = .usage(message)
        case 2: self = .auth(message)
        case 3: self = .network(message)
        default: self = .other(message)
        }
    }
}
