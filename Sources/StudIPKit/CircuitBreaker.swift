import AsyncHelpers
import Foundation
import StudIPModel
import Synchronization

/// When to stop asking a server whose requests keep timing out (``CircuitBreaker``).
public struct BreakerPolicy: Sendable {
    public var timeoutsInARow: Int
    public var pause: Duration

    public init(timeoutsInARow: Int = 4, pause: Duration = .seconds(60)) {
        self.timeoutsInARow = max(1, timeoutsInARow)
        self.pause = pause
    }
}

/// Stops asking a server that has stopped answering. After ``BreakerPolicy/timeoutsInARow`` requests in a row timed
/// out, every request fails at once for ``BreakerPolicy/pause`` with "Stud.IP is not answering" instead of waiting out its own
/// timeout and retries: a stalling server would otherwise hold a refresh for courses × attempts × timeout (40 × 4 ×
/// 30 s = 20 minutes, measured), and every later refresh behind it. Any answer, even an error status, closes it.
final class CircuitBreaker: Sendable {
    private struct State {
        var timeoutsInARow = 0
        var openUntil: ContinuousClock.Instant?
    }

    private let settings: BreakerPolicy
    private let server: String
    private let state = Mutex(State())

    init(_ settings: BreakerPolicy, server: String) {
        self.settings = settings
        self.server = server
    }

    /// Throws while the breaker is open.
    func check() throws(StudIPError) {
        let openUntil = state.withLock { state -> ContinuousClock.Instant? in
            guard let until = state.openUntil else { return nil }
            if until <= .now { state.openUntil = nil }
            return state.openUntil
        }
        guard let openUntil else { return }
        let seconds = max(1, Int((openUntil - .now).seconds))
        throw .unreachable(
            server: server,
            detail: "Stud.IP is not answering (\(settings.timeoutsInARow) requests in a row timed out); "
                + "not asking again for \(seconds) s")
    }

    /// Counts a timed-out request; true when this one opened the breaker.
    func timedOut() -> Bool {
        state.withLock { state in
            state.timeoutsInARow += 1
            guard state.timeoutsInARow >= settings.timeoutsInARow, state.openUntil == nil else { return false }
            state.openUntil = .now + settings.pause
            state.timeoutsInARow = 0
            return true
        }
    }

    /// The server answered.
    func answered() {
        state.withLock { $0.timeoutsInARow = 0 }
    }
}
