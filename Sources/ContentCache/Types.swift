import AsyncHelpers
import Foundation
import StudIPKit
import StudIPModel
import SystemSupport

/// What the metadata says about a document: enough to find, size-check and revalidate its cached bytes.
public struct CacheDocument: Sendable, Hashable, Codable {
    /// The Stud.IP file-ref id.
    public var id: String
    /// The size the metadata promises; a download of any other length is rejected. 0 means unknown (a document
    /// hosted elsewhere that Stud.IP did not measure): any length is taken, and the cached copy's is the truth.
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
    /// Evict least recently used blobs above this many bytes (docs/architecture.md, "Promises": 10 GiB).
    public var sizeLimit: Int64
    /// Evict until the cache's filesystem has this much free space (docs/architecture.md, "Promises": 1 GiB).
    public var minimumFreeSpace: Int64
    /// How long a download may take to start answering before opens fail (docs/architecture.md, "Promises": offline
    /// within 3 s).
    public var startDeadline: Duration
    /// How long a cached version with an `ETag` is trusted before an open asks the server again
    /// (`If-None-Match`; 304 keeps the bytes). Stud.IP can replace a document's bytes without any change a listing
    /// shows (JSON:API's content upload at the same size), so only this catches it. nil: never ask.
    public var revalidationInterval: Duration?
    /// Told about every version the cache commits (downloaded, or confirmed by a 304 for a new version key), once it
    /// can be read from ``CommittedCopy/path``: the daemon's text indexer. Called on the cache's actor: it must
    /// return at once.
    public var committed: (@Sendable (CommittedCopy) -> Void)?
    /// Runs the cache's system calls (docs/threads.md). A test gives its cache a pool of its own, so that its time
    /// bounds do not wait behind other tests' disk writes on ``BlockingPool/shared``.
    public var pool: BlockingPool
    /// Missing bytes less than this far ahead of what a download's stream has received, or of the farthest read
    /// that waits for it, wait for the stream instead of being fetched by a range (docs/ranges.md, "In the cache").
    /// A reader that follows the stream must stay within it, or the reads the kernel's readahead makes ahead of it
    /// start range fetches and the whole document goes by ranges: the mount sets ``streamWindow(readahead:)`` of its
    /// readahead. The default, 1 MiB, is for readers without readahead.
    public var streamWindow: Int64

    /// The window that covers what a kernel readahead of `readahead` bytes asks ahead of a reader that waits at the
    /// stream: each readahead window continues the one before (which waits for the stream, so the next is measured
    /// from its end), and with async reads up to two of them are out at once and arrive in any order (measured at
    /// 1 MiB: reads starting 2.98 MiB past the stream, MountLargeTests); one chunk more of margin. Measured from the
    /// stream alone it would have to be four windows, and a viewer's read near the end of any document under 4 MiB
    /// would wait for the whole download.
    public static func streamWindow(readahead: Int64) -> Int64 {
        2 * readahead + RangeFetcher.chunk
    }

    public init(
        sizeLimit: Int64 = 10 << 30, minimumFreeSpace: Int64 = 1 << 30, startDeadline: Duration = .seconds(3),
        revalidationInterval: Duration? = .seconds(600), committed: (@Sendable (CommittedCopy) -> Void)? = nil,
        pool: BlockingPool = .shared, streamWindow: Int64 = 1 << 20
    ) {
        self.pool = pool
        self.streamWindow = streamWindow
        self.sizeLimit = sizeLimit
        self.minimumFreeSpace = minimumFreeSpace
        self.startDeadline = startDeadline
        self.revalidationInterval = revalidationInterval
        self.committed = committed
    }
}

/// A completed copy of one document version in the cache. Its file may be evicted or replaced at any time after:
/// whoever reads it must expect it gone.
public struct CommittedCopy: Sendable, Hashable {
    public var documentID: String
    /// ``CacheDocument/version``.
    public var version: String
    public var path: String

    public init(documentID: String, version: String, path: String) {
        self.documentID = documentID
        self.version = version
        self.path = path
    }
}

