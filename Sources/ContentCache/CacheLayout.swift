import Foundation
import Glibc
import SystemSupport

/// A cached version as recorded on disk: the sidecar `blobs/<key>.json` next to its blob `blobs/<blob>`.
struct CacheEntry: Sendable, Codable {
    var documentID: String
    var version: String
    var size: Int64
    var etag: String?
    var lastModified: Date?
    /// The blob's file name in `blobs/`; a fresh random name per download, so a replaced version's file can be
    /// unlinked while handles still read it.
    var blob: String
}

/// A partial (sparse) download as recorded on disk: the range map `partial/<file>.json` beside its file
/// `partial/<file>.partial` (docs/ranges.md, "In the cache").
struct PartialMap: Sendable, Codable {
    var documentID: String
    var version: String
    var size: Int64
    /// The `ETag` the present bytes came with, when the stream gave one.
    var etag: String?
    /// The file's name without `.partial`: the blob name it becomes.
    var file: String
    /// Bytes that were `fdatasync`ed before this map was written.
    var ranges: [Range<Int64>]
}

extension CacheInventory.Partial {
    /// A partial download a previous run left: its version and the bytes its range map claims.
    init(_ map: PartialMap) {
        self.init(version: map.version, bytes: ByteRanges(map.ranges).count)
    }
}

/// The cache directory:
///
///     <root>/                    0700
///       tmp/                     0700  sidecars and range maps being written; emptied at startup
///       partial/                 0700  downloads in progress, sparse (docs/ranges.md, "In the cache"):
///         <key>.<random>.partial 0600  the bytes fetched so far, at their offsets
///         <key>.<random>.json    0600  its range map: the bytes present, fdatasynced before the map was written to
///                                      tmp/, fsynced and renamed here. Kept at startup (clipped to the file's
///                                      size) and resumed by the next open of that version. Named per file, not
///                                      per document: a download that ends late never touches a newer one's map
///       blobs/                   0700
///         <key>.<random>         0600  a completed document version, fsynced before it was renamed here
///         <key>.json             0600  its sidecar, written to tmp/, fsynced and renamed here: the commit point
///
/// `<key>` is the document id in hex, so untrusted ids cannot form paths. A blob counts only when a sidecar names
/// it and its size matches, a partial file only when a valid range map names it; everything else is removed at
/// startup.
struct CacheLayout: Sendable {
    let root: String
    let blobs: String
    let temporary: String
    let partials: String

    init(root: String) throws(ContentCacheError) {
        self.init(existing: root)
        try Self.makeDirectory(root, parents: true)
        try Self.makeDirectory(blobs, parents: false)
        try Self.makeDirectory(temporary, parents: false)
        try Self.makeDirectory(partials, parents: false)
    }

    /// The layout of `root` as it is, creating nothing: for reading a cache no daemon serves.
    init(existing root: String) {
        self.root = root
        blobs = root + "/blobs"
        temporary = root + "/tmp"
        partials = root + "/partial"
    }

    static func key(for documentID: String) throws(ContentCacheError) -> String {
        let bytes = Array(documentID.utf8)
        guard !bytes.isEmpty, bytes.count <= 128 else { throw .invalidDocumentID(documentID) }
        return bytes.map { String($0, radix: 16, uppercase: false).leftPadded() }.joined()
    }

    func blobPath(_ blob: String) -> String { blobs + "/" + blob }

    func sidecarPath(key: String) -> String { blobs + "/" + key + ".json" }

    func copy(_ entry: CacheEntry, lastUsed: Date) -> CacheInventory.Copy {
        CacheInventory.Copy(version: entry.version, size: entry.size, lastUsed: lastUsed, path: blobPath(entry.blob))
    }

    /// A new blob name and the sparse file it is downloaded into.
    func newDownload(key: String) -> (blob: String, temporaryPath: String) {
        let blob = key + "." + String(UInt64.random(in: .min ... .max), radix: 16)
        return (blob, partialPath(blob))
    }

    /// The sparse file of the download that becomes blob `blob`.
    func partialPath(_ blob: String) -> String { partials + "/" + blob + ".partial" }

    /// The range map of the sparse file that becomes blob `blob`.
    func partialMapPath(_ blob: String) -> String { partials + "/" + blob + ".json" }

