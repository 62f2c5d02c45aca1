import Foundation
import StudIPModel

/// An announcement as a Markdown file: its title as a heading, who wrote it and when it was published and
/// expires, then its body (``HTMLMarkdown``). The bytes depend only on the announcement, the language and the
/// time zone, so a file's size and content change exactly when the announcement does.
public enum AnnouncementMarkdown {
    public static func render(
        _ announcement: Announcement, language: CourseFilesLanguage = .default, timeZone: TimeZone = .berlin
    ) -> String {
        let title = HTMLMarkdown.inline(announcement.title)
        var header = ["# " + (title.isEmpty ? language.untitled : title), ""]
        var facts: [String] = []
        if let author = announcement.authorName.map(HTMLMarkdown.inline), !author.isEmpty {
            facts.append("\(language.authorLabel): \(author)")
        }
        facts.append("\(language.publishedLabel): \(language.format(announcement.published, in: timeZone))")
        if let expires = announcement.expires {
            facts.append("\(language.expiresLabel): \(language.format(expires, in: timeZone))")
        }
        // Hard line breaks: one fact a line in a Markdown viewer too.
        header += facts.enumerated().map { index, fact in index < facts.count - 1 ? fact + "  " : fact }
        let body = HTMLMarkdown.convert(announcement.html)
        return header.joined(separator: "\n") + "\n" + (body.isEmpty ? "" : "\n" + body)
    }

    /// `YYYY-MM-DD <title>.md`, the date the announcement was published there: sorted by name is sorted by date.
    /// The title raw but on one line (whitespace and control characters collapsed to single spaces); the naming
    /// rules make it safe.
    public static func fileName(_ announcement: Announcement, timeZone: TimeZone = .berlin) -> String {
        let day = LocalTime(announcement.published, in: timeZone)
        let date = String(format: "%04d-%02d-%02d", day.year, day.month, day.day)
        let title = announcement.title.unicodeScalars
            .map {
                $0.properties.isWhitespace || $0.value < 0x20 || (0x7F...0x9F).contains($0.value) ? " " : String($0)
            }
            .joined().split(separator: " ").joined(separator: " ")
        return (title.isEmpty ? date : date + " " + title) + ".md"
    }
}
