import CSystemZlib

/// Generated lecture slides: a real PDF 1.4 (landscape pages with a heading and bullet lines in Helvetica, content
/// streams compressed with FlateDecode like real slides) that viewers open and `pdftotext` reads, about the course
/// and lecture of the seed's ``ContentProfile``; stretched to any requested size by an unreferenced stream object of
/// pseudo-random "image data" placed before the cross-reference table, so the xref offsets stay correct.
///
/// Layout: `head` (header, objects, the padding object's dictionary) · `padding` bytes · `tail` (end of the
/// padding stream, xref, trailer). Only head and tail are materialised; they are small and cached.
enum ContentPDF {
    typealias Layout = ContentGenerator.PaddedLayout

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
        cachedLayout(seed: seed, size: size).bytes(range) { padding in
            ContentGenerator.binary(seed: seed ^ 0x1A6E_DA7A, range: padding)
        }
    }

    /// A few recent layouts: a download asks for the same document chunk after chunk.
    private static let cache = ContentGenerator.LayoutCache<Layout>()

    private static func cachedLayout(seed: UInt64, size: Int) -> Layout {
        cache.value(seed: seed, size: size) { makeLayout(seed: seed, size: size) }
    }

    // MARK: - Building

    /// The layout of exactly `size` bytes; below the natural size, a truncated (invalid) natural PDF.
    static func makeLayout(seed: UInt64, size: Int) -> Layout {
        let pages = pageCount(size: size)
        let profile = ContentProfile(seed: seed, kind: .pdf)
        var head: [UInt8] = Array("%PDF-1.4\n%".utf8) + [0xE2, 0xE3, 0xCF, 0xD3, 0x0A]
        var offsets: [Int] = []
        func object(_ body: [UInt8]) {
            offsets.append(head.count)
            head += Array("\(offsets.count) 0 obj\n".utf8) + body + Array("\nendobj\n".utf8)
        }
        let kids = (0..<pages).map { "\(6 + 2 * $0) 0 R" }.joined(separator: " ")
        object(Array("<< /Type /Catalog /Pages 2 0 R >>".utf8))
        object(Array("<< /Type /Pages /Kids [\(kids)] /Count \(pages) >>".utf8))
        object(Array("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>".utf8))
        object(Array("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>".utf8))
        object(
            Array(
                "<< /Title \(utf16Hex("\(profile.course.title) – \(profile.title)")) /Producer (StudIPSimulator) >>"
                    .utf8))
        for page in 0..<pages {
            let content = deflate(pageContent(profile: profile, page: page, pages: pages))
            object(
                Array(
                    ("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 842 595] "
                        + "/Resources << /Font << /F1 3 0 R /F2 4 0 R >> >> /Contents \(7 + 2 * page) 0 R >>").utf8))
            object(
                Array("<< /Length \(content.count) /Filter /FlateDecode >>\nstream\n".utf8) + content
                    + Array("\nendstream".utf8))
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

    /// One slide: page 1 is the title slide (course, document title, course number); the others have a heading
    /// and bullets about the lecture that part of the deck covers, and a footer.
    private static func pageContent(profile: ContentProfile, page: Int, pages: Int) -> [UInt8] {
        var rng = SplitMix64(seed: SplitMix64.derive(profile.seed, 0x0050_4446_0000 + UInt64(page)))
        let course = profile.course
        let footer =
            Array("BT /F1 9 Tf 60 30 Td ".utf8) + literal("\(course.title) – \(profile.title)")
            + Array(" Tj ET\nBT /F1 9 Tf 740 30 Td (\(page + 1) / \(pages)) Tj ET\n".utf8)
        if page == 0 {
            let label = course.english ? "Course" : "Lehrveranstaltung"
            return Array("BT /F2 28 Tf 60 420 Td ".utf8) + literal(course.title) + Array(" Tj ET\n".utf8)
                + Array("BT /F2 22 Tf 60 370 Td ".utf8) + literal(profile.title) + Array(" Tj ET\n".utf8)
                + Array("BT /F1 16 Tf 60 320 Td ".utf8) + literal("\(label) \(course.number)")
                + Array(" Tj ET\n".utf8) + footer
        }
        let lectures = profile.lectures
        let chapter = (page - 1) * lectures.count / max(1, pages - 1)
        let lecture = lectures[chapter]
        var heading = profile.heading(page: page, lecture: lecture, rng: &rng)
        if lectures.count > 1 && (page == 1 || (page - 2) * lectures.count / max(1, pages - 1) != chapter) {
            heading = "\(course.english ? "Chapter" : "Kapitel") \(chapter + 1): \(lecture.title)"
        }
        var text = Array("BT /F2 24 Tf 60 530 Td ".utf8) + literal(heading) + Array(" Tj ET\n".utf8)
        text += Array("BT /F1 16 Tf 22 TL 60 470 Td\n".utf8)
        let exercise = [.sheet, .solution, .exam].contains(profile.role)
        let form = rng.int(in: 0...9)
        for item in 0..<(exercise ? rng.int(in: 2...5) : rng.int(in: 4...10)) {
            let label = exercise ? "\(Character(UnicodeScalar(UInt8(ascii: "a") + UInt8(item))))) " : "- "
            let sentence = profile.sentence(lecture: lecture, rng: &rng, form: form + item)
            let line = literal(label + sentence) + Array(" Tj T*\n".utf8)
            guard text.count + line.count + footer.count + 3 <= contentBudget else { break }
            text += line
        }
        return text + Array("ET\n".utf8) + footer
    }

    /// A PDF literal string in WinAnsiEncoding (Latin-1 plus the en dash), with `\`, `(` and `)` escaped.
    private static func literal(_ text: String) -> [UInt8] {
        var result: [UInt8] = [UInt8(ascii: "(")]
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x5C, 0x28, 0x29: result += [UInt8(ascii: "\\"), UInt8(scalar.value)]
            case 0x20..<0x7F, 0xA0...0xFF: result.append(UInt8(scalar.value))
            case 0x2013: result.append(0x96)
            default: result.append(UInt8(ascii: "?"))
            }
        }
        return result + [UInt8(ascii: ")")]
    }

    /// A text string in UTF-16BE with byte-order mark, as hex: how PDF writers store metadata outside Latin-1.
    private static func utf16Hex(_ text: String) -> String {
        "<FEFF"
            + text.utf16.map {
                let digits = String($0, radix: 16, uppercase: true)
                return String(repeating: "0", count: 4 - digits.count) + digits
            }.joined() + ">"
    }

    /// A zlib stream (RFC 1950), what `/FlateDecode` expects; real slides compress their pages so.
    static func deflate(_ input: [UInt8]) -> [UInt8] {
        var length = compressBound(uLong(input.count))
        var output = [UInt8](repeating: 0, count: Int(length))
        let status = output.withUnsafeMutableBufferPointer { out in
            input.withUnsafeBufferPointer { source in
                compress2(out.baseAddress, &length, source.baseAddress, uLong(input.count), Z_BEST_COMPRESSION)
            }
        }
        // compress2 fails only for lack of memory or a too small buffer, and compressBound rules the latter out.
        precondition(status == Z_OK, "zlib compress2 failed with status \(status)")
        return Array(output.prefix(Int(length)))
    }
}