    /// Writes the sidecar atomically (temporary file, fsync, rename, fsync of the directory). Blocks for two
    /// `fsync`s: off the cooperative pool.
    func writeSidecar(_ entry: CacheEntry) throws(ContentCacheError) {
        BlockingPool.checkBlockingAllowed("writing the sidecar of document \(entry.documentID)")
        let key = try Self.key(for: entry.documentID)
        try writeAtomically(entry, to: sidecarPath(key: key), key: key, directory: blobs)
    }

    /// Writes a partial download's range map atomically, as ``writeSidecar(_:)`` does. The caller has `fdatasync`ed
    /// the bytes it claims.
    func writePartialMap(_ map: PartialMap) throws(ContentCacheError) {
        BlockingPool.checkBlockingAllowed("writing the range map of document \(map.documentID)")
        let key = try Self.key(for: map.documentID)
        try writeAtomically(map, to: partialMapPath(map.file), key: key, directory: partials)
    }

    private func writeAtomically(
        _ value: some Encodable, to path: String, key: String, directory: String
    ) throws(ContentCacheError) {
        let data: Data
        do {
            data = try JSONEncoder().encode(value)
        } catch {
            throw .io(operation: "encode", path: path, errno: EINVAL)
        }
        let temporaryPath = temporary + "/" + key + "." + String(UInt64.random(in: .min ... .max), radix: 16) + ".json"
        do throws(ContentCacheError) {
            let file = try Descriptor.open(temporaryPath, flags: O_WRONLY | O_CREAT | O_EXCL, mode: 0o600)
            try file.write([UInt8](data), at: 0)
            try file.sync()
            try Self.rename(temporaryPath, to: path)
        } catch {
            unlink(temporaryPath)
            throw error
        }
        syncDirectory(directory)
    }

    func removeEntry(_ entry: CacheEntry) {
        BlockingPool.checkBlockingAllowed("removing the cached copy of document \(entry.documentID)")
        if let key = try? Self.key(for: entry.documentID) { unlink(sidecarPath(key: key)) }
        unlink(blobPath(entry.blob))
    }

    /// Deletes a partial download: its range map (first, so a crash in between leaves a file no map names, which
    /// the next start deletes) and its file.
    func removePartial(_ map: PartialMap) {
        BlockingPool.checkBlockingAllowed("removing the partial download of document \(map.documentID)")
        unlink(partialMapPath(map.file))
        unlink(partialPath(map.file))
    }

    /// Cleans up after a crash and returns the completed entries with their blobs' modification times (the
    /// last access, see ``Descriptor/markAccessed()``), and the partial downloads kept for resuming.
    func recover() -> (entries: [(entry: CacheEntry, lastAccess: timespec)], partials: [PartialMap]) {
        for name in Self.contents(of: temporary) { unlink(temporary + "/" + name) }
        let (recovered, garbage) = scan()
        for name in garbage { unlink(blobs + "/" + name) }
        let (partials, partialGarbage) = scanPartials()
        for name in partialGarbage { unlink(self.partials + "/" + name) }
        return (recovered, partials)
    }

    /// Reads `partial/` without changing it: the range maps that name a regular file, their ranges clipped to the
    /// file's size and the document's, and the files that belong to none (a map without a valid file or with no
    /// range left, a file without a map).
    func scanPartials() -> (maps: [PartialMap], garbage: [String]) {
        var maps: [PartialMap] = []
        var garbage: [String] = []
        let names = Self.contents(of: partials)
        for name in names where name.hasSuffix(".json") {
            guard let data = FileManager.default.contents(atPath: partials + "/" + name),
                var map = try? JSONDecoder().decode(PartialMap.self, from: data),
                let key = try? Self.key(for: map.documentID), name == map.file + ".json",
                map.file.hasPrefix(key + "."), !map.file.contains("/"), map.size > 0
            else {
                garbage.append(name)
                continue
            }
            var info = stat()
            guard lstat(partialPath(map.file), &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                garbage.append(name)
                continue
            }
            map.ranges = ByteRanges(map.ranges).clipped(to: min(Int64(info.st_size), map.size)).ranges
            guard !map.ranges.isEmpty else {
                garbage.append(name)
                continue
            }
            maps.append(map)
        }
        // One partial per document (a crash can leave a superseded download's beside the newer one): the one with
        // the most bytes.
        let kept = Dictionary(maps.map { ($0.documentID, $0) }) { first, second in
            ByteRanges(first.ranges).count >= ByteRanges(second.ranges).count ? first : second
        }
        for map in maps where kept[map.documentID]?.file != map.file { garbage.append(map.file + ".json") }
        maps = maps.filter { kept[$0.documentID]?.file == $0.file }
        let referenced = Set(maps.map { $0.file + ".partial" })
        garbage += names.filter { !$0.hasSuffix(".json") && !referenced.contains($0) }
        return (maps, garbage)
    }

