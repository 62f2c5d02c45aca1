import CampusFS
import ContentCache
import FUSEKit
import FUSEKitTesting
import Foundation
import Glibc
import MetadataStore
import Synchronization
import Testing

@testable import StudIPSimulator

/// `CampusFileSystem`'s operations called directly with recording replies, over a store refreshed from the
/// simulator and a real content cache: names, attributes, listings, opens, reads and the extended attributes with
/// every errno, without a kernel. Tests by path use `FileSystemDriver`, in-process or mounted (docs/testing.md).
@Suite struct FileSystemOperationsTests {
    static let course = DaemonTests.course
    static let readme = DaemonTests.readme
    static let dataFile = DaemonTests.dataFile
    /// An inode no tree reaches.
    static let missing: Inode = 9_999_999

    static func inode(_ campus: Campus, _ path: String) throws -> Inode {
        Inode(try campus.store.resolve(path: path).inode)
    }

    static func answer<Kind>(
        size: Int = 0, within timeout: Duration = .seconds(10), _ call: @escaping @Sendable (Reply<Kind>) -> Void
    ) async throws -> ReplyAnswer {
        try await handlerAnswer(size: size, context: RequestContext(processID: 4242), within: timeout, call)
    }

    // MARK: - Names and attributes

    @Test func lookupFindsNamesAndCachesMissingOnesAsNegative() async throws {
        try await Campus.with { campus in
            try await campus.withFileSystem { fs in
                let course = try Self.inode(campus, Self.course)
                let node = try campus.store.resolve(path: Self.readme)
                let found = try await Self.answer { fs.lookup(parent: course, name: "README.txt", reply: $0) }
                let entry = try found.entry
                #expect(entry.attributes.inode == Inode(node.inode))
                #expect(entry.attributes.size == node.size)
                #expect(entry.attributes.mode == S_IFREG | 0o644)
                #expect(entry.entryTimeout == fs.timeouts.entry)

                let missing = try await Self.answer { fs.lookup(parent: course, name: "autorun.inf", reply: $0) }
                guard case .negativeEntry(let timeout) = missing else {
                    Issue.record("a missing name answered \(missing)")
                    return
                }
                #expect(timeout == fs.timeouts.negative)
            }
        }
    }

    /// A course folder a first refresh has not stored yet is fetched before a lookup in it is answered (on the
    /// FUSE worker, which may block), once; a failed fetch is `EIO` and tried again at the next lookup; and once the
    /// list is narrowed to nothing (the first refresh stored every course), lookups no longer fetch.
    @Test func aFolderNotStoredYetIsFetchedBeforeALookupInIt() async throws {
        try await Campus.with { campus in
            try await campus.withFileSystem { fs in
                let course = try Self.inode(campus, Self.course)
                let fetches = Mutex<[String]>([])
                let fails = Atomic<Bool>(true)
                let listings = CampusFileSystem.FirstListings(pending: [course: "course-1"]) { id in
                    fetches.withLock { $0.append(id) }
                    return !fails.load(ordering: .relaxed)
                }
                fs.fetchBeforeListing(listings)
                let lookup = { @Sendable (reply: Reply<ReplyKind.Entry>) in
                    // A FUSE worker's thread: the wait must not hold one of the test's pool threads.
                    Thread { fs.lookup(parent: course, name: "README.txt", reply: reply) }.start()
                }
                #expect(try await Self.answer(lookup).errorNumber == EIO)
                fails.store(false, ordering: .relaxed)
                #expect(try await Self.answer(lookup).entry.attributes.size > 0)
                #expect(try await Self.answer(lookup).entry.attributes.size > 0)
                #expect(fetches.withLock { $0 } == ["course-1", "course-1"], "a failure and one fetch, then none")

                fs.fetchBeforeListing(listings)
                fs.fetchBeforeListing(only: [:])
                #expect(try await Self.answer(lookup).entry.attributes.size > 0)
                #expect(fetches.withLock { $0.count } == 2, "a course the first refresh stored is not fetched again")
            }
        }
    }

