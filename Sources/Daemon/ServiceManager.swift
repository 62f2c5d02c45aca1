import Foundation
import Glibc
import SystemSupport

/// systemd's notify protocol (`sd_notify(3)`), which a `Type=notify` unit waits for: one datagram of `KEY=value`
/// lines to the socket named in `$NOTIFY_SOCKET` (a path, or `@name` in the abstract namespace). Written out rather
/// than linking libsystemd: it is a `sendto`. The daemon says `READY=1` once its mount answers, `STATUS=` when its
/// state changes, `STOPPING=1` before it unmounts and `WATCHDOG=1` while it is alive (``watchdogInterval``).
public final class ServiceManager: Sendable {
    private let descriptor: Int32
    private let address: sockaddr_un
    private let addressLength: socklen_t
    /// How often `WATCHDOG=1` goes out: half the unit's `WatchdogSec=`; nil when the unit has no watchdog.
    public let watchdogInterval: Duration?
    /// How long a message that must arrive (``send(_:waiting:)``) may wait for a full socket queue.
    static let patience = timeval(tv_sec: 5, tv_usec: 0)

    /// The manager that started this process, from `$NOTIFY_SOCKET` and `$WATCHDOG_USEC`; nil when none did (or
    /// the socket cannot be made). Takes the variables out of the environment, as `sd_notify` does when asked to:
    /// the daemon's children (pdftotext, a password command) must not speak for it. Call it before other threads
    /// read the environment.
    public static func fromEnvironment() -> ServiceManager? {
        func variable(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
        let path = variable("NOTIFY_SOCKET")
        var watchdog: Duration?
        if let microseconds = variable("WATCHDOG_USEC").flatMap(Int64.init), microseconds > 0,
            variable("WATCHDOG_PID").flatMap(Int32.init).map({ $0 == getpid() }) ?? true
        {
            watchdog = .microseconds(microseconds / 2)
        }
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] { unsetenv(name) }
        guard let path, !path.isEmpty else { return nil }
        return ServiceManager(socket: path, watchdogInterval: watchdog)
    }

    /// A manager listening at `socket`; nil when the name does not fit a socket address or no socket can be made.
    public init?(socket path: String, watchdogInterval: Duration? = nil) {
        var name = Array(path.utf8)
        if name.first == UInt8(ascii: "@") { name[0] = 0 }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        guard name.count < MemoryLayout.size(ofValue: address.sun_path) else { return nil }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: name) }
        let descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var patience = Self.patience
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &patience, socklen_t(MemoryLayout<timeval>.size))
        self.descriptor = descriptor
        self.address = address
        addressLength = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path) ?? 2) + socklen_t(name.count)
        self.watchdogInterval = watchdogInterval
    }

    deinit { close(descriptor) }

    /// A `STATUS=` line: the text's control characters (a newline in a server's error, a mountpoint's name) become
    /// spaces, so no text can add a line of its own (`MAINPID=`, `WATCHDOG=trigger`) to the message.
    public static func status(_ text: String) -> String {
        "STATUS="
            + String(
                String.UnicodeScalarView(
                    text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : $0 }))
    }

    /// Sends `message` (`KEY=value` lines). Never blocks unless `waiting`: then it waits up to 5 s for room in the
    /// manager's queue — for the messages that must arrive before what follows them (`STOPPING=1`), sent from a
    /// thread that may block. Returns whether the manager got it.
    @discardableResult
    public func send(_ message: String, waiting: Bool = false) -> Bool {
        let bytes = Array(message.utf8)
        var address = address
        let flags = Int32(MSG_NOSIGNAL) | (waiting ? 0 : Int32(MSG_DONTWAIT))
        let sent = try? systemCall("sendto") {
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    sendto(descriptor, bytes, bytes.count, flags, socketAddress, addressLength)
                }
            }
        }
        return sent == bytes.count
    }
}
