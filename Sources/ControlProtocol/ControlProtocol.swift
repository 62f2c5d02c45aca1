import ContentCache
import Foundation
import MetadataStore
import StudIPKit
import StudIPModel

/// What the `campusfs` command asks a running daemon over its control socket
/// (`$XDG_RUNTIME_DIR/campusfs/<profile>.sock`, docs/mount.md, "Control socket"): one JSON object per line each way,
/// one request per connection.
///
/// ```
/// → {"command":"refresh","path":"WS 2026-27/INF-101 Einführung in die Informatik"}
/// ← {"refresh":{"api":"JSON:API","requests":3,"new":[…],…}}
/// ```
public enum ControlRequest: Codable, Sendable, Hashable {
    case status
    /// Refresh the whole tree (`path` nil or empty) or the courses below `path`.
    case refresh(path: String?)
    /// Unmount and end the daemon.
    case unmount
    /// What the content cache holds and which pins it keeps (`campusfs cache`, and `campusfs pin`'s progress).
    case cache
    /// Remove cached copies below `path` (nil or empty: all) that are not pinned, not open and, with `olderThan`
    /// (seconds), not used for that long (`campusfs cache clean`).
    case cleanCache(path: String?, olderThan: Int64?)
    /// How much of these documents is on disk (`campusfs pin`'s progress line). The command lists the documents
    /// once, so each poll costs the daemon lookups in memory, no store reads.
    case progress(documents: [CacheDocument])
    /// Log in with these credentials from now on (`campusfs login` while mounted).
    case login(credentials: LoginCredentials)
    /// Forget the login (`campusfs logout` while mounted): cached documents stay readable, nothing else is fetched
    /// until the next `campusfs login`.
    case logout
    /// Ask the server now whether the login works (`campusfs login --check` while mounted): the answer is the
    /// status after that request, so a grant revoked since the last request shows at once.
    case checkLogin
    /// How far the search index is; with `rebuild`, drop the extracted text and extract every cached document
    /// again (`campusfs index --rebuild`).
    case index(rebuild: Bool)
    /// The outbox's entries (`campusfs outbox`); an error when uploads are off.
    case outbox
    /// Send failed, unconfirmed and waiting entries again now (`id` nil: all of them).
    case retryOutbox(id: Int64?)
    /// Drop an entry and its bytes (`campusfs outbox discard`, after the person confirmed it).
    case discardOutbox(id: Int64)
    /// Queue an upload (`campusfs upload`); the answer's ``ControlResponse/queued`` is the entry's id.
    case upload(UploadOrder)
    /// Where entry `id` stands: in the outbox (``ControlResponse/outbox``, one item) or how it left
    /// (``ControlResponse/settled``), for `campusfs upload`'s progress.
    case outboxEntry(id: Int64)
}

/// Credentials on their way to a daemon: from `campusfs login` over the control socket (0600 in a 0700 directory),
/// and from `campusfs mount` through a pipe the daemon reads once at start — never in its environment or on its
/// command line, never logged, never written anywhere.
public struct LoginCredentials: Codable, Sendable, Hashable, CustomStringConvertible {
    public enum Method: String, Codable, Sendable {
        case basic, web
        case singleSignOn = "sso"
        case bearer
        case sessionCookie = "session"
    }

    public var method: Method
    public var username: String?
    /// The password, or the session cookie's value.
    public var secret: String?
    /// Where single sign-on starts, and whether its consent page may be accepted.
    public var entry: String?
    public var acceptsConsent: Bool?
    public var tokens: OAuthTokens?

    public init(_ credentials: Credentials) {
        switch credentials {
        case .basic(let username, let password):
            (method, self.username, secret) = (.basic, username, password)
        case .webLogin(let username, let password):
            (method, self.username, secret) = (.web, username, password)
        case .singleSignOn(let username, let password, let entry, let acceptsConsent):
            (method, self.username, secret) = (.singleSignOn, username, password)
            (self.entry, self.acceptsConsent) = (entry, acceptsConsent)
        case .bearer(let tokens, _):
            (method, self.tokens) = (.bearer, tokens)
        case .sessionCookie(let value):
            (method, secret) = (.sessionCookie, value)
        }
    }

    /// Whether the message carries what its method needs (a malformed one must not become an empty password).
    public var isComplete: Bool {
        switch method {
        case .basic, .web: username != nil && secret != nil
        case .singleSignOn: username != nil && secret != nil && entry != nil
        case .bearer: tokens != nil
        case .sessionCookie: secret != nil
        }
    }

