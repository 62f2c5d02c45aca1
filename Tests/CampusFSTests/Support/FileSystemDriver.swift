import CampusFS
import ContentCache
import FUSEKit
import FUSEKitTesting
import Foundation
import Glibc
import MetadataStore
import Refreshing
import Synchronization
import TestSupport
import Testing

@testable import StudIPSimulator

/// What a program does to paths below CampusFS — stat, list, read, readlink, access and the extended attributes —
/// with the errno of a failing call as a value. Written once, a test body runs in-process (``InProcessDriver``:
/// `CampusFileSystem`'s operations called with FUSEKitTesting's recording replies) or through a kernel mount
/// (``MountedDriver``: each call in a child process under `timeout`). docs/testing.md says when a test must mount.
/// Paths are relative to the root; listing, reading and `access` follow a final symlink, the others do not.
protocol FileSystemDriver: Sendable {
    /// The simulator and the store the filesystem serves.
    var campus: Campus { get }
    var fileSystem: CampusFileSystem { get }

    /// `lstat(2)`: a symlink's own attributes.
    func stat(_ path: String) async throws -> Result<PathStatus, Errno>
    /// The names in a directory, in the filesystem's order, without `.` and `..`.
    func list(_ path: String) async throws -> Result<[String], Errno>
    /// What `find` sees below a directory: every path (relative to it) and its `lstat`, directories descended.
    func find(_ path: String) async throws -> Result<[String: PathStatus], Errno>
    /// Reads each document to its end, all from one process (as one `cat a b` does): the scan detector judges a
    /// burst per process.
    func read(_ paths: [String]) async throws -> [Result<[UInt8], Errno>]
    func readLink(_ path: String) async throws -> Result<String, Errno>
    /// `access(2)` with `R_OK`/`W_OK`/`X_OK`: 0 or the errno.
    func access(_ path: String, _ mask: Int32) async throws -> Int32
    func getxattr(_ name: String, of path: String) async throws -> Result<[UInt8], Errno>
    func listxattr(_ path: String) async throws -> Result<[String], Errno>
    /// 0 or the errno.
    func setxattr(_ name: String, _ value: String, of path: String, mode: ExtendedAttributeMode) async throws -> Int32
    /// 0 or the errno.
    func removexattr(_ name: String, of path: String) async throws -> Int32
    /// Refreshes the store from the simulator as the daemon does; mounted, it then tells the kernel what changed.
    @discardableResult func refresh(courseIDs: Set<String>?) async throws -> Refresher.Report
}

extension FileSystemDriver {
    func read(_ path: String) async throws -> Result<[UInt8], Errno> {
        try await read([path])[0]
    }

    func setxattr(_ name: String, _ value: String, of path: String) async throws -> Int32 {
        try await setxattr(name, value, of: path, mode: .any)
    }

    /// ``find(_:)`` by ``list(_:)`` and ``stat(_:)``, one call each.
    func find(_ path: String) async throws -> Result<[String: PathStatus], Errno> {
        let names: [String]
        switch try await list(path) {
        case .success(let listed): names = listed
        case .failure(let errno): return .failure(errno)
        }
        var found: [String: PathStatus] = [:]
        for name in names {
            let child = path.isEmpty ? name : path + "/" + name
            let status = try await stat(child)
            guard case .success(let attributes) = status else { return status.map { _ in [:] } }
            found[String(child.dropFirst(path.isEmpty ? 0 : path.count + 1))] = attributes
            if attributes.type == S_IFDIR {
                switch try await find(child) {
                case .success(let below):
                    for (relative, status) in below { found[name + "/" + relative] = status }
                case .failure(let errno): return .failure(errno)
                }
            }
        }
        return .success(found)
    }

    /// An attribute's value as text, nil when the call fails (`ENODATA` for an absent one).
    func attribute(_ name: String, of path: String) async throws -> String? {
        try? await getxattr(name, of: path).get().text
    }

    @discardableResult func refresh() async throws -> Refresher.Report {
        try await refresh(courseIDs: nil)
    }

    var store: MetadataStore { campus.store }
    var sim: Simulator { campus.sim }

    func document(_ path: String) throws -> DocumentInfo? {
        try campus.document(path)
    }

