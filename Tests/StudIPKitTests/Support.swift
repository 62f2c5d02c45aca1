import Foundation
import Logging
import StudIPKit
import StudIPModel
import TestSupport
import Testing

@testable import StudIPSimulator

/// Client configurations and typed errors for the tests; simulators and sources come from TestSupport's
/// `withSimulator`/`withSource`, which always shut them down.
enum Harness {
    static let password = "testing"

    /// Retries fast enough for tests; the policy's shape is what is being tested, not its delays.
    static let quickRetry = RetryPolicy(attempts: 4, baseDelay: .milliseconds(5), maxDelay: .milliseconds(40))

    static func configuration(
        _ sim: Simulator, user: String = "test_autor", password: String = Harness.password,
        api: ClientConfiguration.API = .auto, credentials: Credentials? = nil, logger: Logger? = nil
    ) -> ClientConfiguration {
        var configuration = ClientConfiguration(
            baseURL: sim.baseURL, api: api, credentials: credentials ?? .basic(username: user, password: password),
            retry: quickRetry)
        if let logger { configuration.logger = logger }
        return configuration
    }

    /// The typed error `body` throws, or nil when it succeeds.
    static func error<T>(_ body: () async throws(StudIPError) -> T) async -> StudIPError? {
        do {
            _ = try await body()
            return nil
        } catch {
            return error
        }
    }
}

extension Simulator {
    /// Requests the simulator served since the last reset (`GET /__sim/stats` → `total`).
    var served: Int { statistics.snapshot().total }
    var maxInFlight: Int { statistics.snapshot().maxInFlight }
    func resetStatistics() { statistics.reset() }
    func inject(_ fault: Fault) { faults.add(fault) }
    func clearFaults() { faults.clear() }
    func change(_ update: @escaping (inout SimulatorSettings) -> Void) { _ = settings.update(update) }
}

extension LogCapture {
    /// Requests the transport sent again after a transient failure (it logs each one). A loaded machine makes
    /// them happen; request-count assertions add them instead of assuming none.
    var retries: Int { count(containing: "retrying ") }
}
