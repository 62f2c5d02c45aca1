import Foundation
import ZIPFoundation

/// Office Open XML and OpenDocument: ZIP containers of XML, read with limits against ZIP bombs.
enum ZIPText {
    enum Container: Hashable {
        case docx, pptx, xlsx, odt, odp, ods
    }

    /// Thrown from ZIPFoundation's consumer to stop an entry that streams past a limit.
    private struct Exceeded: Error {
        let what: String
    }

    static func extract(_ file: URL, _ container: Container, limits: TextExtractor.Limits) throws(ExtractionError)
        -> ExtractedText
    {
        let archive: Archive
        do {
            archive = try Archive(url: file, accessMode: .read)
        } catch {
            throw .broken("not a ZIP container (\(error))")
        }
        var entries: [String: Entry] = [:]
        for entry in archive {
            entries[entry.path] = entry
            guard entries.count <= limits.entries else { throw .tooLarge("more than \(limits.entries) ZIP entries") }
        }
        var budget = limits.uncompressedBytes
        func read(_ path: String) throws(ExtractionError) -> Data {
            guard let entry = entries[path] else { throw .broken("\(path) is missing") }
            return try readEntry(entry, in: archive, budget: &budget, limits: limits)
        }
        /// The entries `prefix` N `.xml` ordered by N (slides, sheets).
        func numbered(_ prefix: String) -> [String] {
            entries.keys.compactMap { path -> (Int, String)? in
                guard path.hasPrefix(prefix), path.hasSuffix(".xml"),
                    let number = Int(path.dropFirst(prefix.count).dropLast(4))
                else { return nil }
                return (number, path)
            }.sorted { $0.0 < $1.0 }.map(\.1)
        }

        switch container {
        case .docx:
            let text = try XMLText.parse(read("word/document.xml"), .wordprocessing).joined()
            return ExtractedText(kind: .document, parts: [.init(number: nil, text: text)])
        case .pptx:
            var parts: [ExtractedText.Part] = []
            // Numbered as PowerPoint shows them only when no slide was deleted or moved; presentation.xml's
            // order would be exact and is left for later.
            for (index, path) in numbered("ppt/slides/slide").enumerated() {
                parts.append(.init(number: index + 1, text: try XMLText.parse(read(path), .presentation).joined()))
            }
            return ExtractedText(kind: .presentation, parts: parts)
        case .xlsx:
            let shared =
                entries["xl/sharedStrings.xml"] == nil
                ? [] : try XMLText.parse(read("xl/sharedStrings.xml"), .sharedStrings)
            var parts: [ExtractedText.Part] = []
            for (index, path) in numbered("xl/worksheets/sheet").enumerated() {
                let text = try XMLText.parse(read(path), .worksheet(shared)).joined()
                parts.append(.init(number: index + 1, text: text))
            }
            return ExtractedText(kind: .spreadsheet, parts: parts)
        case .odt:
            let text = try XMLText.parse(read("content.xml"), .openDocument(parts: nil)).joined()
            return ExtractedText(kind: .document, parts: [.init(number: nil, text: text)])
        case .odp, .ods:
            let page = container == .odp ? "page" : "table"
            let texts = try XMLText.parse(read("content.xml"), .openDocument(parts: page))
            return ExtractedText(
                kind: container == .odp ? .presentation : .spreadsheet,
                parts: texts.enumerated().map { .init(number: $0.offset + 1, text: $0.element) })
        }
    }

    /// One entry's bytes, counted as they stream: the header's sizes may lie, the inflated bytes cannot.
    private static func readEntry(
        _ entry: Entry, in archive: Archive, budget: inout Int, limits: TextExtractor.Limits
    ) throws(ExtractionError) -> Data {
        var data = Data()
        let allowed = max(Int(clamping: entry.compressedSize), 1) * limits.compressionRatio
        var remaining = budget
        do {
            _ = try archive.extract(entry, skipCRC32: false) { chunk in
                remaining -= chunk.count
                guard remaining >= 0 else {
                    throw Exceeded(what: "more than \(limits.uncompressedBytes >> 20) MiB uncompressed")
                }
                guard data.count + chunk.count <= max(allowed, 1 << 20) else {
                    throw Exceeded(what: "\(entry.path) inflates more than \(limits.compressionRatio):1 (a ZIP bomb?)")
                }
                data.append(chunk)
            }
        } catch let error as Exceeded {
            throw .tooLarge(error.what)
        } catch {
            throw .broken("cannot read \(entry.path): \(error)")
        }
        budget = remaining
        return data
    }
}
