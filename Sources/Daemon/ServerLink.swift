import AsyncHelpers
import ControlProtocol
import Foundation
import StudIPKit
import StudIPModel
import Synchronization

/// The daemon's way to Stud.IP. It connects on first use, not at start, so a daemon started offline mounts from the
/// store and comes online by itself the first time the server answers again; and it remembers how the last
/// exchange went, for `campusfs status`.
///
/// ## Logins
/// Credentials are looked up at every (re)connection (``CredentialLookup``), so a changed `password_command` output
/// reaches a running daemon, and `campusfs login` can hand over new ones (``use(_:)``). A login the server refused is
/// never sent again on a person's behalf: opens fail at once with "login needed" (EACCES) instead of asking with
/// the same password — LDAP-backed installations lock accounts after a few failed attempts. Only a refresh (the
/// poller's or `campusfs refresh`) tries the refused login again, and new credentials are tried at once.
public actor ServerLink: DocumentDownloader {
    /// Finds the credentials to log in with now: `password_command`'s current output, say. Runs off the
    /// cooperative pool if it blocks.
    public typealias CredentialLookup = @Sendable () async throws(CredentialsUnavailable) -> Credentials

    public let configuration: ClientConfiguration
    private var source: (any DocumentSource)?
    /// The credentials `source` logged in with, or the ones being tried.
    private var credentials: Credentials
    /// Credentials the server refused since the last successful exchange.
    private var refused: [Credentials] = []
    /// Given by `campusfs login` while mounted; take precedence over `lookup` from then on.
    private var given: Credentials?
    /// Set by `campusfs logout`: nothing reaches the server until `campusfs login` hands over new credentials.
    private var loggedOut = false
    /// One connection attempt at a time; its result carries the ``generation`` it was made for.
    private let connecting = SingleFlight<Attempt, Never>()
    /// Bumped by every new login and logout, so an attempt made with the credentials before cannot count for them.
    private var generation = 0
    /// The credential lookup runs once for everyone waiting, and at most every ``lookupInterval`` while the login
    /// is refused: every open would otherwise ask the keyring (or a password command) again.
    private let lookingUp = SingleFlight<LookupResult, Never>()
    private var lastLookup: ContinuousClock.Instant?
    static let lookupInterval: Duration = .seconds(30)
    /// Set while ``checkAfterBreak()`` asks the server.
    private var checkingAfterBreak = false
    public private(set) var state: DaemonStatus.Server = .unknown {
        didSet { if state != oldValue { observer?(state, problem, loggedOut) } }
    }
    /// What went wrong last, phrased for the user; nil while things work.
    public private(set) var problem: String?
    /// Told every change of ``state``, with ``problem`` and whether `campusfs logout` caused it.
    public typealias StateObserver = @Sendable (DaemonStatus.Server, _ problem: String?, _ loggedOut: Bool) -> Void
    private var observer: StateObserver?
    private let connect: @Sendable (ClientConfiguration) async throws(StudIPError) -> any DocumentSource
    private let lookup: CredentialLookup?
    /// ``movesDocuments``, kept outside the actor's isolation: a rename in the mount asks on a FUSE thread, which
    /// must not wait for the actor.
    private nonisolated let moves: Mutex<Bool>

    public init(
        configuration: ClientConfiguration, lookup: CredentialLookup? = nil,
        connect: @escaping @Sendable (ClientConfiguration) async throws(StudIPError) -> any DocumentSource = {
            configuration throws(StudIPError) in try await StudIP.connect(configuration)
        }
    ) {
        self.configuration = configuration
        self.credentials = configuration.credentials
        self.lookup = lookup
        self.connect = connect
        moves = Mutex(configuration.api == .legacyREST)
    }

    /// Whether the connection last made can move documents between folders (``DocumentSource/movesDocuments``);
    /// before any, whether the profile names legacy REST (`auto` might become JSON:API, which cannot).
    public nonisolated var movesDocuments: Bool { moves.withLock { $0 } }

    /// The connected source; connects first if needed (concurrent callers share one attempt). While the login is
    /// refused, only `retryingRefusedLogin` (a refresh) or new credentials reach the server.
    public func connected(retryingRefusedLogin: Bool = false) async throws(StudIPError) -> any DocumentSource {
        while true {
            if loggedOut { throw .authenticationFailed(server: configuration.baseURL) }
            if state == .loginNeeded, !connecting.isRunning {
                let current = await currentCredentials(retrying: retryingRefusedLogin)
                if !retryingRefusedLogin, refused.contains(where: { $0.isSameLogin(as: current) }) {
                    throw .authenticationFailed(server: configuration.baseURL)
                }
                if !current.isSameLogin(as: credentials) {
                    await disconnect()
                    credentials = current
                }
            }
            if let source { return source }
            var configuration = configuration
            configuration.credentials = credentials
            let attempt = await connecting.run { [configuration, connect, generation] () async -> Attempt in
                do throws(StudIPError) {
                    return Attempt(generation: generation, result: .success(try await connect(configuration)))
                } catch {
                    return Attempt(generation: generation, result: .failure(error))
                }
            }
            // A login or logout came in meanwhile: this attempt used the credentials before it. Try again.
            guard attempt.generation == generation else {
                if case .success(let stale) = attempt.result { await stale.shutdown() }
                continue
            }
            switch attempt.result {
            case .failure(let error):
                record(error)
                throw error
            case .success(let connected):
                if let source { return source }
                source = connected
                moves.withLock { $0 = connected.movesDocuments }
                recordSuccess()
                return connected
            }
        }
    }

    /// Calls `observer` at every change of ``state`` from now on (on this actor: it must not block).
    public func observe(_ observer: @escaping StateObserver) {
        self.observer = observer
    }

    /// Logs in with `credentials` from now on (`campusfs login` while mounted): drops the connection that used the
    /// old ones and connects with these at once, so the caller hears whether the server accepts them.
    public func use(_ newCredentials: Credentials) async throws(StudIPError) {
        generation += 1
        given = newCredentials
        loggedOut = false
        await disconnect()
        credentials = newCredentials
        do throws(StudIPError) {
            _ = try await connected(retryingRefusedLogin: true)
        } catch {
            if error.isLoginFailure { given = nil }
            throw error
        }
    }

    /// Forgets the login (`campusfs logout`): drops the connection and every credential held in memory.
    public func logOut() async {
        generation += 1
        given = nil
        loggedOut = true
        await disconnect()
        problem = "logged out with `campusfs logout`"
        state = .loginNeeded
    }

    /// `campusfs login`'s credentials, else the lookup's current answer, else those the daemon started with. A
    /// lookup that fails (the password command broke) keeps the previous ones; the daemon's log says why. Between
    /// refreshes (`retrying`), the lookup runs at most every ``lookupInterval``.
    private func currentCredentials(retrying: Bool) async -> Credentials {
        if let given { return given }
        guard let lookup else { return credentials }
        if !retrying, let lastLookup, ContinuousClock.now - lastLookup < Self.lookupInterval { return credentials }
        let found = await lookingUp.run { () async -> LookupResult in
            do throws(CredentialsUnavailable) {
                return .found(try await lookup())
            } catch {
                return .unavailable(error.reason)
            }
        }
        lastLookup = .now
        switch found {
        case .found(let credentials): return credentials
        case .unavailable(let reason):
            problem = "login needed: \(reason)"
            return credentials
        }
    }

    private func disconnect() async {
        let old = source
        source = nil
        await old?.shutdown()
    }

    /// The API in use, once connected.
    public var apiName: String? { source?.apiName }

    /// Cached documents open without revalidation while this is true.
    public var isKnownUnavailable: Bool { state == .offline || state == .loginNeeded }

    /// HTTP requests sent so far through the connected source.
    public var requestCount: Int { source?.requestCount ?? 0 }

    public func download(_ request: DownloadRequest) async throws(StudIPError) -> DownloadResponse {
        let source = try await connected()
        guard let downloader = source.downloader else {
            throw .apiUnavailable(server: configuration.baseURL, detail: "this source cannot download documents")
        }
        do throws(StudIPError) {
            let response = try await downloader.download(request)
            recordSuccess()
            guard case .content(let body) = response, !body.wasRedirected else { return response }
            return .content(reportingBreaks(of: body))
        } catch {
            record(error)
            throw error
        }
    }

    /// Like ``download(_:)``. ``StudIPError/rangesUnavailable(what:detail:)`` says nothing about the server being
    /// online or the login working (``record(_:)`` ignores it): the caller reads the stream instead.
    public func downloadRange(_ request: RangeRequest) async throws(StudIPError) -> DownloadBody {
        let source = try await connected()
        guard let downloader = source.downloader else {
            throw .rangesUnavailable(what: "document \(request.documentID)", detail: "this source cannot download")
        }
        do throws(StudIPError) {
            let body = try await downloader.downloadRange(request)
            recordSuccess()
            return body.wasRedirected ? body : reportingBreaks(of: body)
        } catch {
            record(error)
            throw error
        }
    }

    /// `body`, which tells the link when it breaks off. The server answered, so a break alone does not make it
    /// offline (a reset on the way), but it may have died mid-download: ``checkAfterBreak()`` asks it once.
    private func reportingBreaks(of body: DownloadBody) -> DownloadBody {
        let next = body.next
        return DownloadBody(
            expectedLength: body.expectedLength, etag: body.etag, lastModified: body.lastModified,
            wasRedirected: body.wasRedirected
        ) { [self] in
            do {
                return try await next()
            } catch {
                if case .brokeOff = error as? StudIPError { Task { await self.checkAfterBreak() } }
                throw error
            }
        }
    }

    /// After a download broke off: one request through the mount's connection either works (online, as before) or
    /// says what is wrong (offline, login needed), so `campusfs status` never calls a server online that died
    /// mid-download. No new login: that would spend a rotated OAuth2 refresh token or post a password again. The
    /// reader does not wait for it (the connection's retries take seconds). One check at a time.
    private func checkAfterBreak() async {
        guard state == .online, !checkingAfterBreak else { return }
        checkingAfterBreak = true
        defer { checkingAfterBreak = false }
        await check(retryingRefusedLogin: false)
    }

    /// Asks the server now whether the login works (`campusfs login --check` while mounted), through the connection
    /// the mount uses: a token refresh there spends no refresh token the mount still holds. A refused login is tried
    /// again, since the person asked.
    public func checkLogin() async {
        guard !loggedOut else { return }
        await check(retryingRefusedLogin: true)
    }

    /// One `users/me` (REST: `user`) through the connected source; its outcome settles the state.
    private func check(retryingRefusedLogin: Bool) async {
        let generation = generation
        let outcome: Result<Void, StudIPError>
        do throws(StudIPError) {
            _ = try await connected(retryingRefusedLogin: retryingRefusedLogin).currentUser()
            outcome = .success(())
        } catch {
            outcome = .failure(error)
        }
        settle(outcome, askedIn: generation)
    }

    /// The state a check found, unless a login or logout meanwhile decided it with other credentials.
    private func settle(_ outcome: Result<Void, StudIPError>, askedIn generation: Int) {
        guard generation == self.generation else { return }
        switch outcome {
        case .success: recordSuccess()
        case .failure(let error): record(error)
        }
    }

    /// Notes how an exchange went: server-wide failures change the state, item failures do not.
    public func record(_ error: StudIPError) {
        switch error {
        case .unreachable:
            problem = error.description
            state = .offline
        case _ where error.isLoginFailure:
            if !refused.contains(where: { $0.isSameLogin(as: credentials) }) { refused.append(credentials) }
            problem = error.description
            state = .loginNeeded
        default:
            break
        }
    }

    public func recordSuccess() {
        refused = []
        problem = nil
        state = .online
    }

    public func shutdown() async {
        await source?.shutdown()
        source = nil
    }
}

