import ArgumentParser
import ContentCache
import ControlProtocol
import Foundation
import MetadataStore

/// `campusfs cache [show]` and `campusfs cache clean`.
struct CacheCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache",
        abstract: "Show the content cache's use and the pinned items; `cache clean` frees space.",
        subcommands: [CacheShowCommand.self, CacheCleanCommand.self], defaultSubcommand: CacheShowCommand.self)

    static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

/// `campusfs cache`: how full the content cache is and what is pinned. A subcommand of its own (the default), as
/// options of a parent command would also be parsed for `clean`.
struct CacheShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Show the content cache's use and the pinned items (the default).",
        discussion: """
            Prints the bytes cached and the limit (cache_limit in config.toml), how many documents are cached, and \
            every pinned item with its size and how much of it is cached. While the profile is mounted the daemon \
            answers, so downloads in flight count; without a mount the cache directory is read.
            """
                + HelpText.examples(
                    """
                    campusfs cache
                    campusfs cache --json
                    campusfs cache clean --older-than 30d
                    """))

    @Option(help: .mountedProfile)
    var profile: String?

    @Flag(
        help: """
            Print {"bytes", "limit", "documents", "downloadsInFlight", "pins": [{"path", "bytes", "cachedBytes", \
            "documents", "cachedDocuments"}]}.
            """)
    var json = false

    func run() throws {
        try reportingErrorsNow {
            let tree = try UserTree(profile: profile)
            let report = try tree.cacheReport()
            if json {
                print(CacheCommand.json(report))
                return
            }
            var lines = [
                "cache: \(ByteText.format(report.bytes)) of \(ByteText.format(report.limit)) in "
                    + "\(report.documents) document(s)"
                    + (report.downloadsInFlight > 0 ? ", \(report.downloadsInFlight) downloading" : "")
            ]
            lines.append(report.pins.isEmpty ? "pinned: nothing" : "pinned:")
            for pin in report.pins {
                lines.append(
                    "  \(pin.path): \(ByteText.format(pin.cachedBytes)) of \(ByteText.format(pin.bytes)) cached "
                        + "(\(pin.cachedDocuments) of \(pin.documents) documents)")
            }
            print(lines.joined(separator: "\n"))
        }
    }
}

/// `campusfs cache clean`: removes cached copies that are not pinned and not open.
struct CacheCleanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clean",
        abstract: "Free space: remove cached copies that are neither pinned nor open.",
        discussion: """
            Removes the downloaded copies of the documents below PATH (default: all), except pinned ones (also \
            below a pinned folder) and ones a program has open; with --older-than, also except those opened or \
            downloaded within that time. The documents stay in the tree and download again when opened; tags, \
            highlights and pins are untouched. While mounted, the daemon cleans (it knows what is open); otherwise \
            this command does.
            """
                + HelpText.examples(
                    """
                    campusfs cache clean
                    campusfs cache clean --older-than 30d
                    campusfs cache clean ~/Uni/"WS 2025-26"
                    """))

    @Option(help: .mountedProfileOfPaths)
    var profile: String?

    @Option(help: "Only copies not used for this long: 30d, 12h, 90m or 45s.")
    var olderThan: String?

    @Flag(help: "Print {\"freedBytes\", \"freedDocuments\", \"keptPinned\", \"keptOpen\", \"keptRecent\"}.")
    var json = false

    @Argument(help: "A document or folder: a path inside the mount, or relative to the tree's root.")
    var path: String?

    func run() throws {
        try reportingErrorsNow {
            let seconds = try olderThan.map { (text) throws(CLIError) in
                guard let seconds = ProfileOptions.seconds(text) else {
                    throw .usage("--older-than takes a duration like 30d, 12h or 90m, not \"\(text)\"")
                }
                return seconds
            }
            let tree = try UserTree(profile: profile, arguments: path.map { [$0] } ?? [])
            let treePath = try path.map { (path) throws(CLIError) in try tree.node(path).1 }
            let result = try tree.clean(below: treePath, olderThan: seconds)
            if json {
                print(CacheCommand.json(result))
                return
            }
            var kept: [String] = []
            if result.keptPinned > 0 { kept.append("\(result.keptPinned) pinned") }
            if result.keptOpen > 0 { kept.append("\(result.keptOpen) open") }
            if result.keptRecent > 0 { kept.append("\(result.keptRecent) used within \(olderThan ?? "")") }
            print(
                "freed \(ByteText.format(result.freedBytes)) (\(result.freedDocuments) document(s))"
                    + (kept.isEmpty ? "" : "; kept \(kept.joined(separator: ", "))"))
        }
    }
}

extension UserTree {
    /// The cache's report: from the daemon while mounted, else from the cache directory and the store.
    func cacheReport() throws(CLIError) -> CacheReport {
        if mountpoint != nil {
            guard let report = try ask(.cache).cache else {
                throw .other("the daemon sent no cache report; see its log")
            }
            return report
        }
        let inventory = ContentCache.inventory(
            directory: paths.cache(profile: profile).path, limit: try Self.cacheLimit(profile, paths: paths))
        do throws(StoreError) {
            return CacheReport(inventory: inventory, pinnedItems: try store.pinnedItems())
        } catch {
            throw .other(error.description)
        }
    }

    /// Cleans through the daemon while mounted (it knows the open documents), else the cache directory itself.
    func clean(below treePath: String?, olderThan seconds: Int64?) throws(CLIError) -> CleanResult {
        if mountpoint != nil {
            guard let result = try ask(.cleanCache(path: treePath, olderThan: seconds)).clean else {
                throw .other("the daemon sent no result of the clean; see its log")
            }
            return result
        }
        let request: CleanRequest
        do throws(StoreError) {
            request = CleanRequest(try store.cleaningTargets(below: treePath), olderThan: seconds)
        } catch {
            throw .other(error.description)
        }
        do throws(ContentCacheError) {
            return try ContentCache.clean(directory: paths.cache(profile: profile).path, request)
        } catch {
            throw .other(error.description)
        }
    }

    /// One request to the profile's daemon; an error it answers becomes a ``CLIError``.
    func ask(_ request: ControlRequest) throws(CLIError) -> ControlResponse {
        let response: ControlResponse
        do throws(ControlSocketError) {
            response = try ControlClient.send(request, to: paths.socket(profile: profile).path)
        } catch {
            throw .other(error.description)
        }
        if let error = response.error {
            throw response.exitCode == 1 ? .usage(error) : .other(error)
        }
        return response
    }

    /// `cache_limit` of the profile, else the daemon's default.
    private static func cacheLimit(_ profile: String, paths: Paths) throws(CLIError) -> Int64 {
        let text = try ConfigFile.load(from: paths.configFile).profiles[profile]?.cacheLimit
        return text.flatMap(ProfileOptions.bytes) ?? ContentCacheConfiguration().sizeLimit
    }
}

/// Sizes as people read them, in binary units ("412 MB", "2 GB"), for `status`, `cache` and `pin`.
enum ByteText {
    /// Foundation alone writes 0 as "Zero KB".
    static func format(_ count: Int64) -> String {
        count == 0 ? "0 bytes" : ByteCountFormatter.string(fromByteCount: count, countStyle: .binary)
    }
}
