import Foundation
import SystemSupport

/// PDF through poppler's `pdftotext` (Debian `poppler-utils`): one run over the whole document, whose output ends
/// every page with a form feed — faster than a run per page (docs/search.md has the figures).
enum PDFText {
    static let pdftotext = URL(fileURLWithPath: "/usr/bin/pdftotext")

    static func extract(_ file: URL, limits: TextExtractor.Limits) throws(ExtractionError) -> ExtractedText {
        let output: Subprocess.Output
        do {
            output = try Subprocess.run(
                pdftotext, ["-q", "-enc", "UTF-8", "-eol", "unix", file.path, "-"],
                limits: .init(time: limits.time, addressSpace: limits.addressSpace))
        } catch {
            throw .toolUnavailable("\(error) (Scripts/bootstrap installs poppler-utils)")
        }
        if output.timedOut { throw .timedOut(limits.time) }
        let said = String(decoding: output.stderr, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        if output.signaled || said.contains("bad_alloc") || said.contains("Out of memory") {
            // Under an address-space limit a failed allocation aborts (std::bad_alloc) or is reported as such.
            throw .tooLarge("pdftotext needed more than \(limits.addressSpace >> 20) MiB of memory")
        }
        guard output.status == 0 else {
            throw .broken("pdftotext ended with status \(output.status)\(said.isEmpty ? "" : ": \(said)")")
        }
        guard output.stdout.count <= limits.textBytes else {
            throw .tooLarge("more than \(limits.textBytes >> 20) MiB of text")
        }
        var pages = String(decoding: output.stdout, as: UTF8.self).split(
            separator: "\u{0C}", omittingEmptySubsequences: false)
        if pages.last?.allSatisfy(\.isWhitespace) == true { pages.removeLast() }  // after the last page's form feed
        let parts = pages.enumerated().compactMap { index, page -> ExtractedText.Part? in
            let text = page.trimmingCharacters(in: .whitespacesAndNewlines)
            return text.isEmpty ? nil : .init(number: index + 1, text: text)
        }
        guard !parts.isEmpty else { throw .noTextLayer }
        return ExtractedText(kind: .pdf, parts: parts)
    }
}