    /// Lets the filesystem refresh a course (this driver's ``refresh(courseIDs:)``) before it retries a download
    /// whose length contradicts the metadata.
    func refreshesOnDemand() {
        fileSystem.refreshCourses(
            with: .init(
                listingTTL: .seconds(3600), inBackground: { _ in },
                now: { courseID in _ = try? await refresh(courseIDs: [courseID]) }))
    }

    /// Calls the simulator's control API (`/__sim/<path>`), as a lecturer's browser would.
    func simulate(_ method: String, _ path: String, _ input: [String: String]) async throws {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: input), as: UTF8.self)
        let answer = try await shell(
            "curl -sf -X \(method) -d \(quoted(body)) " + quoted(sim.controlURL + "/" + path) + " >/dev/null")
        #expect(answer.status == 0, "\(method) \(path): \(answer.stderr)")
    }
}

/// Where a test body runs: in this process against `CampusFileSystem`'s operations, or through the kernel.
enum DriverMode: String, CaseIterable, Sendable {
    case inProcess
    case mounted

    /// Starts the simulator, refreshes a store from it, serves it in this mode, and runs `body`.
    func run(
        _ dataset: Dataset = .fixtures507, flavour: Flavour = .v50, user: String = "test_autor",
        cache: ContentCacheConfiguration = ContentCacheConfiguration(),
        _ body: (any FileSystemDriver) async throws -> Void
    ) async throws {
        switch self {
        case .inProcess:
            try await Campus.with(dataset, flavour: flavour, user: user) { campus in
                try await campus.withFileSystem(cache: cache) { fileSystem in
                    try await body(InProcessDriver(campus: campus, fileSystem: fileSystem))
                }
            }
        case .mounted:
            try await MountedCampus.with(dataset, flavour: flavour, user: user, cache: cache) { mounted in
                try await body(MountedDriver(mounted: mounted))
            }
        }
    }
}

/// An errno a call failed with.
struct Errno: Error, Hashable, CustomStringConvertible {
    let code: Int32

    init(_ code: Int32) {
        self.code = code
    }

    var description: String { "errno \(code) (\(String(cString: strerror(code))))" }
}

/// What `lstat(2)` shows of a path.
struct PathStatus: Hashable, Sendable {
    /// The type and permission bits (`st_mode`).
    var mode: mode_t
    var size: Int64
    /// `st_mtime`, whole seconds.
    var modified: Int
    var userID: uid_t

    var type: mode_t { mode & S_IFMT }
}

extension [UInt8] {
    var text: String { String(decoding: self, as: UTF8.self) }
}

// MARK: - In-process

/// ``FileSystemDriver`` over `CampusFileSystem`'s operations called directly, the way the kernel would call them:
/// a path resolved by `lookup` from the root (following symlinks as the kernel does), reads of 128 KiB between `open` and `release`, listings by
/// READDIRPLUS (the mount's setting). Each call comes from a process of its own, with a pid no process has (the
/// scan detector finds no name for it: a person).
struct InProcessDriver: FileSystemDriver {
    let campus: Campus
    let fileSystem: CampusFileSystem

    /// Above the largest `pid_max` (2^22), so no process of the machine has it.
    private static let nextProcess = Atomic<Int32>(10_000_000)

    private static func context() -> RequestContext {
        RequestContext(
            userID: getuid(), groupID: getgid(),
            processID: nextProcess.add(1, ordering: .relaxed).newValue)
    }

    private func answer<Kind>(
        size: Int = 0, context: RequestContext = Self.context(), _ call: @escaping @Sendable (Reply<Kind>) -> Void
    ) async throws -> ReplyAnswer {
        try await handlerAnswer(size: size, context: context, within: .seconds(30), call)
    }

