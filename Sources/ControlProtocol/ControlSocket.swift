import Foundation
import Glibc
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
package enum ControlSocket {
    package static func connect(_ path: String) throws(ControlSocketError) -> Int32 {
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

    package static func withAddress<T>(
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
    package static func readLine(_ fd: Int32) -> Data? {
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

    package static func writeLine(_ fd: Int32, _ data: Data) {
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
}
