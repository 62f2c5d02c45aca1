import Synchronization

/// Generated lecture slides: a real PDF 1.4 (landscape pages with a heading and bullet lines in Helvetica) that
/// viewers open and `pdftotext` reads, stretched to any requested size by an unreferenced stream object of
/// pseudo-random "image data" placed before the cross-reference table, so the xref offsets stay correct.
///
/// Layout: `head` (header, objects, the padding object's dictionary) · `padding` bytes · `tail` (end of the
/// padding stream, xref, trailer). Only head and tail are materialised; they are small and cached.
enum ContentPDF {
    struct Layout: Sendable {
        var head: [UInt8]
        var padding: Int
        var tail: [UInt8]
    }

    static let maximumPages = 40
    /// Upper bounds of the layout, so the page count can be chosen from the size alone (tests check them).
    static let fixedBound = 1_500
    static let pageBound = 2_400
    private static let contentBudget = 1_900

    static func sizeBound(pages: Int) -> Int {
        fixedBound + pages * pageBound
    }

    /// More pages for bigger files, like real slide decks; always few enough to fit the size.
    static func pageCount(size: Int) -> Int {
        max(1, min(maximumPages, (size - fixedBound) / pageBound))
    }

    static func bytes(seed: UInt64, size: Int, range: Range<Int>) -> [UInt8] {
        let layout = cachedLayout(seed: seed, size: size)
        var result: [UInt8] = []
        result.reserveCapacity(range.count)
        let headEnd = layout.head.count
        let paddingEnd = headEnd + layout.padding
        if range.lowerBound < headEnd {
            result += layout.head[range.lowerBound..<min(range.upperBound, headEnd)]
        }
        if range.upperBound > headEnd && range.lowerBound < paddingEnd {
            let from = max(range.lowerBound, headEnd) - headEnd
            let to = min(range.upperBound, paddingEnd) - headEnd
            result += ContentGenerator.binary(seed: seed ^ 0x1A6E_DA7A, range: from..<to)
        }
        if range.upperBound > paddingEnd {
            let from = max(range.lowerBound, paddingEnd) - paddingEnd
            let to = min(range.upperBound - paddingEnd, layout.tail.count)
            if from < to { result += layout.tail[from..<to] }
        }
        return result
    }

    // MARK: - Cache

    private struct Key: Hashable {
        var seed: UInt64
        var size: Int
    }

    /// A few recent layouts: a download asks for the same document chunk after chunk. Bounded, so it cannot grow.
    private static let cache = Mutex<[Key: Layout]>([:])
    private static let cacheLimit = 32

    private static func cachedLayout(seed: UInt64, size: Int) -> Layout {
        let key = Key(seed: seed, size: size)
        if let layout = cache.withLock({ $0[key] }) { return layout }
        let layout = makeLayout(seed: seed, size: size)
        cache.withLock { entries in
            if entries.count >= cacheLimit { entries.removeAll(keepingCapacity: true) }
            entries[key] = layout
        }
        return layout
    }

    // MARK: - Building

