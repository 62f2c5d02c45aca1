import Glibc
import StudIPKit
import StudIPModel
import SystemSupport

/// Runs one transfer off the cache actor: asks the downloader, streams the body into the temporary file through a
/// ``BodyWriter`` (memory stays at a few MiB however large the document), fsyncs and renames it into `blobs/`, and
/// hands the result to the actor, which alone writes sidecars and changes the index. Writes, `fsync` and `rename`
/// run on the cache's pool: the task only waits for the network and for them.
struct DownloadJob: Sendable {
    let transfer: Transfer
    let request: DownloadRequest
    let blob: String
    let blobPath: String
    let downloader: any DocumentDownloader
    let cache: ContentCache
    /// The most a body of unknown size may have: ``ContentCacheConfiguration/sizeLimit``.
    let sizeCap: Int64

    func run() async {
        let response: DownloadResponse
        do {
            response = try await downloader.download(request)
        } catch {
            await cache.abandon(transfer, error: error == .cancelled ? .cancelled : failure(error))
            return
        }
        switch response {
        case .notModified:
            guard transfer.respond(notModified: true) else { return }
            await cache.commitNotModified(transfer)
        case .content(let body):
            // Checked before the transfer counts as started: an open that has not answered yet can still refresh
            // the metadata and try again instead of failing.
            if let expected = expectedSize, let length = body.expectedLength, length != expected {
                await cache.abandon(transfer, error: mismatch(length))
                return
            }
            if expectedSize == nil, let length = body.expectedLength, length > sizeCap {
                await cache.abandon(transfer, error: tooLarge(length))
                return
            }
            guard transfer.respond(notModified: false) else { return }
            let size: Int64
            do throws(ContentCacheError) {
                size = try await stream(body)
                try await cache.pool.run { [transfer, blobPath] () throws(ContentCacheError) in
                    try transfer.descriptor.sync()
                    try CacheLayout.rename(transfer.temporaryPath, to: blobPath)
                }
            } catch {
                await cache.abandon(transfer, error: error)
                return
            }
            await cache.commit(transfer, blob: blob, size: size, etag: body.etag, lastModified: body.lastModified)
        }
    }

    /// The size the body must have; nil when the metadata's is 0, which for a document hosted elsewhere means
    /// "unknown": Stud.IP 5.0.7's "add URL" dialog records 0 whatever the host serves, so the document is what the
    /// host sends, up to ``sizeCap`` (docs/mount.md, "Documents hosted elsewhere"). A document that is empty on
    /// Stud.IP stays empty.
    private var expectedSize: Int64? { transfer.document.size == 0 ? nil : transfer.document.size }

    /// Streams the body to the temporary file; returns its length once all of it is written.
    private func stream(_ body: DownloadBody) async throws(ContentCacheError) -> Int64 {
        let writer = BodyWriter(transfer: transfer, writes: cache.bodyWrites, pool: cache.pool)
        do throws(ContentCacheError) {
            let expected = expectedSize
            var received: Int64 = 0
            while let chunk = try await nextChunk(body) {
                received += Int64(chunk.count)
                if let expected, received > expected { throw mismatch(received) }
                if expected == nil, received > sizeCap { throw tooLarge(received) }
                try await writer.append(chunk)
                guard !Task.isCancelled else { throw .cancelled }
            }
            if let expected, received != expected { throw mismatch(received) }
            try await writer.finish()
            return received
        } catch {
            await writer.discard()
            throw error
        }
    }

    private func nextChunk(_ body: DownloadBody) async throws(ContentCacheError) -> [UInt8]? {
        do {
            return try await body.next()
        } catch let error as StudIPError {
            throw error == .cancelled ? .cancelled : failure(error)
        } catch is CancellationError {
            throw .cancelled
        } catch {
            throw .interrupted(documentID: request.documentID, detail: String(describing: error))
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