    @Test func getattrReportsSizesModesAndTimesFromTheStore() async throws {
        try await Campus.with { campus in
            try await campus.withFileSystem { fs in
                let node = try campus.store.resolve(path: Self.dataFile)
                let file = try await Self.answer { fs.getAttributes(Inode(node.inode), file: nil, reply: $0) }
                let attributes = try file.attributes
                #expect(attributes.size == node.size)
                #expect(attributes.size > 0)
                #expect(attributes.mode == S_IFREG | 0o644)
                #expect(attributes.modified.tv_sec == Int(node.mtime.timeIntervalSince1970.rounded(.down)))
                #expect(attributes.userID == getuid())

                let courseInode = try Self.inode(campus, Self.course)
                let course = try await Self.answer { fs.getAttributes(courseInode, file: nil, reply: $0) }
                #expect(try course.attributes.mode == S_IFDIR | 0o755)
                #expect(try course.attributes.linkCount == 1)

                let missing = try await Self.answer { fs.getAttributes(Self.missing, file: nil, reply: $0) }
                #expect(missing.errorNumber == ENOENT)
            }
        }
    }

    // MARK: - Listings

    /// Lists a directory in chunks of `size` bytes as the kernel does: each request continues at the last entry's
    /// offset, until an empty chunk.
    static func list(
        _ directory: Inode, size: Int, plus: Bool, _ fs: CampusFileSystem
    ) async throws -> (entries: [ListedName], chunks: Int) {
        var entries: [ListedName] = []
        var chunks = 0
        var offset: Int64 = 0
        while true {
            let answer =
                plus
                ? try await Self.answer(size: size) { [offset] in
                    fs.readDirectoryPlus(directory, offset: offset, file: FileInfo(), reply: $0)
                }
                : try await Self.answer(size: size) { [offset] in
                    fs.readDirectory(directory, offset: offset, file: FileInfo(), reply: $0)
                }
            let chunk = try answer.directoryEntries
            guard let last = chunk.last else { return (entries, chunks) }
            chunks += 1
            entries += chunk
            offset = last.nextOffset
            if chunks > 100 { throw RecordingError.unexpected(answer, expected: "the end of the listing") }
        }
    }

    @Test(arguments: [false, true])
    func readdirPagesThroughSmallBuffersWithStableOffsets(plus: Bool) async throws {
        try await Campus.with { campus in
            try await campus.withFileSystem { fs in
                let course = try campus.store.resolve(path: Self.course)
                let children = try campus.store.children(of: course.inode, after: 0, limit: 1000)
                // A buffer for two or three names, so the listing takes several chunks.
                let size = plus ? 400 : 100
                let (entries, chunks) = try await Self.list(Inode(course.inode), size: size, plus: plus, fs)
                #expect(entries.map(\.name) == [".", ".."] + children.map(\.node.name))
                #expect(chunks > 2, "\(entries.count) names in \(chunks) chunks of \(size) bytes")
                #expect(Set(entries.map(\.nextOffset)).count == entries.count)
                #expect(!entries.contains { $0.nextOffset == 0 })
                for (entry, child) in zip(entries.dropFirst(2), children) {
                    #expect(entry.inode == Inode(child.node.inode))
                    #expect(entry.mode & S_IFMT == (child.node.kind == .directory ? S_IFDIR : S_IFREG))
                    if plus {
                        #expect(entry.entry?.attributes.size == child.node.size, "\(entry.name)")
                    } else {
                        #expect(entry.entry == nil)
                    }
                }
                // One large buffer: the same listing in one chunk.
                let whole = try await Self.list(Inode(course.inode), size: 64 << 10, plus: plus, fs)
                #expect(whole.chunks == 1)
                #expect(whole.entries.map(\.name) == entries.map(\.name))

                let readme = try Self.inode(campus, Self.readme)
                let file = try await Self.answer(size: 4096) {
                    fs.readDirectoryPlus(readme, offset: 0, file: FileInfo(), reply: $0)
                }
                #expect(file.errorNumber == ENOTDIR)
                let missing = try await Self.answer(size: 4096) {
                    fs.readDirectory(Self.missing, offset: 0, file: FileInfo(), reply: $0)
                }
                #expect(missing.errorNumber == ENOENT)
            }
        }
    }

