import ArgumentParser
import ContentCache
import ContentIndexing
import ControlProtocol
import Foundation
import Glibc
import MetadataStore

/// `campusfs index`: how far the search index is; `--rebuild` extracts every cached document's text again.
struct IndexCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "Show the search index, list documents whose text could not be extracted, or rebuild it.",
        discussion: """
            The daemon extracts the text of every document it downloads (PDF pages, slides, Office and \
            OpenDocument files, plain text and HTML) into the search index that `campusfs search` and \
            `campusfs grep` read. Text stays searchable after the cache evicts the document, until a newer version \
            replaces it. The index is derived data: --rebuild drops it and extracts the text of every cached \
            document again (through the daemon while mounted, else in this process), and waits until that is done. \
            Documents that are not cached any more lose their text.
            """
                + HelpText.examples(
                    """
                    campusfs index            # 812 documents searchable, 3 waiting, 2 without text, 14 MB
                    campusfs index --failed   # which documents have no text, and why
                    campusfs index --rebuild
                    """))

    @Option(help: .mountedProfile)
    var profile: String?

    @Flag(help: "List the documents whose text could not be extracted, with the reason.")
    var failed = false

    @Flag(help: "Drop the extracted text and extract it again from the cached documents.")
    var rebuild = false

    @Flag(help: "Print {\"documents\", \"waiting\", \"failed\", \"textBytes\", \"indexBytes\"}.")
    var json = false

    func run() throws {
        try reportingErrorsNow {
            let tree = try UserTree(profile: profile)
            var status = try rebuild ? tree.rebuildIndex() : tree.indexStatus()
            if rebuild { status = try tree.waitForIndexing(from: status) }
            if json {
                print(CacheCommand.json(status))
            } else {
                print(Self.text(status))
            }
            if failed {
                let failures: [(path: String, reason: String)]
                do throws(StoreError) {
                    failures = try tree.store.extractionFailures()
                } catch {
                    throw CLIError.other(error.description)
                }
                for failure in failures { print("\(failure.path): \(failure.reason)") }
            }
        }
    }

    /// One line, for `campusfs index` and `campusfs status`.
    static func text(_ status: IndexStatus) -> String {
        var parts = ["\(status.documents) documents searchable"]
        if status.waiting > 0 { parts.append("\(status.waiting) waiting") }
        if status.failed > 0 { parts.append("\(status.failed) without text (campusfs index --failed)") }
        parts.append(
            "\(ByteText.format(status.textBytes)) of text"
                + (status.indexBytes.map { ", \(ByteText.format($0)) on disk" } ?? ""))
        return parts.joined(separator: ", ")
    }
}

extension UserTree {
    /// From the daemon while mounted (it knows its queue), else from the store and the cache directory.
    func indexStatus() throws(CLIError) -> IndexStatus {
        if mountpoint != nil {
            guard let status = try ask(.index(rebuild: false)).index else {
                throw .other("the daemon sent no index status; see its log")
            }
            return status
        }
        do throws(StoreError) {
            let waiting = ContentIndexer.unindexed(in: cacheInventory(), subjects: try store.indexingSubjects()).count
            return IndexStatus(try store.indexStatistics(measuringSize: true), waiting: waiting)
        } catch {
            throw .other(error.description)
        }
    }

    /// Mounted, the daemon rebuilds in the background; unmounted, this process extracts every cached document now,
    /// with a progress line on a terminal.
    func rebuildIndex() throws(CLIError) -> IndexStatus {
        if mountpoint != nil {
            guard let status = try ask(.index(rebuild: true)).index else {
                throw .other("the daemon sent no index status; see its log")
            }
            return status
        }
        do throws(StoreError) {
            try store.forgetExtractions()
            let copies = ContentIndexer.unindexed(in: cacheInventory(), subjects: try store.indexingSubjects())
            var line = Self.progressLine()
            for (done, copy) in copies.enumerated() {
                line?.show("indexing \(done + 1) of \(copies.count)", final: done + 1 == copies.count)
                _ = try ContentIndexer.index(copy, store: store)
            }
        } catch {
            throw .other(error.description)
        }
        return try indexStatus()
    }

    /// Polls the daemon until its queue is empty (at once without a mount: the rebuild ran in this process).
    func waitForIndexing(from status: IndexStatus) throws(CLIError) -> IndexStatus {
        var status = status
        var line = Self.progressLine()
        while mountpoint != nil, status.waiting > 0 {
            line?.show("\(status.waiting) documents waiting", final: false)
            usleep(200_000)
            status = try indexStatus()
        }
        if mountpoint != nil { line?.show("", final: false) }
        return status
    }

    /// Progress on a terminal only: `campusfs index` in a script prints its result and nothing else.
    private static func progressLine() -> ProgressLine? {
        isatty(STDERR_FILENO) == 1 ? ProgressLine(terminal: true) : nil
    }

    private func cacheInventory() -> CacheInventory {
        ContentCache.inventory(directory: paths.cache(profile: profile).path, limit: 0)
    }
}
