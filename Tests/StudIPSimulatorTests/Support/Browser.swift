import Foundation
import NIOHTTP1

@testable import StudIPSimulator

/// An HTML form as a browser submits it: the fields it would send (inputs with a name, checked boxes and
/// radios, no buttons) and the named buttons to press.
struct HTMLForm {
    var action: String
    var method: String
    var fields: [(name: String, value: String)]
    var buttons: [String: String]

    func value(_ name: String) -> String? { fields.first { $0.name == name }?.value }

    /// Sets a field (adds it when the form has none of that name).
    mutating func set(_ name: String, _ value: String) {
        if let index = fields.firstIndex(where: { $0.name == name }) {
            fields[index].value = value
        } else {
            fields.append((name, value))
        }
    }
}

/// A scripted browser for the login tests: one cookie jar per origin (Set-Cookie read from every answer),
/// forms and links read from the HTML with entities decoded, redirects followed one by one, and a transcript
/// of every request (`METHOD path → status`).
final class Browser {
    private var cookies: [String: [String: String]] = [:]
    private(set) var transcript: [String] = []

    /// Sends one request with the jar's cookies for its origin; stores the cookies it sets.
    func send(_ method: HTTPMethod, _ url: String, form: [(name: String, value: String)]? = nil) async throws
        -> HTTPResult
    {
        let origin = Self.origin(url)
        var headers: [(String, String)] = []
        if let jar = cookies[origin], !jar.isEmpty {
            headers.append(
                ("Cookie", jar.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")))
        }
        var body: Data?
        if let form {
            headers.append(("Content-Type", "application/x-www-form-urlencoded"))
            body = Data(
                form.map { "\(FormEncoding.encode($0.name))=\(FormEncoding.encode($0.value))" }.joined(separator: "&")
                    .utf8)
        }
        let result = try await HTTP.request(method, url, headers: headers, body: body)
        for header in result.headers[canonicalForm: "Set-Cookie"] {
            let pair = header.split(separator: ";").first?.split(separator: "=", maxSplits: 1).map(String.init) ?? []
            if pair.count == 2 { cookies[origin, default: [:]][pair[0].trimmingCharacters(in: .whitespaces)] = pair[1] }
        }
        transcript.append("\(method.rawValue) \(url.prefix(120)) → \(result.status)")
        return result
    }

    func get(_ url: String) async throws -> HTTPResult { try await send(.GET, url) }

    /// Follows `result`'s redirects (answers to `url`) with GETs until a non-redirect, which it returns with its URL.
    func follow(_ result: HTTPResult, from url: String) async throws -> (HTTPResult, String) {
        var result = result
        var url = url
        while (300..<400).contains(result.status), let location = result.header("Location") {
            url = Self.resolve(location, against: url)
            result = try await get(url)
        }
        return (result, url)
    }

    /// Submits `form` (read from the page at `page`), pressing `button` when given.
    func submit(_ form: HTMLForm, page: String, pressing button: String? = nil) async throws -> HTTPResult {
        var fields = form.fields
        if let button { fields.append((button, form.buttons[button] ?? "")) }
        return try await send(
            form.method.uppercased() == "POST" ? .POST : .GET, Self.resolve(form.action, against: page), form: fields)
    }

    func cookie(_ name: String, for url: String) -> String? { cookies[Self.origin(url)]?[name] }

    func cookieNames(for url: String) -> [String] { cookies[Self.origin(url)].map { Array($0.keys) } ?? [] }

    // MARK: HTML

    static func forms(in html: String) -> [HTMLForm] {
        matches(#"<form\b([^>]*)>(.*?)</form>"#, in: html).map { groups in
            let attributes = attributes(groups[0])
            var form = HTMLForm(
                action: attributes["action"] ?? "", method: attributes["method"] ?? "get", fields: [], buttons: [:])
            for tag in matches(#"<(input|button)\b([^>]*)>"#, in: groups[1]) {
                let input = self.attributes(tag[1])
                guard let name = input["name"] else { continue }
                let type = input["type"]?.lowercased() ?? (tag[0] == "button" ? "submit" : "text")
                switch type {
                case "submit":
                    form.buttons[name] = input["value"] ?? ""
                case "checkbox", "radio":
                    if input.keys.contains("checked") { form.fields.append((name, input["value"] ?? "on")) }
                default:
                    form.fields.append((name, input["value"] ?? ""))
                }
            }
            return form
        }
    }

    /// The `href` of the first `<a>` whose text contains `text`.
    static func link(containing text: String, in html: String) -> String? {
        matches(#"<a\b([^>]*)>(.*?)</a>"#, in: html).first { $0[1].contains(text) }.flatMap {
            attributes($0[0])["href"]
        }
    }

    /// The attributes of one tag, values with entities decoded; valueless attributes map to "".
    static func attributes(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for groups in matches(#"([A-Za-z_:][-\w:.]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+)))?"#, in: text) {
            result[groups[0].lowercased()] = HTML.unescape(groups[1] + groups[2] + groups[3])
        }
        return result
    }

    /// Every match's capture groups (a group that did not take part is "").
    private static func matches(_ pattern: String, in text: String) -> [[String]] {
        guard let regex = try? NSRegularExpression(pattern: pattern, options: [.dotMatchesLineSeparators]) else {
            return []
        }
        let ns = text as NSString
        return regex.matches(in: text, range: NSRange(location: 0, length: ns.length)).map { match in
            (1..<match.numberOfRanges).map { index in
                let range = match.range(at: index)
                return range.location == NSNotFound ? "" : ns.substring(with: range)
            }
        }
    }

    // MARK: URLs

    static func origin(_ url: String) -> String {
        guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.host
        else { return url }
        return "\(scheme)://\(host)" + (components.port.map { ":\($0)" } ?? "")
    }

    static func resolve(_ reference: String, against base: String) -> String {
        URL(string: reference, relativeTo: URL(string: base))?.absoluteString ?? reference
    }
}
