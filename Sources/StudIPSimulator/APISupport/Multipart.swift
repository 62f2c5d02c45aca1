import Foundation

/// A `multipart/form-data` body as PHP sees it: `$_FILES` (parts with a `filename`) and `$_POST` (the others).
struct MultipartForm: Sendable {
    var files: [MultipartFile] = []
    /// Text parts by field name; a later part of the same name wins, as in `$_POST`.
    var fields: [String: String] = [:]

    /// Nil when the body is not multipart or has no boundary.
    init?(body: Data, contentType: String?) {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/form-data"),
            let boundary = Self.parameter("boundary", in: contentType)
        else { return nil }
        let delimiter = Data("--\(boundary)".utf8)
        guard var cursor = body.range(of: delimiter)?.upperBound else { return }
        while let next = body.range(of: delimiter, in: cursor..<body.endIndex) {
            add(body[cursor..<next.lowerBound])
            cursor = next.upperBound
        }
    }

    private mutating func add(_ part: Data) {
        let separator = Data("\r\n\r\n".utf8)
        guard let split = part.range(of: separator),
            let head = String(data: part[part.startIndex..<split.lowerBound], encoding: .utf8)
        else { return }
        var content = part[split.upperBound..<part.endIndex]
        if content.suffix(2) == Data("\r\n".utf8) { content = content.dropLast(2) }
        var disposition = ""
        var type: String?
        for line in head.components(separatedBy: "\r\n") {
            let pair = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { continue }
            switch pair[0].lowercased() {
            case "content-disposition": disposition = pair[1]
            case "content-type": type = pair[1]
            default: break
            }
        }
        let name = Self.parameter("name", in: disposition) ?? ""
        guard let fileName = Self.parameter("filename", in: disposition) else {
            fields[name] = String(decoding: content, as: UTF8.self)
            return
        }
        files.append(MultipartFile(fieldName: name, fileName: fileName, contentType: type, data: Data(content)))
    }

    /// A `key=value` or `key="value"` parameter of a header value.
    static func parameter(_ name: String, in header: String) -> String? {
        for item in header.split(separator: ";").dropFirst() {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == name else { continue }
            var value = pair[1]
            if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
                value = String(value.dropFirst().dropLast())
            }
            return value
        }
        return nil
    }
}

/// One file part: `$_FILES[field]`.
struct MultipartFile: Sendable {
    var fieldName: String
    var fileName: String
    var contentType: String?
    var data: Data
}

/// Guesses a MIME type from a file name, as Stud.IP's `get_mime_type()` does for uploads.
enum MIMEType {
    static func guess(fileName: String) -> String {
        let ext = fileName.split(separator: ".").last.map { $0.lowercased() } ?? ""
        return known[ext] ?? "application/octet-stream"
    }

    private static let known: [String: String] = [
        "txt": "text/plain", "md": "text/markdown", "csv": "text/csv", "html": "text/html", "pdf": "application/pdf",
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "zip": "application/zip",
        "json": "application/json", "xml": "application/xml", "svg": "image/svg+xml",
    ]
}
