import FUSEKit
import Glibc
import Synchronization

/// A tiny static tree served in memory, with one file answered asynchronously, one whose read reply is
/// dropped, one whose content the test changes behind the kernel's back, and writable `user.*` xattrs.
///
/// ```
/// /hello.txt      "Hello, FUSE!\n"       user.color = blue
/// /link       ->  hello.txt
/// /slow.txt       answered by a task after 200 ms
/// /dropped.txt    read reply released unanswered (EIO)
/// /mutable.txt    content set by the test
/// /many/          300 empty files (several readdir chunks)
/// ```
final class ExampleFileSystem: FileSystemOperations {
    enum Node: Sendable {
        case file(String)
        case symlink(String)
        case directory([String: Inode])
    }

    static let hello: Inode = 2
    static let link: Inode = 3
    static let slow: Inode = 4
    static let dropped: Inode = 5
    static let mutable: Inode = 6
    static let many: Inode = 7
    static let helloText = "Hello, FUSE!\n"
    static let slowText = "slow bytes\n"
    static let manyCount = 300

    /// Long enough that the kernel trusts everything for the whole test unless told otherwise.
    let timeout = Duration.seconds(3600)
    let mutableContent = Mutex("12345")
    let attributes = Mutex<[Inode: [String: [UInt8]]]>([hello: ["user.color": Array("blue".utf8)]])
    let requests = Mutex<[String: Int]>([:])

    private let nodes: [Inode: Node]

    init() {
        var many: [String: Inode] = [:]
        var nodes: [Inode: Node] = [
            rootInode: .directory([
                "hello.txt": Self.hello, "link": Self.link, "slow.txt": Self.slow, "dropped.txt": Self.dropped,
                "mutable.txt": Self.mutable, "many": Self.many,
            ]),
            Self.hello: .file(Self.helloText),
            Self.link: .symlink("hello.txt"),
            Self.slow: .file(Self.slowText),
            Self.dropped: .file("never seen\n"),
            Self.mutable: .file(""),
        ]
        for index in 0..<Self.manyCount {
            let inode = Inode(100 + index)
            many["file-with-a-rather-long-name-to-fill-buffers-\(index).txt"] = inode
            nodes[inode] = .file("")
        }
        nodes[Self.many] = .directory(many)
        self.nodes = nodes
    }

    func count(_ operation: String) -> Int {
        requests.withLock { $0[operation, default: 0] }
    }

    private func record(_ operation: String) {
        requests.withLock { $0[operation, default: 0] += 1 }
    }

    private func content(_ inode: Inode) -> [UInt8]? {
        if inode == Self.mutable { return Array(mutableContent.withLock { $0 }.utf8) }
        guard case .file(let text) = nodes[inode] else { return nil }
        return Array(text.utf8)
    }

    func attributes(of inode: Inode) -> Attributes? {
        switch nodes[inode] {
        case .file: Attributes(inode: inode, mode: S_IFREG | 0o644, size: Int64(content(inode)?.count ?? 0))
        case .symlink(let target): Attributes(inode: inode, mode: S_IFLNK | 0o777, size: Int64(target.utf8.count))
        case .directory: Attributes(inode: inode, mode: S_IFDIR | 0o755, linkCount: 2)
        case nil: nil
        }
    }

    private func entry(_ inode: Inode) -> Entry? {
        attributes(of: inode).map { Entry(attributes: $0, entryTimeout: timeout, attributeTimeout: timeout) }
    }

    func lookup(parent: Inode, name: String, reply: EntryReply) {
        record("lookup")
        guard case .directory(let children) = nodes[parent] else { return reply.error(ENOTDIR) }
        guard let child = children[name], let entry = entry(child) else { return reply.negative(timeout: timeout) }
        reply.entry(entry)
    }

    func getAttributes(_ inode: Inode, file: FileInfo?, reply: AttributesReply) {
        record("getattr")
        guard let attributes = attributes(of: inode) else { return reply.error(ENOENT) }
        reply.attributes(attributes, timeout: timeout)
    }

    func readLink(_ inode: Inode, reply: LinkReply) {
        guard case .symlink(let target) = nodes[inode] else { return reply.error(EINVAL) }
        reply.target(target)
    }

    func open(_ inode: Inode, file: FileInfo, reply: OpenReply) {
        record("open")
        guard content(inode) != nil else { return reply.error(EISDIR) }
        reply.open(keepCache: true)
    }

    func read(_ inode: Inode, offset: Int64, file: FileInfo, reply: DataReply) {
        record("read")
        guard let bytes = content(inode) else { return reply.error(EIO) }
        let start = min(Int(offset), bytes.count)
        switch inode {
        case Self.dropped:
            return
        case Self.slow:
            Task {
                try? await Task.sleep(for: .milliseconds(200))
                reply.data(bytes[start...])
            }
        default:
            reply.data(bytes[start...])
        }
    }

    private func children(of inode: Inode) -> [(name: String, inode: Inode)]? {
        guard case .directory(let children) = nodes[inode] else { return nil }
        return [(".", inode), ("..", rootInode)] + children.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    func readDirectory(_ inode: Inode, offset: Int64, file: FileInfo, reply: DirectoryReply) {
        record("readdir")
        guard let children = children(of: inode) else { return reply.error(ENOTDIR) }
        var buffer = DirectoryBuffer(for: reply)
        for (index, child) in children.enumerated().dropFirst(Int(offset)) {
            let mode = attributes(of: child.inode)?.mode ?? S_IFDIR
            guard buffer.append(name: child.name, inode: child.inode, mode: mode, nextOffset: Int64(index + 1))
            else { break }
        }
        reply.entries(buffer)
    }

    func readDirectoryPlus(_ inode: Inode, offset: Int64, file: FileInfo, reply: DirectoryPlusReply) {
        record("readdirplus")
        guard let children = children(of: inode) else { return reply.error(ENOTDIR) }
        var buffer = DirectoryBuffer(for: reply)
        for (index, child) in children.enumerated().dropFirst(Int(offset)) {
            guard let entry = entry(child.inode),
                buffer.append(name: child.name, entry: entry, nextOffset: Int64(index + 1))
            else { break }
        }
        reply.entries(buffer)
    }

    func getExtendedAttribute(_ inode: Inode, name: String, reply: ExtendedAttributeReply) {
        guard let value = attributes.withLock({ $0[inode]?[name] }) else { return reply.error(ENODATA) }
        reply.value(value)
    }

    func listExtendedAttributes(_ inode: Inode, reply: ExtendedAttributeNamesReply) {
        reply.names(attributes.withLock { ($0[inode] ?? [:]).keys.sorted() })
    }

    func setExtendedAttribute(
        _ inode: Inode, name: String, value: [UInt8], mode: ExtendedAttributeMode, reply: StatusReply
    ) {
        guard name.hasPrefix("user.") else { return reply.error(ENOTSUP) }
        let result = attributes.withLock { attributes -> Int32 in
            let exists = attributes[inode]?[name] != nil
            if mode == .create, exists { return EEXIST }
            if mode == .replace, !exists { return ENODATA }
            attributes[inode, default: [:]][name] = value
            return 0
        }
        reply.error(result)
    }

    func removeExtendedAttribute(_ inode: Inode, name: String, reply: StatusReply) {
        let removed = attributes.withLock { $0[inode]?.removeValue(forKey: name) != nil }
        reply.error(removed ? 0 : ENODATA)
    }
}
