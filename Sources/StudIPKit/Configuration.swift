import Foundation
import Logging

/// Everything a ``DocumentSource`` needs to talk to one Stud.IP installation.
public struct ClientConfiguration: Sendable {
    /// Which of Stud.IP's two web APIs to speak.
    public enum API: String, Sendable, CaseIterable {
        /// JSON:API where it answers (4.5+, the only API on 6.x), legacy REST otherwise.
        case auto
        case jsonAPI = "jsonapi"
        case legacyREST = "rest"
    }

    /// The installation's base URL, e.g. `https://host/studip` (`/jsonapi.php/v1` and `/api.php` go below it).
    public var baseURL: String
    public var api: API
    public var credentials: Credentials
    /// Requests in flight at once against this server; Stud.IP servers are shared, so stay polite.
    public var maxConcurrentRequests: Int
    /// Deadline for the response head and the longest silence while the body arrives.
    public var requestTimeout: Duration
    public var retry: RetryPolicy
    /// Most requests one refresh (``DocumentSource/overview()`` and what follows) may send to this server.
    public var requestBudget: Int
    /// Items per page of a collection. Stud.IP has no maximum and slices in memory (API.md §3.4), so large
    /// pages need the fewest requests.
    public var pageSize: Int
    /// JSON:API: list folders on their own to find the documents the user may not download, which the
    /// course-wide document list omits — on 5.1+ each folder for which that list came up short, on 5.0 (no
    /// counts) one folder per course and refresh, in rotation. Off, such documents are absent and a course costs
    /// two requests.
    public var listsRestrictedDocuments: Bool
    /// The OAuth2 client id used to refresh Bearer tokens (registered at `dispatch.php/admin/oauth2`).
    public var oauthClientID: String
    /// `.basic` that the server refuses tries Stud.IP's login form once with the same password, and keeps its
    /// session when that works: a proxy in front of PHP that stops passing `Authorization` on (docs/login.md).
    /// Off, a wrong password costs one request; on, one request and one form login.
    public var basicFallsBackToWebLogin = false
    /// Receives request lines, retries and token refreshes; never credentials.
    public var logger: Logger
    /// Document downloads in flight at once. Separate from ``maxConcurrentRequests``, so a refresh does not
    /// starve an `open` and a long download does not hold up metadata requests.
    public var maxConcurrentDownloads = 4
    public var downloadTimeouts = DownloadTimeouts()
    /// Byte-range requests in flight at once (docs/ranges.md): a limit of their own, so a read out of order never
    /// waits behind the ``maxConcurrentDownloads`` streams.
    public var maxConcurrentRangeRequests = 2
    /// The shortest time between two new logins for `sendfile.php`'s web session after it expired (docs/ranges.md):
    /// a session that keeps ending must not become a login per read.
    public var rangeSessionRenewalInterval: Duration = .seconds(60)
    /// When to stop asking a server whose requests keep timing out (``CircuitBreaker``).
    public var breaker = BreakerPolicy()

    public init(
        baseURL: String, api: API = .auto, credentials: Credentials, maxConcurrentRequests: Int = 4,
        requestTimeout: Duration = .seconds(30), retry: RetryPolicy = RetryPolicy(), requestBudget: Int = 10_000,
        pageSize: Int = 1000, listsRestrictedDocuments: Bool = true, oauthClientID: String = "campusfs",
        logger: Logger = Logger(label: "campusfs.studip")
    ) {
        self.baseURL = baseURL
        self.api = api
        self.credentials = credentials
        self.maxConcurrentRequests = maxConcurrentRequests
        self.requestTimeout = requestTimeout
        self.retry = retry
        self.requestBudget = requestBudget
        self.pageSize = max(1, pageSize)
        self.listsRestrictedDocuments = listsRestrictedDocuments
        self.oauthClientID = oauthClientID
        self.logger = logger
    }
}

/// How the client proves who it is. Descriptions and mirrors never show a secret, so printing, logging or
/// dumping a value (or a configuration holding one) is safe.
public enum Credentials: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// HTTP Basic with a Stud.IP username and password (not for single-sign-on accounts).
    case basic(username: String, password: String)
    /// An OAuth2 access token, usually with its refresh token (Stud.IP 5.2+, JSON:API only). Refreshed tokens
    /// are handed to `storage`, because Stud.IP accepts each refresh token once; without storage they live
    /// only as long as the source.
    case bearer(OAuthTokens, storage: (any TokenStorage)? = nil)
    /// A web session's cookie (e.g. after a Shibboleth login in a browser): the value of Stud.IP 5's
    /// `Seminar_Session`, or `name=value` for another name (Stud.IP 6.0: `Studip_Session`).
    case sessionCookie(String)
    /// Logs in through the web login form (`index.php?again=yes`) and uses the session cookie it sets; logs in
    /// again when the session expires.
    case webLogin(username: String, password: String)
    /// Logs in through the installation's single sign-on (a Shibboleth IdP's SAML form flow), starting at `entry`
    /// (the login page's SSO link, e.g. `{base}/index.php?again=yes&sso=shib`), and uses the Stud.IP session it
    /// ends in; logs in again when the session expires. `acceptsConsent` agrees to the IdP's attribute release
    /// page when it asks; otherwise that page fails the login with ``StudIPError/consentRequired(provider:attributes:)``.
    case singleSignOn(username: String, password: String, entry: String, acceptsConsent: Bool)

    public var description: String {
        switch self {
        case .basic(let username, _): "Basic(\(username), password: <redacted>)"
        case .bearer: "Bearer(<redacted>)"
        case .sessionCookie: "SessionCookie(<redacted>)"
        case .webLogin(let username, _): "WebLogin(\(username), password: <redacted>)"
        case .singleSignOn(let username, _, let entry, _): "SingleSignOn(\(username) at \(entry), password: <redacted>)"
        }
    }

    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [:]) }
}

/// An OAuth2 token pair as Stud.IP's token endpoint issues it.
public struct OAuthTokens: Sendable, Hashable, Codable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    public var accessToken: String
    /// nil when only an access token was given (`CAMPUSFS_TOKEN`): it works until it expires.
    public var refreshToken: String?
    /// When the access token stops working; nil when unknown (then a 401 triggers the refresh).
    public var expiresAt: Date?

    public init(accessToken: String, refreshToken: String?, expiresAt: Date? = nil) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
    }

    public var description: String { "OAuthTokens(<redacted>, expires: \(expiresAt.map(String.init) ?? "unknown"))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["expiresAt": expiresAt as Any]) }
}

/// Where refreshed OAuth2 tokens go (the keyring, a 0600 file). Called after every refresh: the old refresh
/// token is spent by then, so the new pair must survive a restart.
public protocol TokenStorage: Sendable {
    /// Async, because the place may be a D-Bus call away (the keyring) and a refresh must not block a thread of
    /// Swift's cooperative pool while it waits.
    func save(_ tokens: OAuthTokens) async throws
}
