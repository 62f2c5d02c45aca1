import Foundation
import StudIPWire

/// Where a download may go next, and whether that place may see the Stud.IP credentials.
///
/// Documents hosted elsewhere answer the content route with a redirect (API.md §3.7); the download follows it
/// by hand, so that credentials are only ever sent to the installation itself (docs/client.md, "Downloads").
enum Redirect {
    /// Hops one download follows before giving up (a loop, or a chain no browser would follow either).
    static let maxHops = 5

    static func isRedirect(status: Int) -> Bool {
        [301, 302, 303, 307, 308].contains(status)
    }

    /// The absolute http(s) URL a `Location` header points to, resolved against the URL that answered; nil
    /// when it is unusable (another scheme, no host, not a URL).
    static func target(of location: String, from current: String) -> String? {
        let trimmed = location.trimmingCharacters(in: .whitespaces)
        guard let base = URL(string: current), let resolved = URL(string: trimmed, relativeTo: base)?.absoluteURL,
            var components = URLComponents(url: resolved, resolvingAgainstBaseURL: false),
            Origin(components) != nil
        else { return nil }
        components.fragment = nil
        return components.string
    }
}

/// Scheme, host and port of a URL: what decides whether a request may carry the Stud.IP credentials. The same
/// host on another port is another origin.
struct Origin: Hashable, Sendable, CustomStringConvertible {
    let scheme: String
    let host: String
    let port: Int

    init?(_ url: String) {
        guard let components = URLComponents(string: url) else { return nil }
        self.init(components)
    }

    init?(_ components: URLComponents) {
        guard let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        self.scheme = scheme
        self.host = host
        port = components.port ?? (scheme == "https" ? 443 : 80)
    }

    /// Loopback: plain HTTP there never leaves the machine (the simulator, tests).
    var isThisMachine: Bool { ["127.0.0.1", "localhost", "[::1]", "::1"].contains(host) }

    /// Whether a password or token may travel to this origin: encrypted, or without leaving the machine.
    var mayCarrySecrets: Bool { scheme == "https" || isThisMachine }

    /// How errors and logs name another host: never a path or query, which may carry a signed token.
    var description: String { "\(scheme)://\(host):\(port)" }
}

extension Installation {
    /// True when `url` is on the installation's own origin, so the request may carry the credentials.
    func isOwnOrigin(_ url: String) -> Bool {
        guard let own = Origin(baseURL) else { return false }
        return Origin(url) == own
    }
}
