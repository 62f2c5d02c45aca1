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

    /// A response held back by a fault or paced by the bandwidth cap used to hold the graceful shutdown until a
    /// grace period cancelled the listeners, which may still accept then: the trap above, seen in a full test run
    /// under load. A stop ends the simulator's deliberate waits, so the shutdown needs no cancellation.
    @Test func aStopEndsStalledResponsesWithoutCancellingTheListeners() async throws {
        let settings = SimulatorSettings(bandwidthBytesPerSecond: 64 << 10)
        let sim = try await Simulator.start(SimulatorConfiguration(dataset: .fixtures507, settings: settings))
        let document = "cd5d966516fe50ddfa2579a4f36aef6f"  // 1.5 MB: 23 s at the cap
        sim.faults.add(Fault(action: .stall(milliseconds: 60_000), pathContains: "users/me"))
        let auth = [HTTP.basic("test_autor")]
        let stalled = Task { try? await HTTP.get("\(sim.baseURL)/jsonapi.php/v1/users/me", headers: auth) }
        let paced = Task {
            try? await HTTP.get("\(sim.baseURL)/jsonapi.php/v1/file-refs/\(document)/content", headers: auth)
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let stats = sim.statistics.snapshot()
            if stats.inFlight == 1, (stats.downloadsInProgress[document] ?? 0) > 0 { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        let stats = sim.statistics.snapshot()
        // In flight: the stalled request (a streamed body is counted apart, from its handler's return on).
        try #require(stats.inFlight == 1 && (stats.downloadsInProgress[document] ?? 0) > 0, "both requests wait")
        #expect(await sim.stop() == false, "the stop had to cancel the listeners")
        _ = await (stalled.value, paced.value)
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
