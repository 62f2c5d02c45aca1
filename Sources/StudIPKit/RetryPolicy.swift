/// Retries for transient failures: timeouts, connection resets, 5xx and 429 — never other 4xx.
public struct RetryPolicy: Sendable, Hashable {
    /// Tries per request, the first included (1 = no retries).
    public var attempts: Int
    /// The wait before the first retry; each further retry doubles it, up to `maxDelay`.
    public var baseDelay: Duration
    public var maxDelay: Duration

    public init(attempts: Int = 4, baseDelay: Duration = .milliseconds(250), maxDelay: Duration = .seconds(8)) {
        self.attempts = max(1, attempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// The wait before retry number `retry` (1-based): exponential, then jittered to between half and all of
    /// it, so that many clients failing together do not come back together.
    func delay(beforeRetry retry: Int) -> Duration {
        let exponent = min(max(retry - 1, 0), 30)
        let ceiling = min(baseDelay * (1 << exponent), maxDelay)
        let nanoseconds = ceiling.components.seconds * 1_000_000_000 + ceiling.components.attoseconds / 1_000_000_000
        guard nanoseconds > 0 else { return .zero }
        return .nanoseconds(Int64.random(in: nanoseconds / 2...nanoseconds))
    }
}
