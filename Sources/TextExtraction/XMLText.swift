import Foundation

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// The text of an office document's XML, by local element names (prefixes vary between producers).
enum XMLText {
    enum Vocabulary {
        /// Word's `w:t` runs in `w:p` paragraphs.
        case wordprocessing
        /// DrawingML's `a:t` runs in `a:p` paragraphs (slides).
        case presentation
        /// Excel's shared strings: one part per `si`.
        case sharedStrings
        /// Excel's `c` cells, with `t="s"` cells by index into the shared strings.
        case worksheet([String])
        /// `text:p` and `text:h`; one part per `parts` element (`draw:page`, `table:table`) when given.
        case openDocument(parts: String?)
    }

    /// The text, one string per part (one in all for vocabularies without parts).
    static func parse(_ data: Data, _ vocabulary: Vocabulary) throws(ExtractionError) -> [String] {
        let collector = Collector(vocabulary)
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = true
        parser.shouldResolveExternalEntities = false
        parser.delegate = collector
        guard parser.parse() else {
            throw .broken("XML error \(parser.parserError.map { "\($0)" } ?? "") at line \(parser.lineNumber)")
        }
        return collector.parts.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    private final class Collector: NSObject, XMLParserDelegate {
        let vocabulary: Vocabulary
        var parts: [String]
        /// How deep inside elements whose character data is text.
        var textDepth = 0
        /// The current Excel cell's type and where its text starts in the current part (UTF-8 bytes).
        var cellType: String?
        var cellStart: Int?

        init(_ vocabulary: Vocabulary) {
            self.vocabulary = vocabulary
            switch vocabulary {
            case .sharedStrings, .openDocument(parts: .some): parts = []
            default: parts = [""]
            }
        }

        private var textElements: Set<String> {
            switch vocabulary {
            case .wordprocessing, .presentation, .sharedStrings: ["t"]
            case .worksheet: ["t", "v"]
            case .openDocument: ["p", "h"]
            }
        }

        private func append(_ text: String) {
            guard !parts.isEmpty else { return }  // text before the first part (ODF's forms, styles)
            parts[parts.count - 1] += text
        }

        private func attribute(_ name: String, _ attributes: [String: String]) -> String? {
            attributes.first { $0.key == name || $0.key.hasSuffix(":" + name) }?.value
        }

        func parser(
            _ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            if textElements.contains(element) { textDepth += 1 }
            switch (vocabulary, element) {
            case (.sharedStrings, "si"): parts.append("")
            case (.openDocument(let part?), _) where element == part: parts.append("")
            case (.worksheet, "c"):
                cellType = attribute("t", attributes)
                cellStart = parts[parts.count - 1].utf8.count
            case (.wordprocessing, "tab"), (.openDocument, "tab"): append("\t")
            case (.wordprocessing, "br"), (.wordprocessing, "cr"), (.presentation, "br"),
                (.openDocument, "line-break"):
                append("\n")
            case (.openDocument, "s"):
                append(
                    String(
                        repeating: " ", count: attribute("c", attributes).flatMap { Int($0) }.map { min($0, 100) } ?? 1)
                )
            default: break
            }
        }

        func parser(
            _ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?
        ) {
            if textElements.contains(element) { textDepth -= 1 }
            switch (vocabulary, element) {
            case (.wordprocessing, "p"), (.presentation, "p"), (.openDocument, "p"), (.openDocument, "h"),
                (.worksheet, "row"):
                append("\n")
            case (.worksheet(let shared), "c"):
                if cellType == "s", let start = cellStart {
                    let last = parts.count - 1
                    let bytes = Array(parts[last].utf8)
                    let index = Int(
                        String(decoding: bytes[start...], as: UTF8.self).trimmingCharacters(in: .whitespaces))
                    parts[last] = String(decoding: bytes[..<start], as: UTF8.self)
                    if let index, shared.indices.contains(index) { parts[last] += shared[index] }
                }
                cellType = nil
                cellStart = nil
                append("\t")
            default: break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            if textDepth > 0 { append(string) }
        }
    }
}
