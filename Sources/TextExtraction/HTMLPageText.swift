import Foundation
import HTMLText

/// The visible text of an HTML page: scripts, styles, comments and tags removed, block ends as line breaks,
/// character references decoded by the one table CampusFS has (`HTMLText.HTMLEntities`), no-break spaces made
/// plain ones so that grep's and search's spaces match them.
enum HTMLPageText {
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
        return HTMLEntities.decode(text).replacingOccurrences(of: "\u{00A0}", with: " ")
    }
}
