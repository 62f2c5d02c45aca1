import Foundation

/// One Stud.IP installation from `Resources/universities.json`, so that `campusfs login` can offer a name to pick
/// in place of a URL to type. docs/universities.md says what each field means and where the facts come from.
struct University: Decodable, Sendable, Equatable {
    /// How people at this installation are known to log in; what is not known stays out of ``methods``.
    enum Method: String, Decodable, Sendable {
        case basic, web, sso, oauth2
    }

    var name: String
    var aliases: [String]
    /// The base URL: what comes before `/dispatch.php`.
    var url: String
    var methods: [Method]
    /// The `sso=` value of the login page's single sign-on link, when a source names it.
    var sso: String?
    var oauth2ClientID: String?
    var sources: [String]
    var note: String?

    private enum CodingKeys: String, CodingKey {
        case name, aliases, url, methods, sso
        case oauth2ClientID = "oauth2_client_id"
        case sources, note
    }
}

/// The list of installations shipped with campusfs: loading it (a broken list is a clear error, not a crash) and
/// the picker's filter.
enum UniversityList {
    /// The resource bundle SwiftPM builds for this target. Its generated `Bundle.module` calls `fatalError` when
    /// the bundle is missing, so the bundle is looked up by name where `Bundle.module` would look: beside the
    /// binary (symlinks resolved, as `Scripts/install` lays it out) and beside `Bundle.main`.
    static let bundleName = "CampusFS_campusfs.resources"
    static let fileName = "universities.json"

    /// The installations in the file's order (sorted by name), every entry checked. It reads a file: async code
    /// calls it on the blocking pool (docs/threads.md).
    static func load() throws(CLIError) -> [University] {
        let directories = [
            URL(fileURLWithPath: DaemonLauncher.executable).deletingLastPathComponent(), Bundle.main.bundleURL,
        ]
        return try load(contentsOf: bundledFile(in: directories))
    }

    /// The list inside the first of `directories` that holds the resource bundle.
    static func bundledFile(in directories: [URL]) throws(CLIError) -> URL {
        let candidates = directories.map { $0.appendingPathComponent(bundleName).appendingPathComponent(fileName) }
        guard let file = candidates.first(where: { FileManager.default.isReadableFile(atPath: $0.path) }) else {
            throw .other(
                "the list of universities is missing (looked for \(candidates.map(\.path).joined(separator: " and "))); "
                    + "reinstall campusfs (its package, or Scripts/install), or give the server's address with --server"
            )
        }
        return file
    }

    /// Reads and checks one copy of the list; errors name the file and the first bad entry by index and name.
    static func load(contentsOf file: URL) throws(CLIError) -> [University] {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw .other("cannot read the list of universities at \(file.path): \(error.localizedDescription)")
        }
        let list: ListFile
        do {
            list = try JSONDecoder().decode(ListFile.self, from: data)
        } catch let error as DecodingError {
            throw .other("the list of universities at \(file.path) is broken: \(describe(error))")
        } catch {
            throw .other("the list of universities at \(file.path) is broken: \(error)")
        }
        guard list.version == 1 else {
            throw .other(
                "the list of universities at \(file.path) has version \(list.version); this campusfs reads version 1")
        }
        var seen: [String: Int] = [:]
        for (index, university) in list.universities.enumerated() {
            let problem: String?
            if let earlier = seen[university.url.lowercased()] {
                problem = "its url \(university.url) is already entry \(earlier)'s"
            } else {
                problem = self.problem(with: university)
            }
            if let problem {
                throw .other(
                    "the list of universities at \(file.path) is broken: entry \(index) (\(university.name)): \(problem)"
                )
            }
            seen[university.url.lowercased()] = index
        }
        return list.universities
    }

    /// The installations whose name, an alias or the URL's host contain `query`, ignoring case and diacritics
    /// ("munchen" finds "München"); those where it starts a word come first, otherwise the list's order stays.
    /// An empty query matches everything.
    static func matching(_ query: String, in universities: [University]) -> [University] {
        let needle = folded(query.trimmingCharacters(in: .whitespacesAndNewlines))
        guard !needle.isEmpty else { return universities }
        var atWordStart: [University] = []
        var inside: [University] = []
        for university in universities {
            let fields = [university.name] + university.aliases + [URLComponents(string: university.url)?.host ?? ""]
            let matches = fields.map { wordMatch(needle, in: folded($0)) }
            if matches.contains(.wordStart) {
                atWordStart.append(university)
            } else if matches.contains(.inside) {
                inside.append(university)
            }
        }
        return atWordStart + inside
    }

    private struct ListFile: Decodable {
        var version: Int
        var universities: [University]
    }

    private enum Match { case wordStart, inside }

    private static func folded(_ text: String) -> String {
        text.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
    }

    /// Where `needle` occurs in `haystack`: at the start of a word (after a non-alphanumeric character or at the
    /// beginning) at least once, only inside words, or not at all.
    private static func wordMatch(_ needle: String, in haystack: String) -> Match? {
        var found: Match?
        var searchStart = haystack.startIndex
        while let range = haystack.range(of: needle, range: searchStart..<haystack.endIndex) {
            if range.lowerBound == haystack.startIndex
                || !haystack[haystack.index(before: range.lowerBound)].isLetter
                    && !haystack[haystack.index(before: range.lowerBound)].isNumber
            {
                return .wordStart
            }
            found = .inside
            searchStart = haystack.index(after: range.lowerBound)
        }
        return found
    }

    /// What is wrong with one entry, or nil; the URL must be a base URL a client can append `/dispatch.php` to.
    private static func problem(with university: University) -> String? {
        if university.name.trimmingCharacters(in: .whitespaces).isEmpty { return "it has no name" }
        guard let url = URLComponents(string: university.url), url.scheme == "https", url.host?.isEmpty == false
        else { return "its url \(university.url) is not an https:// address" }
        if url.query != nil || url.fragment != nil || url.path.hasSuffix("/") || url.path.contains(".php") {
            return "its url \(university.url) is not a base URL (no /dispatch.php or other page, query or trailing /)"
        }
        if university.sources.isEmpty || university.sources.contains(where: { $0.isEmpty }) {
            return "it names no source; every entry needs one (docs/universities.md)"
        }
        if university.sso != nil && !university.methods.contains(.sso) {
            return "it has an sso value but not the method sso"
        }
        if university.oauth2ClientID != nil && !university.methods.contains(.oauth2) {
            return "it has an oauth2_client_id but not the method oauth2"
        }
        return nil
    }

    /// A decoding error as "entry 3: …", so that a hand edit's mistake is found without a JSON tool.
    private static func describe(_ error: DecodingError) -> String {
        let context: DecodingError.Context
        switch error {
        case .typeMismatch(_, let c), .valueNotFound(_, let c), .keyNotFound(_, let c), .dataCorrupted(let c):
            context = c
        @unknown default:
            return "\(error)"
        }
        var detail = context.debugDescription
        if case .keyNotFound(let key, _) = error { detail = "the field \(key.stringValue) is missing" }
        let path = context.codingPath
        if path.first?.stringValue == "universities", path.count > 1, let index = path[1].intValue {
            let field = path.dropFirst(2).map { $0.intValue.map(String.init) ?? $0.stringValue }
            return "entry \(index)\(field.isEmpty ? "" : " (field \(field.joined(separator: ".")))"): \(detail)"
        }
        return detail
    }
}
