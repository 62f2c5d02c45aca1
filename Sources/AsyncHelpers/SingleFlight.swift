import Synchronization

/// One run of an operation at a time, shared by everyone who asks while it runs: concurrent requests that meet an
/// expired session share one login (and one use of a refresh token that rotates), concurrent opens share one
/// connection attempt.
///
/// The run is an unstructured task, so a caller that is cancelled stops waiting for nothing: the others still need
/// the result. A failure reaches every caller that joined the run. The run is forgotten by the first caller to hear
/// its result, in that caller's isolation: an actor that applies the result (stores the new token) does so before
/// any other call on it can start another run; the next call after that starts anew.
public final class SingleFlight<Success: Sendable, Failure: Error>: Sendable {
    private let flights = KeyedSingleFlight<SoleRun, Success, Failure>()

    public init() {}

    /// Whether a run is under way.
    public var isRunning: Bool { flights.isRunning(.only) }

    /// The result of the run under way, or of `operation`, started now when none is.
    public func run(
        isolation: isolated (any Actor)? = #isolation,
        _ operation: @escaping @Sendable () async throws(Failure) -> Success
    ) async throws(Failure) -> Success {
        try await flights.run(.only, isolation: isolation, operation)
    }
}

/// The one key of a ``SingleFlight``.
enum SoleRun: Hashable, Sendable { case only }

/// A ``SingleFlight`` per key: one run per key at a time, runs of different keys side by side (a first mount's
/// course fetches: a look into a course whose fetch is under way waits for that fetch).
public final class KeyedSingleFlight<Key: Hashable & Sendable, Success: Sendable, Failure: Error>: Sendable {
    private let running = Mutex<[Key: Task<Result<Success, Failure>, Never>]>([:])

    public init() {}

    /// Whether a run for `key` is under way.
    public func isRunning(_ key: Key) -> Bool { running.withLock { $0[key] != nil } }

    /// The result of the run for `key` under way, or of `operation`, started now when none is.
    public func run(
        _ key: Key, isolation: isolated (any Actor)? = #isolation,
        _ operation: @escaping @Sendable () async throws(Failure) -> Success
    ) async throws(Failure) -> Success {
        let task = running.withLock { running in
            if let current = running[key] { return current }
            let task = Task { () async -> Result<Success, Failure> in
                do throws(Failure) {
                    return .success(try await operation())
                } catch {
                    return .failure(error)
                }
            }
            running[key] = task
            return task
        }
        let result = await task.value
        running.withLock { if $0[key] == task { $0[key] = nil } }
        return try result.get()
    }
}
