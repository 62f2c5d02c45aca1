import ArgumentParser
import CXattr
import CampusFS
import ContentCache
import Foundation
import Glibc
import MetadataStore

/// `campusfs tag`: add and remove tags (`user.xdg.tags`).
struct TagCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tag",
        abstract: "Add (+TAG) or remove (-TAG) tags on documents and folders.",
        discussion: """
            PATH is a path inside the mount, or relative to the tree's root. Tags are yours: they survive refreshes, \
            remounts and renames on Stud.IP. While the profile is mounted, the change goes through the mount (the \
            same as setfattr -n user.xdg.tags); otherwise straight into the metadata cache. In the mount, the \
            folder Tags holds a folder per tag with a link to each tagged item (ls ~/Uni/Tags/exam).
            """
                + HelpText.examples(
                    """
                    campusfs tag ~/Uni/"WS 2026-27"/*/Vorlesungsfolien/*.pdf +exam
                    campusfs tag "WS 2026-27/INF-101 Einführung in die Informatik" +wichtig -später
                    """))

    @Option(help: .mountedProfileOfPaths)
    var profile: String?

    @Argument(parsing: .allUnrecognized, help: "PATH… followed by +TAG to add and -TAG to remove.")
    var items: [String] = []

    func run() throws {
        try reportingErrorsNow {
            let adds = items.filter { $0.hasPrefix("+") }.map { String($0.dropFirst()) }
            let removes = items.filter { $0.hasPrefix("-") }.map { String($0.dropFirst()) }
            let paths = items.filter { !$0.hasPrefix("+") && !$0.hasPrefix("-") }
            guard !paths.isEmpty, !(adds + removes).isEmpty else {
                throw CLIError.usage("name at least one PATH and one +TAG or -TAG")
            }
            let tree = try UserTree(profile: profile, arguments: paths)
            for path in paths {
                let (node, treePath) = try tree.node(path)
                var tags = try tree.info(node).user.tags.filter { !removes.contains($0) }
                for tag in adds where !tags.contains(tag) { tags.append(tag) }
                try tree.set(.tags, tags.isEmpty ? nil : tags.joined(separator: ","), on: treePath, node: node)
                print("\(treePath): \(tags.isEmpty ? "(no tags)" : tags.joined(separator: ", "))")
            }
        }
    }
}

/// `campusfs tags`: the tags in use, or what carries one.
struct TagsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tags",
        abstract: "List tags and how often they are used, or the items that carry TAG.",
        discussion: """
            Without TAG, every tag with the number of items that carry it; with TAG, the paths of those items, one per \
            line.
            """
                + HelpText.examples(
                    """
                    campusfs tags            # exam (12), wichtig (3)
                    campusfs tags exam       # the paths tagged "exam", one per line
                    """))

    @Option(help: .mountedProfile)
    var profile: String?

    @Argument(help: "A tag: list the paths that carry it.")
    var tag: String?

    func run() throws {
        try reportingErrorsNow {
            let tree = try UserTree(profile: profile)
            let items: [(path: String, tags: [String])]
            do throws(StoreError) {
                items = try tree.store.taggedItems(tag: tag)
            } catch {
                throw CLIError.other(error.description)
            }
            if tag != nil {
                for item in items { print(item.path) }
                return
            }
            var counts: [String: Int] = [:]
            for item in items { for tag in item.tags { counts[tag, default: 0] += 1 } }
            for (tag, count) in counts.sorted(by: { $0.key < $1.key }) { print("\(tag) (\(count))") }
        }
    }
}