    // MARK: - Open and read

    @Test func openRefusesWritesMissingDocumentsAndDirectories() async throws {
        try await Campus.with { campus in
            try await campus.withFileSystem { fs in
                let readme = try Self.inode(campus, Self.readme)
                for flags in [O_WRONLY, O_RDWR, O_RDONLY | O_TRUNC, O_WRONLY | O_APPEND] {
                    let answer = try await Self.answer { fs.open(readme, file: FileInfo(flags: flags), reply: $0) }
                    #expect(answer.errorNumber == EROFS, "flags \(flags)")
                }
                let missing = try await Self.answer { fs.open(Self.missing, file: FileInfo(), reply: $0) }
                #expect(missing.errorNumber == ENOENT)
                let course = try Self.inode(campus, Self.course)
                let directory = try await Self.answer { fs.open(course, file: FileInfo(), reply: $0) }
                #expect(directory.errorNumber == ENOENT)
                #expect(fs.counters.snapshot().opens == 6)
            }
        }
    }

    /// A cached document opens on the worker that asked (a `grep -r` opens thousands): the answer is there when
    /// `open` returns, with no task in between; the first open, which downloads, answers from a task.
    @Test func aCachedDocumentOpensBeforeOpenReturns() async throws {
        try await Campus.with { campus in
            try await campus.withFileSystem { fs in
                let document = try #require(try campus.document(Self.readme))
                let expected = try await campus.serverBytes(document.id)
                let inode = try Self.inode(campus, Self.readme)
                let first = try await Self.answer { fs.open(inode, file: FileInfo(), reply: $0) }
                let downloaded = FileInfo(handle: try first.opened.handle)
                #expect(try await Self.readAll(fs, inode, downloaded) == expected)
                _ = try await Self.answer { fs.release(inode, file: downloaded, reply: $0) }
                let wanted = CacheDocument(id: document.id, version: document.version)
                for _ in 0..<200 where await fs.cache.state(of: wanted.id, currentVersion: wanted.version) != .cached {
                    try await Task.sleep(for: .milliseconds(10))
                }

                let cached = RecordingReply<ReplyKind.Open>(context: RequestContext(processID: 4242))
                fs.open(inode, file: FileInfo(), reply: cached.reply)
                let answered = try #require(cached.answered, "the cached document's open waited for a task")
                let file = FileInfo(handle: try answered.opened.handle)
                #expect(try await Self.readAll(fs, inode, file) == expected)
                _ = try await Self.answer { fs.release(inode, file: file, reply: $0) }
            }
        }
    }

    @Test func readsServeTheServersBytesWithAShortReadAtTheEnd() async throws {
        try await Campus.with { campus in
            try await campus.withFileSystem { fs in
                let document = try #require(try campus.document(Self.dataFile))
                let expected = try await campus.serverBytes(document.id)
                #expect(expected.count == Int(document.size))
                #expect(expected.count > 8192)
                let inode = try Self.inode(campus, Self.dataFile)
                let open = try await Self.answer { fs.open(inode, file: FileInfo(), reply: $0) }
                let file = FileInfo(handle: try open.opened.handle)

                #expect(try await Self.readAll(fs, inode, file) == expected)
                let tail = try await Self.answer(size: 4096) {
                    fs.read(inode, offset: Int64(expected.count - 10), file: file, reply: $0)
                }
                #expect(try tail.bytes == Array(expected.suffix(10)))
                let past = try await Self.answer(size: 4096) {
                    fs.read(inode, offset: Int64(expected.count), file: file, reply: $0)
                }
                #expect(try past.bytes.isEmpty)

                let released = try await Self.answer { fs.release(inode, file: file, reply: $0) }
                #expect(released.errorNumber == 0)
                let afterRelease = try await Self.answer(size: 4096) {
                    fs.read(inode, offset: 0, file: file, reply: $0)
                }
                #expect(afterRelease.errorNumber == EBADF)
            }
        }
    }

