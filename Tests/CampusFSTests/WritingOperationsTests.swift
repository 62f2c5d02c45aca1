import CampusFS
import ContentCache
import FUSEKit
import FUSEKitTesting
import Foundation
import Glibc
import MetadataStore
import Refreshing
import StudIPModel
import TestSupport
import Testing
import Uploading

@testable import StudIPSimulator

/// The FUSE write path (docs/writing.md; docs/mount.md, "Writing") called directly with recording replies, over a
/// store refreshed as test_autor from the writes capture's dataset: the errno of every refusal, with uploads off and
/// on, and what the tree shows of a draft.
@Suite struct WritingOperationsTests {
    static let course = "SS 2022/12345 Test Lehrveranstaltung"
    /// "Allgemeiner Dateiordner": test_autor may upload there.
    static let general = course + "/Allgemeiner Dateiordner"
    /// A date folder test_autor may not write into.
    static let dateFolder = course + "/13. Klausur am Wed., 07-27-22, 10:15 - 12:00"

    static func answer<Kind>(
        size: Int = 0, _ call: @escaping @Sendable (Reply<Kind>) -> Void
    ) async throws -> ReplyAnswer {
        try await handlerAnswer(size: size, context: RequestContext(processID: 4242), within: .seconds(10), call)
    }

    static func inode(_ campus: Campus, _ path: String) throws -> Inode {
        Inode(try campus.store.resolve(path: path).inode)
    }

    /// The file system over the writes dataset, with a workspace (uploads on) unless `uploads` is false.
    static func with(
        uploads: Bool, _ body: (Campus, CampusFileSystem, Workspace?) async throws -> Void
    ) async throws {
        try await Campus.with(.fixtures507Writes) { campus in
            try await campus.withFileSystem { fs in
                guard uploads else { return try await body(campus, fs, nil) }
                let data = try temporaryDirectory("campusfs-data")
                defer { try? FileManager.default.removeItem(atPath: data) }
                let writer = try #require(campus.source.writer)
                let outbox = Outbox(
                    store: campus.store, dataDirectory: URL(fileURLWithPath: data), writer: writer
                ) { _, _ in }
                let workspace = try await Workspace(store: campus.store, outbox: outbox, dataDirectory: data)
                fs.write(through: workspace)
                try await body(campus, fs, workspace)
            }
        }
    }

