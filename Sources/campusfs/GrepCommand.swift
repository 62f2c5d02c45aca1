import ArgumentParser
import Foundation
import Glibc
import MetadataStore
import SystemSupport
import TextGrep

/// `campusfs grep`: grep over the stored text of downloaded documents, from the metadata cache alone, so it never
/// downloads and never changes highlights or access times (docs/search.md, "grep").
struct GrepCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grep",
        abstract: "Search the text of downloaded documents, PDFs included, like grep -r.",
        discussion: """
            Searches the text CampusFS extracted from every downloaded document (PDF page by page, slides, sheets, \
            office documents, plain text), straight from the metadata cache: it never downloads, works with and \
            without a mount, and leaves highlights and access times alone. Documents not downloaded yet are not \
            searched; a note on stderr says how many (`campusfs pin PATH` downloads them). `grep -r` over the mount \
            still works, but downloads everything it reads and cannot see into PDFs.

            PATTERN means what it means to GNU grep: a basic regular expression, extended with -E, a fixed string \
            with -F; a PATTERN with newlines is several patterns. PATH is a document or folder inside the mount or \
            relative to the tree's root (default: everything), searched recursively. Output paths start with PATH \
            as you typed it (without PATH: relative to the tree's root); a PDF's lines carry their page \
            (`path:page 3:line`), a presentation's their slide, a spreadsheet's their sheet, and -n counts lines \
            within that page. Exit status: 0 a line was selected, 1 none, 2 an error (a bad pattern, a PATH not in \
            the tree), as in grep.
            """
                + HelpText.examples(
                    """
                    campusfs grep -i 'b-tree'                   # every downloaded document
                    campusfs grep -n -C2 Rekursion ~/Uni/"WS 2026-27"/INF-101*
                    campusfs grep -lw Klausur "WS 2026-27"      # paths from the tree's root
                    campusfs grep -c -E 'Satz [0-9]+' --include '*.pdf'
                    """),
        helpNames: [.long])

    /// What `--color` chose; a bare `--color` is `auto` (``normalized(_:)``).
    enum ColorChoice: String, ExpressibleByArgument, CaseIterable {
        case auto, always, never
    }

    @Option(help: .mountedProfileOfPaths)
    var profile: String?

    @Flag(name: [.customShort("i"), .customLong("ignore-case")], help: "Ignore case (also of umlauts).")
    var ignoreCase = false

    @Flag(name: [.customShort("w"), .customLong("word-regexp")], help: "Match whole words only.")
    var wordRegexp = false

    @Flag(name: [.customShort("F"), .customLong("fixed-strings")], help: "PATTERN is a string, not a regex.")
    var fixedStrings = false

    @Flag(name: [.customShort("E"), .customLong("extended-regexp")], help: "PATTERN is an extended regex.")
    var extendedRegexp = false

    @Option(
        name: [.customShort("e"), .customLong("regexp")],
        help: ArgumentHelp("PATTERN (repeatable); then every argument is a PATH.", valueName: "PATTERN"))
    var patterns: [String] = []

    @Flag(name: [.customShort("v"), .customLong("invert-match")], help: "Select lines that do not match.")
    var invertMatch = false

    @Flag(name: [.customShort("n"), .customLong("line-number")], help: "Print line numbers (within the page).")
    var lineNumber = false

    @Flag(name: [.customShort("c"), .customLong("count")], help: "Print how many lines each document selects.")
    var count = false

    @Flag(
        name: [.customShort("l"), .customLong("files-with-matches")],
        help: "Print only names of documents with a match.")
    var filesWithMatches = false

    @Flag(
        name: [.customShort("L"), .customLong("files-without-match")],
        help: "Print only names of documents without one.")
    var filesWithoutMatch = false

    @Flag(name: [.customShort("q"), .customLong("quiet")], help: "Print nothing; only the exit status.")
    var quiet = false

    @Flag(
        name: [.customShort("H"), .customLong("with-filename")],
        help: "Print paths (the default unless PATH is one document).")
    var withFilename = false

    @Flag(name: [.customShort("h"), .customLong("no-filename")], help: "Never print paths.")
    var noFilename = false

    @Flag(
        name: [.customShort("r"), .customShort("R"), .customLong("recursive")],
        help: "Accepted from habit: always recursive.")
    var recursive = false

    @Option(
        name: [.customShort("A", allowingJoined: true), .customLong("after-context")],
        help: ArgumentHelp("Print NUM lines after each match.", valueName: "NUM"))
    var after: Int?

    @Option(
        name: [.customShort("B", allowingJoined: true), .customLong("before-context")],
        help: ArgumentHelp("Print NUM lines before each match.", valueName: "NUM"))
    var before: Int?

    @Option(
        name: [.customShort("C", allowingJoined: true), .customLong("context")],
        help: ArgumentHelp("Print NUM lines before and after.", valueName: "NUM"))
    var context: Int?

    @Option(help: ArgumentHelp("Search only documents whose name matches GLOB (repeatable).", valueName: "GLOB"))
    var include: [String] = []

    @Option(help: ArgumentHelp("Skip documents whose name matches GLOB (repeatable).", valueName: "GLOB"))
    var exclude: [String] = []

    @Option(
        help: ArgumentHelp(
            "Colour paths, separators and matches (auto: on a terminal); --color alone is auto.", valueName: "WHEN"))
    var color = ColorChoice.auto

    @Argument(help: ArgumentHelp("PATTERN, then PATH… (PATH only, with -e).", valueName: "PATTERN|PATH"))
    var operands: [String] = []

    /// `--color` and `--colour` without a value, as grep takes them, become `--color=auto` (ArgumentParser options
    /// always take a value); only in a `grep` command line, before a `--`.
    static func normalized(_ arguments: [String]) -> [String] {
        guard arguments.first == configuration.commandName else { return arguments }
        var seenEnd = false
        return arguments.map { argument in
            if argument == "--" { seenEnd = true }
            guard !seenEnd else { return argument }
            if argument == "--color" || argument == "--colour" { return "--color=auto" }
            return argument.hasPrefix("--colour=") ? "--color=" + argument.dropFirst("--colour=".count) : argument
        }
    }

    func run() throws {
        throw ExitCode(search())
    }

    /// grep's exit status: 0 a line was selected, 1 none, 2 an error.
    private func search() -> Int32 {
        let pattern = patterns.isEmpty ? operands.first : patterns.joined(separator: "\n")
        guard let pattern else {
            printError("campusfs grep: name a PATTERN, e.g. `campusfs grep -i b-tree`; see `campusfs grep --help`")
            return 2
        }
        let arguments = patterns.isEmpty ? Array(operands.dropFirst()) : operands
        var options = self.options
        let tree: UserTree
        var targets: [(argument: String?, node: Node)] = []
        var failed = false
        do throws(CLIError) {
            // grep only reads: no migration, no write, no wait for the daemon's writer (docs/search.md, "Latency").
            // The mountpoint only translates PATHs inside the mount: without one, no round trip to the daemon.
            tree = try UserTree(
                profile: profile, arguments: arguments, readOnly: true, askingTheDaemon: !arguments.isEmpty)
            for argument in arguments {
                do throws(CLIError) {
                    targets.append((argument, try tree.node(argument).0))
                } catch {
                    printError("campusfs grep: \(error)")
                    failed = true
                }
            }
            if arguments.isEmpty { targets.append((nil, try ProfileStore.node(nil, in: tree.store))) }
        } catch {
            printError("campusfs grep: \(error)")
            return 2
        }
        options.withFileName =
            !noFilename && (withFilename || !(arguments.count == 1 && targets.first?.node.item == .document))
        let grep: Grep
        let output = StandardOutput()
        do throws(GrepError) {
            grep = try Grep(pattern: pattern, options: options, write: output.append)
        } catch {
            printError("campusfs grep: \(error)")
            return 2
        }
        do {
            let notSearched = try search(targets, grep: grep, store: tree.store, pattern: pattern)
            try output.flush()
            if notSearched > 0, !quiet {
                printError(
                    "campusfs grep: \(notSearched) document(s) not searched: not downloaded yet, or their text not "
                        + "indexed yet (`campusfs pin PATH` downloads)")
            }
        } catch {
            try? output.flush()
            printError("campusfs grep: \(error)")
            failed = true
        }
        if failed && !(quiet && grep.selectedAny) { return 2 }
        return grep.selectedAny ? 0 : 1
    }

    /// A document to search, or to print as without a match (the index says it has none).
    private struct Job: Sendable {
        var label: String
        var document: GrepScopeDocument
        /// The only parts worth reading (the index of substrings), else all.
        var only: [Int64]?
        var skip: Bool
    }

    /// What the threads of a search hand back, in order: first the documents without text, then each document.
    private enum Searched: Sendable {
        case missing([GrepMissing])
        case document(GrepHit)
    }

    /// Searches the documents below `targets` and prints them in path order; returns how many had no stored text
    /// to search. Two threads (or as many as there are cores, up to the store's readers) share the work, each with
    /// a read transaction of its own: counting the documents without text (a scan of the `document` table, 3 ms on
    /// `large`) is the first item, so a second thread searches meanwhile (docs/search.md, "grep").
    private func search(_ targets: [(argument: String?, node: Node)], grep: Grep, store: MetadataStore, pattern: String)
        throws -> Int
    {
        let options = grep.options
        // The index picks what is worth reading (docs/search.md, "Candidate selection"): the pages holding the
        // pattern's literals (index of substrings), else the documents holding its words (word index), else all.
        let substrings = IndexWords.substrings(pattern: pattern, options: options)
        let parts = substrings.isEmpty ? nil : try store.candidateParts(containingAll: substrings)
        let words = parts == nil ? IndexWords.required(pattern: pattern, options: options) : []
        let candidates = words.isEmpty ? nil : Set(try store.candidateDocuments(containingAll: words).map(\.documentID))
        var jobs: [Job] = []
        for (argument, node) in targets {
            for document in try store.grepDocuments(below: node.inode) where isIncluded(document.name) {
                let only = parts.map { $0[document.documentID] ?? [] }
                let skip = only?.isEmpty == true || candidates.map { !$0.contains(document.documentID) } == true
                jobs.append(
                    Job(label: Self.label(argument, document.relativePath), document: document, only: only, skip: skip))
            }
        }
        let searched = jobs
        let inodes = targets.map(\.node.inode)
        // Names of the documents without text only where `--include`/`--exclude` decide which of them count.
        let byName = !include.isEmpty || !exclude.isEmpty
        var missing: [GrepMissing] = []
        let threads = min(ProcessInfo.processInfo.activeProcessorCount, MetadataStore.readOnlyReaders)
        try OrderedWork<Searched, StoreError>.run(count: searched.count + 1, threads: threads) {
            claim, publish throws(StoreError) in
            // Item 0, the count, is the first claim of whichever thread starts first; it reads no text, so it runs
            // before that thread's transaction of the text.
            var next = claim()
            if next == 0 {
                var counts: [GrepMissing] = []
                for inode in inodes { counts.append(try store.grepMissing(below: inode, naming: byName)) }
                publish(0, .missing(counts))
                next = claim()
            }
            guard let first = next else { return }
            try store.readingStoredText { text in
                let searcher = try GrepSearcher(pattern: pattern, options: options)
                var index = first
                while true {
                    let job = searched[index - 1]
                    if job.skip {
                        publish(index, .document(searcher.unmatched(label: job.label)))
                    } else {
                        let hit = try searcher.search(label: job.label, partKind: job.document.partKind) { visit in
                            try text.parts(of: job.document.documentID, only: job.only, visit)
                        }
                        publish(index, .document(hit))
                    }
                    guard let claimed = claim() else { return }
                    index = claimed
                }
            }
        } consume: { item in
            switch item {
            case .missing(let counts): missing = counts
            case .document(let hit): grep.print(hit)
            }
            return !grep.isFinished
        }
        return missing.reduce(0) { $0 + (byName ? $1.names.count { isIncluded($0) } : $1.count) }
    }

    /// Standard output in blocks of 64 KiB, as stdio buffers a pipe or a file, written from the hits' bytes.
    private final class StandardOutput {
        private var buffer: [UInt8] = []
        /// The first write that failed (a closed pipe, a full disk): nothing is written after it.
        private var failure: SystemCallError?

        func append(_ bytes: [UInt8]) {
            buffer += bytes
            if buffer.count >= 1 << 16 { try? flush() }
        }

        func flush() throws(SystemCallError) {
            defer { buffer.removeAll(keepingCapacity: true) }
            if let failure { throw failure }
            var written = 0
            do throws(SystemCallError) {
                while written < buffer.count {
                    written += try systemCall("write") {
                        buffer.withUnsafeBytes {
                            write(STDOUT_FILENO, $0.baseAddress?.advanced(by: written), $0.count - written)
                        }
                    }
                }
            } catch {
                failure = error
                throw error
            }
        }
    }

    /// The path printed for a document: PATH as typed, then the way down from it; without PATH, from the root.
    static func label(_ argument: String?, _ relativePath: String) -> String {
        guard let argument else { return relativePath }
        if relativePath.isEmpty { return argument }
        return argument.hasSuffix("/") ? argument + relativePath : argument + "/" + relativePath
    }

    private func isIncluded(_ name: String) -> Bool {
        if exclude.contains(where: { fnmatch($0, name, 0) == 0 }) { return false }
        return include.isEmpty || include.contains { fnmatch($0, name, 0) == 0 }
    }

    private var options: GrepOptions {
        var options = GrepOptions()
        options.ignoreCase = ignoreCase
        options.wordRegexp = wordRegexp
        options.fixedStrings = fixedStrings
        options.extendedRegexp = extendedRegexp
        options.invertMatch = invertMatch
        options.lineNumbers = lineNumber
        options.before = before ?? context
        options.after = after ?? context
        options.output =
            quiet
            ? .quiet
            : filesWithMatches
                ? .filesWithMatches
                : filesWithoutMatch
                    ? .filesWithoutMatch
                    : count ? .count : .lines
        options.color =
            color == .always
            || (color == .auto && isatty(STDOUT_FILENO) == 1 && getenv("TERM").map { String(cString: $0) } != "dumb")
        return options
    }
}
