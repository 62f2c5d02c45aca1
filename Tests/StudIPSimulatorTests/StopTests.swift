import Foundation
import Glibc
import Testing

@testable import StudIPSimulator

/// `Simulator.stop()` while clients keep connecting: a Hummingbird server cancelled while it accepts a connection
/// drops that connection's channel unclosed, and NIO traps ("Deinited NIOAsyncWriter without calling finish()"),
/// taking the whole test process with it. A graceful shutdown serves or closes every accepted connection.
@Suite struct StopTests {
    @Test func stoppingWhileClientsConnectEndsCleanly() async throws {
        for _ in 0..<40 {
            let sim = try await Simulator.start(SimulatorConfiguration(dataset: .fixtures507))
            let port = try #require(URLComponents(string: sim.baseURL)?.port)
            let connecting = Thread { Self.connectUntilRefused(port: port) }
            connecting.start()
            try await Task.sleep(for: .milliseconds(20))
            await sim.stop()
        }
    }

    /// Opens and closes TCP connections to 127.0.0.1:`port` until one is refused (the listener is gone).
    private static func connectUntilRefused(port: Int) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        for _ in 0..<10_000 {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { return }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            close(descriptor)
            if connected != 0 { return }
        }
    }
}