/// `user.campusfs.state` (README.md, "Tags, highlights and pins").
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
    /// Set while the cache's disk has less free space than ``ContentCacheConfiguration/minimumFreeSpace`` even
    /// with everything evictable evicted: then every download evicts every other cached document.
    public var diskShortage: DiskShortage?

    public init(bytes: Int64, count: Int, limit: Int64, downloadsInFlight: Int, diskShortage: DiskShortage? = nil) {
        self.bytes = bytes
        self.count = count
        self.limit = limit
        self.downloadsInFlight = downloadsInFlight
        self.diskShortage = diskShortage
    }
}

/// Too little free space on the cache's disk, as the last eviction found it.
public struct DiskShortage: Sendable, Hashable, Codable {
    public var free: Int64
    public var keptFree: Int64
}

/// What a cache holds, for `campusfs cache`: the copy of each document, and the downloads in flight.
public struct CacheInventory: Sendable, Hashable {
    public struct Copy: Sendable, Hashable {
        public var version: String
        public var size: Int64
        /// When it was last opened or downloaded; on disk, the blob's modification time.
        public var lastUsed: Date
        /// The blob (see ``CommittedCopy`` on reading it).
        public var path: String
    }

    public struct Partial: Sendable, Hashable {
        public var version: String
        /// Bytes received so far: on disk, or gathered for the next write (``BodyWriter``).
        public var bytes: Int64
    }

    public var copies: [String: Copy]
    public var downloading: [String: Partial]
    public var limit: Int64

    /// Bytes in completed blobs (downloads in flight not included), as ``CacheUsage/bytes``.
    public var bytes: Int64 { copies.values.reduce(0) { $0 + $1.size } }

    /// Bytes of `document`'s current version on disk: all of them once cached, what arrived so far while it
    /// downloads, none for an older version.
    public func cachedBytes(of document: CacheDocument) -> Int64 {
        if let copy = copies[document.id], copy.version == document.version { return copy.size }
        if let partial = downloading[document.id], partial.version == document.version { return partial.bytes }
        return 0
    }

    /// How much of `documents` is on disk, summed.
    public func progress(of documents: [CacheDocument]) -> CacheProgress {
        var progress = CacheProgress()
        for document in documents {
            progress.cachedBytes += cachedBytes(of: document)
            if copies[document.id]?.version == document.version { progress.cachedDocuments += 1 }
        }
        return progress
    }
}

/// How much of some documents is cached (``CacheInventory/progress(of:)``), counting downloads in flight with the
/// bytes they have. Codable: `campusfs pin` asks the daemon for it.
public struct CacheProgress: Sendable, Hashable, Codable {
    public var cachedBytes: Int64 = 0
    /// Documents whose current version is cached completely.
    public var cachedDocuments = 0

    public init() {}
}

/// What `campusfs cache clean` removes: cached copies that are neither pinned nor open, optionally only those not
/// used for a while. The documents stay in the tree and download again when opened.
public struct CleanRequest: Sendable, Hashable {
    /// The documents to consider; nil: every cached one.
    public var documentIDs: Set<String>?
    /// Documents the metadata store has pinned (also below a pinned folder): the cache may not have heard of every
    /// pin yet, and without a daemon it knows none.
    public var pinned: Set<String>
    /// Keep copies used within this time.
    public var unusedFor: Duration?

    public init(documentIDs: Set<String>? = nil, pinned: Set<String> = [], unusedFor: Duration? = nil) {
        self.documentIDs = documentIDs
        self.pinned = pinned
        self.unusedFor = unusedFor
    }

    /// Decides about one cached copy and counts the decision; true: remove it.
    func removes(
        _ copy: CacheInventory.Copy, isPinned: Bool, isOpen: Bool, now: Date, counting result: inout CleanResult
    ) -> Bool {
        if isPinned {
            result.keptPinned += 1
        } else if isOpen {
            result.keptOpen += 1
        } else if let unusedFor, now.timeIntervalSince(copy.lastUsed) < unusedFor.seconds {
            result.keptRecent += 1
        } else {
            result.freedBytes += copy.size
            result.freedDocuments += 1
            return true
        }
        return false
    }
}

/// What a clean did. Codable: the daemon sends it to `campusfs cache clean` as it is.
public struct CleanResult: Sendable, Hashable, Codable {
    public var freedBytes: Int64 = 0
    public var freedDocuments = 0
    public var keptPinned = 0
    /// Open right now, or downloading.
    public var keptOpen = 0
    /// Used within ``CleanRequest/unusedFor``.
    public var keptRecent = 0

    public init() {}
}
