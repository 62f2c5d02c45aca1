import Foundation
import Synchronization

/// The live installation. Handlers read snapshots; the control API and write routes mutate under the lock.
final class UniversityStore: Sendable {
    private let state: Mutex<University>

    init(_ university: University) {
        state = Mutex(university)
    }

    func snapshot() -> University {
        state.withLock { $0 }
    }

    /// Applies `change` atomically; on error nothing changes.
    @discardableResult
    func mutate(_ change: (inout University) throws -> Void) throws -> University {
        try state.withLock { university in
            var copy = university
            try change(&copy)
            university = copy
            return copy
        }
    }
}

/// Knobs a test or benchmark turns at run time through `/__sim/settings`.
public struct SimulatorSettings: Sendable, Equatable {
    /// Added before every API response.
    public var latencyMilliseconds: Int = 0
    /// Cap for each document download; nil = unlimited.
    public var bandwidthBytesPerSecond: Int?
    /// OAuth2 access-token lifetime (Stud.IP: 1 h).
    public var accessTokenLifetimeSeconds: Int = 3600
    /// false models PHP behind FastCGI without `CGIPassAuth`: the `Authorization: Basic` header never reaches
    /// Stud.IP, so Basic authenticates nobody while the web form, cookies and Bearer tokens still work.
    public var basicAuthReachesPHP = true
    /// false: `sendfile.php` ignores `Range` and answers 200 with the whole document, without `Accept-Ranges` and
    /// `Content-Range`, as a server (or a proxy before it) without range support does.
    public var sendfileRanges = true
    /// true: the JSON:API content route answers a single `Range` with `206` and an exact `Content-Range`, as a
    /// Stud.IP newer than 5.0.7 may; false (5.0.7, captured): it ignores `Range` and sends the whole document.
    public var contentRanges = false
    /// false: the host documents hosted elsewhere live on ignores `Range` (200, the whole document), as some
    /// web servers do; true: it answers a single range with `206`, as most do.
    public var externalRanges = true

    public init(
        latencyMilliseconds: Int = 0, bandwidthBytesPerSecond: Int? = nil, accessTokenLifetimeSeconds: Int = 3600,
        basicAuthReachesPHP: Bool = true, sendfileRanges: Bool = true, contentRanges: Bool = false,
        externalRanges: Bool = true
    ) {
        self.latencyMilliseconds = latencyMilliseconds
        self.bandwidthBytesPerSecond = bandwidthBytesPerSecond
        self.accessTokenLifetimeSeconds = accessTokenLifetimeSeconds
        self.basicAuthReachesPHP = basicAuthReachesPHP
        self.sendfileRanges = sendfileRanges
        self.contentRanges = contentRanges
        self.externalRanges = externalRanges
    }
}

/// Request counters and download progress, read by tests through `/__sim/stats`.
final class Statistics: Sendable {
    struct Snapshot: Sendable {
        var total = 0
        var routes: [String: Int] = [:]
        /// Route → body bytes written on the wire for streamed documents (a range answer's part, not the whole).
        var bytesSent: [String: Int] = [:]
        var inFlight = 0
        /// The most API requests handled at the same time since the last reset.
        var maxInFlight = 0
        /// Document id → bytes sent so far, for downloads still being written.
        var downloadsInProgress: [String: Int] = [:]
        /// Document id → downloads that sent their whole body.
        var downloadsCompleted: [String: Int] = [:]
        var externalRequests = 0
        /// Requests to the external host that carried an `Authorization` or `Cookie` header.
        var externalRequestsWithCredentials = 0
    }

    private let state = Mutex(Snapshot())

    func snapshot() -> Snapshot { state.withLock { $0 } }

    func reset() {
        state.withLock { $0 = Snapshot(inFlight: $0.inFlight) }
    }

    /// Brackets the handling of one API request, for `max_in_flight`.
    func requestStarted() {
        state.withLock {
            $0.inFlight += 1
            $0.maxInFlight = max($0.maxInFlight, $0.inFlight)
        }
    }

    func requestEnded() {
        state.withLock { $0.inFlight -= 1 }
    }

    func count(route: String) {
        state.withLock {
            $0.total += 1
            $0.routes[route, default: 0] += 1
        }
    }

    func downloadProgress(_ id: String, route: String, bytes: Int) {
        state.withLock {
            $0.downloadsInProgress[id, default: 0] += bytes
            $0.bytesSent[route, default: 0] += bytes
        }
    }

    func downloadEnded(_ id: String, complete: Bool) {
        state.withLock {
            $0.downloadsInProgress[id] = nil
            if complete { $0.downloadsCompleted[id, default: 0] += 1 }
        }
    }

    func countExternal(withCredentials: Bool) {
        state.withLock {
            $0.externalRequests += 1
            if withCredentials { $0.externalRequestsWithCredentials += 1 }
        }
    }
}