    /// The credentials again (check ``isComplete`` first); refreshed OAuth2 tokens go to `storage` (the daemon's
    /// keyring).
    public func credentials(storage: (any TokenStorage)?) -> Credentials {
        let (username, secret) = (username ?? "", secret ?? "")
        switch method {
        case .basic: return .basic(username: username, password: secret)
        case .web: return .webLogin(username: username, password: secret)
        case .singleSignOn:
            return .singleSignOn(
                username: username, password: secret, entry: entry ?? "", acceptsConsent: acceptsConsent ?? false)
        case .bearer:
            return .bearer(tokens ?? OAuthTokens(accessToken: "", refreshToken: nil), storage: storage)
        case .sessionCookie: return .sessionCookie(secret)
        }
    }

    public var description: String { "LoginCredentials(\(method.rawValue), \(username ?? "-"), <redacted>)" }
}

/// The daemon's answer: exactly one of the payloads, or an error a user can act on.
public struct ControlResponse: Codable, Sendable, Hashable {
    public var status: DaemonStatus?
    public var refresh: RefreshOutcome?
    public var cache: CacheReport?
    public var clean: CleanResult?
    public var progress: CacheProgress?
    public var index: IndexStatus?
    public var outbox: [OutboxItem]?
    public var queued: Int64?
    public var settled: OutboxSettlement?
    /// Set when the request failed; `exitCode` as in docs/architecture.md, "Exit codes" (2 login, 3 network, 4 other).
    public var error: String?
    public var exitCode: Int32?

    public init(
        status: DaemonStatus? = nil, refresh: RefreshOutcome? = nil, cache: CacheReport? = nil,
        clean: CleanResult? = nil, progress: CacheProgress? = nil, index: IndexStatus? = nil,
        outbox: [OutboxItem]? = nil, queued: Int64? = nil, settled: OutboxSettlement? = nil, error: String? = nil,
        exitCode: Int32? = nil
    ) {
        self.status = status
        self.refresh = refresh
        self.cache = cache
        self.clean = clean
        self.progress = progress
        self.index = index
        self.outbox = outbox
        self.queued = queued
        self.settled = settled
        self.error = error
        self.exitCode = exitCode
    }

    public static let ok = ControlResponse()

    public static func failure(_ message: String, exitCode: Int32) -> ControlResponse {
        ControlResponse(error: message, exitCode: exitCode)
    }
}

/// `campusfs status` (docs/mount.md, "Control socket").
public struct DaemonStatus: Codable, Sendable, Hashable {
    public enum Server: String, Codable, Sendable {
        /// Not asked yet (`--offline`, or nothing has needed it since the start).
        case unknown
        case online
        case offline
        case loginNeeded = "login needed"
    }

    public var profile: String
    public var mountpoint: String
    public var pid: Int32
    public var serverURL: String
    public var server: Server
    /// The last problem talking to the server, for the user to act on.
    public var serverDetail: String?
    public var api: String?
    public var lastRefresh: Date?
    public var lastRefreshError: String?
    /// Courses the last refresh could not read, each "<title>: <why>"; what the store knew of them stays.
    public var failedCourses: [String]
    public var cacheBytes: Int64
    public var cacheLimit: Int64
    public var cachedDocuments: Int
    public var downloadsInFlight: Int
    /// Set while the cache's disk is so full that each download evicts the other cached documents.
    public var cacheDiskShortage: DiskShortage?
    /// Set while a refresh runs.
    public var refreshing: RefreshProgress?
    /// The search index; nil when it could not be read.
    public var index: IndexStatus?
    /// The outbox's pending and failed operations; nil when uploads are off.
    public var uploads: UploadCounts?

    public init(
        profile: String, mountpoint: String, pid: Int32, serverURL: String, server: Server, serverDetail: String?,
        api: String?, lastRefresh: Date?, lastRefreshError: String?, failedCourses: [String] = [], cacheBytes: Int64,
        cacheLimit: Int64,
        cachedDocuments: Int, downloadsInFlight: Int, cacheDiskShortage: DiskShortage? = nil,
        refreshing: RefreshProgress? = nil, index: IndexStatus? = nil, uploads: UploadCounts? = nil
    ) {
        self.profile = profile
        self.mountpoint = mountpoint
        self.pid = pid
        self.serverURL = serverURL
        self.server = server
        self.serverDetail = serverDetail
        self.api = api
        self.lastRefresh = lastRefresh
        self.lastRefreshError = lastRefreshError
        self.failedCourses = failedCourses
        self.cacheBytes = cacheBytes
        self.cacheLimit = cacheLimit
        self.cachedDocuments = cachedDocuments
        self.downloadsInFlight = downloadsInFlight
        self.cacheDiskShortage = cacheDiskShortage
        self.refreshing = refreshing
        self.index = index
        self.uploads = uploads
    }
}

