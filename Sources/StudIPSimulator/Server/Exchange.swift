import Foundation

/// One API request as the route handlers see it: already authenticated, path split, query decoded.
public struct SimRequest: Sendable {
    public var method: String
    /// Decoded path segments after the API prefix, e.g. `["users", "me"]` for `…/jsonapi.php/v1/users/me`.
    public var segments: [String]
    /// True when the raw path ended in `/` (JSON:API answers 301).
    public var hasTrailingSlash: Bool = false
    /// Decoded query items in request order.
    public var query: [(name: String, value: String)]
    /// Header names lowercased; values as received (several values of one name joined by ", ").
    public var headers: [String: String]
    public var body: Data
    /// The authenticated user, if any credentials were valid for this API.
    public var user: User?

    public init(
        method: String, segments: [String], query: [(name: String, value: String)] = [],
        headers: [String: String] = [:],
        body: Data = Data(), user: User? = nil, hasTrailingSlash: Bool = false
    ) {
        self.method = method
        self.segments = segments
        self.query = query
        self.headers = headers
        self.body = body
        self.user = user
        self.hasTrailingSlash = hasTrailingSlash
    }

    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }

    public func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// PHP's `SERVER_NAME`: the `Host` header without its port (`localhost` without one).
    var serverName: String {
        guard let host = header("host"), !host.isEmpty else { return "localhost" }
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") { return String(host[...close]) }
        return String(host.split(separator: ":", maxSplits: 1).first ?? "localhost")
    }
}

/// A response before it is written: the server adds latency, faults, bandwidth limits and counting.
public struct SimResponse: Sendable {
    public var status: Int
    /// A custom reason phrase; the standard one when nil.
    public var reason: String?
    /// Headers in emission order; duplicates allowed.
    public var headers: [(String, String)]
    public var body: Body
    /// A stable route name for the request counters, e.g. `jsonapi GET folders/{id}/file-refs`.
    public var route: String

    public enum Body: Sendable {
        case empty
        case bytes(Data)
        /// A document's content, streamed by the server (bandwidth cap, resets and stalls apply): `size` bytes from
        /// `offset` (a range request's part). `documentID` lets the control API report downloads in progress.
        case document(documentID: String, content: Content, size: Int, offset: Int = 0)
    }

    public init(
        status: Int, reason: String? = nil, headers: [(String, String)] = [], body: Body = .empty, route: String
    ) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
        self.route = route
    }

    /// A JSON body encoded the way PHP does (escaped slashes and non-ASCII).
    public static func json(
        _ value: JSON, status: Int = 200, contentType: String, headers: [(String, String)] = [], route: String
    ) -> SimResponse {
        SimResponse(
            status: status,
            headers: headers + [("Content-Type", contentType)],
            body: .bytes(Data(value.encoded().utf8)),
            route: route
        )
    }

    public static func text(
        _ text: String, status: Int, contentType: String = "text/html; charset=UTF-8", headers: [(String, String)] = [],
        route: String
    ) -> SimResponse {
        SimResponse(
            status: status, headers: headers + [("Content-Type", contentType)], body: .bytes(Data(text.utf8)),
            route: route)
    }

    public func header(_ name: String) -> String? {
        headers.last { $0.0.lowercased() == name.lowercased() }?.1
    }
}

/// The Stud.IP release the simulator behaves like. Only real differences between releases are modelled.
public enum Flavour: String, Sendable, CaseIterable {
    /// Stud.IP 5.0: both APIs, neomerx v1 JSON:API layout, the behaviour captured in `fixtures-5.0.7`; no OAuth2.
    case v50 = "5.0"
    /// Stud.IP 5.5: both APIs, neomerx v4 layout (`is-empty`, `is-current`, `meta.count`), OAuth2.
    case v55 = "5.5"
    /// Stud.IP 6.x: JSON:API only (legacy routes answer 404), OAuth2.
    case v6 = "6.x"

    public var hasLegacyREST: Bool { self != .v6 }
    public var hasOAuth2: Bool { self != .v50 }
}

/// What every route handler may use besides the request.
public struct SimContext: Sendable {
    /// A snapshot of the installation taken when the request arrived.
    public var university: University
    public var flavour: Flavour
    /// The installation's path prefix: `""` for a root install, `"/studip"` for `http://host/studip/`.
    public var basePath: String
    /// Absolute URL of the installation (`http://127.0.0.1:PORT` + basePath), for absolute links and avatars.
    public var baseURL: String
    /// Absolute URL of the second listener that hosts documents "elsewhere".
    public var externalBaseURL: String
    /// Applies a change to the live installation (uploads, deletes, download counters).
    public var mutate: @Sendable (_ change: @Sendable (inout University) throws -> Void) throws -> University
    /// The JSON:API content route answers a single `Range` (``SimulatorSettings/contentRanges``).
    public var contentRanges: Bool

    public init(
        university: University, flavour: Flavour, basePath: String, baseURL: String, externalBaseURL: String,
        contentRanges: Bool = false,
        mutate: @escaping @Sendable (_ change: @Sendable (inout University) throws -> Void) throws -> University
    ) {
        self.university = university
        self.flavour = flavour
        self.basePath = basePath
        self.baseURL = baseURL
        self.externalBaseURL = externalBaseURL
        self.contentRanges = contentRanges
        self.mutate = mutate
    }
}

/// One of the simulated APIs (JSON:API, legacy REST, OAuth2 endpoints).
public protocol APIHandler: Sendable {
    func handle(_ request: SimRequest, context: SimContext) async -> SimResponse
}
