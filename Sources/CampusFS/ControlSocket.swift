import Foundation
import Glibc
import Synchronization
import SystemSupport

/// Why the control socket could not be served or reached.
public enum ControlSocketError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Nothing listens at the path: no daemon runs for this profile.
    case notRunning(path: String)
    /// Another daemon already serves this profile.
    case alreadyRunning(path: String)
    /// `sun_path` holds at most 107 bytes.
    case pathTooLong(String)
    case system(operation: String, path: String, errno: Int32)
    /// The daemon closed the connection or answered something that is not a ``ControlResponse``.
    case badAnswer(path: String)

    public var description: String {
        switch self {
        case .notRunning(let path): "no CampusFS daemon is listening at \(path)"
        case .alreadyRunning(let path): "a CampusFS daemon for this profile is already running (\(path))"
        case .pathTooLong(let path): "the control socket path is too long for a Unix socket: \(path)"
        case .system(let operation, let path, let code):
            "\(operation) \(path) failed: \(String(cString: strerror(code)))"
        case .badAnswer(let path): "the daemon at \(path) gave no usable answer; see its log"
        }
    }
}

/// The daemon's end of the control socket: a Unix stream socket (mode 0600 in a 0700 directory) served by a thread
/// of its own, one short-lived thread per connection, at most ``maxConnections`` at once (more wait in the listen
/// backlog: a thousand idle connections must not become a thousand threads). Requests are rare and small; threads
/// keep them off Swift's cooperative pool, which the filesystem's downloads need.
public final class ControlServer: Sendable {
    public typealias Handler = @Sendable (ControlRequest) async -> ControlResponse

    public let path: String
    private let listener: Int32
    private let handler: Handler
    private let stopped = Atomic<Bool>(false)
    /// Connections served at once: a long refresh and a few `status` calls beside it.
    static let maxConnections = 8
    private let slots = DispatchSemaphore(value: maxConnections)

    /// Binds `path`, replacing a stale socket that nobody answers on, and refusing when a daemon answers there.
    public init(path: String, handler: @escaping Handler) throws(ControlSocketError) {
        self.path = path
        self.handler = handler
        if FileManager.default.fileExists(atPath: path) {
            if let probe = try? ControlSocket.connect(path) {
                close(probe)
                throw .alreadyRunning(path: path)
            }
            unlink(path)
        }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(operation: "socket for", path: path, errno: errno) }
        let previous = umask(0o177)
        defer { umask(previous) }
        do throws(ControlSocketError) {
            try ControlSocket.withAddress(path) { address, length throws(ControlSocketError) in
                guard bind(fd, address, length) == 0 else { throw .system(operation: "bind", path: path, errno: errno) }
            }
            guard listen(fd, 16) == 0 else { throw .system(operation: "listen on", path: path, errno: errno) }
        } catch {
            close(fd)
            throw error
        }
        listener = fd
    }

    /// Starts accepting on a thread of its own.
    public func start() {
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "campusfs-control"
        thread.start()
    }

    /// Stops accepting and removes the socket file. Connections being answered finish.
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        unlink(path)
        // Wakes the accept loop: accept on a shut-down listener fails at once.
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        while !stopped.load(ordering: .acquiring) {
            slots.wait()
            let connection: Int32
            do throws(SystemCallError) {
                connection = try systemCall("accept") { accept(listener, nil, nil) }
            } catch {
                slots.signal()
                if error.errno == ECONNABORTED { continue }
                break
            }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            let thread = Thread { [self] in
                serve(connection)
                slots.signal()
            }
            thread.name = "campusfs-control-connection"
            thread.start()
        }
        close(listener)
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let response: ControlResponse
        if let line = ControlSocket.readLine(connection),
            let request = try? ControlCoding.decode(ControlRequest.self, from: line)
        {
            response = ControlSocket.await { [handler] in await handler(request) }
        } else {
            response = .failure("unreadable request on the control socket", exitCode: 4)
        }
        ControlSocket.writeLine(connection, response.encoded())
    }
}

/// The command's end: one request, one answer.
public enum ControlClient {
    /// Sends `request` to the daemon at `path` and waits for its answer (a refresh may take a while).
    public static func send(_ request: ControlRequest, to path: String) throws(ControlSocketError) -> ControlResponse {
        let fd = try ControlSocket.connect(path)
        defer { close(fd) }
        ControlSocket.writeLine(fd, request.encoded())
        guard let line = ControlSocket.readLine(fd),
            let response = try? ControlCoding.decode(ControlResponse.self, from: line)
        else { throw .badAnswer(path: path) }
        return response
    }

    /// Whether a daemon answers at `path`.
    public static func isServing(_ path: String) -> Bool {
        guard let fd = try? ControlSocket.connect(path) else { return false }
        close(fd)
        return true
    }
}

/// The few socket calls both ends share.
enum ControlSocket {
    static func connect(_ path: String) throws(ControlSocketError) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system(operation: "socket for", path: path, errno: errno) }
        do throws(ControlSocketError) {
            try withAddress(path) { address, length throws(ControlSocketError) in
                guard Glibc.connect(fd, address, length) == 0 else {
                    let code = errno
                    throw code == ENOENT || code == ECONNREFUSED
                        ? .notRunning(path: path) : .system(operation: "connect to", path: path, errno: code)
                }
            }
        } catch {
            close(fd)
            throw error
        }
        return fd
    }

    static func withAddress<T>(
        _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) throws(ControlSocketError) -> T
    ) throws(ControlSocketError) -> T {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { throw .pathTooLong(path) }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result: Result<T, ControlSocketError> = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                do throws(ControlSocketError) {
                    return .success(try body(address, socklen_t(MemoryLayout<sockaddr_un>.size)))
                } catch {
                    return .failure(error)
                }
            }
        }
        return try result.get()
    }

    /// Reads up to the first newline (at most 1 MiB); nil on EOF before one, errors and timeouts.
    static func readLine(_ fd: Int32) -> Data? {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while data.count < 1 << 20 {
            guard
                let count = try? systemCall(
                    "recv", { buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) } }),
                count > 0
            else { return nil }
            let chunk = buffer[0..<count]
            if let newline = chunk.firstIndex(of: UInt8(ascii: "\n")) {
                data.append(contentsOf: chunk[..<newline])
                return data
            }
            data.append(contentsOf: chunk)
        }
        return nil
    }

    static func writeLine(_ fd: Int32, _ data: Data) {
        var bytes = [UInt8](data)
        bytes.append(UInt8(ascii: "\n"))
        var sent = 0
        while sent < bytes.count {
            guard
                let count = try? systemCall(
                    "send",
                    {
                        bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    }),
                count > 0
            else { return }
            sent += count
        }
    }

    /// Runs `body` as a task and blocks this (non-pool) thread until it is done.
    static func await(_ body: @escaping @Sendable () async -> ControlResponse) -> ControlResponse {
        let result = Mutex<ControlResponse?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let value = await body()
            result.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return result.withLock { $0 } ?? .failure("the daemon lost the answer", exitCode: 4)
    }
}