    /// The layout of exactly `size` bytes; below the natural size, a truncated (invalid) natural PDF.
    static func makeLayout(seed: UInt64, size: Int) -> Layout {
        let pages = pageCount(size: size)
        var head: [UInt8] = Array("%PDF-1.4\n%".utf8) + [0xE2, 0xE3, 0xCF, 0xD3, 0x0A]
        var offsets: [Int] = []
        func object(_ body: String) {
            offsets.append(head.count)
            head += Array("\(offsets.count) 0 obj\n\(body)\nendobj\n".utf8)
        }
        let title = ContentGenerator.title(seed: seed)
        let kids = (0..<pages).map { "\(6 + 2 * $0) 0 R" }.joined(separator: " ")
        object("<< /Type /Catalog /Pages 2 0 R >>")
        object("<< /Type /Pages /Kids [\(kids)] /Count \(pages) >>")
        object("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
        object("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>")
        object("<< /Title (\(escape(title))) /Producer (StudIPSimulator) >>")
        for page in 0..<pages {
            let content = pageContent(seed: seed, title: title, page: page, pages: pages)
            object(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 842 595] "
                    + "/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents \(7 + 2 * page) 0 R >>")
            object("<< /Length \(content.utf8.count) >>\nstream\n\(content)\nendstream")
        }
        let paddingNumber = offsets.count + 1
        offsets.append(head.count)

        func finish(padding: Int, carriageReturn: Bool) -> (layout: Layout, xref: Int) {
            let lengthField = String(padding)
            var withLength = head
            withLength += Array(
                "\(paddingNumber) 0 obj\n<< /Length \(String(repeating: " ", count: 12 - lengthField.count))"
                    .utf8)
            withLength += Array("\(lengthField) >>\nstream\n".utf8)
            var tail = Array("\nendstream\nendobj\n".utf8)
            let xref = withLength.count + padding + tail.count
            tail += Array("xref\n0 \(offsets.count + 1)\n0000000000 65535 f \n".utf8)
            for offset in offsets {
                tail += Array("\(offset.padded(10)) 00000 n \n".utf8)
            }
            tail += Array("trailer\n<< /Size \(offsets.count + 1) /Root 1 0 R /Info 5 0 R >>\n".utf8)
            tail += Array("startxref\(carriageReturn ? "\r\n" : "\n")\(xref)\n%%EOF\n".utf8)
            return (Layout(head: withLength, padding: padding, tail: tail), xref)
        }

        // Head and tail lengths depend on the padding only through the digits of the xref offset (the length
        // field is fixed-width); try each digit count, and an optional CR for the one size per power of ten
        // where neither fits.
        let (natural, naturalXref) = finish(padding: 0, carriageReturn: false)
        let fixed = natural.head.count + natural.tail.count - String(naturalXref).count
        for carriageReturn in [false, true] {
            for digits in 1...19 {
                let padding = size - fixed - digits - (carriageReturn ? 1 : 0)
                guard padding >= 0 else { break }
                let (layout, _) = finish(padding: padding, carriageReturn: carriageReturn)
                if layout.head.count + padding + layout.tail.count == size { return layout }
            }
        }
        let whole = natural.head + natural.tail
        return Layout(head: Array(whole.prefix(size)), padding: 0, tail: [])
    }

    /// One slide: a heading, bullet lines and a footer; page 1 is the title slide.
    private static func pageContent(seed: UInt64, title: String, page: Int, pages: Int) -> String {
        var rng = SplitMix64(seed: SplitMix64.derive(seed, 0x0050_4446_0000 + UInt64(page)))
        let heading =
            page == 0 ? title : ContentWords.slideHeadings[rng.int(in: 0...(ContentWords.slideHeadings.count - 1))]
        var text = "BT /F2 \(page == 0 ? 30 : 24) Tf 60 \(page == 0 ? 400 : 530) Td (\(escape(heading))) Tj ET\n"
        let footer = "BT /F1 9 Tf 60 30 Td (\(escape(title)) - Page \(page + 1) of \(pages)) Tj ET\n"
        text += "BT /F1 16 Tf 22 TL 60 \(page == 0 ? 350 : 470) Td\n"
        let lines = page == 0 ? 2 : rng.int(in: 6...18)
        for _ in 0..<lines {
            let line = "(\(page == 0 ? "" : "- ")\(escape(sentence(rng: &rng)))) Tj T*\n"
            guard text.utf8.count + line.utf8.count + footer.utf8.count + 3 <= contentBudget else { break }
            text += line
        }
        return text + "ET\n" + footer
    }

    /// A capitalised sentence of at most 80 characters.
    private static func sentence(rng: inout SplitMix64) -> String {
        var words: [String] = []
        var length = 0
        for _ in 0..<rng.int(in: 4...11) {
            let word = String(decoding: rng.pick(ContentWords.words), as: UTF8.self)
            guard length + word.count + 1 <= 79 else { break }
            words.append(word)
            length += word.count + 1
        }
        let text = words.joined(separator: " ")
        return text.prefix(1).uppercased() + text.dropFirst()
    }

    /// PDF literal strings need `\`, `(` and `)` escaped.
    private static func escape(_ text: String) -> String {
        var result = ""
        for character in text {
            if character == "\\" || character == "(" || character == ")" { result.append("\\") }
            result.append(character)
        }
        return result
    }
}
