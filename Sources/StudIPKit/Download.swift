import Foundation

/// Downloading a document's bytes (issue 4): the content cache asks, the client fetches.
///
/// Bodies are pulled chunk by chunk (``DownloadBody/next()``), so a slow disk slows the network read down
/// instead of buffering the document in memory.
public protocol DocumentDownloader: Sendable {
    /// Starts a download. Throws for HTTP errors (403 → `.forbidden`, 404 → `.notFound`, …); a 304 to a
    /// conditional request is ``DownloadResponse/notModified``.
    func download(_ request: DownloadRequest) async throws(StudIPError) -> DownloadResponse
}

public struct DownloadRequest: Sendable, Hashable {
    public var documentID: String
    /// Sent as `If-None-Match` (JSON:API's ETag) when the cache holds a version.
    public var ifNoneMatch: String?
    /// Sent as `If-Modified-Since` (legacy REST has no ETag) when the cache holds a version.
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
    /// The validator to store with the cached version: the ETag (JSON:API) or `Last-Modified` (legacy).
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
