import Glibc
import Logging
import StudIPKit
import StudIPModel
import Synchronization
import SystemSupport

/// Whether the downloader answers byte ranges at all. It says so once for the installation
/// (``StudIPKit/StudIPError/rangesUnavailable(what:detail:)``), so the cache asks no more for its lifetime.
final class RangeSupport: Sendable {
    private let unavailable = Atomic(false)

    var isAvailable: Bool { !unavailable.load(ordering: .relaxed) }

    func markUnavailable() { unavailable.store(true, ordering: .relaxed) }
}

/// Fetches parts of a document by ranges into its sparse file and records what is on disk in the file's range map
/// (docs/ranges.md, "In the cache").
struct RangeFetcher: Sendable {
    /// Reads out of order fetch whole aligned chunks of this size: a viewer's next read is usually near its last,
    /// and a request costs a round trip (docs/ranges.md, "In the cache").
    static let chunk: Int64 = 256 << 10
    /// A sequential reader's fetches double up to this size.
    static let readAheadLimit: Int64 = 4 << 20
    /// The largest range the gap filler asks at once, so that a failure costs little and memory stays bounded.
    static let fillLimit: Int64 = 8 << 20

    let downloader: any DocumentDownloader
    let pool: BlockingPool
    let writes: Counter
    let support: RangeSupport
    let layout: CacheLayout
    /// Missing bytes less than this far ahead of what the stream has received, or of the farthest read waiting for
    /// it, wait for the stream (``ContentCacheConfiguration/streamWindow``).
    let streamWindow: Int64
    let logger: Logger

    /// Fetches `piece` into `transfer`'s file, then records it in the range map; false when the fetch failed, after
    /// which the transfer reads its stream only. The first answer counts as the transfer's start (a resumed
    /// partial's gap filler starts with a range). `claim`: the part of `piece` this fetch marked as being fetched.
    func fetch(_ piece: Range<Int64>, claim: Range<Int64>, into transfer: Transfer) async -> Bool {
        let document = transfer.document
        var failed = true
        defer { transfer.fetchEnded(claim, failed: failed) }
        let body: DownloadBody
        do {
            // `If-Range`: the bytes must be the version of those present (docs/ranges.md, "In the cache").
            body = try await downloader.downloadRange(
                RangeRequest(
                    documentID: document.id, range: piece, documentSize: document.size, ifRange: transfer.etag))
        } catch {
            if case .rangesUnavailable = error {
                if support.isAvailable { logger.info("reading whole documents only: \(error)") }
                support.markUnavailable()
            } else if error != .cancelled {
                logger.info(
                    "range fetch failed, reading the stream: \(error)", metadata: ["document": "\(document.id)"])
            }
            return false
        }
        guard transfer.adopt(etag: body.etag) else {
            logger.info(
                "a range of another version (ETag \(body.etag ?? "none")), reading the stream",
                metadata: ["document": "\(document.id)"])
            return false
        }
        _ = transfer.respond(notModified: false)
        let writer = BodyWriter(transfer: transfer, offset: piece.lowerBound, stream: false, writes: writes, pool: pool)
        do throws(ContentCacheError) {
            // Checked again although `downloadRange` promises exactly the range: any `DocumentDownloader` may answer,
            // and a longer body would overwrite other bytes and mark them present, a shorter one leave a hole.
            var received: Int64 = 0
            while let chunk = try await body.nextChunk(of: document.id) {
                received += Int64(chunk.count)
                guard received <= piece.count else {
                    throw .sizeMismatch(documentID: document.id, expected: Int64(piece.count), received: received)
                }
                try await writer.append(chunk)
                guard !Task.isCancelled else { throw .cancelled }
            }
            guard received == piece.count else {
                throw .sizeMismatch(documentID: document.id, expected: Int64(piece.count), received: received)
            }
            try await writer.finish()
        } catch {
            await writer.discard()
            if error != .cancelled {
                logger.info(
                    "range fetch broke off, reading the stream: \(error)", metadata: ["document": "\(document.id)"])
            }
            return false
        }
        checkpoint(transfer)
        failed = false
        return true
    }

    /// Records the bytes present in the range map beside the file (``CacheLayout/writePartialMap(_:)``), only after
    /// they were `fdatasync`ed, so a kill -9 at any moment leaves a map that claims only bytes on disk, or none. It
    /// runs behind the caller on the pool: an `fdatasync` of megabytes can take a while on a busy disk, and a stream
    /// that stops reading meanwhile lets the network buffer bytes that a stop at a present run would then waste. One
    /// job per transfer at a time (docs/threads.md), which writes again when asked meanwhile: maps are written in
    /// order, so the last one holds everything checkpointed.
    func checkpoint(_ transfer: Transfer) {
        guard transfer.requestCheckpoint() else { return }
        pool.submit {
            repeat { writeMap(transfer) } while transfer.checkpointAgain()
        }
    }

    /// Blocks for an `fdatasync` and the map's atomic rename: on the pool.
    private func writeMap(_ transfer: Transfer) {
        guard let (present, etag) = transfer.checkpointState, !present.isEmpty,
            (try? transfer.descriptor.sync(dataOnly: true)) != nil
        else { return }
        let document = transfer.document
        let map = PartialMap(
            documentID: document.id, version: document.version, size: document.size, etag: etag, file: transfer.blob,
            ranges: present.ranges)
        do throws(ContentCacheError) {
            try layout.writePartialMap(map)
        } catch {
            logger.warning("\(error)")
        }
    }
}
