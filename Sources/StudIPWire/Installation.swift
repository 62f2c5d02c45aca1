import Foundation
import StudIPModel

/// The installation's base URL and every URL built from it: API requests and web-UI links.
///
/// Ids and query values are percent-encoded, because ids are opaque strings (API.md §0.2) and PHP wants the
/// brackets of `page[limit]` encoded as its own links do.
package struct Installation: Sendable {
    /// `scheme://host[:port][/path]`, without credentials or a trailing slash.
    package let baseURL: String

    package init(_ raw: String) throws(StudIPError) {
        var text = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        while text.hasSuffix("/") { text.removeLast() }
        guard var components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty
        else {
            let shown = URLComponents(string: text).map { Self.withoutCredentials($0) } ?? "the configured URL"
            throw .apiUnavailable(
                server: shown,
                detail: "not an http(s) URL; use the installation's base URL, e.g. https://studip.example.org/studip")
        }
        components.query = nil
        components.fragment = nil
        baseURL = Self.withoutCredentials(components)
    }

    /// How errors and logs name the server.
    package var serverName: String { baseURL }

    package func jsonAPI(_ segments: [String], query: [(String, String)] = []) -> String {
        url(["jsonapi.php", "v1"] + segments, query: query)
    }

    package func legacy(_ segments: [String], query: [(String, String)] = []) -> String {
        url(["api.php"] + segments, query: query)
    }

    package func web(_ segments: [String], query: [(String, String)] = []) -> String {
        url(["dispatch.php"] + segments, query: query)
    }

    /// The course's overview page.
    package func courseWebURL(_ courseID: String) -> String {
        web(["course", "overview"], query: [("cid", courseID)])
    }

    /// The folder in the course's file area.
    package func folderWebURL(_ folderID: String, courseID: String) -> String {
        web(["course", "files", "index", folderID], query: [("cid", courseID)])
    }

    /// The document's details page (name, license, owner, download button).
    package func documentWebURL(_ documentID: String, courseID: String) -> String {
        web(["file", "details", documentID], query: [("cid", courseID)])
    }

    /// Appended piece by piece into one string: a cold refresh builds two web URLs for each of thousands of
    /// documents and folders (docs/performance.md, "Daemon CPU a document").
    private func url(_ segments: [String], query: [(String, String)]) -> String {
        var result = baseURL
        for segment in segments {
            result += "/"
            result += Self.encode(segment)
        }
        for (index, (name, value)) in query.enumerated() {
            result += index == 0 ? "?" : "&"
            result += Self.encode(name)
            result += "="
            result += Self.encode(value)
        }
        return result
    }

    /// Percent-encodes all but RFC 3986's unreserved characters, byte by byte: a cold refresh builds a URL for
    /// each of thousands of documents, and `addingPercentEncoding` was 5 % of its CPU time. Text that needs no
    /// encoding (Stud.IP's hex ids, the path's words) is returned as it is, without a copy.
    package static func encode(_ text: String) -> String {
        guard text.utf8.contains(where: { !isUnreserved($0) }) else { return text }
        var encoded: [UInt8] = []
        encoded.reserveCapacity(3 * text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                encoded.append(byte)
            } else {
                encoded.append(UInt8(ascii: "%"))
                encoded.append(hexDigit(byte >> 4))
                encoded.append(hexDigit(byte & 0x0F))
            }
        }
        return String(decoding: encoded, as: UTF8.self)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    /// An upper-case hexadecimal digit, as RFC 3986 recommends.
    private static func hexDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10
    }

    private static func withoutCredentials(_ components: URLComponents) -> String {
        var copy = components
        copy.user = nil
        copy.password = nil
        var text = copy.string ?? ""
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }
}