    /// Reads an open document to its end in 64 KiB requests, as the kernel does.
    static func readAll(
        _ fs: CampusFileSystem, _ inode: Inode, _ file: FileInfo, within timeout: Duration = .seconds(10)
    ) async throws -> [UInt8] {
        var read: [UInt8] = []
        while true {
            let offset = Int64(read.count)
            let chunk = try await answer(size: 65_536, within: timeout) {
                fs.read(inode, offset: offset, file: file, reply: $0)
            }.bytes
            read += chunk
            if chunk.count < 65_536 { return read }
        }
    }

    // MARK: - Extended attributes

    static func getxattr(
        _ fs: CampusFileSystem, _ inode: Inode, _ name: String, size: Int = 4096
    ) async throws -> ReplyAnswer {
        try await answer(size: size) { fs.getExtendedAttribute(inode, name: name, reply: $0) }
    }

    static func setxattr(
        _ fs: CampusFileSystem, _ inode: Inode, _ name: String, _ value: String,
        mode: ExtendedAttributeMode = .any
    ) async throws -> Int32? {
        try await answer {
            fs.setExtendedAttribute(inode, name: name, value: Array(value.utf8), mode: mode, reply: $0)
        }.errorNumber
    }

    static func removexattr(_ fs: CampusFileSystem, _ inode: Inode, _ name: String) async throws -> Int32? {
        try await answer { fs.removeExtendedAttribute(inode, name: name, reply: $0) }.errorNumber
    }

