import Foundation
import Glibc
import StudIPKit
import StudIPModel
import SystemSupport

/// Runs one transfer off the cache actor: asks the downloader, streams the body into the sparse file through a
/// ``BodyWriter`` (memory stays at a few MiB however large the document), stops the stream where the bytes ahead are
/// present and fetches the remaining gaps by ranges instead (docs/ranges.md, "In the cache"), fsyncs and renames the
/// complete file into `blobs/`, and hands the result to the actor, which alone writes sidecars and changes the index.
/// Writes, `fsync` and `rename` run on the cache's pool: the task only waits for the network and for them.
struct DownloadJob: Sendable {
    let transfer: Transfer
    let request: DownloadRequest
    let blob: String
    let blobPath: String
    let downloader: any DocumentDownloader
    let cache: ContentCache
    /// The most a body of unknown size may have: ``ContentCacheConfiguration/sizeLimit``.
    let sizeCap: Int64

    /// How a stream ended.
    private enum StreamEnd {
        /// The body ended after this many bytes.
        case ended(Int64)
        /// Stopped before its end because every byte from there on is present.
        case restPresent
        /// Stopped at bytes present, so that the gaps after them are fetched by ranges.
        case gapsByRanges
    }

    /// The stream checkpoints the range map after this many bytes (``RangeFetcher/checkpoint(_:)``).
    static let checkpointInterval: Int64 = 8 << 20

    func run() async {
        // A resumed partial: its gaps by ranges, the stream only when ranges do not work.
        if !transfer.present.isEmpty, transfer.rangesWork {
            if await fillGaps() {
                await complete(size: transfer.document.size, etag: transfer.resumedETag, lastModified: nil)
                return
            }
            guard !transfer.phase.isTerminal, !Task.isCancelled else {
                await cache.abandon(transfer, error: .cancelled)
                return
            }
        }
        let resuming = !transfer.present.isEmpty
        // A download that has bytes already asks for the whole document: a 304 would say nothing about them.
        await stream(resuming ? DownloadRequest(documentID: request.documentID) : request)
    }

    /// Streams the document from byte 0, then completes it: with the gaps fetched by ranges where the stream stopped at
    /// bytes present, or by a second stream when those fail.
    private func stream(_ request: DownloadRequest) async {
        // The body is gone once `receive` returns: a stream stopped early no longer arrives while the gaps are
        // fetched (dropping it cancels its transfer, ``DownloadBody``).
        guard let streamed = await receive(request) else { return }
        let (etag, lastModified) = (streamed.etag, streamed.lastModified)
        switch streamed.end {
        case .ended(let size):
            await complete(size: size, etag: etag, lastModified: lastModified)
        case .restPresent:
            await complete(size: transfer.document.size, etag: etag, lastModified: lastModified)
        case .gapsByRanges:
            if await fillGaps() {
                await complete(size: transfer.document.size, etag: etag, lastModified: lastModified)
            } else if transfer.phase.isTerminal || Task.isCancelled {
                await cache.abandon(transfer, error: .cancelled)
            } else {
                // Ranges failed after the stream stopped: stream again. Ranges are off for this download now, so
                // the new stream runs to the end (or to bytes present up to the end).
                await stream(DownloadRequest(documentID: request.documentID))
            }
        }
    }

    /// What a stream brought: how it ended, and its validators.
    private struct Streamed {
        var end: StreamEnd
        var etag: String?
        var lastModified: Date?
    }

    /// Asks for the stream and writes its body; nil when the job is over (a 304 handled, the transfer abandoned).
    private func receive(_ request: DownloadRequest) async -> Streamed? {
        let response: DownloadResponse
        do {
            response = try await downloader.download(request)
        } catch {
            await cache.abandon(transfer, error: error == .cancelled ? .cancelled : failure(error))
            return nil
        }
        let body: DownloadBody
        switch response {
        case .notModified:
            guard transfer.respond(notModified: true) else { return nil }
            await cache.commitNotModified(transfer)
            return nil
        case .content(let content):
            body = content
        }
        // Checked before the transfer counts as started: an open that has not answered yet can still refresh the
        // metadata and try again instead of failing.
        if let expected = expectedSize, let length = body.expectedLength, length != expected {
            await cache.abandon(transfer, error: mismatch(length))
            return nil
        }
        if expectedSize == nil, let length = body.expectedLength, length > sizeCap {
            await cache.abandon(transfer, error: tooLarge(length))
            return nil
        }
        // The bytes present must be this version's: a resumed partial's, a range's or a first stream's ETag must match.
        switch transfer.streamAnswered(etag: body.etag) {
        case .streaming: break
        case .ended: return nil
        case .otherVersion(let known):
            let detail =
                "its content changed on Stud.IP (ETag \(known), now \(body.etag ?? "none")) while it downloaded"
            await cache.abandon(transfer, error: .interrupted(documentID: request.documentID, detail: detail))
            return nil
        }
        do throws(ContentCacheError) {
            return Streamed(end: try await write(body), etag: body.etag, lastModified: body.lastModified)
        } catch {
            await cache.abandon(transfer, error: error)
            return nil
        }
    }

