import Foundation

/// `/__files/…`: the documents a student sees, as a plain Apache-style HTTP index — the baseline the benchmark
/// mounts with `rclone mount` (rclone's http backend) next to CampusFS. Same bytes, same latency and bandwidth
/// as the API's downloads; no authentication, no Stud.IP semantics.
///
/// Layout: `<semester>/<number title>/<folders…>/<document>`, courses without a semester under `Ongoing`, a
/// course in several semesters under its latest. Names have `/` replaced by `-` (CampusFS cleans up more, so a
/// hostile name may differ); of two equal names in one directory the first wins. Requests are counted under the route `files`.
struct FileIndex: Sendable {
    /// Whose view of the university the index shows.
    static let username = "test_autor"

    let university: University

    /// A directory listing or a document, for the path below `/__files`. Each level is computed on demand, so a
    /// request costs one directory's worth of work, not the whole tree's.
    /// A document answers a single byte range (`Range: bytes=a-b`, `bytes=a-`, `bytes=-n`) with 206 and that part,
    /// as web servers do, so a client reading in chunks (rclone's VFS) gets the bytes it asked for.
    func respond(to segments: [String], range: String? = nil) -> SimResponse {
        guard let user = university.user(named: Self.username) else { return Self.notFound }
        var directory = root(for: user)
        for (position, segment) in segments.enumerated() {
            switch directory.entries[segment] {
            case .semester(let courses):
                directory = Directory()
                for course in courses { directory.add(Self.name(of: course), .folder(course.topFolderID)) }
            case .folder(let id):
                directory = folder(id, user)
            case .document(let ref):
                guard position == segments.count - 1 else { return Self.notFound }
                var headers = [
                    ("Content-Type", "application/octet-stream"), ("Accept-Ranges", "bytes"),
                    ("Last-Modified", StudIPDate.http(ref.fileChdate)),
                ]
                guard let range, let part = Self.part(range, of: ref.size) else {
                    return SimResponse(
                        status: 200, headers: headers,
                        body: .document(documentID: ref.id, content: ref.content, size: ref.size), route: "files")
                }
                guard let part else {
                    return SimResponse(
                        status: 416, headers: [("Content-Range", "bytes */\(ref.size)")], route: "files")
                }
                headers.append(("Content-Range", "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(ref.size)"))
                return SimResponse(
                    status: 206, headers: headers,
                    body: .document(
                        documentID: ref.id, content: ref.content, size: part.count, offset: part.lowerBound),
                    route: "files")
            case nil:
                return Self.notFound
            }
        }
        return listing(directory)
    }

    /// The part of a `size`-byte document a `Range` header asks for: nil when the header is not one byte range
    /// (the whole document is sent), `.some(nil)` when the range lies past the end (416).
    static func part(_ header: String, of size: Int) -> Range<Int>?? {
        guard header.hasPrefix("bytes="), !header.contains(","),
            let (first, last) = bounds(ofRange: header.dropFirst(6))
        else { return nil }
        if first.isEmpty {
            guard let suffix = Int(last), suffix > 0 else { return nil }
            return .some(size == 0 ? nil : max(0, size - suffix)..<size)
        }
        guard let start = Int(first), start >= 0 else { return nil }
        guard start < size else { return .some(nil) }
        guard !last.isEmpty else { return .some(start..<size) }
        guard let end = Int(last), end >= start else { return nil }
        return .some(start..<min(end + 1, size))
    }

    /// The two bounds of one range `first-last` (after `bytes=`), trimmed, either possibly empty; nil without a `-`.
    /// What each server makes of them (and of several ranges) is its own: ``part(_:of:)``, `sendfile.php`'s.
    static func bounds(ofRange spec: Substring) -> (first: String, last: String)? {
        let bounds = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2 else { return nil }
        return (bounds[0].trimmingCharacters(in: .whitespaces), bounds[1].trimmingCharacters(in: .whitespaces))
    }

    /// `number title` with blanks collapsed, as CampusFS names course directories by default.
    static func name(of course: Course) -> String {
        "\(course.number) \(course.title)".split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    private static let notFound = SimResponse.text("Not Found", status: 404, route: "files")

    /// One directory of the index.
    private struct Directory {
        enum Entry {
            case semester([Course])
            case folder(String)
            case document(FileRef)
        }

        var entries: [String: Entry] = [:]
        var order: [String] = []

        mutating func add(_ name: String, _ entry: Entry) {
            let safe = name.replacingOccurrences(of: "/", with: "-")
            guard !safe.isEmpty, safe != ".", safe != "..", entries[safe] == nil else { return }
            entries[safe] = entry
            order.append(safe)
        }
    }

    private func root(for user: User) -> Directory {
        var semesters: [String: [Course]] = [:]
        for course in university.courses(of: user.id) where university.canAccess(course: course, user: user) {
            let semester = course.semesterIDs.last.flatMap { university.semesters[$0]?.title } ?? "Ongoing"
            semesters[semester, default: []].append(course)
        }
        var root = Directory()
        for (title, courses) in semesters.sorted(by: { $0.key < $1.key }) { root.add(title, .semester(courses)) }
        return root
    }

    private func folder(_ id: String, _ user: User) -> Directory {
        var directory = Directory()
        for child in university.subfolders(of: id) where university.canRead(folder: child, user: user) {
            directory.add(child.name, .folder(child.id))
        }
        for ref in university.fileRefs(in: id) where !ref.isLink && university.canDownload(ref, user: user) {
            directory.add(ref.name, .document(ref))
        }
        return directory
    }

    /// What Apache's `mod_autoindex` sends, reduced to what rclone's http backend reads: one link per entry,
    /// directories with a trailing slash.
    private func listing(_ directory: Directory) -> SimResponse {
        var html = "<html><head><title>Index</title></head><body><pre>\n"
        for name in directory.order {
            let isDirectory = if case .document = directory.entries[name] { false } else { true }
            let href = Self.escape(name) + (isDirectory ? "/" : "")
            html += "<a href=\"\(href)\">\(HTML.escape(name))\(isDirectory ? "/" : "")</a>\n"
        }
        html += "</pre></body></html>\n"
        return .text(html, status: 200, contentType: "text/html; charset=utf-8", route: "files")
    }

    private static func escape(_ name: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
    }
}
