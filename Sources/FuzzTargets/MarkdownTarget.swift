import CourseFiles
import Foundation

/// Announcements' HTML to Markdown (`HTMLMarkdown`) on any bytes: it never crashes; its output is at most 48
/// times what it read (the most: `<li>x` in 15 lists of 11-character markers inside 8 quotes, a 194-byte
/// line); it holds no control character but newlines and a preformatted block's tabs, and ends in exactly one
/// newline unless empty; a title made inline (`HTMLMarkdown.inline`) stays one line.
enum MarkdownTarget {
    static func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        let html = String(decoding: bytes, as: UTF8.self)
        let markdown = HTMLMarkdown.convert(html)
        let read = min(html.utf8.count, HTMLMarkdown.maxInputBytes)
        precondition(markdown.utf8.count <= 48 * read + 64, "output \(markdown.utf8.count) bytes for \(read)")
        precondition(
            !markdown.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || $0.value == 0x7F },
            "a control character in the output")
        precondition(markdown.isEmpty || (markdown.hasSuffix("\n") && !markdown.hasSuffix("\n\n")), "ragged end")
        precondition(!HTMLMarkdown.inline(String(html.prefix(4096))).contains("\n"), "an inline text with a newline")
    }
}
