import StudIPKit
import StudIPSimulator

/// Runs `body` against a fresh simulator and awaits its `stop()` afterwards, also when `body` throws: a stop left
/// to an unawaited task outlives the test and keeps its port and threads busy while the next tests run.
public func withSimulator<T: Sendable>(
    _ dataset: Dataset = .fixtures507, flavour: Flavour = .v50, settings: SimulatorSettings = SimulatorSettings(),
    basePath: String = "", _ body: (Simulator) async throws -> T
) async throws -> T {
    try await withSimulator(
        Simulator.start(
            SimulatorConfiguration(dataset: dataset, flavour: flavour, basePath: basePath, settings: settings)),
        body)
}

/// Runs `body` against `sim`, a simulator the caller just started, and awaits its `stop()` afterwards.
public func withSimulator<T: Sendable>(_ sim: Simulator, _ body: (Simulator) async throws -> T) async throws -> T {
    do {
        let result = try await body(sim)
        await sim.stop()
        return result
    } catch {
        await sim.stop()
        throw error
    }
}

/// Connects a source, runs `body`, and awaits the source's shutdown, also when `body` throws.
public func withSource<T: Sendable>(
    _ configuration: ClientConfiguration, _ body: (any DocumentSource) async throws -> T
) async throws -> T {
    let source = try await StudIP.connect(configuration)
    do {
        let result = try await body(source)
        await source.shutdown()
        return result
    } catch {
        await source.shutdown()
        throw error
    }
}
