import Foundation

/// The cookies of one login: name and value per origin, as the flows need them. A session is all of an origin's
/// cookies (``header(for:)``), whatever Stud.IP calls it (docs/login.md).
///
/// Cookies go back only to the origin that set them (scheme, host and port: stricter than a browser, which shares
/// them across ports and subdomains), so an IdP never sees Stud.IP's session and the reverse. Paths are ignored:
/// each origin here is one application. `Max-Age=0` or an `Expires` in the past deletes a cookie.
struct CookieJar: Sendable {
    private var cookies: [Origin: [(name: String, value: String)]] = [:]

    /// Stores the `Set-Cookie` headers of an answer from `url`.
    mutating func store(_ response: HTTPResponse, from url: String) {
        guard let origin = Origin(url) else { return }
        for header in response.headers["set-cookie"] ?? [] {
            store(header, origin: origin)
        }
    }

    private mutating func store(_ header: String, origin: Origin) {
        let parts = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let pair = parts.first, let equals = pair.firstIndex(of: "=") else { return }
        let name = String(pair[..<equals]).trimmingCharacters(in: .whitespaces)
        let value = String(pair[pair.index(after: equals)...]).trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return }
        var list = cookies[origin, default: []]
        list.removeAll { $0.name == name }
        if !Self.isExpired(parts.dropFirst()) { list.append((name, value)) }
        cookies[origin] = list
    }

    private static func isExpired(_ attributes: ArraySlice<String>) -> Bool {
        for attribute in attributes {
            let pair = attribute.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { continue }
            switch pair[0].lowercased() {
            case "max-age":
                if let seconds = Int(pair[1]), seconds <= 0 { return true }
            case "expires":
                if let date = expiresFormat.date(from: pair[1]), date < Date() { return true }
            default: break
            }
        }
        return false
    }

    /// RFC 1123 dates, as `Expires` carries them.
    private static var expiresFormat: DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter
    }

    /// The `Cookie` header for a request to `url`, nil when that origin has none.
    func header(for url: String) -> String? {
        guard let origin = Origin(url), let list = cookies[origin], !list.isEmpty else { return nil }
        return list.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }
}
