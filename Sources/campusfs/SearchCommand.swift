import ArgumentParser
import ContentCache
import Foundation
import Glibc
import MetadataStore

/// `campusfs search`: one ranked list over every document's metadata and the text of downloaded ones, from the
/// store alone (docs/search.md, "search").
struct SearchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Find documents by title, course, semester, folder, owner, description, tags and downloaded text.",
        discussion: """
            Searches every document, downloaded or not: its name, course (number and title), semester, folder \
            path, owner, description and your tags; for downloaded documents also their text (PDF pages, slides, \
            sheets). Documents whose name or details match come first, then those that match only in their text. \
            Reads the metadata cache alone, mounted or not: it never contacts Stud.IP, never downloads and never \
            clears a "new" highlight.

            Query syntax: words (all must match, in any order; case, accents and ä/ae, ß/ss spellings are ignored), \
            `prefix*`, "a phrase", and AND, OR, NOT in upper case (NOT needs a word before it). Quotes, colons and \
            other punctuation are plain text. A quote that is not closed is an error.

            Each hit prints its path in the mount (without a mount: below ~/Uni, where `campusfs mount` mounts), \
            then `cached` or `remote`, the page, slide or sheet of a match in the text, and a snippet with the \
            match highlighted on a terminal.

            Exit status: 0 when something was found, 1 when nothing was, 2 on errors (as grep).
            """
                + HelpText.examples(
                    """
                    campusfs search b-baum
                    campusfs search 'algo* NOT klausur'
                    campusfs search '"binärer Suchbaum"' --course INF-101
                    campusfs search uebung --semester "WS 2026/27" --new
                    campusfs search klausur --tag exam --json
                    campusfs search -0 folien | xargs -0 xdg-open
                    """))

    @Option(help: .mountedProfile)
    var profile: String?

    @Option(help: "Only this course: its number (INF-101), title or Stud.IP id.")
    var course: String?

    @Option(help: "Only courses of this semester: its title (\"WS 2026/27\"), folder name (\"WS 2026-27\") or id.")
    var semester: String?

    @Option(help: "Only documents carrying this tag.")
    var tag: String?

    @Flag(name: .customLong("new"), help: "Only new, changed or flagged documents (as `campusfs new` lists them).")
    var onlyNew = false

    @Option(help: "Show at most this many hits.")
    var limit = 50

    @Flag(
        help: """
            Print one JSON array of {"path", "state", "snippet", "part", "partKind", "documentID", \
            "contentMatched"}; part and partKind are null without a page, slide or sheet.
            """)
    var json = false

    @Flag(help: "Print only the paths, one per line.")
    var paths = false

    @Flag(name: .customShort("0"), help: "Print only the paths, each ended by a NUL byte (for xargs -0).")
    var nulSeparated = false

    @Argument(help: "What to find (quote it for the shell when it has spaces, quotes or *).")
    var query: String

    func validate() throws {
        guard limit > 0 else { throw ValidationError("--limit must be at least 1") }
        guard !(json && (paths || nulSeparated)) else { throw ValidationError("choose --json or --paths/-0") }
    }

    func run() throws {
        let hits: [PlacedHit]
        do throws(CLIError) {
            hits = try search()
        } catch {
            printError("campusfs: \(error)")
            throw ExitCode(2)
        }
        let output: String
        if nulSeparated {
            output = hits.map { $0.path + "\0" }.joined()
        } else if paths {
            output = hits.map { $0.path + "\n" }.joined()
        } else if json {
            output = CacheCommand.json(hits) + "\n"
        } else {
            let colour = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
            output = hits.map { $0.text(colour: colour) }.joined()
        }
        FileHandle.standardOutput.write(Data(output.utf8))
        if hits.isEmpty { throw ExitCode(1) }
    }

    /// The hits, with their paths in the mount and whether their current version is cached.
    private func search() throws(CLIError) -> [PlacedHit] {
        let tree = try UserTree(profile: profile, readOnly: true)
        let root = tree.mountpoint ?? tree.paths.defaultMountpoint.path
        let cache = tree.paths.cache(profile: tree.profile).path
        let filters = SearchFilters(course: course, semester: semester, tag: tag, onlyNew: onlyNew)
        do throws(StoreError) {
            var placed: [PlacedHit] = []
            for hit in try tree.store.search(query, filters: filters, limit: limit) {
                guard !hit.path.isEmpty, let document = try tree.store.document(inode: hit.inode) else { continue }
                let current = CacheDocument(id: document.id, version: document.version).version
                let cached = ContentCache.cachedCopy(of: document.id, directory: cache)?.version == current
                placed.append(PlacedHit(hit: hit, path: root + "/" + hit.path, cached: cached))
            }
            return placed
        } catch {
            throw .other(error.description)
        }
    }
}

/// A hit as the command prints it: its path in the mount and whether it is cached.
struct PlacedHit: Encodable {
    let hit: SearchHit
    let path: String
    let cached: Bool

    private enum CodingKeys: String, CodingKey {
        case path, state, snippet, part, partKind, documentID, contentMatched
    }

    var state: String { cached ? "cached" : "remote" }

    /// `page 3` when the match is on a numbered page, slide or sheet.
    var place: String? {
        guard hit.contentMatched, let part = hit.part, let kind = hit.partKind else { return nil }
        return "\(kind.rawValue) \(part)"
    }

    /// The snippet on one line, with no control characters the document's text might have carried (a terminal
    /// would obey them), its matches between `start` and `end`.
    func snippet(start: String, end: String) -> String {
        let markers = [SearchHit.matchStart: start, SearchHit.matchEnd: end]
        var line = ""
        var pendingSpace = false
        for scalar in hit.snippet.unicodeScalars {
            if scalar.properties.isWhitespace
                || (scalar.properties.generalCategory == .control && markers[String(scalar)] == nil)
            {
                pendingSpace = !line.isEmpty
                continue
            }
            if pendingSpace { line += " " }
            pendingSpace = false
            if let marker = markers[String(scalar)] {
                line += marker
            } else {
                line.unicodeScalars.append(scalar)
            }
        }
        return line
    }

    /// Two lines: the path, then state, place and snippet, the matches in bold red with `colour`.
    func text(colour: Bool) -> String {
        let snippet = colour ? self.snippet(start: "\u{1B}[1;31m", end: "\u{1B}[0m") : self.snippet(start: "", end: "")
        return path + "\n  " + ([state] + (place.map { [$0] } ?? [])).joined(separator: ", ") + ": " + snippet + "\n"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path, forKey: .path)
        try container.encode(state, forKey: .state)
        try container.encode(snippet(start: "", end: ""), forKey: .snippet)
        // Explicit nulls: every hit has every key.
        try container.encode(hit.part, forKey: .part)
        try container.encode(hit.partKind?.rawValue, forKey: .partKind)
        try container.encode(hit.documentID, forKey: .documentID)
        try container.encode(hit.contentMatched, forKey: .contentMatched)
    }
}
