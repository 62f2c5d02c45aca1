import Foundation
import HTMLText
import StudIPSimulator
import SystemSupport
import Testing
import TextExtraction

/// Real documents through the real tools: the simulator's PDFs, ghostscript's, ZIP containers written by Python's
/// `zipfile` (the minimal XML each format needs — no PyPI package, so nothing to install beyond python3).
@Suite struct TextExtractorTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("text-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    private func write(_ name: String, _ bytes: some Sequence<UInt8>) throws -> URL {
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url
    }

    /// Runs a Python script that writes its files into the test's directory.
    private func python(_ script: String) throws {
        let output = try Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/env"), ["python3", "-c", script, directory.path])
        #expect(output.status == 0, "\(String(decoding: output.stderr, as: UTF8.self))")
    }

    @Test func theSimulatorsCompressedPDFKeepsItsPages() throws {
        let size = 20_000
        let file = try write(
            "deck.pdf", ContentGenerator.bytes(kind: .pdf, seed: 42, size: size, offset: 0, length: size))
        let text = try TextExtractor.extract(file: file, name: "deck.pdf", mimeType: "application/pdf")
        #expect(text.kind == .pdf)
        let pages = text.parts.count
        #expect(pages > 3)
        #expect(text.parts.map(\.number) == (1...pages).map { $0 })
        #expect(text.parts[0].text.contains(ContentGenerator.title(seed: 42)))
        // The footer "N / M"; pdftotext drops the spaces.
        for part in text.parts { #expect(part.text.contains("\(part.number ?? 0)/\(pages)")) }
    }

    @Test func ghostscriptsPDFHasItsWordsOnTheirPages() throws {
        let ps = try write(
            "three.ps",
            Data(
                """
                %!PS
                /Helvetica findfont 20 scalefont setfont
                72 700 moveto (Alpha first page) show showpage
                72 700 moveto (Bravo second page) show showpage
                72 700 moveto (Charlie third page) show showpage
                """.utf8))
        let pdf = directory.appendingPathComponent("three.pdf")
        let made = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/ps2pdf"), [ps.path, pdf.path])
        #expect(made.status == 0)
        let text = try TextExtractor.extract(file: pdf, name: "three.pdf", mimeType: nil)
        #expect(
            text.parts == [
                .init(number: 1, text: "Alpha first page"), .init(number: 2, text: "Bravo second page"),
                .init(number: 3, text: "Charlie third page"),
            ])
    }

    @Test func aPDFWithoutTextIsAScan() throws {
        let ps = try write("scan.ps", Data("%!PS\n72 72 200 200 rectfill showpage\n".utf8))
        let pdf = directory.appendingPathComponent("scan.pdf")
        _ = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/ps2pdf"), [ps.path, pdf.path])
        #expect(throws: ExtractionError.noTextLayer) {
            try TextExtractor.extract(file: pdf, name: "scan.pdf", mimeType: nil)
        }
    }

    /// A valid PDF whose one page draws 400,000 overlapping words: pdftotext needs minutes and gigabytes for it.
    private func heavyPDF() throws -> URL {
        try python(
            """
            import sys, zlib
            body = b"BT /F1 10 Tf " + b"0.001 0.0001 Td (Stoff) Tj " * 400000 + b"ET"
            stream = zlib.compress(body, 9)
            objs = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
                b" /Resources << /Font << /F1 5 0 R >> >> >>",
                b"<< /Length %d /Filter /FlateDecode >>\\nstream\\n" % len(stream) + stream + b"\\nendstream",
                b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
            out = bytearray(b"%PDF-1.4\\n"); offsets = []
            for i, o in enumerate(objs):
                offsets.append(len(out)); out += b"%d 0 obj\\n" % (i + 1) + o + b"\\nendobj\\n"
            xref = len(out)
            out += b"xref\\n0 %d\\n0000000000 65535 f \\n" % (len(objs) + 1)
            for off in offsets: out += b"%010d 00000 n \\n" % off
            out += b"trailer\\n<< /Size %d /Root 1 0 R >>\\nstartxref\\n%d\\n%%%%EOF\\n" % (len(objs) + 1, xref)
            open(sys.argv[1] + "/heavy.pdf", "wb").write(out)
            """)
        return directory.appendingPathComponent("heavy.pdf")
    }

    @Test func aHeavyPDFIsStoppedByTheTimeLimit() throws {
        var limits = TextExtractor.Limits()
        limits.time = .milliseconds(200)
        let start = ContinuousClock.now
        #expect(throws: ExtractionError.timedOut(.milliseconds(200))) {
            try TextExtractor.extract(file: try heavyPDF(), name: "heavy.pdf", mimeType: nil, limits: limits)
        }
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test func aHeavyPDFIsStoppedByTheMemoryLimit() throws {
        var limits = TextExtractor.Limits()
        // Poppler 22.12.0-2+deb12u3's pdftotext maps ~46 MB before it reads and then grows ~1 MB/s on this PDF (an
        // earlier build: ~60 MB, faster), so 80 MB took ~35 s and hit the time limit first; 56 MB aborts in ~10 s.
        limits.addressSpace = 56 << 20
        limits.time = .seconds(90)
        let error = #expect(throws: ExtractionError.self) {
            try TextExtractor.extract(file: try heavyPDF(), name: "heavy.pdf", mimeType: nil, limits: limits)
        }
        guard case .tooLarge = error else {
            Issue.record("expected tooLarge, got \(String(describing: error))")
            return
        }
    }

    private static let officeScript = """
        import sys, zipfile
        d = sys.argv[1]
        def z(name, files):
            with zipfile.ZipFile(d + "/" + name, "w", zipfile.ZIP_DEFLATED) as f:
                for path, text in files.items(): f.writestr(path, text)
        W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
        z("doc.docx", {"[Content_Types].xml": "<Types/>", "word/document.xml":
            f'<w:document {W}><w:body><w:p><w:r><w:t>Prüfungsordnung</w:t></w:r></w:p>'
            '<w:p><w:r><w:t xml:space="preserve">Übung </w:t></w:r><w:r><w:t>3</w:t></w:r></w:p></w:body></w:document>'})
        A = ('xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main" '
            'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"')
        slide = lambda t: (f'<p:sld {A}><p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>{t}</a:t></a:r></a:p>'
            '</p:txBody></p:sp></p:spTree></p:cSld></p:sld>')
        z("talk.pptx", {"ppt/slides/slide10.xml": slide("Zehn"), "ppt/slides/slide2.xml": slide("Zwei"),
            "ppt/slides/slide1.xml": slide("B-Baum Definition")})
        O = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
            'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"')
        z("notes.odt", {"mimetype": "application/vnd.oasis.opendocument.text", "content.xml":
            f'<office:document-content {O}><office:body><office:text><text:h>Kapitel 1</text:h>'
            '<text:p>Gr<text:span>öß</text:span>e<text:s text:c="2"/>Zahl</text:p></office:text></office:body>'
            '</office:document-content>'})
        with zipfile.ZipFile(d + "/bomb.docx", "w", zipfile.ZIP_DEFLATED) as f:
            with f.open("word/document.xml", "w") as e:
                e.write(f'<w:document {W}><w:body><w:p><w:r><w:t>'.encode())
                chunk = b"a" * (1 << 20)
                for _ in range(200): e.write(chunk)
                e.write(b"</w:t></w:r></w:p></w:body></w:document>")
        """

    @Test func officeDocumentsKeepTheirSlidesAndParagraphs() throws {
        try python(Self.officeScript)
        let doc = try TextExtractor.extract(
            file: directory.appendingPathComponent("doc.docx"), name: "doc.docx", mimeType: nil)
        #expect(doc.kind == .document)
        #expect(doc.parts == [.init(number: nil, text: "Prüfungsordnung\nÜbung 3")])
        let talk = try TextExtractor.extract(
            file: directory.appendingPathComponent("talk.pptx"), name: "talk.pptx", mimeType: nil)
        #expect(talk.kind == .presentation)
        #expect(
            talk.parts == [
                .init(number: 1, text: "B-Baum Definition"), .init(number: 2, text: "Zwei"),
                .init(number: 3, text: "Zehn"),
            ])
        let notes = try TextExtractor.extract(
            file: directory.appendingPathComponent("notes.odt"), name: "notes.odt", mimeType: nil)
        #expect(notes.parts == [.init(number: nil, text: "Kapitel 1\nGröße  Zahl")])
    }

    @Test func aZIPBombIsStopped() throws {
        try python(Self.officeScript)
        let bomb = directory.appendingPathComponent("bomb.docx")
        let error = #expect(throws: ExtractionError.self) {
            try TextExtractor.extract(file: bomb, name: "bomb.docx", mimeType: nil)
        }
        guard case .tooLarge = error else {
            Issue.record("expected tooLarge, got \(String(describing: error))")
            return
        }
    }

    @Test func textIsDecodedAndNormalized() throws {
        let latin = try write("alt.txt", [0x50, 0x72, 0xFC, 0x66, 0x75, 0x6E, 0x67, 0x20, 0x80, 0xFF])
        #expect(
            try TextExtractor.extract(file: latin, name: "alt.txt", mimeType: nil).parts
                == [.init(number: nil, text: "Prüfung €ÿ")])
        let nfdName = "U\u{308}bung.md"
        let nfd = try write(nfdName, Data("# U\u{308}bung\n".utf8))
        let text = try TextExtractor.extract(file: nfd, name: nfdName, mimeType: "text/markdown")
        #expect(text.parts[0].text.unicodeScalars.elementsEqual("# \u{DC}bung\n".unicodeScalars))
    }

    @Test func htmlLosesItsMarkup() throws {
        let page = try write(
            "page.html",
            Data(
                ("<html><head><title>T</title><style>p{}</style></head><body><script>var x = '<p>';</script>"
                    + "<p>Stra&szlig;e &amp; Br&#252;cke</p><!-- hidden --><p>zwei&#x21;</p></body></html>").utf8))
        let text = try TextExtractor.extract(file: page, name: "page.html", mimeType: nil)
        #expect(text.parts == [.init(number: nil, text: "Straße & Brücke\nzwei!\n")])
    }

    /// Issue 29: one table of character references for the whole product: names the extractor's own table lacked
    /// (`&trade;`, `&rarr;`, `&frac12;`, `&ccedil;`) decode in a page's text as they do in announcements and login
    /// pages (`HTMLEntities`); a no-break space becomes a plain one, so that grep's spaces match it.
    @Test func htmlReferencesDecodeAsEverywhereElse() throws {
        let references = "Caf&ccedil;&nbsp;&trade; &frac12; &rarr; &lsaquo;x&rsaquo;"
        let page = try write("refs.html", Data("<p>\(references)</p>".utf8))
        let text = try TextExtractor.extract(file: page, name: "refs.html", mimeType: nil)
        let expected = "Caf\u{E7} \u{2122} \u{BD} \u{2192} \u{2039}x\u{203A}"
        #expect(text.parts == [.init(number: nil, text: expected + "\n")])
        #expect(HTMLEntities.decode(references) == expected.replacingOccurrences(of: "f\u{E7} ", with: "f\u{E7}\u{A0}"))
    }

    @Test func imagesAndArchivesAreNotIndexed() throws {
        let image = try write("photo.png", [0x89, 0x50, 0x4E, 0x47])
        #expect(throws: ExtractionError.notIndexable(name: "photo.png")) {
            try TextExtractor.extract(file: image, name: "photo.png", mimeType: "image/png")
        }
    }
}