/// `campusfs new`: what is new, changed or flagged.
struct NewCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "new",
        abstract: "List new, changed and flagged documents, newest first.",
        discussion: """
            A document is new when it appeared since the last refresh, changed when a new version was uploaded; \
            reading it clears both. Flagged ones (setfattr -n user.campusfs.highlight -v flagged) stay until you \
            remove the flag. Prints HIGHLIGHT, DATE, COURSE and the path, tab-separated.
            """)

    @Option(help: .mountedProfile)
    var profile: String?

    @Option(help: "Show at most this many.")
    var limit = 1000

    func run() throws {
        try reportingErrorsNow {
            let tree = try UserTree(profile: profile)
            let documents: [HighlightedDocument]
            do throws(StoreError) {
                documents = try tree.store.highlightedDocuments(limit: limit)
            } catch {
                throw CLIError.other(error.description)
            }
            for document in documents {
                let date = document.node.mtime.formatted(.iso8601.year().month().day())
                print([document.highlight.rawValue, date, document.courseTitle, document.path].joined(separator: "\t"))
            }
        }
    }
}

/// `campusfs pin` and `unpin`: keep documents offline.
struct PinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Keep documents and folders offline: download now, never evict.",
        discussion: """
            While the profile is mounted, the documents download at once and a progress line on stderr shows the \
            bytes done of the total, the rate and the time left (rewritten in place on a terminal, a line a second \
            otherwise); a pin on a folder covers everything below it, also what appears later. Without a mount, the \
            pin is recorded and the next mount downloads. `campusfs cache` lists the pins.
            """
                + HelpText.examples(
                    """
                    campusfs pin ~/Uni/"WS 2026-27"/"INF-101 Einführung in die Informatik"
                    campusfs unpin ~/Uni/"WS 2026-27"/"INF-101 Einführung in die Informatik"
                    """))

    @Option(help: .mountedProfileOfPaths)
    var profile: String?

    @Option(help: "Give up waiting for the downloads after this many seconds without progress.")
    var patience = 60

    @Argument(help: "Documents or folders: paths inside the mount, or relative to the tree's root.")
    var paths: [String] = []

    func run() throws {
        try reportingErrorsNow {
            guard !paths.isEmpty else { throw CLIError.usage("name at least one PATH to pin") }
            let tree = try UserTree(profile: profile, arguments: paths)
            var pinned: [(node: Node, path: String)] = []
            for path in paths {
                let (node, treePath) = try tree.node(path)
                try tree.set(.pinned, "1", on: treePath, node: node)
                pinned.append((node, treePath))
            }
            guard tree.mountpoint != nil else {
                print("pinned \(pinned.count) item(s); they download when the profile is mounted")
                return
            }
            try tree.waitForDownloads(below: pinned, patience: patience)
        }
    }
}

struct UnpinCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unpin",
        abstract: "Let pinned documents and folders be evicted again.")

    @Option(help: .mountedProfileOfPaths)
    var profile: String?

    @Argument(help: "Documents or folders: paths inside the mount, or relative to the tree's root.")
    var paths: [String] = []

    func run() throws {
        try reportingErrorsNow {
            guard !paths.isEmpty else { throw CLIError.usage("name at least one PATH to unpin") }
            let tree = try UserTree(profile: profile, arguments: paths)
            for path in paths {
                let (node, treePath) = try tree.node(path)
                try tree.set(.pinned, nil, on: treePath, node: node)
                print("unpinned \(treePath)")
            }
        }
    }
}

/// The profile's tree for the user-state commands: the store to read, and the mount to write through while one
/// runs (so the daemon, which downloads pins, hears of every change), else the store itself.
struct UserTree {
    /// What the commands set; the names are the filesystem's (``CampusAttribute``).
    enum Attribute {
        case tags, pinned

        var name: String { (self == .tags ? CampusAttribute.tags : CampusAttribute.pinned).rawValue }
    }

    let profile: String
    let paths: Paths
    let store: MetadataStore
    /// Where the profile's daemon serves it; nil when none answers.
    let mountpoint: String?

