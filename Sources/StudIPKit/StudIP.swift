import StudIPModel
import StudIPWire

/// The entry point: connects to an installation and picks the API.
public enum StudIP {
    /// Checks the URL and the credentials with one request and returns a source for the chosen API.
    ///
    /// `api = .auto` takes JSON:API when `users/me` answers (a 401 proves it exists too: then the credentials
    /// are wrong), and legacy REST only when JSON:API is missing (404) or answers something else than JSON.
    /// The request is not wasted: the first ``DocumentSource/overview()`` reuses the user it fetched.
    /// Call ``DocumentSource/shutdown()`` on the result when done.
    public static func connect(_ configuration: ClientConfiguration) async throws(StudIPError) -> any DocumentSource {
        let installation = try Installation(configuration.baseURL)
        guard Origin(installation.baseURL)?.mayCarrySecrets ?? false else {
            throw .unsafeLogin(
                server: installation.serverName,
                detail: "is plain HTTP: the login would cross the network unencrypted; use its https:// address")
        }
        let transport = HTTPTransport(configuration: configuration, installation: installation)
        do throws(StudIPError) {
            switch configuration.api {
            case .jsonAPI:
                return try await connectJSONAPI(transport)
            case .legacyREST:
                do throws(StudIPError) {
                    return try await connectLegacy(transport, credentials: configuration.credentials)
                } catch .notFound {
                    throw .apiUnavailable(
                        server: installation.serverName,
                        detail: "no legacy REST API below /api.php (Stud.IP 6 removed it); use api = auto or jsonapi")
                }
            case .auto:
                do throws(StudIPError) {
                    return try await JSONAPISource.connect(transport)
                } catch {
                    switch error {
                    case .notFound, .malformedResponse:
                        transport.logger.debug(
                            "no JSON:API at \(installation.serverName) (\(error)); trying legacy REST")
                    default:
                        throw error
                    }
                }
                do throws(StudIPError) {
                    return try await connectLegacy(transport, credentials: configuration.credentials)
                } catch .notFound, .malformedResponse {
                    throw .apiUnavailable(
                        server: installation.serverName,
                        detail: "neither JSON:API (/jsonapi.php/v1) nor the legacy REST API (/api.php) answers there; "
                            + "use the installation's base URL, the address before /dispatch.php in the browser, "
                            + "e.g. https://studip.example.org/studip")
                }
            }
        } catch {
            await transport.shutdown()
            throw error
        }
    }

    private static func connectJSONAPI(_ transport: HTTPTransport) async throws(StudIPError) -> JSONAPISource {
        do {
            return try await JSONAPISource.connect(transport)
        } catch .notFound {
            throw .apiUnavailable(
                server: transport.installation.serverName,
                detail: "no JSON:API below /jsonapi.php/v1 (Stud.IP before 4.5 has only the legacy REST API)")
        }
    }

    private static func connectLegacy(
        _ transport: HTTPTransport, credentials: Credentials
    ) async throws(StudIPError) -> LegacyRESTSource {
        if case .bearer = credentials {
            throw .apiUnavailable(
                server: transport.installation.serverName,
                detail: "the legacy REST API does not accept OAuth2 tokens; use JSON:API or another login")
        }
        return try await LegacyRESTSource.connect(transport)
    }
}
