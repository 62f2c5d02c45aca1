import Foundation

/// Plain text, Markdown, source code, CSV and HTML: decoded, HTML without its markup.
enum PlainText {
    static func extract(_ file: URL, html: Bool, limits: TextExtractor.Limits) throws(ExtractionError)
        -> ExtractedText
    {
        let data: Data
        do {
            let handle = try FileHandle(forReadingFrom: file)
            defer { try? handle.close() }
            data = try handle.read(upToCount: limits.textBytes + 1) ?? Data()
        } catch {
            throw .broken("cannot read the file: \(error.localizedDescription)")
        }
        guard data.count <= limits.textBytes else { throw .tooLarge("more than \(limits.textBytes >> 20) MiB of text") }
        let text = decode(data)
        return ExtractedText(kind: .text, parts: [.init(number: nil, text: html ? HTMLPageText.strip(text) : text)])
    }

    /// UTF-8 (or UTF-16 with a byte-order mark); anything else as Windows-1252, which German material from
    /// Windows mostly is, with Latin-1 for the five bytes Windows-1252 leaves undefined. Never fails.
    static func decode(_ data: Data) -> String {
        if data.starts(with: [0xEF, 0xBB, 0xBF]) { return decode(data.dropFirst(3)) }
        if data.starts(with: [0xFF, 0xFE]) || data.starts(with: [0xFE, 0xFF]),
            let text = String(data: data, encoding: .utf16)
        {
            return text
        }
        if let text = String(validating: data, as: UTF8.self) { return text }
        return String(data: data, encoding: .windowsCP1252)
            ?? String(String.UnicodeScalarView(data.map { Unicode.Scalar($0) }))
    }
}