    /// `profile` if named, else the one the mounts suggest for `arguments` (``MountedProfiles``); `readOnly` for a
    /// command that never writes the store (``ProfileStore/open(_:paths:readOnly:)``). Without `askingTheDaemon`
    /// the daemon's status is not asked for (a round trip to a running daemon) and ``mountpoint`` is nil: for a
    /// command that names no path.
    init(profile: String?, arguments: [String] = [], readOnly: Bool = false, askingTheDaemon: Bool = true)
        throws(CLIError)
    {
        paths = Paths()
        self.profile = try MountedProfiles.name(explicit: profile, arguments: arguments, paths: paths)
        store = try ProfileStore.open(self.profile, paths: paths, readOnly: readOnly)
        mountpoint = askingTheDaemon ? DaemonDirectory.status(paths.socket(profile: self.profile))?.mountpoint : nil
    }

    /// A path inside the mount, or relative to the tree's root. While mounted, a path the store lacks is looked up
    /// through the mount once: right after a first mount, that fetches a course whose content is not stored yet.
    func node(_ argument: String) throws(CLIError) -> (Node, String) {
        let treePath = MountedProfiles.treePath(argument, mountpoint: mountpoint)
        let node: Node
        do throws(CLIError) {
            node = try ProfileStore.node(treePath, in: store)
        } catch {
            guard let mountpoint, access(mountpoint + "/" + treePath, F_OK) == 0 else { throw error }
            node = try ProfileStore.node(treePath, in: store)
        }
        return (node, try ProfileStore.path(of: node, in: store))
    }

    func info(_ node: Node) throws(CLIError) -> NodeInfo {
        do throws(StoreError) {
            if let info = try store.info(inode: node.inode) { return info }
        } catch {
            throw .other(error.description)
        }
        throw .other("\(node.name) is no longer in the tree; run `campusfs refresh`")
    }

    /// Sets (or, with nil, removes) an attribute: through the mount while mounted, else in the store.
    func set(_ attribute: Attribute, _ value: String?, on treePath: String, node: Node) throws(CLIError) {
        if let mountpoint {
            let path = mountpoint + "/" + treePath
            let result: Int32
            if let value {
                result = setxattr(path, attribute.name, value, value.utf8.count, 0)
            } else {
                result = removexattr(path, attribute.name)
            }
            guard result == 0 || (value == nil && errno == ENODATA) else {
                throw .other("\(treePath): \(String(cString: strerror(errno)))")
            }
            return
        }
        do throws(StoreError) {
            switch attribute {
            case .tags:
                try store.setTags(value?.split(separator: ",").map(String.init) ?? [], inode: node.inode)
            case .pinned:
                try store.setPinned(value != nil, inode: node.inode)
            }
        } catch {
            throw .other("\(treePath): \(error)")
        }
    }

    /// Shows how far the pinned documents' downloads are — bytes, rate, time left — until all are cached or nothing
    /// moved for `patience` seconds. The documents are listed once, here; each poll asks the daemon only how much of
    /// them is on disk (downloads in flight count with the bytes they have).
    func waitForDownloads(below items: [(node: Node, path: String)], patience: Int) throws(CLIError) {
        guard mountpoint != nil else { return }
        var progress = PinProgress(documents: try downloadableDocuments(below: items.map(\.node)))
        var line = ProgressLine(terminal: isatty(STDERR_FILENO) == 1)
        let start = Date()
        var startBytes: Int64?
        var lastChange = (bytes: Int64(-1), at: start)
        while true {
            progress.cached = try cacheProgress(of: progress.documents)
            let now = Date()
            let bytes = progress.cached.cachedBytes
            if bytes != lastChange.bytes { lastChange = (bytes, now) }
            let initial = startBytes ?? bytes
            startBytes = initial
            let elapsed = now.timeIntervalSince(start)
            let rate = elapsed >= 0.5 ? Double(bytes - initial) / elapsed : 0
            let finished = progress.isComplete || now.timeIntervalSince(lastChange.at) > Double(patience)
            line.show(progress.text(rate: rate), final: finished)
            if finished { break }
            Thread.sleep(forTimeInterval: 0.25)
        }
        guard progress.isComplete else {
            throw .network(
                "\(progress.documents.count - progress.cached.cachedDocuments) pinned document(s) could not be "
                    + "downloaded yet; they stay pinned and download once Stud.IP answers (see `campusfs status`)")
        }
        print("pinned \(items.count) item(s): \(progress.documents.count) document(s) cached")
    }

