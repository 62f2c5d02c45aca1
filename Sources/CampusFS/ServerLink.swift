import Foundation
import StudIPKit

/// The daemon's way to Stud.IP. It connects on first use, not at start, so a daemon started offline mounts from the
/// store and comes online by itself the first time the server answers again; and it remembers how the last
/// exchange went, for `campusfs status`.
public actor ServerLink: DocumentDownloader {
    public let configuration: ClientConfiguration
    private var source: (any DocumentSource)?
    private var connecting: Task<Result<any DocumentSource, StudIPError>, Never>?
    public private(set) var state: DaemonStatus.Server = .unknown
    /// What went wrong last, phrased for the user; nil while things work.
    public private(set) var problem: String?
    private let connect: @Sendable (ClientConfiguration) async throws(StudIPError) -> any DocumentSource

    public init(
        configuration: ClientConfiguration,
        connect: @escaping @Sendable (ClientConfiguration) async throws(StudIPError) -> any DocumentSource = {
            configuration throws(StudIPError) in try await StudIP.connect(configuration)
        }
    ) {
        self.configuration = configuration
        self.connect = connect
    }

    /// The connected source; connects first if needed (concurrent callers share one attempt).
    public func connected() async throws(StudIPError) -> any DocumentSource {
        if let source { return source }
        let attempt =
            connecting
            ?? Task { [configuration, connect] in
                do throws(StudIPError) {
                    return .success(try await connect(configuration))
                } catch {
                    return .failure(error)
                }
            }
        connecting = attempt
        let result = await attempt.value
        connecting = nil
        switch result {
        case .success(let connected):
            if let source { return source }
            source = connected
            record(success: connected.apiName)
            return connected
        case .failure(let error):
            record(error)
            throw error
        }
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
            record(success: source.apiName)
            return response
        } catch {
            record(error)
            throw error
        }
    }

    /// Notes how an exchange went: server-wide failures change the state, item failures do not.
    public func record(_ error: StudIPError) {
        switch error {
        case .unreachable:
            state = .offline
            problem = error.description
        case .authenticationFailed:
            state = .loginNeeded
            problem = "login needed: \(error.description)"
        default:
            break
        }
    }

    public func record(success api: String) {
        state = .online
        problem = nil
    }

    public func shutdown() async {
        await source?.shutdown()
        source = nil
    }
}
