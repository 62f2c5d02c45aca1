import Foundation
import StudIPModel

/// The naming rules (docs/metadata-store.md, "Names"), as pure functions: sanitizing, extensions from MIME types, the
/// 255-byte limit and duplicate suffixes. Deterministic, so the same server data always yields the same base names.
/// MetadataStore's rules, in a module of their own so that `campusfs-fuzz` checks them without GRDB.
package enum Naming {
    /// Linux's `NAME_MAX`, in UTF-8 bytes.
    package static let maximumBytes = 255

    /// Used for names that sanitize to nothing.
    static let fallback = "_"

    /// NFC; `/` → `-`; control characters (NUL included) → `_`; `.`/`..` → `_.`/`_..`; empty → `_`.
    package static func sanitize(_ raw: String) -> String {
        var scalars = String.UnicodeScalarView()
        for scalar in raw.precomposedStringWithCanonicalMapping.unicodeScalars {
            if scalar == "/" {
                scalars.append("-")
            } else if scalar.properties.generalCategory == .control {
                scalars.append("_")
            } else {
                scalars.append(scalar)
            }
        }
        let name = String(scalars)
        if name == "." || name == ".." { return "_" + name }
        return name.isEmpty ? fallback : name
    }

    /// The base name of a directory (semester, course, folder): sanitized and at most 255 bytes.
    package static func directoryName(_ raw: String, id: String) -> String {
        fitted(sanitize(raw), id: id, isDocument: false)
    }

    /// The base name of a document: sanitized, an extension from the MIME type when it has none, at most 255 bytes.
    package static func documentName(_ raw: String, mimeType: String, id: String) -> String {
        var name = sanitize(raw)
        if split(name, isDocument: true).ext.isEmpty, let ext = fileExtension(forMIMEType: mimeType) {
            name += "." + ext
        }
        return fitted(name, id: id, isDocument: true)
    }

    /// The course directory's name from the template: `{number}`, `{title}`, `{subtitle}`; blanks collapse.
    package static func courseName(template: String, course: RemoteCourse) -> String {
        let filled =
            template
            .replacingOccurrences(of: "{number}", with: course.number)
            .replacingOccurrences(of: "{title}", with: course.title)
            .replacingOccurrences(of: "{subtitle}", with: course.subtitle)
        let collapsed = filled.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        let trimmed = collapsed.trimmingCharacters(in: .whitespaces)
        return directoryName(trimmed.isEmpty ? course.title : trimmed, id: course.id)
    }

    /// The `n`-th candidate for a base name: the name itself, then ` (2)`, ` (3)`… before a document's extension,
    /// shortened so that it still fits 255 bytes.
    package static func candidate(_ base: String, number: Int, isDocument: Bool) -> String {
        guard number > 1 else { return base }
        let (stem, ext) = split(base, isDocument: isDocument)
        return join(stem: stem, suffix: " (\(number))", ext: ext)
    }

    /// Cuts names over 255 bytes at a character boundary, keeping the extension and adding ` ~<6 hex of id>`.
    static func fitted(_ name: String, id: String, isDocument: Bool) -> String {
        guard name.utf8.count > maximumBytes else { return name }
        let (stem, ext) = split(name, isDocument: isDocument)
        return join(stem: stem, suffix: " ~" + shortID(id), ext: ext)
    }

    /// Splits `name` into stem and extension (with its dot). An extension is 1–10 ASCII letters or digits, at least
    /// one of them a letter, after a dot that does not start the name: `Blatt 3.1` and `.bashrc` have none.
    static func split(_ name: String, isDocument: Bool) -> (stem: Substring, ext: Substring) {
        let whole = name[...]
        guard isDocument, let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (whole, "") }
        let ext = name[name.index(after: dot)...]
        let isExtension =
            (1...10).contains(ext.utf8.count) && ext.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
            && ext.contains { $0.isLetter }
        return isExtension ? (name[..<dot], name[dot...]) : (whole, "")
    }

    /// `stem + suffix + ext`, with the stem cut at a character boundary (and trailing blanks dropped) to fit.
    private static func join(stem: Substring, suffix: String, ext: Substring) -> String {
        let budget = maximumBytes - suffix.utf8.count - ext.utf8.count
        var used = 0
        var end = stem.startIndex
        for character in stem {
            let bytes = character.utf8.count
            guard used + bytes <= budget else { break }
            used += bytes
            end = stem.index(after: end)
        }
        var cut = stem[..<end]
        if end != stem.endIndex {
            while let last = cut.last, last.isWhitespace { cut = cut.dropLast() }
        }
        return String(cut) + suffix + String(ext)
    }

    /// Six hex digits naming the item: the start of the id when it is hex (Stud.IP ids are 32 hex digits),
    /// otherwise of its FNV-1a hash.
    package static func shortID(_ id: String) -> String {
        let head = id.lowercased().prefix(6)
        if head.count == 6, head.allSatisfy(\.isHexDigit) { return String(head) }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in id.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        let hex = String(hash & 0xFF_FFFF, radix: 16)
        return String(repeating: "0", count: 6 - hex.count) + hex
    }

    /// The extension for a MIME type, or nil for unknown and meaningless ones ("0", `application/octet-stream`).
    static func fileExtension(forMIMEType mimeType: String) -> String? {
        let essence = mimeType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        return extensions[essence.trimmingCharacters(in: .whitespaces).lowercased()]
    }

    private static let extensions: [String: String] = [
        "application/pdf": "pdf",
        "text/plain": "txt",
        "text/markdown": "md",
        "text/x-markdown": "md",
        "text/html": "html",
        "text/csv": "csv",
        "text/xml": "xml",
        "application/xml": "xml",
        "application/json": "json",
        "application/rtf": "rtf",
        "text/rtf": "rtf",
        "text/x-tex": "tex",
        "application/x-tex": "tex",
        "image/png": "png",
        "image/jpeg": "jpg",
        "image/gif": "gif",
        "image/svg+xml": "svg",
        "image/webp": "webp",
        "application/zip": "zip",
        "application/x-zip-compressed": "zip",
        "application/gzip": "gz",
        "application/x-tar": "tar",
        "application/x-7z-compressed": "7z",
        "application/msword": "doc",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
        "application/vnd.ms-powerpoint": "ppt",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
        "application/vnd.ms-excel": "xls",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
        "application/vnd.oasis.opendocument.text": "odt",
        "application/vnd.oasis.opendocument.presentation": "odp",
        "application/vnd.oasis.opendocument.spreadsheet": "ods",
        "video/mp4": "mp4",
        "video/webm": "webm",
        "audio/mpeg": "mp3",
        "audio/ogg": "ogg",
    ]
}