/// A connection attempt and the ``ServerLink`` generation whose credentials it used.
struct Attempt: Sendable {
    let generation: Int
    let result: Result<any DocumentSource, StudIPError>
}

/// What a credential lookup came to.
enum LookupResult: Sendable {
    case found(Credentials)
    case unavailable(String)
}

/// Why no credentials could be found (a password command that failed), in words for the user.
public struct CredentialsUnavailable: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public init(_ reason: String) { self.reason = reason }
    public var description: String { reason }
}

extension Credentials {
    /// Whether both log in the same way with the same secret; refreshed OAuth2 tokens count as the same login.
    func isSameLogin(as other: Credentials) -> Bool {
        switch (self, other) {
        case (.basic(let user, let password), .basic(let otherUser, let otherPassword)),
            (.webLogin(let user, let password), .webLogin(let otherUser, let otherPassword)):
            user == otherUser && password == otherPassword
        case (
            .singleSignOn(let user, let password, let entry, _),
            .singleSignOn(let otherUser, let otherPassword, let otherEntry, _)
        ):
            user == otherUser && password == otherPassword && entry == otherEntry
        case (.bearer(let tokens, _), .bearer(let otherTokens, _)):
            tokens.accessToken == otherTokens.accessToken
                || (tokens.refreshToken != nil && tokens.refreshToken == otherTokens.refreshToken)
        case (.sessionCookie(let value), .sessionCookie(let otherValue)):
            value == otherValue
        default:
            false
        }
    }
}
