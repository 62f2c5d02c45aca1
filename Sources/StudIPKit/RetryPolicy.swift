import Logging
import StudIPModel

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
        guard ceiling > .zero else { return .zero }
        return ceiling * Double.random(in: 0.5...1)
    }

    /// 5xx and 429 are worth another try; other 4xx will answer the same again.
    static func isRetryable(status: Int) -> Bool {
        status == 429 || (500...599).contains(status)
    }
}

/// What one try of a request came to, for ``RetryPolicy/run(_:logger:longestRetryAfter:exhausted:attempt:)``.
enum Attempt<Answer: Sendable>: Sendable {
    /// Returned as it is (a body that has started to stream).
    case final(Answer)
    /// An HTTP answer, `answer` as the caller returns it: tried again when its status is worth it and tries are
    /// left, else returned.
    case answered(Answer, HTTPResponse)
    /// A failure worth another try (a timeout, a connection closed early), described for the user.
    case failed(String)
}

extension RetryPolicy {
    /// Tries `attempt` (given its 1-based number) until it comes to an answer not worth retrying or the tries are
    /// used up: then the last answer is returned, or the last failure thrown as `exhausted(detail)`. Waits
    /// ``delay(beforeRetry:)`` between tries, or what a `Retry-After` asks for, up to `maxDelay`; a longer
    /// `Retry-After` than `longestRetryAfter` returns the answer at once (someone waits for it). Logs each retry as
    /// "retrying `label` after …".
    func run<Answer: Sendable>(
        _ label: String, logger: Logger, longestRetryAfter: Duration? = nil,
        exhausted: (String) -> StudIPError, attempt: (Int) async throws(StudIPError) -> Attempt<Answer>
    ) async throws(StudIPError) -> Answer {
        var number = 1
        while true {
            let reason: String
            var delay = delay(beforeRetry: number)
            switch try await attempt(number) {
            case .final(let answer):
                return answer
            case .answered(let answer, let response):
                guard Self.isRetryable(status: response.status), number < attempts else { return answer }
                reason = "HTTP \(response.status)"
                if let advised = response.header("retry-after").flatMap(Int.init), advised >= 0 {
                    if let longestRetryAfter, .seconds(advised) > longestRetryAfter { return answer }
                    delay = min(.seconds(advised), maxDelay)
                }
            case .failed(let detail):
                guard number < attempts else { throw exhausted(detail) }
                reason = detail
            }
            logger.notice(
                "retrying \(label) after \(reason)",
                metadata: ["attempt": "\(number + 1)/\(attempts)", "delay": "\(delay)"])
            do {
                try await Task.sleep(for: delay)
            } catch {
                throw .cancelled
            }
            number += 1
        }
    }
}