    /// The attributes of what `path` names, looked up name by name from the root as the kernel walks a path:
    /// symlinks on the way are followed (relative to their directory), the last one only when `followingLast`.
    private func resolve(_ path: String, followingLast: Bool = false) async throws -> Result<Attributes, Errno> {
        let root = try await answer { fileSystem.getAttributes(rootInode, file: nil, reply: $0) }.attributes
        var walked = [root]
        var pending = path.split(separator: "/").map(String.init)
        var links = 0
        while !pending.isEmpty {
            let name = pending.removeFirst()
            if name == "." { continue }
            if name == ".." {
                if walked.count > 1 { walked.removeLast() }
                continue
            }
            let parent = walked[walked.count - 1].inode
            let found = try await answer { fileSystem.lookup(parent: parent, name: name, reply: $0) }
            let attributes: Attributes
            switch found {
            case .entry(let entry): attributes = entry.attributes
            case .negativeEntry: return .failure(Errno(ENOENT))
            default: return .failure(Errno(found.errorNumber ?? EIO))
            }
            guard attributes.mode & S_IFMT == S_IFLNK, !pending.isEmpty || followingLast else {
                walked.append(attributes)
                continue
            }
            links += 1
            let target = try await answer { fileSystem.readLink(attributes.inode, reply: $0) }.linkTarget
            // An absolute target leaves the mount; CampusFS makes only relative ones.
            guard links <= 40, !target.hasPrefix("/") else { return .failure(Errno(ELOOP)) }
            pending = target.split(separator: "/").map(String.init) + pending
        }
        return .success(walked[walked.count - 1])
    }

    func stat(_ path: String) async throws -> Result<PathStatus, Errno> {
        try await resolve(path).map {
            PathStatus(mode: $0.mode, size: $0.size, modified: $0.modified.tv_sec, userID: $0.userID)
        }
    }

    func list(_ path: String) async throws -> Result<[String], Errno> {
        let directory: Inode
        switch try await resolve(path, followingLast: true) {
        case .success(let attributes): directory = attributes.inode
        case .failure(let errno): return .failure(errno)
        }
        let opened = try await answer { fileSystem.openDirectory(directory, file: FileInfo(), reply: $0) }
        if let errno = opened.errorNumber { return .failure(Errno(errno)) }
        let file = FileInfo(handle: try opened.opened.handle)
        var names: [String] = []
        var offset: Int64 = 0
        var failure: Errno?
        while true {
            let chunk = try await answer(size: 64 << 10) { [offset] in
                fileSystem.readDirectoryPlus(directory, offset: offset, file: file, reply: $0)
            }
            if let errno = chunk.errorNumber {
                failure = Errno(errno)
                break
            }
            guard let last = try chunk.directoryEntries.last else { break }
            names += try chunk.directoryEntries.map(\.name).filter { $0 != "." && $0 != ".." }
            offset = last.nextOffset
        }
        _ = try await answer { fileSystem.releaseDirectory(directory, file: file, reply: $0) }
        if let failure { return .failure(failure) }
        return .success(names)
    }

    func read(_ paths: [String]) async throws -> [Result<[UInt8], Errno>] {
        let process = Self.context()
        var results: [Result<[UInt8], Errno>] = []
        for path in paths {
            results.append(try await read(path, from: process))
        }
        return results
    }

    private func read(_ path: String, from process: RequestContext) async throws -> Result<[UInt8], Errno> {
        let inode: Inode
        switch try await resolve(path, followingLast: true) {
        case .success(let attributes): inode = attributes.inode
        case .failure(let errno): return .failure(errno)
        }
        let opened = try await answer(context: process) { fileSystem.open(inode, file: FileInfo(), reply: $0) }
        if let errno = opened.errorNumber { return .failure(Errno(errno)) }
        let file = FileInfo(handle: try opened.opened.handle)
        var bytes: [UInt8] = []
        var failure: Errno?
        while true {
            let offset = Int64(bytes.count)
            let chunk = try await answer(size: 128 << 10, context: process) {
                fileSystem.read(inode, offset: offset, file: file, reply: $0)
            }
            if let errno = chunk.errorNumber {
                failure = Errno(errno)
                break
            }
            bytes += try chunk.bytes
            if try chunk.bytes.isEmpty { break }
        }
        _ = try await answer(context: process) { fileSystem.release(inode, file: file, reply: $0) }
        if let failure { return .failure(failure) }
        return .success(bytes)
    }

    func readLink(_ path: String) async throws -> Result<String, Errno> {
        switch try await resolve(path) {
        case .success(let attributes):
            let target = try await answer { fileSystem.readLink(attributes.inode, reply: $0) }
            if let errno = target.errorNumber { return .failure(Errno(errno)) }
            return .success(try target.linkTarget)
        case .failure(let errno): return .failure(errno)
        }
    }

