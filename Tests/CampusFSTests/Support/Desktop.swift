import Dispatch
import Foundation
import Glibc
import Synchronization
import SystemSupport
import TestSupport

/// The service manager's end of systemd's notify protocol: the datagram socket a daemon's `$NOTIFY_SOCKET` names.
/// A thread reads what the daemon says as it arrives, as systemd does (the socket's queue holds ten messages, and
/// the watchdog's pings would fill it while the test waits for a command), until ``stopReading()``.
final class NotifyListener: Sendable {
    let path: String
    private let directory: String
    private let descriptor: Int32
    private let received = Mutex<[String]>([])
    /// Messages before this index were handed to the test already.
    private let cursor = Mutex(0)
    private let reading = Mutex<DispatchSemaphore?>(nil)

    init() throws {
        directory = try temporaryDirectory("campusfs-notify")
        path = directory + "/notify.sock"
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = Self.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard descriptor >= 0, bound == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        startReading()
    }

    deinit {
        stopReading()
        close(descriptor)
        unlink(path)
        rmdir(directory)
    }

    /// Reads on a thread of its own until ``stopReading()``.
    func startReading() {
        let stopped = DispatchSemaphore(value: 0)
        reading.withLock { $0 = stopped }
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while reading.withLock({ $0 === stopped }) {
                var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 20) == 1 else { continue }
                let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if count >= 0 { received.withLock { $0.append(String(decoding: buffer[..<count], as: UTF8.self)) } }
            }
            stopped.signal()
        }.start()
    }

    /// Stops reading (returns once the thread stopped): the daemon's messages queue up from now on.
    func stopReading() {
        guard
            let stopped = reading.withLock({ reading in
                defer { reading = nil }
                return reading
            })
        else { return }
        stopped.wait()
    }

    /// The messages that arrive within `seconds` that the test was not handed yet.
    func collect(for seconds: Double) async -> [String] {
        try? await Task.sleep(for: .seconds(seconds))
        let all = received.withLock { $0 }
        return cursor.withLock { cursor in
            defer { cursor = all.count }
            return Array(all[min(cursor, all.count)...])
        }
    }

    /// The first message not handed to the test yet that `matches`, waiting up to `timeout` for it; those before it
    /// (the watchdog's pings) are skipped.
    func first(timeout: Double, where matches: (String) -> Bool) async -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let all = received.withLock { $0 }
            let start = cursor.withLock { $0 }
            if let index = all.indices.dropFirst(start).first(where: { matches(all[$0]) }) {
                cursor.withLock { $0 = index + 1 }
                return all[index]
            }
            guard Date() < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Fills the socket's queue from a socket of the test's own, so that the daemon's next waiting send waits until
    /// reading starts again; returns how many messages that took. Call ``stopReading()`` first.
    func fill() -> Int {
        let sender = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        defer { close(sender) }
        var address = Self.address(path)
        var count = 0
        while count < 10_000 {
            let sent = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(
                        sender, "FILL", 4, Int32(MSG_DONTWAIT), $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            guard sent == 4 else { break }
            count += 1
        }
        return count
    }

    private static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        return address
    }
}

/// A D-Bus session bus of the test's own (`dbus-daemon --session`) with a notification server on it
/// (`Tests/Scripts/notification-server`, a real D-Bus service through GIO) that prints each `Notify` call.
final class NotificationServer: Sendable {
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Scripts/notification-server")

    let address: String
    private let bus: Child
    private let server: Child
    private let output: Lines

    private init(address: String, bus: Child, server: Child, output: Lines) {
        self.address = address
        self.bus = bus
        self.server = server
        self.output = output
    }

    /// Why a bus or server did not come up, with what it said on stderr.
    struct StartFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// With `fileManager`, the server also answers `org.freedesktop.FileManager1.ShowFolders` (``shownFolders``).
    static func start(fileManager: Bool = false) async throws -> NotificationServer {
        let bus = try Subprocess.launch(
            URL(fileURLWithPath: "/usr/bin/dbus-daemon"), ["--session", "--nofork", "--print-address=1"])
        let busOutput = Lines(bus.stdout)
        // Generous: the first test of a full run starts its bus while a hundred suites start theirs.
        guard let address = await busOutput.line(where: { $0.hasPrefix("unix:") }, timeout: 60) else {
            throw StartFailure(description: "dbus-daemon printed no address: " + (await stop(bus)))
        }
        let server = try Subprocess.launch(
            script, fileManager ? ["--file-manager"] : [],
            environment: ["DBUS_SESSION_BUS_ADDRESS": address, "PATH": "/usr/bin:/bin"], input: .pipe)
        let output = Lines(server.stdout)
        guard await output.line(where: { $0 == "ready" }, timeout: 60) != nil else {
            let said = await stop(server)
            _ = await stop(bus)
            throw StartFailure(description: "the notification server did not start: " + said)
        }
        return NotificationServer(address: address, bus: bus, server: server, output: output)
    }

    /// Kills `child` and returns what it wrote on stderr.
    private static func stop(_ child: Child) async -> String {
        child.kill(SIGKILL)
        _ = child.reap()
        return String(decoding: await readToEnd(child.stderr), as: UTF8.self)
    }

    /// Every `Notify` call so far: `summary`, `body`, `actions`, `hints`, `id`.
    var notifications: [[String: Any]] {
        output.all.compactMap { line in
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }.filter { $0["summary"] != nil }
    }

    /// The folders `ShowFolders` was asked to show, as file URIs.
    var shownFolders: [String] {
        output.all.compactMap { line in
            ((try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any])?["show"] as? [String]
        }.flatMap { $0 }
    }

    /// Waits until there are `count` notifications (or `timeout` passed) and returns them all.
    func notifications(count: Int, timeout: Double) async -> [[String: Any]] {
        let deadline = Date().addingTimeInterval(timeout)
        while notifications.count < count, Date() < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        return notifications
    }

    /// Clicks action `key` of notification `id`, as a person would.
    func invoke(id: Int, key: String) {
        server.stdin?.write(Data("invoke \(id) \(key)\n".utf8))
    }

    func stop() {
        try? server.stdin?.close()
        for child in [server, bus] {
            child.kill(SIGTERM)
            _ = child.reap()
        }
    }
}

/// A child's output, line by line, read on a thread of its own for as long as the child writes.
private final class Lines: Sendable {
    private let lines = Mutex<[String]>([])

    init(_ handle: FileHandle) {
        Thread { [self] in
            var pending = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { return }
                pending += chunk
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    self.lines.withLock { $0.append(line) }
                    pending = Data(pending[pending.index(after: newline)...])
                }
            }
        }.start()
    }

    var all: [String] { lines.withLock { $0 } }

    func line(where matches: @escaping (String) -> Bool, timeout: Double) async -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let found = all.first(where: matches) { return found }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }
}
