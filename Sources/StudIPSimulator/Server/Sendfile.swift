import Foundation

/// `sendfile.php?type=0&file_id=…&file_name=…`: Stud.IP's web download, the only route of 5.0.7 that answers byte
/// ranges, as captured on 5.0.7 (docs/simulator.md, "sendfile.php"). Only the web session counts: Basic is ignored,
/// and without a valid session the answer is 200 with the login page, never 401. One range → 206 with an exact
/// `Content-Range` (an end past the size clipped); several, or a start past the end → 416; no `Range` → 200 that
/// still carries `Content-Range`; no ETag; `Last-Modified` is the time of the request.
///
/// A suffix longer than the file (`bytes=-2000000`) gets what 5.0.7 sends: a 206 whose `Content-Range` starts
/// below zero and whose `Content-Length` is the suffix, then the whole file and a closed connection — so a
/// client must check every `Content-Range` against what it asked for. A one-byte range gets the first byte of the
/// document whatever it asked for, which no header shows.
extension WebRoutes {
    func sendfile(_ request: SimRequest, context: SimContext) -> SimResponse {
        let head = request.method == "HEAD"
        let html = ("Content-type", "text/html; charset=UTF-8")
        let route = "web \(request.method) sendfile.php"
        guard let user = request.user else {
            var page = loginPage(request, context: context, error: nil, route: route)
            if head { page.body = .empty }
            return page
        }
        let university = context.university
        guard let ref = university.fileRefs[request.queryValue("file_id") ?? ""] else {
            return SimResponse(status: 404, headers: [html], route: route)
        }
        guard university.canDownload(ref, user: user) else {
            return .text(
                "<!DOCTYPE html><html><body><div class=\"messagebox messagebox_error\">"
                    + "Sie haben keine Zugriffsberechtigung für diesen Download!</div></body></html>",
                status: 403, route: route)
        }
        if case .external(let url) = ref.content {
            let location = url.hasPrefix("/") ? context.externalBaseURL + url : url
            return SimResponse(status: 302, headers: [("Location", location), html], route: route)
        }

        let size = ref.size
        // The name comes from the query, not the document (fixture `w9_sendfile_other_file_name`).
        let name = ContentDisposition.cleanFileName(request.queryValue("file_name") ?? ref.name)
        let inline = request.queryValue("force_download") != "1" && Self.showsInline(ref.mimeType)
        let document: [(String, String)] = [
            ("Expires", "Mon, 12 Dec 2001 08:00:00 GMT"),
            ("Last-Modified", StudIPDate.http(Int(Date().timeIntervalSince1970))), ("Pragma", "no-cache"),
            ("Cache-Control", "no-store, no-cache, must-revalidate"), ("Cache-Control", "post-check=0, pre-check=0"),
            ("Content-Type", ref.mimeType),
            ("Content-Disposition", "\(inline ? "inline" : "attachment"); filename=\"\(name)\""),
        ]
        let whole = "bytes 0-\(size - 1)/\(size)"
        // Read once: a settings change between two reads would mix both answers.
        let answersRanges = settings().sendfileRanges
        switch Self.part(answersRanges ? request.header("range") : nil, size: size) {
        case .whole:
            let ranges = answersRanges ? [("Accept-Ranges", "bytes"), ("Content-Range", whole)] : []
            return Self.answer(200, headers: ranges + document, ref, offset: 0, length: size, head: head, route: route)
        case .unsatisfiable:
            return SimResponse(
                status: 416, headers: [("Accept-Ranges", "bytes"), ("Content-Range", whole), html], route: route)
        case .part(let start, let end):
            // A one-byte range gets the document's first byte: 5.0.7 answered `bytes=1499999-1499999` with byte 0
            // under `Content-Range: bytes 1499999-1499999/…` (fixture `w9_sendfile_range_last_byte`).
            return Self.answer(
                206,
                headers: [("Accept-Ranges", "bytes"), ("Content-Range", "bytes \(start)-\(end)/\(size)")] + document,
                ref, offset: start == end ? 0 : max(0, start), length: end - start + 1, head: head,
                route: route + " range")
        }
    }

    enum RangeAnswer: Equatable {
        case whole
        /// `start` is below zero for a suffix longer than the file, as 5.0.7 computes it.
        case part(start: Int, end: Int)
        case unsatisfiable
    }

    /// What 5.0.7 makes of a `Range` header: one `bytes=` range, the end clipped to the size.
    static func part(_ header: String?, size: Int) -> RangeAnswer {
        guard let header, header.hasPrefix("bytes=") else { return .whole }
        let spec = header.dropFirst(6)
        guard !spec.contains(",") else { return .unsatisfiable }
        guard let bounds = FileIndex.bounds(ofRange: spec) else { return .whole }
        let start: Int
        let end: Int
        if bounds.first.isEmpty {
            guard let suffix = Int(bounds.last) else { return .whole }
            (start, end) = (size - suffix, size - 1)
        } else {
            guard let first = Int(bounds.first), first >= 0 else { return .whole }
            guard !bounds.last.isEmpty else {
                return first < size ? .part(start: first, end: size - 1) : .unsatisfiable
            }
            guard let last = Int(bounds.last) else { return .whole }
            (start, end) = (first, min(last, size - 1))
        }
        guard start < size, start <= end else { return .unsatisfiable }
        return .part(start: start, end: end)
    }

    /// A document's bytes, or for HEAD its headers alone. `length` may exceed what lies after `offset` (the
    /// negative-start quirk): the stream then ends short and the connection drops, as 5.0.7's does.
    private static func answer(
        _ status: Int, headers: [(String, String)], _ ref: FileRef, offset: Int, length: Int, head: Bool,
        route: String
    ) -> SimResponse {
        guard !head else {
            return SimResponse(status: status, headers: headers + [("Content-Length", String(length))], route: route)
        }
        return SimResponse(
            status: status, headers: headers,
            body: .document(documentID: ref.id, content: ref.content, size: length, offset: offset), route: route)
    }

    /// PDFs are shown in the browser unless `force_download=1` (captured); images and text are assumed to be too.
    private static func showsInline(_ mimeType: String) -> Bool {
        let type = mimeType.lowercased()
        return type == "application/pdf" || type.hasPrefix("image/") || type.hasPrefix("text/")
    }
}