    func access(_ path: String, _ mask: Int32) async throws -> Int32 {
        switch try await resolve(path, followingLast: true) {
        case .success(let attributes):
            try await answer { fileSystem.access(attributes.inode, mask: mask, reply: $0) }.errorNumber ?? EIO
        case .failure(let errno): errno.code
        }
    }

    func getxattr(_ name: String, of path: String) async throws -> Result<[UInt8], Errno> {
        switch try await resolve(path) {
        case .success(let attributes):
            let value = try await answer(size: 64 << 10) {
                fileSystem.getExtendedAttribute(attributes.inode, name: name, reply: $0)
            }
            if let errno = value.errorNumber { return .failure(Errno(errno)) }
            return .success(try value.bytes)
        case .failure(let errno): return .failure(errno)
        }
    }

    func listxattr(_ path: String) async throws -> Result<[String], Errno> {
        switch try await resolve(path) {
        case .success(let attributes):
            let names = try await answer(size: 64 << 10) {
                fileSystem.listExtendedAttributes(attributes.inode, reply: $0)
            }
            if let errno = names.errorNumber { return .failure(Errno(errno)) }
            return .success(try names.attributeNames)
        case .failure(let errno): return .failure(errno)
        }
    }

    func setxattr(_ name: String, _ value: String, of path: String, mode: ExtendedAttributeMode) async throws -> Int32 {
        switch try await resolve(path) {
        case .success(let attributes):
            try await answer {
                fileSystem.setExtendedAttribute(
                    attributes.inode, name: name, value: Array(value.utf8), mode: mode, reply: $0)
            }.errorNumber ?? EIO
        case .failure(let errno): errno.code
        }
    }

    func removexattr(_ name: String, of path: String) async throws -> Int32 {
        switch try await resolve(path) {
        case .success(let attributes):
            try await answer { fileSystem.removeExtendedAttribute(attributes.inode, name: name, reply: $0) }
                .errorNumber ?? EIO
        case .failure(let errno): errno.code
        }
    }

    /// No kernel to tell: the store is what the operations read.
    func refresh(courseIDs: Set<String>?) async throws -> Refresher.Report {
        try await RefreshSettings().refresher(source: campus.source, store: campus.store).refresh(courseIDs: courseIDs)
    }
}

// MARK: - Mounted

/// ``FileSystemDriver`` through a kernel mount (``MountedCampus``): each call is a Python process under `timeout`
/// making the syscalls, so the kernel's caches, its permission checks and libfuse's encoding are all in the way.
struct MountedDriver: FileSystemDriver {
    let mounted: MountedCampus
    var campus: Campus { mounted.campus }
    var fileSystem: CampusFileSystem { mounted.mount.fileSystem }

    /// Runs `calls` (operation and arguments) one after another in one process; for each, its result or its errno.
    private static let script = """
        import ctypes, errno, json, os, stat, sys
        libc = ctypes.CDLL(None, use_errno=True)
        def status(path):
            s = os.lstat(path)
            return [s.st_mode, s.st_size, int(s.st_mtime), s.st_uid]
        def find(root, prefix=""):
            found = {}
            for name in os.listdir(root):
                path = os.path.join(root, name)
                found[prefix + name] = status(path)
                if stat.S_ISDIR(found[prefix + name][0]):
                    found.update(find(path, prefix + name + "/"))
            return found
        def access(path, mask):
            if libc.access(os.fsencode(path), int(mask)) != 0:
                raise OSError(ctypes.get_errno(), "access")
            return 0
        operations = {
            "stat": status,
            "list": lambda path: os.listdir(path),
            "find": find,
            "read": lambda path: open(path, "rb").read().hex(),
            "readlink": lambda path: os.readlink(path),
            "access": access,
            "getxattr": lambda path, name: os.getxattr(path, name, follow_symlinks=False).hex(),
            "listxattr": lambda path: os.listxattr(path, follow_symlinks=False),
            "setxattr": lambda path, name, value, flags: os.setxattr(
                path, name, bytes.fromhex(value), int(flags), follow_symlinks=False) or 0,
            "removexattr": lambda path, name: os.removexattr(path, name, follow_symlinks=False) or 0,
        }
        results = []
        for call in json.loads(sys.argv[1]):
            try:
                results.append({"ok": operations[call[0]](*call[1:])})
            except OSError as error:
                results.append({"errno": error.errno})
        print(json.dumps(results))
        """

