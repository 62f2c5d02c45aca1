import Foundation
import Synchronization

/// A misbehaviour the simulator injects into matching API requests, set through `POST /__sim/faults`.
///
/// `share` is applied deterministically (every request whose running count crosses a multiple of 1/share is hit),
/// so a test asking for 50 % failures gets exactly every second matching request, not a random number.
public struct Fault: Sendable, Equatable {
    public enum Action: Sendable, Equatable {
        /// Answer with this status code (and the API's error body) instead of handling the request.
        case status(Int)
        /// Answer 429 Too Many Requests with `Retry-After: seconds`, as a rate-limiting proxy in front of Stud.IP does.
        case rateLimited(retryAfterSeconds: Int)
        /// Send the response head and this many body bytes, then close the connection.
        case resetAfterBytes(Int)
        /// Wait this long before answering (the client's timeout should fire first).
        case stall(milliseconds: Int)
        /// Send the response head and this many body bytes, then go silent for `milliseconds` (a stall mid-body).
        case stallAfterBytes(Int, milliseconds: Int)
        /// Answer 200 with this body and the API's content type (HTML for the web routes): malformed or truncated data
        /// from a "working" server.
        case body(String)
        /// Handle the request, then set these response headers (replacing those of the same name): a proxy or a
        /// server bug that sends a wrong `Content-Range`, say.
        case headers([String: String])
    }

    public var action: Action
    /// Only requests whose path (below the installation) contains this text; nil matches all API requests.
    public var pathContains: String?
    /// Only requests with this method; nil matches all.
    public var method: String?
    /// How many matching requests to hit; nil = until cleared.
    public var remaining: Int?
    /// Fraction of matching requests to hit (0 < share ≤ 1).
    public var share: Double = 1

    var matched = 0

    public init(
        action: Action, pathContains: String? = nil, method: String? = nil, remaining: Int? = nil, share: Double = 1
    ) {
        self.action = action
        self.pathContains = pathContains
        self.method = method
        self.remaining = remaining
        self.share = share
    }
}

final class FaultInjector: Sendable {
    private let faults = Mutex<[Fault]>([])

    func add(_ fault: Fault) {
        faults.withLock { $0.append(fault) }
    }

    func clear() {
        faults.withLock { $0.removeAll() }
    }

    func active() -> [Fault] {
        faults.withLock { $0 }
    }

    /// The first fault that hits this request, consuming one of its `remaining` uses.
    func fault(forPath path: String, method: String) -> Fault.Action? {
        faults.withLock { faults in
            for index in faults.indices {
                var fault = faults[index]
                if let needle = fault.pathContains, !path.contains(needle) { continue }
                if let wanted = fault.method, wanted.uppercased() != method { continue }
                fault.matched += 1
                let hits = Int((Double(fault.matched) * fault.share).rounded(.down))
                let previousHits = Int((Double(fault.matched - 1) * fault.share).rounded(.down))
                faults[index] = fault
                guard hits > previousHits else { continue }
                if let remaining = fault.remaining {
                    if remaining <= 1 {
                        faults.remove(at: index)
                    } else {
                        faults[index].remaining = remaining - 1
                    }
                }
                return fault.action
            }
            return nil
        }
    }
}