    /// Fetches the missing bytes by ranges, ``RangeFetcher/fillLimit`` at a time, waiting for fetches reads started;
    /// false when ranges do not work (the caller streams) or the transfer ended.
    private func fillGaps() async -> Bool {
        guard let fetcher = transfer.fetcher else { return false }
        while !Task.isCancelled {
            switch transfer.nextGap(limit: RangeFetcher.fillLimit) {
            case .complete: return true
            case .unavailable: return false
            case .wait(let generation): await transfer.awaitChange(since: generation)
            case .fetch(let piece, let claim): _ = await fetcher.fetch(piece, claim: claim, into: transfer)
            }
        }
        return false
    }

    /// Fsyncs the complete file, renames it into `blobs/` and lets the cache commit it.
    private func complete(size: Int64, etag: String?, lastModified: Date?) async {
        await transfer.endFetches()
        await transfer.closeCheckpoints()
        do throws(ContentCacheError) {
            try await cache.pool.run { [transfer, blobPath] () throws(ContentCacheError) in
                try transfer.descriptor.sync()
                try CacheLayout.rename(transfer.temporaryPath, to: blobPath)
            }
        } catch {
            await cache.abandon(transfer, error: error)
            return
        }
        await cache.commit(transfer, blob: blob, size: size, etag: etag, lastModified: lastModified)
    }

    /// The size the body must have; nil when the metadata's is 0, which for a document hosted elsewhere means
    /// "unknown": Stud.IP 5.0.7's "add URL" dialog records 0 whatever the host serves, so the document is what the
    /// host sends, up to ``sizeCap`` (docs/mount.md, "Documents hosted elsewhere"). A document that is empty on
    /// Stud.IP stays empty.
    private var expectedSize: Int64? { transfer.document.size == 0 ? nil : transfer.document.size }

    /// Streams the body into the file until it ends or reaches bytes that make the rest unnecessary; dropping the
    /// body there cancels its transfer (``DownloadBody``).
    private func write(_ body: DownloadBody) async throws(ContentCacheError) -> StreamEnd {
        let writer = BodyWriter(transfer: transfer, writes: cache.bodyWrites, pool: cache.pool)
        do throws(ContentCacheError) {
            let expected = expectedSize
            var received: Int64 = 0
            var checkpointed: Int64 = 0
            while true {
                if let stop = transfer.streamShouldStop(at: received) {
                    try await writer.finish()
                    transfer.streamStopped()
                    if case .complete = stop { return .restPresent }
                    return .gapsByRanges
                }
                guard let chunk = try await body.nextChunk(of: request.documentID) else { break }
                received += Int64(chunk.count)
                if let expected, received > expected { throw mismatch(received) }
                if expected == nil, received > sizeCap { throw tooLarge(received) }
                try await writer.append(chunk)
                guard !Task.isCancelled else { throw .cancelled }
                if let fetcher = transfer.fetcher, received - checkpointed >= Self.checkpointInterval {
                    checkpointed = received
                    fetcher.checkpoint(transfer)
                }
            }
            if let expected, received != expected { throw mismatch(received) }
            try await writer.finish()
            transfer.streamStopped()
            return .ended(received)
        } catch {
            await writer.discard()
            transfer.streamStopped()
            throw error
        }
    }

    private func failure(_ error: StudIPError) -> ContentCacheError {
        .downloadFailed(documentID: request.documentID, error)
    }

    private func tooLarge(_ received: Int64) -> ContentCacheError {
        .tooLarge(documentID: request.documentID, limit: sizeCap, received: received)
    }

    private func mismatch(_ received: Int64) -> ContentCacheError {
        .sizeMismatch(documentID: request.documentID, expected: transfer.document.size, received: received)
    }
}

extension DownloadBody {
    /// The next chunk, with a failure phrased for the cache: a stream's or a range fetch's.
    func nextChunk(of documentID: String) async throws(ContentCacheError) -> [UInt8]? {
        do {
            return try await next()
        } catch let error as StudIPError {
            throw error == .cancelled ? .cancelled : .downloadFailed(documentID: documentID, error)
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw .interrupted(documentID: documentID, detail: String(describing: error))
        }
    }
}
