import Foundation
import StudIPKit

/// What the metadata says about a document: enough to find, size-check and revalidate its cached bytes.
public struct CacheDocument: Sendable, Hashable {
    /// The Stud.IP file-ref id.
    public var id: String
    /// The size the metadata promises; a download of any other length is rejected.
    public var size: Int64
    /// Changes whenever the listing shows new content (file id, size); a cached blob with another key is stale
    /// and gets revalidated or fetched again. Content that changed without the listing showing it is found by
    /// revalidating on open (``ContentCacheConfiguration/revalidationInterval``).
    public var version: String

    public init(id: String, size: Int64, version: String) {
        self.id = id
        self.size = size
        self.version = version
    }

    /// From the metadata's version: the key changes with the file id (new upload) or the size.
    public init(id: String, version: DocumentVersion) {
        self.init(id: id, size: version.size, version: "\(version.fileID)/\(version.size)")
    }
}

public struct ContentCacheConfiguration: Sendable {
    /// Evict least recently used blobs above this many bytes (DESIGN.md §1.5: 10 GiB).
    public var sizeLimit: Int64
    /// Evict until the cache's filesystem has this much free space (DESIGN.md §1.5: 1 GiB).
    public var minimumFreeSpace: Int64
    /// How long a download may take to start answering before opens fail (DESIGN.md §1.5: offline within 3 s).
    public var startDeadline: Duration
    /// How long a cached version with an `ETag` is trusted before an open asks the server again
    /// (`If-None-Match`; 304 keeps the bytes). Stud.IP can replace a document's bytes without any change a listing
    /// shows (JSON:API's content upload at the same size), so only this catches it. nil: never ask.
    public var revalidationInterval: Duration?

    public init(
        sizeLimit: Int64 = 10 << 30, minimumFreeSpace: Int64 = 1 << 30, startDeadline: Duration = .seconds(3),
        revalidationInterval: Duration? = .seconds(600)
    ) {
        self.sizeLimit = sizeLimit
        self.minimumFreeSpace = minimumFreeSpace
        self.startDeadline = startDeadline
        self.revalidationInterval = revalidationInterval
    }
}

/// `user.campusfs.state` (DESIGN.md §1.4).
public enum DocumentCacheState: String, Sendable {
    case remote
    case downloading
    case cached
    /// An older version is cached; the metadata names a newer one.
    case stale
}

public struct CacheUsage: Sendable, Hashable {
    /// Bytes in completed blobs (downloads in flight not included).
    public var bytes: Int64
    public var count: Int
    public var limit: Int64
    public var downloadsInFlight: Int
}
