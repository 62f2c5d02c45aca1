import Foundation

/// `GET`/`HEAD file-refs/{id}/content` (API.md §3.7): ETag `"<ino> <mtime> <size>"`, 304 on `If-None-Match`,
/// 302 for documents hosted elsewhere, plain-text errors, download counting.
extension JSONAPIEnvironment {
    func content(id: String, viewer: User) -> SimResponse {
        guard let ref = university.fileRefs[id] else { return plain(404, "Not Found") }
        guard university.canDownload(ref, user: viewer) else { return plain(403, "Forbidden") }
        let html = ("Content-Type", "text/html; charset=UTF-8")
        if case .external(let url) = ref.content {
            // Stud.IP redirects only a GET; a HEAD gets 200 without an ETag (fixture `p6_jsonapi_content_head`).
            guard request.method == "GET" else { return SimResponse(status: 200, headers: [html], route: route) }
            let location = url.hasPrefix("/") ? context.externalBaseURL + url : url
            return SimResponse(status: 302, headers: [html, ("Location", location)], route: route)
        }
        let etag = Self.etag(for: ref)
        if let match = request.header("if-none-match"), Self.matches(match, etag: etag) {
            return SimResponse(status: 304, headers: [("ETag", etag)], route: route)
        }
        if request.method == "HEAD" {
            return SimResponse(status: 200, headers: [html, ("ETag", etag)], route: route)
        }
        if ref.userID != viewer.id, university.folders[ref.folderID]?.folderType != "HomeworkFolder" {
            _ = try? context.mutate { university in
                guard var counted = university.fileRefs[id] else { return }
                counted.downloads += 1
                try university.update(counted)
            }
        }
        let name = ContentDisposition.cleanFileName(ref.name)
        let disposition =
            layout.contentDispositionWithFallback
            ? ContentDisposition.attachmentWithFallback(name) : ContentDisposition.attachment(name)
        let headers = [
            ("Content-Type", Self.contentType(ref.mimeType)), ("ETag", etag), ("Content-Disposition", disposition),
        ]
        // 5.0.7 ignores `Range` here (captured); `content_ranges` answers one as a newer Stud.IP may, and only while
        // an `If-Range` names the current ETag (RFC 9110 §13.1.5: else the whole document).
        let unchanged = request.header("if-range").map { $0 == etag } ?? true
        if context.contentRanges, unchanged, let header = request.header("range"),
            let part = FileIndex.part(header, of: ref.size)
        {
            guard let part else {
                return SimResponse(status: 416, headers: [("Content-Range", "bytes */\(ref.size)")], route: route)
            }
            return SimResponse(
                status: 206,
                headers: headers + [
                    ("Accept-Ranges", "bytes"),
                    ("Content-Range", "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(ref.size)"),
                ],
                body: .document(documentID: ref.id, content: ref.content, size: part.count, offset: part.lowerBound),
                route: route + " range")
        }
        return SimResponse(
            status: 200, headers: headers,
            body: .document(documentID: ref.id, content: ref.content, size: ref.size), route: route)
    }

    /// `"<inode> <mtime> <size>"` of the stored bytes on the server's disk, as the captures show it.
    static func etag(for ref: FileRef) -> String {
        "\"\(ref.inode) \(ref.fileMtime) \(ref.size)\""
    }

    /// Strong comparison only: `W/<current>` does not match (fixture `p2_v4_jsonapi_content_if_none_match_weak`).
    static func matches(_ header: String, etag: String) -> Bool {
        header.split(separator: ",").contains {
            let candidate = $0.trimmingCharacters(in: .whitespaces)
            return candidate == "*" || candidate == etag
        }
    }

    /// The stored type, but never one a browser would render inline; text gets PHP's default charset.
    static func contentType(_ mimeType: String) -> String {
        let lowered = mimeType.lowercased()
        if ["html", "javascript", "svg", "xml"].contains(where: lowered.contains) { return "application/octet-stream" }
        return lowered.hasPrefix("text/") ? "\(mimeType);charset=UTF-8" : mimeType
    }
}
