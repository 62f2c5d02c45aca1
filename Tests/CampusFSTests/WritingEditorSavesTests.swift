import CampusFS
import FUSEKit
import FUSEKitTesting
import Foundation
import Glibc
import MetadataStore
import NamingRules
import Refreshing
import StudIPKit
import StudIPModel
import Synchronization
import TestSupport
import Testing
import Uploading

@testable import StudIPSimulator

/// The real programs' saves of Tests/Fixtures/editor-saves (strace'd, normalised to FUSE-level operations) replayed
/// against `CampusFileSystem` with a workspace, the kernel's part played by the replay (a lookup before each open or
/// create, `O_TRUNC` passed to open, the last close of a descriptor a release): each must end as exactly one upload
/// or one new version of the same document, with the bytes the program left (docs/writing.md, "Local first").
@Suite struct WritingEditorSavesTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/editor-saves")

    /// gio's `--backup` makes the backup a hard link, which the mount does not offer (`link` is `EROFS`).
    static let cases: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: fixtures.path)) ?? []
        return names.filter { $0.hasSuffix(".txt") && !$0.contains("-backup-") || $0 == "cp-backup-overwrite.txt" }
            .sorted()
    }()

    struct Trace {
        var before: [String: Int]
        var after: [String: Int]
        var lines: [String]

        init(_ text: String) {
            func files(_ line: String) -> [String: Int] {
                // "notes.txt (22 bytes) notes.txt~ (10 bytes)" or "printf 'old\n' >notes.txt; printf …"
                var files: [String: Int] = [:]
                for match in line.matches(of: /(\S+) \((\d+) bytes\)/) {
                    files[String(match.output.1)] = Int(match.output.2) ?? 0
                }
                for match in line.matches(of: /printf '([^']*)' >([^;\s]+)/) {
                    files[String(match.output.2)] =
                        String(match.output.1).replacingOccurrences(of: "\\n", with: "\n")
                        .utf8.count
                }
                return files
            }
            let all = text.split(separator: "\n").map(String.init)
            before = files(all.first { $0.hasPrefix("# before:") } ?? "")
            after = files(all.first { $0.hasPrefix("# after:") } ?? "")
            lines = all.filter { !$0.hasPrefix("#") }
        }
    }

    /// One open descriptor of the replayed program.
    struct Open {
        var name: String
        var inode: Inode
        var handle: UInt64
        var offset: Int64
        var append: Bool
    }

    static func answer<Kind>(size: Int = 0, _ call: @escaping @Sendable (Reply<Kind>) -> Void) async throws
        -> ReplyAnswer
    {
        try await handlerAnswer(size: size, context: RequestContext(processID: 4242), within: .seconds(20), call)
    }

    @Test(arguments: cases)
    func aSaveIsOneOperation(_ name: String) async throws {
        let trace = Trace(try String(contentsOf: Self.fixtures.appendingPathComponent(name), encoding: .utf8))
        try await Campus.with(.fixtures507Writes) { campus in
            // The files before the save: test_autor's own documents.
            let writer = try #require(campus.source.writer)
            let staging = try temporaryDirectory("campusfs-before")
            defer { try? FileManager.default.removeItem(atPath: staging) }
            for (file, size) in trace.before {
                let path = staging + "/" + file
                #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 0x6f, count: size)))
                _ = try await writer.upload(
                    file: path, toFolder: WritingCopyTests.generalID, name: file, termsID: nil, progress: nil)
            }
            _ = try await Refresher(source: campus.source, store: campus.store, options: TreeOptions()).refresh()
            let folder = Inode(try campus.store.resolve(path: WritingCopyTests.general).inode)
            var documents: [String: DocumentInfo] = [:]
            for file in trace.before.keys {
                documents[file] = try #require(try campus.document(WritingCopyTests.general + "/" + file))
            }

            try await campus.withFileSystem { fs in
                let data = try temporaryDirectory("campusfs-data")
                defer { try? FileManager.default.removeItem(atPath: data) }
                let outbox = Outbox(store: campus.store, dataDirectory: URL(fileURLWithPath: data), writer: writer) {
                    _, _ in
                }
                let clock = Mutex(ContinuousClock.now)
                let workspace = try await Workspace(
                    store: campus.store, outbox: outbox, dataDirectory: data, now: { clock.withLock { $0 } })
                fs.write(through: workspace)
                try await Self.replay(trace.lines, in: folder, fs)
                for _ in 0..<3 {
                    clock.withLock { $0 += .seconds(5) }
                    await workspace.settle()
                }
                let entries = try await outbox.entries()
                let operations = entries.map(\.operation)
                let saved = try #require(trace.after.first { !TemporaryName.isTemporary($0.key) })
                if name == "mv-rename-over.txt" {
                    let notes = try #require(documents["notes.txt"])
                    let draft = try #require(documents["draft.txt"])
                    #expect(
                        operations == [.delete(documentID: notes.id), .rename(documentID: draft.id, name: "notes.txt")])
                } else if let document = documents[saved.key] {
                    #expect(operations.count == 1, "\(operations)")
                    guard case .newVersion(let id, let sentName, let base, _, _) = operations.first else {
                        Issue.record("not one new version: \(operations)")
                        return
                    }
                    #expect(id == document.id)
                    #expect(sentName == saved.key)
                    #expect(base == document.version)
                    #expect(entries.first?.byteCount == Int64(saved.value))
                } else {
                    #expect(
                        operations == [
                            .upload(folder: .folder(WritingCopyTests.generalID), name: saved.key, terms: nil)
                        ])
                    #expect(entries.first?.byteCount == Int64(saved.value))
                }
            }
        }
    }

    /// Plays the normalised operations as the kernel would send them to the filesystem.
    static func replay(_ lines: [String], in folder: Inode, _ fs: CampusFileSystem) async throws {
        var open: [Open] = []
        func latest(_ name: String) -> Int? { open.lastIndex { $0.name == name } }
        func lookup(_ name: String) async throws -> Inode? {
            let answer = try await Self.answer { fs.lookup(parent: folder, name: name, reply: $0) }
            if case .entry(let entry) = answer { return entry.attributes.inode }
            return nil
        }
        func release(_ index: Int) async throws {
            let closing = open.remove(at: index)
            _ = try await Self.answer { fs.release(closing.inode, file: FileInfo(handle: closing.handle), reply: $0) }
        }
        for (number, line) in lines.enumerated() {
            let words = line.split(separator: " ").map(String.init)
            guard let verb = words.first else { continue }
            switch verb {
            case "open", "open+close":
                guard let flagsWord = line.firstMatch(of: /\(([a-z,]+)\)/)?.output.1 else { continue }
                let flags = Set(flagsWord.split(separator: ",").map(String.init))
                let name = words[1]
                if flags.contains("path") { continue }
                var mode: Int32 = flags.contains("rdwr") ? O_RDWR : flags.contains("wronly") ? O_WRONLY : O_RDONLY
                if flags.contains("trunc") { mode |= O_TRUNC }
                if flags.contains("append") { mode |= O_APPEND }
                let opened: Open
                if let inode = try await lookup(name) {
                    if flags.contains("creat") && flags.contains("excl") { continue }
                    let file = FileInfo(flags: mode)
                    let answer = try await Self.answer { fs.open(inode, file: file, reply: $0) }
                    guard case .open(let handle) = answer else { continue }
                    opened = Open(
                        name: name, inode: inode, handle: handle.handle, offset: 0, append: flags.contains("append"))
                } else {
                    guard flags.contains("creat") else { continue }
                    let file = FileInfo(flags: mode | O_CREAT)
                    let answer = try await Self.answer {
                        fs.create(parent: folder, name: name, mode: S_IFREG | 0o644, file: file, reply: $0)
                    }
                    guard case .created(let entry, let handle) = answer else {
                        Issue.record("line \(number + 1), \(line): \(answer)")
                        continue
                    }
                    opened = Open(
                        name: name, inode: entry.attributes.inode, handle: handle.handle, offset: 0,
                        append: flags.contains("append"))
                }
                open.append(opened)
                if verb == "open+close" { try await release(open.count - 1) }
            case "write":
                guard let index = latest(words[1]), let count = Int(words[2]) else { continue }
                var writing = open[index]
                if writing.append {
                    let inode = writing.inode
                    writing.offset = try await Self.answer { fs.getAttributes(inode, file: nil, reply: $0) }.attributes
                        .size
                }
                let bytes = [UInt8](repeating: 0x6e, count: count)
                let (inode, offset, handle) = (writing.inode, writing.offset, writing.handle)
                let answer = try await Self.answer {
                    fs.write(
                        inode, data: bytes, offset: offset, file: FileInfo(flags: O_WRONLY, handle: handle), reply: $0)
                }
                guard case .written(let written) = answer, written == count else {
                    Issue.record("line \(number + 1), \(line): \(answer)")
                    continue
                }
                writing.offset += Int64(count)
                open[index] = writing
            case "truncate":
                guard let index = latest(words[1]), let size = Int64(words[3]) else { continue }
                let (inode, handle) = (open[index].inode, open[index].handle)
                _ = try await Self.answer {
                    fs.setAttributes(
                        inode, changes: AttributeChanges(size: size), file: FileInfo(flags: O_WRONLY, handle: handle),
                        reply: $0)
                }
            case "fsync", "fdatasync":
                guard let index = latest(words[1]) else { continue }
                let (inode, handle) = (open[index].inode, open[index].handle)
                _ = try await Self.answer {
                    fs.synchronize(inode, dataOnly: verb == "fdatasync", file: FileInfo(handle: handle), reply: $0)
                }
            case "close":
                let name = words[1]
                guard let index = latest(name) else { continue }
                // A close before the descriptor's last use (a shell's dup) is only a flush.
                let later = lines[(number + 1)...].prefix {
                    !$0.hasPrefix("open \(name) ") && !$0.contains(" -> \(name)")
                }
                if later.contains(where: { $0.hasPrefix("write \(name) ") || $0.hasPrefix("truncate \(name) ") }) {
                    continue
                }
                try await release(index)
            case "rename":
                guard let match = line.firstMatch(of: /^rename (\S+) -> (\S+)( \(noreplace\))?/) else { continue }
                let (from, to) = (String(match.output.1), String(match.output.2))
                let flags: UInt32 = match.output.3 == nil ? 0 : 1
                _ = try await Self.answer {
                    fs.rename(parent: folder, name: from, newParent: folder, newName: to, flags: flags, reply: $0)
                }
            case "unlink":
                let name = words[1]
                _ = try await Self.answer { fs.unlink(parent: folder, name: name, reply: $0) }
            case "chmod", "chown", "set":
                let name = verb == "set" ? words[2] : words[1]
                guard let inode = try await lookup(name) else { continue }
                let changes =
                    verb == "chmod"
                    ? AttributeChanges(mode: mode_t(words[2], radix: 8))
                    : verb == "chown"
                        ? AttributeChanges(userID: 65534) : AttributeChanges(modified: .now)
                _ = try await Self.answer { fs.setAttributes(inode, changes: changes, file: nil, reply: $0) }
            case "setxattr":
                guard let inode = try await lookup(words[1]) else { continue }
                let attribute = words[2]
                _ = try await Self.answer {
                    fs.setExtendedAttribute(inode, name: attribute, value: [2, 0, 0, 0], mode: .any, reply: $0)
                }
            default:
                continue
            }
        }
        while !open.isEmpty { try await release(open.count - 1) }
    }
}