    /// Reads `blobs/` without changing it: the completed entries, and the files that belong to none (sidecars
    /// without a valid blob, blobs without a sidecar).
    func scan() -> (entries: [(entry: CacheEntry, lastAccess: timespec)], garbage: [String]) {
        var entries: [(CacheEntry, timespec)] = []
        var garbage: [String] = []
        var referenced: Set<String> = []
        let names = Self.contents(of: blobs)
        for name in names where name.hasSuffix(".json") {
            if let entry = validEntry(sidecar: blobs + "/" + name, name: name), let lastAccess = blobTime(entry) {
                entries.append((entry, lastAccess))
                referenced.insert(entry.blob)
            } else {
                garbage.append(name)
            }
        }
        garbage += names.filter { !$0.hasSuffix(".json") && !referenced.contains($0) }
        return (entries, garbage)
    }

    /// One document's completed entry, as ``scan()`` would find it, reading only its sidecar and its blob's metadata.
    func entry(documentID: String) -> (entry: CacheEntry, lastAccess: timespec)? {
        guard let key = try? Self.key(for: documentID),
            let entry = validEntry(sidecar: sidecarPath(key: key), name: key + ".json"),
            let lastAccess = blobTime(entry)
        else { return nil }
        return (entry, lastAccess)
    }

    static func date(_ time: timespec) -> Date {
        Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
    }

    /// Bytes available to this user on the cache's filesystem, nil if `statvfs` fails.
    func freeSpace() -> Int64? {
        BlockingPool.checkBlockingAllowed("statvfs of \(root)")
        var info = statvfs()
        guard statvfs(root, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    static func rename(_ source: String, to destination: String) throws(ContentCacheError) {
        guard Glibc.rename(source, destination) == 0 else { throw .system("rename", path: destination, errno: errno) }
    }

    private func validEntry(sidecar path: String, name: String) -> CacheEntry? {
        guard let data = FileManager.default.contents(atPath: path),
            let entry = try? JSONDecoder().decode(CacheEntry.self, from: data),
            let key = try? Self.key(for: entry.documentID),
            name == key + ".json",
            entry.blob.hasPrefix(key + "."), !entry.blob.contains("/"), !entry.blob.hasSuffix(".json")
        else { return nil }
        return entry
    }

    /// The blob's modification time if it is a regular file of the recorded size.
    private func blobTime(_ entry: CacheEntry) -> timespec? {
        var info = stat()
        guard lstat(blobPath(entry.blob), &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size == entry.size
        else { return nil }
        return info.st_mtim
    }

    private func syncDirectory(_ path: String) {
        if let directory = try? Descriptor.open(path, flags: O_RDONLY | O_DIRECTORY) { _ = fsync(directory.fd) }
    }

    private static func contents(of directory: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    }

    /// Creates the directory (and, for the root, its missing parents) with mode 0700 and enforces 0700 on it.
    private static func makeDirectory(_ path: String, parents: Bool) throws(ContentCacheError) {
        if parents {
            let parent = (path as NSString).deletingLastPathComponent
            if !parent.isEmpty, parent != path, access(parent, F_OK) != 0 {
                try makeDirectory(parent, parents: true)
            }
        }
        guard mkdir(path, 0o700) == 0 || errno == EEXIST else { throw .system("mkdir", path: path, errno: errno) }
        guard chmod(path, 0o700) == 0 else { throw .system("chmod", path: path, errno: errno) }
    }
}

extension String {
    fileprivate func leftPadded() -> String { count == 1 ? "0" + self : self }
}