    @Test func getxattrFollowsTheSizeProtocolAndNamespaces() async throws {
        try await Campus.with { campus in
            try await campus.withFileSystem { fs in
                let inode = try Self.inode(campus, Self.readme)
                let document = try #require(try campus.document(Self.readme))
                let id = Array(document.id.utf8)

                #expect(try await Self.getxattr(fs, inode, "user.campusfs.id", size: 0).attributeSize == id.count)
                #expect(
                    try await Self.getxattr(fs, inode, "user.campusfs.id", size: id.count - 1).errorNumber == ERANGE)
                #expect(try await Self.getxattr(fs, inode, "user.campusfs.id", size: id.count).bytes == id)
                #expect(try await Self.getxattr(fs, inode, "user.mime_type").bytes == Array(document.mimeType.utf8))

                // Absent attributes CampusFS keeps, other names in namespaces the kernel asks about, and the rest.
                #expect(try await Self.getxattr(fs, inode, "user.xdg.tags").errorNumber == ENODATA)
                #expect(try await Self.getxattr(fs, inode, "user.baloo.rating").errorNumber == ENODATA)
                #expect(try await Self.getxattr(fs, inode, "user.something.else").errorNumber == ENODATA)
                #expect(try await Self.getxattr(fs, inode, "security.selinux").errorNumber == ENODATA)
                #expect(try await Self.getxattr(fs, inode, "system.posix_acl_access").errorNumber == ENODATA)
                #expect(try await Self.getxattr(fs, inode, "trusted.overlay").errorNumber == ENOTSUP)
                #expect(try await Self.getxattr(fs, Self.missing, "user.campusfs.id").errorNumber == ENOENT)

                // A directory has no document attributes but counts what is new below it.
                let course = try Self.inode(campus, Self.course)
                #expect(try await Self.getxattr(fs, course, "user.mime_type").errorNumber == ENODATA)
                #expect(try await Self.getxattr(fs, course, "user.campusfs.state").errorNumber == ENODATA)
                let newBelow = try await Self.getxattr(fs, course, "user.campusfs.new").bytes
                #expect(Int(String(decoding: newBelow, as: UTF8.self)) != nil)

                // The cache state is answered from a task.
                #expect(try await Self.getxattr(fs, inode, "user.campusfs.state").bytes == Array("remote".utf8))
                let open = try await Self.answer { fs.open(inode, file: FileInfo(), reply: $0) }
                let file = FileInfo(handle: try open.opened.handle)
                _ = try await Self.answer(size: 1 << 20) { fs.read(inode, offset: 0, file: file, reply: $0) }
                _ = try await Self.answer { fs.release(inode, file: file, reply: $0) }
                var state = ""
                for _ in 0..<100 where state != "cached" {
                    state = String(
                        decoding: try await Self.getxattr(fs, inode, "user.campusfs.state").bytes, as: UTF8.self)
                    if state != "cached" { try await Task.sleep(for: .milliseconds(20)) }
                }
                #expect(state == "cached")
            }
        }
    }

    @Test func listxattrNamesWhatIsPresentWithTheSizeProtocol() async throws {
        try await Campus.with { campus in
            try await campus.withFileSystem { fs in
                let inode = try Self.inode(campus, Self.readme)
                let list = { (size: Int) in
                    try await Self.answer(size: size) { fs.listExtendedAttributes(inode, reply: $0) }
                }
                // Only what a copy should carry is listed (docs/mount.md); CampusFS's own names answer getxattr.
                let names = try await list(4096).attributeNames
                #expect(names == ["user.xdg.comment", "user.xdg.origin.url"])
                #expect(try await Self.getxattr(fs, inode, "user.campusfs.id").bytes.isEmpty == false)
                let wire = names.reduce(0) { $0 + $1.utf8.count + 1 }
                #expect(try await list(0).attributeSize == wire)
                #expect(try await list(wire - 1).errorNumber == ERANGE)

                #expect(try await Self.setxattr(fs, inode, "user.xdg.tags", "a,b") == 0)
                #expect(try await Self.setxattr(fs, inode, "user.baloo.rating", "8") == 0)
                #expect(try await Self.setxattr(fs, inode, "user.campusfs.pinned", "1") == 0)
                let tagged = try await list(4096).attributeNames
                #expect(Set(tagged) == Set(names + ["user.xdg.tags", "user.baloo.rating"]))

                let missing = try await Self.answer(size: 4096) { fs.listExtendedAttributes(Self.missing, reply: $0) }
                #expect(missing.errorNumber == ENOENT)
            }
        }
    }

    @Test func setxattrAndRemovexattrWriteTagsRatingsPinsAndRefuseTheRest() async throws {
        try await Campus.with { campus in
            try await campus.withFileSystem { fs in
                let inode = try Self.inode(campus, Self.readme)
                func value(_ name: String) async throws -> String {
                    String(decoding: try await Self.getxattr(fs, inode, name).bytes, as: UTF8.self)
                }

                #expect(try await Self.setxattr(fs, inode, "user.xdg.tags", " Klausur , wichtig ,Klausur\n") == 0)
                #expect(try await value("user.xdg.tags") == "Klausur,wichtig")
                #expect(try campus.store.userState(inode: Int64(inode)).tags == ["Klausur", "wichtig"])
                #expect(try await Self.setxattr(fs, inode, "user.xdg.tags", "x", mode: .create) == EEXIST)
                #expect(try await Self.setxattr(fs, inode, "user.xdg.tags", "bad\u{1}tag") == EINVAL)
                let long = String(repeating: "x", count: 70_000)
                #expect(try await Self.setxattr(fs, inode, "user.xdg.tags", long) == E2BIG)
                #expect(try await value("user.xdg.tags") == "Klausur,wichtig")
                #expect(try await Self.removexattr(fs, inode, "user.xdg.tags") == 0)
                #expect(try await Self.getxattr(fs, inode, "user.xdg.tags").errorNumber == ENODATA)
                #expect(try await Self.removexattr(fs, inode, "user.xdg.tags") == ENODATA)

                #expect(try await Self.setxattr(fs, inode, "user.baloo.rating", "7", mode: .replace) == ENODATA)
                #expect(try await Self.setxattr(fs, inode, "user.baloo.rating", "7", mode: .create) == 0)
                #expect(try await value("user.baloo.rating") == "7")
                #expect(try await Self.setxattr(fs, inode, "user.baloo.rating", "11") == EINVAL)
                #expect(try await Self.setxattr(fs, inode, "user.baloo.rating", "viel") == EINVAL)

                #expect(try await Self.setxattr(fs, inode, "user.campusfs.highlight", "new") == EINVAL)
                #expect(try await Self.setxattr(fs, inode, "user.campusfs.highlight", "flagged") == 0)
                #expect(try await value("user.campusfs.highlight") == "flagged")
                let course = try Self.inode(campus, Self.course)
                #expect(try await Self.setxattr(fs, course, "user.campusfs.highlight", "flagged") == EINVAL)

                #expect(try await Self.setxattr(fs, inode, "user.campusfs.pinned", "2") == EINVAL)
                #expect(try await Self.setxattr(fs, inode, "user.campusfs.pinned", "1") == 0)
                #expect(try campus.store.userState(inode: Int64(inode)).pinned)
                #expect(try await Self.removexattr(fs, inode, "user.campusfs.pinned") == 0)
                #expect(try !campus.store.userState(inode: Int64(inode)).pinned)

                // Read-only attributes, names CampusFS does not keep, the root (no Stud.IP item), missing inodes.
                #expect(try await Self.setxattr(fs, inode, "user.campusfs.id", "x") == EPERM)
                #expect(try await Self.removexattr(fs, inode, "user.campusfs.id") == EPERM)
                #expect(try await Self.setxattr(fs, inode, "user.other", "x") == ENOTSUP)
                #expect(try await Self.removexattr(fs, inode, "user.other") == ENODATA)
                #expect(try await Self.removexattr(fs, inode, "trusted.other") == ENOTSUP)
                #expect(try await Self.setxattr(fs, rootInode, "user.xdg.tags", "x") == EPERM)
                #expect(try await Self.setxattr(fs, Self.missing, "user.xdg.tags", "x") == ENOENT)
                #expect(try await Self.removexattr(fs, Self.missing, "user.xdg.tags") == ENOENT)
            }
        }
    }

    // MARK: - Interrupts

    /// A start deadline far beyond the stalls below, so a loaded machine cannot turn them into ENETDOWN.
    static let patientCache = ContentCacheConfiguration(startDeadline: .seconds(30))

    /// A signal to one of two openers waiting for the same slow server answer ends that open with EINTR at once; the
    /// download they share is not cancelled, so the other opener gets the document's bytes.
    @Test func anInterruptedOpenAnswersEINTRAndLeavesASharedDownloadAlone() async throws {
        try await Campus.with { campus in
            try await campus.withFileSystem(cache: Self.patientCache) { fs in
                let document = try #require(try campus.document(Self.readme))
                let inode = try Self.inode(campus, Self.readme)
                campus.sim.faults.add(
                    Fault(action: .stall(milliseconds: 2_000), pathContains: document.id, remaining: 1))
                let patient = RecordingReply<ReplyKind.Open>(context: RequestContext(processID: 1))
                let interrupted = RecordingReply<ReplyKind.Open>(context: RequestContext(processID: 2))
                fs.open(inode, file: FileInfo(), reply: patient.reply)
                fs.open(inode, file: FileInfo(), reply: interrupted.reply)
                try await Task.sleep(for: .milliseconds(300))
                #expect(patient.answered == nil && interrupted.answered == nil, "the server has not answered yet")

                let start = ContinuousClock.now
                interrupted.interrupt()
                #expect(try await interrupted.answer(within: .seconds(1)).errorNumber == EINTR)
                print("interrupted open answered after \(ContinuousClock.now - start)")

                let file = FileInfo(handle: try await patient.answer().opened.handle)
                #expect(try await Self.readAll(fs, inode, file) == campus.serverBytes(document.id))
            }
        }
    }

    /// With every download slot held by a stalled transfer, a fifth open waits for a slot; interrupted, it answers
    /// EINTR at once (as does a read waiting for a stalled body), and once the stalls end the documents read exactly.
    /// The stalls last 20 s: a loaded machine took over 10 s for the steps before the interrupts, and a stall of the
    /// client's request timeout (30 s) would fail the downloads.
    @Test func anOpenWaitingForADownloadSlotIsInterruptible() async throws {
        try await Campus.with { campus in
            try await campus.withFileSystem(cache: Self.patientCache) { fs in
                var documents: [(inode: Inode, document: DocumentInfo)] = []
                for entry in try campus.store.walk() where entry.node.kind == .file {
                    if let document = try campus.store.document(inode: entry.node.inode), document.isDownloadable,
                        !document.isLink, document.size > 0
                    {
                        documents.append((Inode(entry.node.inode), document))
                    }
                }
                try #require(documents.count >= 5)
                for held in documents.prefix(4) {
                    campus.sim.faults.add(
                        Fault(
                            action: .stallAfterBytes(0, milliseconds: 20_000), pathContains: held.document.id,
                            remaining: 1))
                }
                var handles: [UInt64] = []
                for held in documents.prefix(4) {
                    let open = try await Self.answer { fs.open(held.inode, file: FileInfo(), reply: $0) }
                    handles.append(try open.opened.handle)
                }
                // A read waiting for bytes of a stalled download is interrupted the same way.
                let stalledRead = RecordingReply<ReplyKind.Data>(size: 4096)
                fs.read(documents[0].inode, offset: 0, file: FileInfo(handle: handles[0]), reply: stalledRead.reply)
                try await Task.sleep(for: .milliseconds(200))
                #expect(stalledRead.answered == nil, "the read waits for the stalled body")
                stalledRead.interrupt()
                #expect(try await stalledRead.answer(within: .seconds(1)).errorNumber == EINTR)

                let fifth = documents[4]
                let waiting = RecordingReply<ReplyKind.Open>(context: RequestContext(processID: 5))
                fs.open(fifth.inode, file: FileInfo(), reply: waiting.reply)
                try await Task.sleep(for: .milliseconds(500))
                #expect(waiting.answered == nil, "the fifth open waits for a download slot")
                let start = ContinuousClock.now
                waiting.interrupt()
                #expect(try await waiting.answer(within: .seconds(1)).errorNumber == EINTR)
                print("open waiting for a slot answered after \(ContinuousClock.now - start)")

                for (held, handle) in zip(documents.prefix(4), handles) {
                    let read = try await Self.readAll(fs, held.inode, FileInfo(handle: handle), within: .seconds(40))
                    #expect(try await read == campus.serverBytes(held.document.id))
                }
                let again = try await Self.answer { fs.open(fifth.inode, file: FileInfo(), reply: $0) }
                let file = FileInfo(handle: try again.opened.handle)
                #expect(try await Self.readAll(fs, fifth.inode, file) == campus.serverBytes(fifth.document.id))
                var inFlight = -1
                for _ in 0..<100 where inFlight != 0 {
                    inFlight = await fs.cache.usage().downloadsInFlight
                    if inFlight != 0 { try await Task.sleep(for: .milliseconds(20)) }
                }
                #expect(inFlight == 0)
            }
        }
    }
}
