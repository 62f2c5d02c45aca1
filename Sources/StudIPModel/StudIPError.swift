/// Why talking to Stud.IP failed, with what a user needs to act. Never contains credentials.
public enum StudIPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// 401: wrong or expired credentials ("login needed"). `message` is what a login page said, when it said
    /// something ("The password you entered was incorrect.").
    case authenticationFailed(server: String, message: String? = nil)
    /// The identity provider wants the user to agree to releasing these attributes to Stud.IP once, in a browser
    /// or by allowing it (`acceptsConsent`).
    case consentRequired(provider: String, attributes: [String])
    /// A login page asked for the password in a way that would expose it: to another origin, or over plain HTTP.
    case unsafeLogin(server: String, detail: String)
    /// 403 for something the user may not see or download.
    case forbidden(what: String)
    /// 404 for something that should exist (the route, a course, a document).
    case notFound(what: String)
    /// Connection refused, DNS failure, timeouts or resets — after the retries.
    case unreachable(server: String, detail: String)
    /// Another host, one a document hosted elsewhere redirects to, cannot be reached; Stud.IP itself can.
    case hostUnreachable(host: String, what: String, detail: String)
    /// The document lives on another host and this API cannot fetch it (legacy REST, no JSON:API beside it).
    case hostedElsewhere(what: String)
    /// 5xx or 429 after the retries.
    case serverError(status: Int, what: String)
    /// The server answered something that cannot be read as the API promises.
    case malformedResponse(what: String, detail: String)
    /// The URL's scheme does not match the server: `https://` for one that speaks plain HTTP, or the reverse.
    case wrongScheme(typed: String, meant: String)
    /// Neither API answers at this URL (wrong URL, or the API is switched off).
    case apiUnavailable(server: String, detail: String)
    /// The per-server request budget of one refresh ran out; the rest waits for the next refresh.
    case budgetExhausted(server: String, limit: Int)
    /// A download's body broke off after the server had answered: the connection was reset, or (`stalled`) no
    /// data came for the idle timeout. The server was there, so this is not "offline".
    case brokeOff(what: String, detail: String, stalled: Bool)
    /// No part of any document (a byte range) can be fetched on this connection: the installation answers no ranges,
    /// or the login has no web session for `sendfile.php` (docs/ranges.md); an answer that fails for one range is
    /// another error. Never shown for a read: the content cache reads the document's stream instead.
    case rangesUnavailable(what: String, detail: String)
    /// The task asking was cancelled (shutdown, unmount); nothing is wrong with the server.
    case cancelled
    /// Stud.IP refused a write (upload, new version, rename, move, delete, new folder) for a reason the same request
    /// will meet again: retrying cannot help, the user must change something (docs/client.md, "Writing").
    case refused(WriteRefusal, what: String)
    /// This API cannot do it at all (JSON:API has no move; the filesystem answers `EXDEV`, so `mv` copies instead).
    case unsupported(operation: String, api: String)
    /// The local file to upload cannot be read (missing, unreadable, changed size while it was sent).
    case unreadableFile(path: String, detail: String)

    /// Every message passes ``withoutCredentials(_:)``: some details quote the server (a preview of an unreadable
    /// answer), and Stud.IP 5.0.7's JSON:API error pages echo the Basic-auth credentials in a link.
    public var description: String { Self.withoutCredentials(message) }

    private var message: String {
        switch self {
        case .authenticationFailed(let server, nil):
            "login needed: \(server) did not accept the credentials (check username and password or token)"
        case .authenticationFailed(let server, let said?):
            "login needed: \(server) did not accept the credentials: \(said)"
        case .consentRequired(let provider, let attributes):
            "\(provider) asks you to agree once to sending \(attributes.joined(separator: ", ")) to Stud.IP; "
                + "log in once in a browser and accept, or allow campusfs to accept it"
        case .unsafeLogin(let server, let detail):
            "the password was not sent: \(server) \(detail)"
        case .forbidden(let what): "access denied by Stud.IP: \(what)"
        case .notFound(let what): "not found on Stud.IP: \(what)"
        case .unreachable(let server, let detail): "cannot reach \(server): \(detail) (offline, or wrong URL?)"
        case .hostUnreachable(let host, let what, let detail):
            "\(what) is hosted at \(host), which cannot be reached: \(detail) (Stud.IP itself answers)"
        case .hostedElsewhere(let what):
            "\(what) is hosted elsewhere, and this Stud.IP offers only the legacy REST API, which cannot download "
                + "such documents; open it in the browser (user.xdg.origin.url)"
        case .serverError(let status, let what): "Stud.IP answered \(status) for \(what); try again later"
        case .malformedResponse(let what, let detail): "unreadable answer from Stud.IP for \(what): \(detail)"
        case .wrongScheme(let typed, let meant):
            "the server at \(typed) \(typed.hasPrefix("https:") ? "does not speak" : "speaks only") HTTPS; "
                + "did you mean \(meant)?"
        case .apiUnavailable(let server, let detail):
            "no Stud.IP API at \(server): \(detail)"
        case .budgetExhausted(let server, let limit):
            "stopped after \(limit) requests to \(server) in one refresh (request budget); the rest follows later"
        case .brokeOff(let what, let detail, _): "\(what) broke off: \(detail); open it again"
        case .rangesUnavailable(let what, let detail): "no byte ranges for \(what): \(detail)"
        case .cancelled: "cancelled"
        case .refused(let refusal, let what): refusal.message(what)
        case .unsupported(let operation, let api):
            "\(api) cannot \(operation); Stud.IP offers that only in its web interface or the legacy REST API"
        case .unreadableFile(let path, let detail): "cannot read \(path) to upload it: \(detail)"
        }
    }

    /// True when the same request may succeed later unchanged: offline, timeouts, 5xx and 429, a login to renew,
    /// a cancelled task. False for refusals, missing documents, unsupported operations and malformed answers, which
    /// answer the same again. The outbox decides between "wait and retry" and "failed" from this alone; a
    /// retryable error of an upload means it may or may not have been stored.
    public var isRetryable: Bool {
        switch self {
        case _ where isLoginFailure: true
        case .unreachable, .hostUnreachable, .serverError, .brokeOff, .budgetExhausted, .cancelled: true
        default: false
        }
    }

    /// `text` with the user information of every URL in it replaced: `http://user:password@host/` becomes
    /// `http://…@host/`.
    public static func withoutCredentials(_ text: String) -> String {
        text.replacing(/(?<scheme>[A-Za-z][A-Za-z0-9+.\-]*:\/\/)[^\/\s@"'<>]+@/) { match in "\(match.scheme)…@" }
    }

    /// The server as a whole cannot be reached or refuses the login: not one item's problem.
    public var concernsTheServer: Bool {
        switch self {
        case _ where isLoginFailure: true
        case .unreachable: true
        default: false
        }
    }

    /// The login did not work — refused, waiting for consent on the identity provider's page, or stopped because
    /// it would have sent the password elsewhere: "login needed", whatever the reason.
    public var isLoginFailure: Bool {
        switch self {
        case .authenticationFailed, .consentRequired, .unsafeLogin: true
        default: false
        }
    }

    /// The exit code (docs/architecture.md, "Exit codes"): 2 auth, 3 network, 4 other.
    public var exitCode: Int32 {
        switch self {
        case _ where isLoginFailure: 2
        case .unreachable, .apiUnavailable, .wrongScheme, .brokeOff: 3
        default: 4
        }
    }
}

/// Why Stud.IP refused a write. Its JSON:API refuses uploads with a bare 400 "Bad Request" and no reason
/// (fixtures-5.0.7-writes step 3): the client infers the reason from what it sent where it can.
public enum WriteRefusal: Sendable, Hashable {
    /// Over the installation's upload limit (64 MiB for students on a default 5.0.7); `limit` nil when a server
    /// answered 413 without saying it (a proxy before Stud.IP with a smaller limit).
    case tooLarge(size: Int64, limit: Int64?)
    /// A file type the installation refuses (`.exe` by default).
    case forbiddenType(fileExtension: String)
    /// 403: the folder is not writable for this user, the document is someone else's, or a homework submission.
    case notPermitted(serverSaid: String?)
    /// 400, 409, 413 or 422 for another reason, with what Stud.IP said if it said anything.
    case invalid(status: Int, serverSaid: String?)

    func message(_ what: String) -> String {
        switch self {
        case .tooLarge(let size, let limit?):
            "Stud.IP refused \(what): \(Self.mebibytes(size)) is over its upload limit of \(Self.mebibytes(limit)); "
                + "compress or split the file"
        case .tooLarge(let size, nil):
            "the server refused \(what): \(Self.mebibytes(size)) is more than it accepts at once; compress or split "
                + "the file"
        case .forbiddenType(let fileExtension):
            "Stud.IP refused \(what): it does not accept .\(fileExtension) files; pack it into a .zip"
        case .notPermitted(let said):
            "Stud.IP does not let you do this: \(what) (not writable for you, or someone else's)"
                + (said.map { ": \($0)" } ?? "")
        case .invalid(let status, let said):
            "Stud.IP refused \(what) (HTTP \(status))" + (said.map { ": \($0)" } ?? "")
        }
    }

    private static func mebibytes(_ bytes: Int64) -> String {
        let tenths = (bytes * 10 + 524_288) / 1_048_576
        return tenths % 10 == 0 ? "\(tenths / 10) MiB" : "\(tenths / 10).\(tenths % 10) MiB"
    }
}
