import Foundation
import StudIPModel

/// Downloading a document's bytes (issue 4): the content cache asks, the client fetches.
///
/// Bodies are pulled chunk by chunk (``DownloadBody/next()``), so a slow disk slows the network read down
/// instead of buffering the document in memory.
public protocol DocumentDownloader: Sendable {
    /// Starts a download. Throws for HTTP errors (403 → `.forbidden`, 404 → `.notFound`, …); a 304 to a
    /// conditional request is ``DownloadResponse/notModified``.
    func download(_ request: DownloadRequest) async throws(StudIPError) -> DownloadResponse

    /// True while the last exchange with the server found it unreachable or refusing the login. A cached document
    /// then opens without asking the server whether it is still current, so such an open never waits or fails.
    var isKnownUnavailable: Bool { get async }

    /// Starts a download of part of a document (docs/ranges.md), streamed like ``download(_:)``: a body of exactly
    /// `request.range.count` bytes (``DownloadBody/expectedLength``) that throws when fewer arrive. The answer is
    /// verified before it returns: a `206` whose `Content-Range` names exactly the range asked for and the size the
    /// listing promised. Throws ``StudIPError/rangesUnavailable(what:detail:)`` only when this connection (installation
    /// and login) answers no ranges at all; an answer that fails verification throws
    /// ``StudIPError/malformedResponse(what:detail:)`` for this range alone; otherwise what ``download(_:)`` throws.
    /// Either way the caller reads the document's stream.
    func downloadRange(_ request: RangeRequest) async throws(StudIPError) -> DownloadBody
}

extension DocumentDownloader {
    /// Downloaders that keep no connection state (the sources themselves, test fakes) never know.
    public var isKnownUnavailable: Bool { get async { false } }

    /// Downloaders that fetch whole documents only (test fakes, stream-only installations).
    public func downloadRange(_ request: RangeRequest) async throws(StudIPError) -> DownloadBody {
        throw .rangesUnavailable(
            what: "document \(request.documentID)", detail: "this downloader fetches whole documents only")
    }
}

/// Part of a document, for a read out of order (a PDF viewer reads the end first).
public struct RangeRequest: Sendable, Hashable {
    public var documentID: String
    /// The bytes wanted, within the document and at least two of them: Stud.IP 5.0.7's `sendfile.php` answers a
    /// one-byte range with the document's first byte under a `Content-Range` that names the byte asked for
    /// (docs/ranges.md), so no one-byte range is ever asked.
    public var range: Range<Int64>
    /// The size the listing promised, which the answer's `Content-Range` must name; 0 when unknown (a document hosted
    /// elsewhere), then any total is taken.
    public var documentSize: Int64
    /// The `ETag` of the document's bytes already present, sent as `If-Range` on the JSON:API content route so that
    /// a changed document cannot mix into them (docs/ranges.md); `sendfile.php` has no validators. nil: none known.
    public var ifRange: String?

    public init(documentID: String, range: Range<Int64>, documentSize: Int64, ifRange: String? = nil) {
        self.documentID = documentID
        self.range = range
        self.documentSize = documentSize
        self.ifRange = ifRange
    }
}

public struct DownloadRequest: Sendable, Hashable {
    public var documentID: String
    /// Sent as `If-None-Match` (JSON:API's ETag) when the cache holds a version.
    public var ifNoneMatch: String?
    /// Sent as `If-Modified-Since` when the cache holds a version. Stud.IP 5.0.7 answers 200 to it on both APIs
    /// (captured); a host a document hosted elsewhere redirects to may answer 304.
    public var ifModifiedSince: Date?

    public init(documentID: String, ifNoneMatch: String? = nil, ifModifiedSince: Date? = nil) {
        self.documentID = documentID
        self.ifNoneMatch = ifNoneMatch
        self.ifModifiedSince = ifModifiedSince
    }
}

public enum DownloadResponse: Sendable {
    /// The cached version is current (304).
    case notModified
    case content(DownloadBody)
}

/// A document body arriving from the server.
public struct DownloadBody: Sendable, AsyncSequence {
    public typealias Element = [UInt8]

    /// `Content-Length`, when the server sent one.
    public var expectedLength: Int64?
    /// The content's `ETag` (JSON:API; legacy REST sends none), for revalidation with `If-None-Match`.
    public var etag: String?
    public var lastModified: Date?
    /// True when the document came from another host (a Stud.IP URL file, after a 302).
    public var wasRedirected: Bool
    /// The next chunk, or nil at the end of the body. Throws when the transfer breaks (reset, timeout).
    public let next: @Sendable () async throws -> [UInt8]?

    public init(
        expectedLength: Int64?, etag: String? = nil, lastModified: Date? = nil, wasRedirected: Bool = false,
        next: @escaping @Sendable () async throws -> [UInt8]?
    ) {
        self.expectedLength = expectedLength
        self.etag = etag
        self.lastModified = lastModified
        self.wasRedirected = wasRedirected
        self.next = next
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let next: @Sendable () async throws -> [UInt8]?
        public mutating func next() async throws -> [UInt8]? { try await next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(next: next) }
}
