import ContentCache
import Foundation
import Glibc
import SystemSupport

struct TimedOut: Error {}

/// Runs `body`, failing with ``TimedOut`` instead of hanging the suite when it does not finish in time.
func within<T: Sendable>(_ limit: Duration, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: limit)
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw TimedOut() }
        return value
    }
}

/// A fresh cache directory and fake server per test.
struct Fixture {
    let directory: String
    let downloader = FakeDownloader()

    /// What a kill -9 leaves for the next run: a copy of `other`'s cache directory as it is now, with a new fake
    /// server.
    init(copyOf other: Fixture) throws {
        self.init()
        try FileManager.default.createDirectory(
            atPath: (directory as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: other.directory, toPath: directory)
    }

    init() {
        var template = Array((NSTemporaryDirectory() + "/content-cache-XXXXXX").utf8CString)
        let path = template.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress.flatMap { mkdtemp($0) }.map { String(cString: $0) }
        }
        directory = (path ?? NSTemporaryDirectory() + "/content-cache-\(UUID())") + "/cache"
    }

    /// Revalidation on open is off unless a test asks for it, so request counts stay those of the test.
    func cache(
        sizeLimit: Int64 = 1 << 40, minimumFreeSpace: Int64 = 0, startDeadline: Duration = .seconds(3),
        revalidationInterval: Duration? = nil, pool: BlockingPool = .shared, streamWindow: Int64 = 1 << 20
    ) throws -> ContentCache {
        try ContentCache(
            directory: directory, downloader: downloader,
            configuration: ContentCacheConfiguration(
                sizeLimit: sizeLimit, minimumFreeSpace: minimumFreeSpace, startDeadline: startDeadline,
                revalidationInterval: revalidationInterval, pool: pool, streamWindow: streamWindow))
    }

    /// Registers a document with the fake and returns its metadata.
    func document(_ id: String, size: Int, version: String = "v1", etag: String? = nil) -> (CacheDocument, [UInt8]) {
        let bytes = content(id + version, size: size)
        downloader.set(id, bytes, etag: etag)
        return (CacheDocument(id: id, size: Int64(size), version: version), bytes)
    }

    func files(in subdirectory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory + "/" + subdirectory)) ?? []).sorted()
    }

    func mode(_ path: String) -> mode_t {
        var info = stat()
        guard stat(path, &info) == 0 else { return 0 }
        return info.st_mode & 0o7777
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: (directory as NSString).deletingLastPathComponent)
    }
}

extension ContentCache {
    /// Everything of a document through one handle.
    func readAll(_ handle: ContentHandle) async throws -> [UInt8] {
        try await read(handle, offset: 0, length: Int(handle.size) + 1)
    }

    /// Downloads a document and releases it again once the download is committed, as a `cat` that outlasts the
    /// commit would. Releasing earlier races the commit's eviction pass, which skips open documents only.
    func load(_ document: CacheDocument) async throws -> [UInt8] {
        let handle = try await open(document)
        defer { release(handle) }
        let bytes = try await readAll(handle)
        if handle.version == document.version { try await prefetch(document) }
        return bytes
    }
}

/// Waits (bounded by ``within``, 30 s) until `condition` holds, looking every 5 ms.
func eventually(_ condition: @escaping @Sendable () -> Bool) async throws {
    try await within(.seconds(30)) {
        while !condition() { try await Task.sleep(for: .milliseconds(5)) }
    }
}
