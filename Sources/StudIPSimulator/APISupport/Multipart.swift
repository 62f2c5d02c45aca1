import Foundation

/// The file parts of a `multipart/form-data` body (uploads), as PHP's `$_FILES` sees them.
struct MultipartFile: Sendable {
    var fieldName: String
    var fileName: String
    var contentType: String?
    var data: Data

    /// Every part that carries a `filename`; nil when the body is not multipart or has no boundary.
    static func files(body: Data, contentType: String?) -> [MultipartFile]? {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/form-data"),
            let boundary = parameter("boundary", in: contentType)
        else { return nil }
        let delimiter = Data("--\(boundary)".utf8)
        var files: [MultipartFile] = []
        var cursor = body.startIndex
        guard let first = body.range(of: delimiter, in: cursor..<body.endIndex) else { return [] }
        cursor = first.upperBound
        while let next = body.range(of: delimiter, in: cursor..<body.endIndex) {
            let part = body[cursor..<next.lowerBound]
            cursor = next.upperBound
            if let file = parsePart(Data(part)) { files.append(file) }
        }
        return files
    }

    private static func parsePart(_ part: Data) -> MultipartFile? {
        let separator = Data("\r\n\r\n".utf8)
        guard let split = part.range(of: separator),
            let head = String(data: part[part.startIndex..<split.lowerBound], encoding: .utf8)
        else { return nil }
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
        guard let fileName = parameter("filename", in: disposition) else { return nil }
        return MultipartFile(
            fieldName: parameter("name", in: disposition) ?? "", fileName: fileName, contentType: type,
            data: Data(content))
    }

    /// A `key=value` or `key="value"` parameter of a header value.
    private static func parameter(_ name: String, in header: String) -> String? {
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
