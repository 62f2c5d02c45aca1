import Foundation
import Glibc
import SystemSupport

/// The bytes the outbox holds, one file per entry named by its id in `<data directory>/outbox/` (never the cache,
/// which may be emptied by hand: docs/writing.md, "Local first"). Every method blocks: callers run it on a
/// ``BlockingPool``.
struct OutboxBytes: Sendable {
    let directory: URL

    func url(of entry: Int64) -> URL { directory.appendingPathComponent(String(entry)) }

    func exists(_ entry: Int64) -> Bool { access(url(of: entry).path, F_OK) == 0 }

    /// The directory, created 0700 on first use.
    func prepare() throws(OutboxError) {
        BlockingPool.checkBlockingAllowed("creating \(directory.path)")
        guard mkdir(directory.path, 0o700) == 0 || errno == EEXIST else {
            throw .bytes(path: directory.path, operation: "create", detail: String(cString: strerror(errno)))
        }
    }

    /// The length of the file at `path`.
    func size(of path: String) throws(OutboxError) -> Int64 {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw .bytes(path: path, operation: "read", detail: String(cString: strerror(errno)))
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw .bytes(path: path, operation: "take over", detail: "not a regular file")
        }
        return Int64(info.st_size)
    }

    /// Moves the file at `source` to the entry's file: its bytes synced, renamed (the caller's file must be on the
    /// data directory's filesystem: drafts are), both directories synced, so that the file is in the outbox after
    /// a power loss and no longer where it was.
    func takeOver(_ source: String, as entry: Int64) throws(OutboxError) {
        BlockingPool.checkBlockingAllowed("moving \(source) into the outbox")
        let target = url(of: entry).path
        do {
            let descriptor = try systemCall("open") { open(source, O_RDONLY | O_CLOEXEC) }
            defer { close(descriptor) }
            try systemCall("fsync") { fsync(descriptor) }
            try systemCall("rename") { rename(source, target) }
        } catch {
            // `enqueue` and the start's recovery may move the same file at once (the actor runs one while the
            // other waits for the pool): whichever came second finds it in the outbox already.
            guard exists(entry) else {
                throw .bytes(path: source, operation: "move into \(directory.path)", detail: error.description)
            }
        }
        try syncDirectory(directory.path)
        try syncDirectory((source as NSString).deletingLastPathComponent)
    }

    /// Drops the entry's file; a file already gone is no error.
    func remove(_ entry: Int64) throws(OutboxError) {
        BlockingPool.checkBlockingAllowed("removing outbox bytes \(entry)")
        guard unlink(url(of: entry).path) == 0 || errno == ENOENT else {
            throw .bytes(path: url(of: entry).path, operation: "remove", detail: String(cString: strerror(errno)))
        }
    }

    /// Clears the place of an entry that has no row: a second link of its bytes (the draft's file is the other,
    /// ``Outbox/withdraw(_:)``) is removed; an only copy (its row lost, e.g. with an older store put back) is moved
    /// to `lost/<id>-<seconds since 1970>` and that path returned: those bytes are a user's, and the next entry given
    /// the same id would be moved in over them.
    func clearOrphan(_ entry: Int64) throws(OutboxError) -> String? {
        BlockingPool.checkBlockingAllowed("clearing outbox bytes \(entry)")
        var info = stat()
        guard stat(url(of: entry).path, &info) == 0 else { return nil }
        guard info.st_nlink == 1 else {
            try remove(entry)
            return nil
        }
        let lost = directory.appendingPathComponent("lost", isDirectory: true)
        let target = lost.appendingPathComponent("\(entry)-\(Int(Date().timeIntervalSince1970))").path
        guard mkdir(lost.path, 0o700) == 0 || errno == EEXIST, rename(url(of: entry).path, target) == 0 else {
            throw .bytes(
                path: url(of: entry).path, operation: "move to \(lost.path)", detail: String(cString: strerror(errno)))
        }
        try syncDirectory(lost.path)
        try syncDirectory(directory.path)
        return target
    }

    /// The entries that have a file here (the directory read once; none before its first use).
    func stored() -> [Int64] {
        BlockingPool.checkBlockingAllowed("listing \(directory.path)")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.compactMap { Int64($0) }
    }

    private func syncDirectory(_ path: String) throws(OutboxError) {
        do {
            let descriptor = try systemCall("open") {
                open(path.isEmpty ? "." : path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            }
            defer { close(descriptor) }
            try systemCall("fsync") { fsync(descriptor) }
        } catch {
            throw .bytes(path: path, operation: "sync", detail: error.description)
        }
    }
}
