import Foundation

/// The text of one downloaded document, for the search index and `campusfs grep` (issue 16).
public struct ExtractedText: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        case pdf, presentation, document, spreadsheet, text
    }

    /// A page (PDF), slide (presentation) or sheet (spreadsheet), numbered from 1; one part without a number for
    /// word-processor documents and plain text.
    public struct Part: Sendable, Hashable {
        public var number: Int?
        public var text: String

        public init(number: Int?, text: String) {
            self.number = number
            self.text = text
        }
    }

    public var kind: Kind
    public var parts: [Part]
}

/// Why a document has no text in the index. Recorded per version and extractor: the same bytes fail the same way,
/// except where ``isRetryable`` says the machine's state decided.
public enum ExtractionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Images, archives, video and other formats whose text is not extracted.
    case notIndexable(name: String)
    /// A PDF none of whose pages has text: a scan (OCR is not done).
    case noTextLayer
    /// The extractor ran longer than ``TextExtractor/Limits/time``.
    case timedOut(Duration)
    /// The document needs more than the limits allow: memory, uncompressed bytes or entries (a ZIP bomb), text.
    case tooLarge(String)
    /// The file is not what its name says, or damaged; with what the parser or tool said.
    case broken(String)
    /// The tool could not be started (not installed, no process or memory left); with why.
    case toolUnavailable(String)

    /// Whether the failure depends on the machine rather than the bytes: a time-out at nice 10 under load, a tool
    /// that could not start. The indexer tries such a document again later instead of recording it as final.
    public var isRetryable: Bool {
        switch self {
        case .timedOut, .toolUnavailable: true
        case .notIndexable, .noTextLayer, .tooLarge, .broken: false
        }
    }

    public var description: String {
        switch self {
        case .notIndexable(let name): "\(name): a format whose text is not indexed"
        case .noTextLayer: "a PDF without a text layer (a scan?): its text cannot be searched"
        case .timedOut(let limit): "text extraction took longer than \(limit) and was stopped"
        case .tooLarge(let what): "too large to extract: \(what)"
        case .broken(let detail): "damaged or not the format its name says: \(detail)"
        case .toolUnavailable(let why): "the extractor could not run: \(why)"
        }
    }
}

/// Extracts the text of a downloaded document: PDF through poppler's `pdftotext` in a child with a time and a
/// memory limit, Office Open XML and OpenDocument through their XML, plain text and HTML decoded (docs/search.md).
///
/// Synchronous and blocking (it runs a child process and reads files): callers run it on
/// `SystemSupport.BlockingPool` (docs/threads.md), never on a task.
public enum TextExtractor {
    /// Bounds for hostile or broken documents; the defaults suit lecture material (slides of a few hundred pages).
    public struct Limits: Sendable, Hashable {
        /// Wall-clock time of `pdftotext`.
        public var time: Duration = .seconds(30)
        /// Virtual memory of `pdftotext` (its libraries alone map about 60 MB).
        public var addressSpace = 1 << 30
        /// Uncompressed bytes read from one ZIP container, counted as they stream, never taken from its headers.
        public var uncompressedBytes = 64 << 20
        /// Entries of one ZIP container.
        public var entries = 10_000
        /// Uncompressed bytes per compressed byte of one entry (XML deflates about 10:1; a bomb far more).
        public var compressionRatio = 200
        /// Bytes of a plain-text file, and of the text `pdftotext` prints.
        public var textBytes = 64 << 20

        public init() {}
    }

    /// The version of the extraction a document with this name and MIME type gets. The index records it with the
    /// text or failure, and extracts again what an older version extracted (docs/search.md, "Indexing"), as
    /// ripgrep-all keys its cache on its adapters' versions. The versions of all formats are steps of one counter:
    /// a change takes the next number above every version given so far, so a new format's documents, recorded as
    /// not indexable under ``Format/unknownVersion``, are older than the new format's version and tried again.
    public static func version(name: String, mimeType: String?) -> Int {
        Format(name: name, mimeType: mimeType)?.version ?? Format.unknownVersion
    }

    /// The text of the document at `file`; its format is told by `name`'s extension, else by `mimeType`.
    public static func extract(file: URL, name: String, mimeType: String?, limits: Limits = Limits())
        throws(ExtractionError) -> ExtractedText
    {
        guard let format = Format(name: name, mimeType: mimeType) else { throw .notIndexable(name: name) }
        let text: ExtractedText
        switch format {
        case .pdf: text = try PDFText.extract(file, limits: limits)
        case .zip(let container): text = try ZIPText.extract(file, container, limits: limits)
        case .text(let html): text = try PlainText.extract(file, html: html, limits: limits)
        }
        // One form of umlauts (macOS and some editors write NFD), so that a search for "Übung" finds both.
        return ExtractedText(
            kind: text.kind,
            parts: text.parts.map { .init(number: $0.number, text: $0.text.precomposedStringWithCanonicalMapping) })
    }
}

/// The formats whose text is extracted.
enum Format: Hashable {
    case pdf
    case zip(ZIPText.Container)
    case text(html: Bool)

    /// Raised with any change to what this format's extraction gives (docs/search.md, "Indexing").
    var version: Int {
        switch self {
        case .pdf: 1
        case .zip: 1
        case .text(html: true): 2  // Issue 29: HTMLText's entity table, which knows more names.
        case .text(html: false): 1
        }
    }

    /// The formats not extracted. Adding a format gives it and this the next number of the counter (see
    /// ``TextExtractor/version(name:mimeType:)``): the next is 3.
    static let unknownVersion = 1

    private static let byExtension: [String: Format] = {
        var formats: [String: Format] = [
            "pdf": .pdf, "docx": .zip(.docx), "pptx": .zip(.pptx), "xlsx": .zip(.xlsx), "odt": .zip(.odt),
            "odp": .zip(.odp), "ods": .zip(.ods), "html": .text(html: true), "htm": .text(html: true),
            "xhtml": .text(html: true),
        ]
        let plain =
            "txt text md markdown rst csv tsv json xml yaml yml toml ini cfg conf log tex bib sty cls srt vtt "
            + "swift c h cc cpp hpp cxx java kt scala py rb pl php js mjs ts tsx jsx go rs hs ml m r jl lua sh bash "
            + "zsh sql css scss asm s vhd vhdl v sv pas f f90 erl ex exs clj lisp scm pro prolog ipynb"
        for ext in plain.split(separator: " ") { formats[String(ext)] = .text(html: false) }
        return formats
    }()

    private static let byMIME: [String: Format] = [
        "application/pdf": .pdf,
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document": .zip(.docx),
        "application/vnd.openxmlformats-officedocument.presentationml.presentation": .zip(.pptx),
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": .zip(.xlsx),
        "application/vnd.oasis.opendocument.text": .zip(.odt),
        "application/vnd.oasis.opendocument.presentation": .zip(.odp),
        "application/vnd.oasis.opendocument.spreadsheet": .zip(.ods),
        "text/html": .text(html: true), "application/xhtml+xml": .text(html: true),
        "application/json": .text(html: false), "application/xml": .text(html: false),
    ]

    /// The extension first: Stud.IP often serves documents as `application/octet-stream`.
    init?(name: String, mimeType: String?) {
        let ext = (name as NSString).pathExtension.lowercased()
        let mime = mimeType?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if let format = Self.byExtension[ext] {
            self = format
        } else if let mime, let format = Self.byMIME[mime] {
            self = format
        } else if let mime, mime.hasPrefix("text/") {
            self = .text(html: false)
        } else {
            return nil
        }
    }
}
