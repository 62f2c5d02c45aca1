import Foundation

/// The visible text of an HTML page: scripts, styles, comments and tags removed, block ends as line breaks,
/// character references decoded.
enum HTMLText {
    private static let hidden = regex(#"<(script|style|head)\b.*?</\1\s*>|<!--.*?-->"#)
    private static let blockEnd = regex(#"<(br|hr)\b[^>]*>|</(p|div|li|tr|h[1-6]|table|ul|ol|pre|blockquote)\s*>"#)
    private static let tag = regex(#"<[^>]*>"#)

    private static func regex(_ pattern: String) -> NSRegularExpression? {
        try? NSRegularExpression(pattern: pattern, options: [.caseInsensitive, .dotMatchesLineSeparators])
    }

    static func strip(_ html: String) -> String {
        var text = html
        for (expression, replacement) in [(hidden, ""), (blockEnd, "\n"), (tag, "")] {
            guard let expression else { continue }
            text = expression.stringByReplacingMatches(
                in: text, range: NSRange(text.startIndex..., in: text), withTemplate: replacement)
        }
        return decodeReferences(text)
    }

    private static let named: [Substring: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " ", "shy": "", "ndash": "–",
        "mdash": "—", "hellip": "…", "bdquo": "„", "ldquo": "“", "rdquo": "”", "sbquo": "‚", "lsquo": "‘",
        "rsquo": "’", "laquo": "«", "raquo": "»", "euro": "€", "copy": "©", "reg": "®", "deg": "°", "sect": "§",
        "auml": "ä", "ouml": "ö", "uuml": "ü", "Auml": "Ä", "Ouml": "Ö", "Uuml": "Ü", "szlig": "ß", "eacute": "é",
        "egrave": "è", "agrave": "à", "times": "×", "middot": "·", "bull": "•",
    ]

    /// `&name;`, `&#NNN;` and `&#xHH;`; anything else stays as it was.
    static func decodeReferences(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var result = ""
        var rest = text[...]
        while let amp = rest.firstIndex(of: "&") {
            result += rest[..<amp]
            let candidate = rest[rest.index(after: amp)...].prefix(12)
            if let semicolon = candidate.firstIndex(of: ";"), let decoded = reference(candidate[..<semicolon]) {
                result += decoded
                rest = rest[rest.index(after: semicolon)...]
            } else {
                result += "&"
                rest = rest[rest.index(after: amp)...]
            }
        }
        return result + rest
    }

    private static func reference(_ name: Substring) -> String? {
        guard name.first == "#" else { return named[name] }
        let digits = name.dropFirst()
        let value = digits.first == "x" || digits.first == "X" ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits)
        return value.flatMap(Unicode.Scalar.init).map { String($0) }
    }
}
