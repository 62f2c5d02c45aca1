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
    private let running = Mutex<Task<Result<Success, Failure>, Never>?>(nil)

    public init() {}

    /// Whether a run is under way.
    public var isRunning: Bool { running.withLock { $0 != nil } }

    /// The result of the run under way, or of `operation`, started now when none is.
    public func run(
        isolation: isolated (any Actor)? = #isolation,
        _ operation: @escaping @Sendable () async throws(Failure) -> Success
    ) async throws(Failure) -> Success {
        let task = running.withLock { current in
            if let current { return current }
            let task = Task { () async -> Result<Success, Failure> in
                do throws(Failure) {
                    return .success(try await operation())
                } catch {
                    return .failure(error)
                }
            }
            current = task
            return task
        }
        let result = await task.value
        running.withLock { if $0 == task { $0 = nil } }
        return try result.get()
    }
}