    private enum Failure: Error {
        case unreadable(CommandResult)
    }

    private func run(_ calls: [[String]]) async throws -> [Result<Any, Errno>] {
        let arguments = String(decoding: try JSONSerialization.data(withJSONObject: calls), as: UTF8.self)
        let result = try await shell("python3 -c \(quoted(Self.script)) \(quoted(arguments))", timeout: 60)
        guard result.status == 0,
            let outcomes = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]],
            outcomes.count == calls.count
        else { throw Failure.unreadable(result) }
        return outcomes.map { outcome in
            if let errno = outcome["errno"] as? Int { return .failure(Errno(Int32(errno))) }
            return .success(outcome["ok"] ?? NSNull())
        }
    }

    private func call(_ operation: String, _ path: String, _ arguments: String...) async throws -> Result<Any, Errno> {
        try await run([[operation, mounted.directory + "/" + path] + arguments])[0]
    }

    private func status(_ result: Result<Any, Errno>) -> Int32 {
        switch result {
        case .success: 0
        case .failure(let errno): errno.code
        }
    }

    func stat(_ path: String) async throws -> Result<PathStatus, Errno> {
        try await call("stat", path).map(Self.status)
    }

    func find(_ path: String) async throws -> Result<[String: PathStatus], Errno> {
        try await call("find", path).map { value in
            (value as? [String: Any] ?? [:]).mapValues(Self.status)
        }
    }

    /// A `status(path)` of the script: mode, size, mtime, uid.
    private static func status(_ value: Any) -> PathStatus {
        let fields = (value as? [NSNumber])?.map(\.int64Value) ?? [0, 0, 0, 0]
        return PathStatus(mode: mode_t(fields[0]), size: fields[1], modified: Int(fields[2]), userID: uid_t(fields[3]))
    }

    func list(_ path: String) async throws -> Result<[String], Errno> {
        try await call("list", path).map { $0 as? [String] ?? [] }
    }

    func read(_ paths: [String]) async throws -> [Result<[UInt8], Errno>] {
        try await run(paths.map { ["read", mounted.directory + "/" + $0] }).map { result in
            result.map { Self.bytes(fromHex: $0 as? String ?? "") }
        }
    }

    func readLink(_ path: String) async throws -> Result<String, Errno> {
        try await call("readlink", path).map { $0 as? String ?? "" }
    }

    func access(_ path: String, _ mask: Int32) async throws -> Int32 {
        status(try await call("access", path, String(mask)))
    }

    func getxattr(_ name: String, of path: String) async throws -> Result<[UInt8], Errno> {
        try await call("getxattr", path, name).map { Self.bytes(fromHex: $0 as? String ?? "") }
    }

    func listxattr(_ path: String) async throws -> Result<[String], Errno> {
        try await call("listxattr", path).map { $0 as? [String] ?? [] }
    }

    func setxattr(_ name: String, _ value: String, of path: String, mode: ExtendedAttributeMode) async throws -> Int32 {
        let flags =
            switch mode {
            case .any: 0
            // XATTR_CREATE and XATTR_REPLACE of <sys/xattr.h>.
            case .create: 1
            case .replace: 2
            }
        let hex = value.utf8.map { String(format: "%02x", $0) }.joined()
        return status(try await call("setxattr", path, name, hex, String(flags)))
    }

    func removexattr(_ name: String, of path: String) async throws -> Int32 {
        status(try await call("removexattr", path, name))
    }

    func refresh(courseIDs: Set<String>?) async throws -> Refresher.Report {
        try await mounted.refresh(courseIDs: courseIDs)
    }

    private static func bytes(fromHex hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(hex.utf8.count / 2)
        var high: UInt8?
        for digit in hex.utf8 {
            let value = digit <= UInt8(ascii: "9") ? digit - UInt8(ascii: "0") : digit - UInt8(ascii: "a") + 10
            if let first = high {
                bytes.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return bytes
    }
}