/// The search index (issue 16) for `campusfs status` and `campusfs index`: documents whose text is searchable,
/// cached documents whose text is not extracted yet, documents whose text could not be extracted, and its size.
public struct IndexStatus: Codable, Sendable, Hashable {
    public var documents: Int
    public var waiting: Int
    public var failed: Int
    public var textBytes: Int64
    /// Measured by `campusfs index` only (it reads every page of the index); nil in `status`.
    public var indexBytes: Int64?

    public init(_ statistics: IndexStatistics, waiting: Int) {
        documents = statistics.documents
        failed = statistics.failed
        textBytes = statistics.textBytes
        indexBytes = statistics.indexBytes
        self.waiting = waiting
    }
}

/// How far a running refresh is: courses read of the courses to read (0 of 0 while the overview loads).
public struct RefreshProgress: Codable, Sendable, Hashable {
    public var done: Int
    public var total: Int

    public init(done: Int, total: Int) {
        self.done = done
        self.total = total
    }
}

/// What a refresh did, as `campusfs refresh` prints it.
public struct RefreshOutcome: Codable, Sendable, Hashable {
    public struct Move: Codable, Sendable, Hashable {
        public var from: String
        public var to: String
    }

    public var api: String
    public var requests: Int
    public var new: [String]
    public var changed: [String]
    public var moved: [Move]
    public var removed: [String]
    public var problems: [String]

    /// A refresh through `api` that sent `requests` and changed `summary`; `failedCourses` could not be read.
    public init(api: String, requests: Int, summary: RefreshSummary, failedCourses: [ItemProblem]) {
        self.api = api
        self.requests = requests
        new = summary.added.map(\.path)
        changed = summary.changed.map(\.path)
        moved = summary.moved.map { Move(from: $0.from, to: $0.to) }
        removed = summary.removed.map(\.path)
        problems = (summary.problems + failedCourses).map(\.description)
    }
}

/// `campusfs cache`: the cache's use and every pin with how much of it is on disk. The daemon builds it from its
/// live cache (downloads in flight count with the bytes they have), the command without a daemon from the cache
/// directory, both with ``init(inventory:pinnedItems:)`` and the store's ``MetadataStore/pinnedItems()``.
public struct CacheReport: Codable, Sendable, Hashable {
    /// A pinned item (as the tree shows it) and the downloadable documents its pin covers.
    public struct Pin: Codable, Sendable, Hashable {
        public var path: String
        public var bytes: Int64
        public var cachedBytes: Int64
        public var documents: Int
        public var cachedDocuments: Int
    }

    public var bytes: Int64
    public var limit: Int64
    public var documents: Int
    public var downloadsInFlight: Int
    public var pins: [Pin]

    /// The cache's `inventory`, with how much of each of `pinnedItems` (``MetadataStore/pinnedItems()``) it holds.
    public init(inventory: CacheInventory, pinnedItems: [(path: String, documents: [DocumentInfo])]) {
        bytes = inventory.bytes
        limit = inventory.limit
        documents = inventory.copies.count
        downloadsInFlight = inventory.downloading.count
        pins = pinnedItems.map { item in
            let documents = item.documents.map { CacheDocument(id: $0.id, version: $0.version) }
            let progress = inventory.progress(of: documents)
            return Pin(
                path: item.path, bytes: documents.reduce(0) { $0 + $1.size }, cachedBytes: progress.cachedBytes,
                documents: documents.count, cachedDocuments: progress.cachedDocuments)
        }
    }
}

extension CleanRequest {
    /// `campusfs cache clean`'s request, with or without a daemon: the store's
    /// ``MetadataStore/cleaningTargets(below:)`` and the command's `--older-than` in seconds.
    public init(_ targets: (below: Set<String>?, pinned: Set<String>), olderThan seconds: Int64?) {
        self.init(documentIDs: targets.below, pinned: targets.pinned, unusedFor: seconds.map { .seconds($0) })
    }
}

extension ControlRequest {
    /// One line of JSON, without the newline.
    public func encoded() -> Data { ControlCoding.encode(self) }
}

extension ControlResponse {
    public func encoded() -> Data { ControlCoding.encode(self) }
}

/// The wire format: JSON, ISO 8601 dates, sorted keys (stable for tests and people reading `socat` output).
package enum ControlCoding {
    package static func encode(_ value: some Encodable) -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Every type here encodes without failing (no floats that could be NaN, no custom encoders).
        return (try? encoder.encode(value)) ?? Data("{}".utf8)
    }

    package static func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(type, from: data)
    }
}
