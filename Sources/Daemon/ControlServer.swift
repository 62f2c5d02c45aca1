import ControlProtocol
import Foundation
import Glibc
import Synchronization
import SystemSupport

/// The daemon's end of the control socket: a Unix stream socket (mode 0600 in a 0700 directory) served by a thread
/// of its own, one short-lived thread per connection, at most ``maxConnections`` at once (more wait in the listen
/// backlog: a thousand idle connections must not become a thousand threads). Requests are rare and small; threads
/// keep them off Swift's cooperative pool, which the filesystem's downloads need.
public final class ControlServer: Sendable {
    public typealias Handler = @Sendable (ControlRequest) async -> ControlResponse

    public let path: String
    private let listener: Int32
    private let stopped = Atomic<Bool>(false)
    /// Connections served at once: a long refresh and a few `status` calls beside it.
    static let maxConnections = 8
    private let slots = DispatchSemaphore(value: maxConnections)

    /// Binds `path`, replacing a stale socket that nobody answers on, and refusing when a daemon answers there.
    /// Requests wait in the listen backlog until ``start(handling:)``.
    public init(path: String) throws(ControlSocketError) {
        self.path = path
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

    /// Starts accepting on a thread of its own, answering each request with `handler`.
    public func start(handling handler: @escaping Handler) {
        let thread = Thread { [self] in acceptLoop(handler) }
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

    private func acceptLoop(_ handler: @escaping Handler) {
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
                serve(connection, handler)
                slots.signal()
            }
            thread.name = "campusfs-control-connection"
            thread.start()
        }
        close(listener)
    }

    private func serve(_ connection: Int32, _ handler: @escaping Handler) {
        defer { close(connection) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let response: ControlResponse
        if let line = ControlSocket.readLine(connection),
            let request = try? ControlCoding.decode(ControlRequest.self, from: line)
        {
            response = Self.await { await handler(request) }
        } else {
            response = .failure("unreadable request on the control socket", exitCode: 4)
        }
        ControlSocket.writeLine(connection, response.encoded())
    }

    /// Runs `body` as a task and blocks this (non-pool) thread until it is done.
    private static func await(_ body: @escaping @Sendable () async -> ControlResponse) -> ControlResponse {
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