    @Test func everyMutationIsReadOnlyWithUploadsOff() async throws {
        try await Self.with(uploads: false) { campus, fs, _ in
            let general = try Self.inode(campus, Self.general)
            let created = try await Self.answer {
                fs.create(
                    parent: general, name: "a.txt", mode: S_IFREG | 0o644, file: FileInfo(flags: O_WRONLY), reply: $0)
            }
            #expect(created.errorNumber == EROFS)
            #expect(
                try await Self.answer { fs.makeDirectory(parent: general, name: "d", mode: 0o755, reply: $0) }
                    .errorNumber == EROFS)
            #expect(try await Self.answer { fs.access(general, mask: W_OK, reply: $0) }.errorNumber == EROFS)
            #expect(try await Self.answer { fs.unlink(parent: general, name: "a.txt", reply: $0) }.errorNumber == EROFS)
            #expect(
                try await Self.answer {
                    fs.rename(parent: general, name: "a", newParent: general, newName: "b", flags: 0, reply: $0)
                }.errorNumber == EROFS)
        }
    }

    @Test func aFolderStudIPDoesNotLetOneWriteIntoIsEACCES() async throws {
        try await Self.with(uploads: true) { campus, fs, _ in
            let dateFolder = try Self.inode(campus, Self.dateFolder)
            let created = try await Self.answer {
                fs.create(
                    parent: dateFolder, name: "a.txt", mode: S_IFREG | 0o644, file: FileInfo(flags: O_WRONLY), reply: $0
                )
            }
            #expect(created.errorNumber == EACCES)
            #expect(try await Self.answer { fs.access(dateFolder, mask: W_OK, reply: $0) }.errorNumber == EACCES)
            #expect(
                try await Self.answer { fs.makeDirectory(parent: dateFolder, name: "d", mode: 0o755, reply: $0) }
                    .errorNumber == EACCES)
            // The semester level is no Stud.IP folder at all.
            let semester = try Self.inode(campus, "SS 2022")
            #expect(try await Self.answer { fs.access(semester, mask: W_OK, reply: $0) }.errorNumber == EROFS)
            let onSemester = try await Self.answer {
                fs.create(
                    parent: semester, name: "a.txt", mode: S_IFREG | 0o644, file: FileInfo(flags: O_WRONLY), reply: $0)
            }
            #expect(onSemester.errorNumber == EROFS)
            let general = try Self.inode(campus, Self.general)
            #expect(try await Self.answer { fs.access(general, mask: W_OK, reply: $0) }.errorNumber == 0)
            let chmod = AttributeChanges(mode: 0o600)
            #expect(
                try await Self.answer { fs.setAttributes(semester, changes: chmod, file: nil, reply: $0) }.errorNumber
                    == EROFS)
            // The lecturer's document in the course's root folder: neither a new version nor a chmod.
            let lecturers = try Self.inode(campus, Self.course + "/mappe_studip-el.pdf")
            #expect(try await Self.answer { fs.access(lecturers, mask: W_OK, reply: $0) }.errorNumber == EACCES)
            #expect(
                try await Self.answer { fs.setAttributes(lecturers, changes: chmod, file: nil, reply: $0) }.errorNumber
                    == EACCES)
            #expect(
                try await Self.answer { fs.open(lecturers, file: FileInfo(flags: O_WRONLY | O_TRUNC), reply: $0) }
                    .errorNumber == EACCES)
            #expect(
                try await Self.answer { fs.unlink(parent: general, name: "missing.txt", reply: $0) }.errorNumber
                    == ENOENT)
        }
    }

    /// Created, written, closed in a writable folder: lookup, getattr and the listing show the draft with its bytes,
    /// and reads return them.
    @Test func aDraftShowsInTheTreeWithItsBytes() async throws {
        try await Self.with(uploads: true) { campus, fs, workspace in
            let general = try Self.inode(campus, Self.general)
            let created = try await Self.answer {
                fs.create(
                    parent: general, name: "Lösung.txt", mode: S_IFREG | 0o644,
                    file: FileInfo(flags: O_WRONLY | O_CREAT), reply: $0)
            }
            guard case .created(let entry, let opened) = created else {
                Issue.record("create answered \(created)")
                return
            }
            #expect(entry.attributes.inode > Inode(Workspace.inodeBase))
            let bytes = Array("meine Lösung\n".utf8)
            let file = FileInfo(flags: O_WRONLY, handle: opened.handle)
            guard
                case .written(let count) = try await Self.answer({
                    fs.write(entry.attributes.inode, data: bytes, offset: 0, file: file, reply: $0)
                })
            else {
                Issue.record("the write was refused")
                return
            }
            #expect(count == bytes.count)
            #expect(
                try await Self.answer { fs.synchronize(entry.attributes.inode, dataOnly: false, file: file, reply: $0) }
                    .errorNumber == 0)
            #expect(
                try await Self.answer { fs.release(entry.attributes.inode, file: file, reply: $0) }.errorNumber == 0)

            let found = try await Self.answer { fs.lookup(parent: general, name: "Lösung.txt", reply: $0) }.entry
            #expect(found.attributes.inode == entry.attributes.inode)
            #expect(found.attributes.size == Int64(bytes.count))
            let attributes = try await Self.answer { fs.getAttributes(entry.attributes.inode, file: nil, reply: $0) }
                .attributes
            #expect(attributes.size == Int64(bytes.count))
            let listing = try await Self.answer(size: 65536) {
                fs.readDirectoryPlus(general, offset: 0, file: FileInfo(), reply: $0)
            }.directoryEntries
            #expect(listing.map(\.name).contains("Lösung.txt"))

            let reopened = try await Self.answer {
                fs.open(entry.attributes.inode, file: FileInfo(flags: O_RDONLY), reply: $0)
            }.opened
            let read = try await Self.answer(size: 4096) {
                fs.read(entry.attributes.inode, offset: 0, file: FileInfo(handle: reopened.handle), reply: $0)
            }.bytes
            #expect(read == bytes)
            #expect(workspace?.draft(inode: Int64(entry.attributes.inode))?.state == .editing)
        }
    }

    /// Opening one's own document for writing makes a draft in its place: from its bytes, downloaded through the
    /// content cache, or with `O_TRUNC` empty and without a download.
    @Test func openingOnesOwnDocumentForWritingDownloadsOnlyWithoutTruncation() async throws {
        try await Self.with(uploads: true) { campus, fs, workspace in
            let writer = try #require(campus.source.writer)
            let staging = try temporaryDirectory("campusfs-before")
            defer { try? FileManager.default.removeItem(atPath: staging) }
            let old = Array("old notes\n".utf8)
            for name in ["kept.txt", "truncated.txt"] {
                #expect(FileManager.default.createFile(atPath: staging + "/" + name, contents: Data(old)))
                _ = try await writer.upload(
                    file: staging + "/" + name, toFolder: WritingCopyTests.generalID, name: name, termsID: nil,
                    progress: nil)
            }
            _ = try await Refresher(source: campus.source, store: campus.store, options: TreeOptions()).refresh()
            let kept = try #require(try campus.document(Self.general + "/kept.txt"))
            let truncated = try #require(try campus.document(Self.general + "/truncated.txt"))
            let keptInode = try Self.inode(campus, Self.general + "/kept.txt")
            let truncatedInode = try Self.inode(campus, Self.general + "/truncated.txt")

            let emptied = try await Self.answer {
                fs.open(truncatedInode, file: FileInfo(flags: O_WRONLY | O_TRUNC), reply: $0)
            }.opened
            _ = try await Self.answer { fs.release(truncatedInode, file: FileInfo(handle: emptied.handle), reply: $0) }
            #expect(
                try await Self.answer { fs.getAttributes(truncatedInode, file: nil, reply: $0) }.attributes.size == 0)
            #expect(campus.sim.statistics.snapshot().downloadsCompleted[truncated.id] == nil, "no download")

            let appending = try await Self.answer {
                fs.open(keptInode, file: FileInfo(flags: O_WRONLY | O_APPEND), reply: $0)
            }.opened
            let more = Array("more\n".utf8)
            let file = FileInfo(flags: O_WRONLY, handle: appending.handle)
            _ = try await Self.answer {
                fs.write(keptInode, data: more, offset: Int64(old.count), file: file, reply: $0)
            }
            _ = try await Self.answer { fs.release(keptInode, file: file, reply: $0) }
            #expect(campus.sim.statistics.snapshot().downloadsCompleted[kept.id] == 1)
            let reading = try await Self.answer { fs.open(keptInode, file: FileInfo(flags: O_RDONLY), reply: $0) }
                .opened
            let read = try await Self.answer(size: 4096) {
                fs.read(keptInode, offset: 0, file: FileInfo(handle: reading.handle), reply: $0)
            }.bytes
            #expect(read == old + more)
            #expect(workspace?.items(in: Int64(try Self.inode(campus, Self.general))).count == 2)
        }
    }

    /// One's own new version at the same size (JSON:API keeps the file id), confirmed by Stud.IP: the content cache
    /// no longer passes the content it replaced off as that version's, so the next save over the document does not
    /// start from the old content's `ETag`, which the outbox would take for a lecturer's replacement ("(yours)").
    @Test func aConfirmedNewVersionIsNoLongerTheCachedContent() async throws {
        try await Self.with(uploads: true) { campus, fs, workspace in
            let workspace = try #require(workspace)
            let writer = try #require(campus.source.writer)
            let staging = try temporaryDirectory("campusfs-before")
            defer { try? FileManager.default.removeItem(atPath: staging) }
            let old = Array("old notes\n".utf8)
            #expect(FileManager.default.createFile(atPath: staging + "/same.txt", contents: Data(old)))
            _ = try await writer.upload(
                file: staging + "/same.txt", toFolder: WritingCopyTests.generalID, name: "same.txt", termsID: nil,
                progress: nil)
            _ = try await Refresher(source: campus.source, store: campus.store, options: TreeOptions()).refresh()
            let document = try #require(try campus.document(Self.general + "/same.txt"))
            let inode = try Self.inode(campus, Self.general + "/same.txt")
            let node = try #require(try campus.store.node(inode: Int64(inode)))
            // Saved through the mount from its cached bytes: the draft starts from the content's ETag.
            let opened = try await Self.answer { fs.open(inode, file: FileInfo(flags: O_WRONLY), reply: $0) }.opened
            let file = FileInfo(flags: O_WRONLY, handle: opened.handle)
            let new = Array("new notes\n".utf8)
            _ = try await Self.answer { fs.write(inode, data: new, offset: 0, file: file, reply: $0) }
            _ = try await Self.answer { fs.release(inode, file: file, reply: $0) }
            let saved = try #require(workspace.draft(covering: node))
            #expect(saved.baseETag != nil, "the download brought no ETag")
            try await Task.sleep(for: .milliseconds(2300))
            await workspace.settle()
            let outbox = Outbox(
                store: campus.store,
                dataDirectory: URL(fileURLWithPath: String(workspace.directory.dropLast("/drafts".count))),
                writer: writer
            ) { _, _ in }
            let entry = try #require(try await outbox.entries().last)
            guard case .newVersion(let documentID, _, _, _, _) = entry.operation, documentID == document.id else {
                Issue.record("not a new version of \(document.id): \(entry.operation)")
                return
            }
            // Stud.IP took it: same file id, same size.
            let made = RemoteDocument(
                id: document.id, folderID: WritingCopyTests.generalID, name: "same.txt", mimeType: "text/plain",
                size: Int64(new.count), created: Date(), changed: Date(), fileID: document.version.fileID)
            await workspace.settled(entry, .done(made))
            let next = try workspace.openForWriting(node, content: nil)
            #expect(next.baseETag == nil, "the next save starts from the replaced content's ETag")
        }
    }

    /// File managers check the free space before they copy: with writing on it is the drafts' filesystem's, not 0.
    @Test func theFreeSpaceIsTheDrafts() async throws {
        try await Self.with(uploads: true) { campus, fs, workspace in
            let statistics = try await Self.answer { fs.statistics(rootInode, reply: $0) }
            guard case .statistics(let answered) = statistics else {
                Issue.record("statfs answered \(statistics)")
                return
            }
            var space = statvfs()
            #expect(statvfs(try #require(workspace).directory, &space) == 0)
            #expect(answered.availableBlocks > 0)
            #expect(answered.blocks == UInt(space.f_blocks))
        }
    }

    /// A folder made locally lists and shows like any directory, and a file created in it too.
    @Test func aLocalFolderListsItsDrafts() async throws {
        try await Self.with(uploads: true) { campus, fs, _ in
            let group = try Self.inode(campus, Self.course + "/Dateiordner der Gruppe: Studierende")
            let made = try await Self.answer {
                fs.makeDirectory(parent: group, name: "Gruppe 4", mode: 0o755, reply: $0)
            }
            let folder = try made.entry.attributes
            #expect(folder.mode & S_IFMT == S_IFDIR)
            let created = try await Self.answer {
                fs.create(
                    parent: folder.inode, name: "a.txt", mode: S_IFREG | 0o644, file: FileInfo(flags: O_WRONLY),
                    reply: $0)
            }
            guard case .created(let entry, let opened) = created else {
                Issue.record("create answered \(created)")
                return
            }
            _ = try await Self.answer {
                fs.release(entry.attributes.inode, file: FileInfo(handle: opened.handle), reply: $0)
            }
            let listing = try await Self.answer(size: 65536) {
                fs.readDirectoryPlus(folder.inode, offset: 0, file: FileInfo(), reply: $0)
            }.directoryEntries
            #expect(listing.map(\.name) == [".", "..", "a.txt"])
            let parentListing = try await Self.answer(size: 65536) {
                fs.readDirectoryPlus(group, offset: 0, file: FileInfo(), reply: $0)
            }.directoryEntries
            #expect(parentListing.map(\.name).contains("Gruppe 4"))
            #expect(
                try await Self.answer { fs.removeDirectory(parent: group, name: "Gruppe 4", reply: $0) }.errorNumber
                    == ENOTEMPTY)
        }
    }

    /// `RENAME_EXCHANGE` has no Stud.IP counterpart; `RENAME_NOREPLACE` is honoured.
    @Test func renameFlags() async throws {
        try await Self.with(uploads: true) { campus, fs, _ in
            let general = try Self.inode(campus, Self.general)
            for name in ["a.txt", "b.txt"] {
                let created = try await Self.answer {
                    fs.create(
                        parent: general, name: name, mode: S_IFREG | 0o644, file: FileInfo(flags: O_WRONLY), reply: $0)
                }
                guard case .created(let entry, let opened) = created else {
                    Issue.record("create answered \(created)")
                    return
                }
                _ = try await Self.answer {
                    fs.release(entry.attributes.inode, file: FileInfo(handle: opened.handle), reply: $0)
                }
            }
            let exchange = try await Self.answer {
                fs.rename(parent: general, name: "a.txt", newParent: general, newName: "b.txt", flags: 2, reply: $0)
            }
            #expect(exchange.errorNumber == EINVAL)
            let noReplace = try await Self.answer {
                fs.rename(parent: general, name: "a.txt", newParent: general, newName: "b.txt", flags: 1, reply: $0)
            }
            #expect(noReplace.errorNumber == EEXIST)
            let plain = try await Self.answer {
                fs.rename(parent: general, name: "a.txt", newParent: general, newName: "c.txt", flags: 1, reply: $0)
            }
            #expect(plain.errorNumber == 0)
        }
    }
}