    /// The documents a pin of `nodes` downloads (the downloadable ones), each once.
    private func downloadableDocuments(below nodes: [Node]) throws(CLIError) -> [CacheDocument] {
        var documents: [CacheDocument] = []
        var seen: Set<String> = []
        do throws(StoreError) {
            for node in nodes {
                for entry in try store.walk(from: node.inode) where entry.node.kind == .file {
                    guard let document = try store.document(inode: entry.node.inode), document.isDownloadable,
                        seen.insert(document.id).inserted
                    else { continue }
                    documents.append(CacheDocument(id: document.id, version: document.version))
                }
            }
        } catch {
            throw .other(error.description)
        }
        return documents
    }

    /// Asks the daemon in parts, so no request comes near the control socket's 1 MiB line.
    private func cacheProgress(of documents: [CacheDocument]) throws(CLIError) -> CacheProgress {
        var total = CacheProgress()
        for first in stride(from: 0, to: documents.count, by: 2000) {
            let part = Array(documents[first..<min(first + 2000, documents.count)])
            guard let progress = try ask(.progress(documents: part)).progress else {
                throw .other("the daemon sent no progress; see its log")
            }
            total.cachedBytes += progress.cachedBytes
            total.cachedDocuments += progress.cachedDocuments
        }
        return total
    }
}

/// The documents one `campusfs pin` downloads, and how much of them is cached.
struct PinProgress {
    let documents: [CacheDocument]
    let bytes: Int64
    var cached = CacheProgress()

    init(documents: [CacheDocument]) {
        self.documents = documents
        bytes = documents.reduce(0) { $0 + $1.size }
    }

    var isComplete: Bool { cached.cachedDocuments == documents.count }

    /// `pinning: 12.4 MB of 85.0 MB (14.6%), 3.1 MB/s, about 23 s left — 7 of 42 documents`; rate and time left
    /// once bytes have arrived (`rate` in bytes per second), "done" at the end.
    func text(rate: Double) -> String {
        // Rounded down, so 100.0% means done.
        let cachedBytes = cached.cachedBytes
        let percent = bytes == 0 ? 100 : (Double(cachedBytes) * 1000 / Double(bytes)).rounded(.down) / 10
        var parts = [
            "pinning: \(ByteText.format(cachedBytes)) of \(ByteText.format(bytes)) (\(String(format: "%.1f", percent))%)"
        ]
        if rate >= 1 { parts.append("\(ByteText.format(Int64(rate)))/s") }
        if isComplete {
            parts.append("done")
        } else if rate >= 1 {
            let seconds = Int((Double(bytes - cachedBytes) / rate).rounded(.up))
            parts.append(seconds < 100 ? "about \(seconds) s left" : "about \((seconds + 59) / 60) min left")
        }
        return parts.joined(separator: ", ") + " — \(cached.cachedDocuments) of \(documents.count) documents"
    }
}

/// A progress line on stderr: rewritten in place on a terminal; elsewhere (a log, a pipe) one line at most every
/// second, and always the last one.
struct ProgressLine {
    let terminal: Bool
    private var lastPrinted: Date?
    private var lastText = ""

    init(terminal: Bool) { self.terminal = terminal }

    mutating func show(_ text: String, final: Bool) {
        if terminal {
            FileHandle.standardError.write(Data(("\r" + text + "\u{1B}[K" + (final ? "\n" : "")).utf8))
            return
        }
        let now = Date()
        guard text != lastText, final || now.timeIntervalSince(lastPrinted ?? .distantPast) >= 1 else { return }
        FileHandle.standardError.write(Data((text + "\n").utf8))
        lastPrinted = now
        lastText = text
    }
}
