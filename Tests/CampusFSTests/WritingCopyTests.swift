import CampusFS
import ContentCache
import Foundation
import Glibc
import MetadataStore
import Refreshing
import StudIPKit
import StudIPModel
import TestSupport
import Testing
import Uploading

@testable import StudIPSimulator

/// A real kernel mount with a workspace and a sending outbox (uploads on), served in this process: what a student's
/// `cp` into a writable folder ends as on Stud.IP, as the lecturer sees it (issue 32, "Done when"). The daemon's
/// wiring of the same pieces, and the editors, are `Mount/WritingMountTests`.
@Suite struct WritingCopyTests {
    static let general = "SS 2022/12345 Test Lehrveranstaltung/Allgemeiner Dateiordner"
    static let generalID = "ca002fbae136b07e4df29e0136e3bd32"
    static let homework = "SS 2022/12345 Test Lehrveranstaltung/Hausaufgaben"
    static let dateFolder = "SS 2022/12345 Test Lehrveranstaltung/13. Klausur am Wed., 07-27-22, 10:15 - 12:00"

    /// test_autor's mount of the writes dataset with a workspace settling after 0.3 s, its outbox sending, and
    /// confirmed drafts refreshed into the store.
    static func withWritingMount(_ body: (MountedCampus, Workspace) async throws -> Void) async throws {
        try await Campus.with(.fixtures507Writes) { campus in
            let data = try temporaryDirectory("campusfs-data")
            let directory = try temporaryDirectory("campusfs-mount")
            let cacheDirectory = try temporaryDirectory("campusfs-cache")
            defer {
                rmdir(directory)
                try? FileManager.default.removeItem(atPath: cacheDirectory)
                try? FileManager.default.removeItem(atPath: data)
            }
            let writer = try #require(campus.source.writer)
            let downloader = try #require(campus.source.downloader)
            let settled = Settled()
            let outbox = Outbox(store: campus.store, dataDirectory: URL(fileURLWithPath: data), writer: writer) {
                await settled.workspace?.settled($0, $1)
            }
            let workspace = try await Workspace(
                store: campus.store, outbox: outbox, dataDirectory: data,
                configuration: Workspace.Configuration(settleTime: .milliseconds(300)))
            await settled.set(workspace)
            let mount = try CampusMount(
                store: campus.store, cacheDirectory: cacheDirectory, downloader: downloader, workspace: workspace)
            workspace.refreshCourses { [source = campus.source, store = campus.store] courseID in
                let report = try? await Refresher(source: source, store: store, options: TreeOptions())
                    .refresh(courseIDs: [courseID])
                if let report { mount.apply(report.summary) }
                return report != nil
            }
            try mount.start(at: directory)
            let mounted = MountedCampus(
                campus: campus, mount: mount, directory: directory, cacheDirectory: cacheDirectory)
            let sending = Task { await outbox.run() }
            let settling = Task { await workspace.run() }
            defer {
                sending.cancel()
                settling.cancel()
            }
            do {
                try await body(mounted, workspace)
            } catch {
                await unmount(mount, at: directory)
                throw error
            }
            await unmount(mount, at: directory)
        }
    }

    private static func unmount(_ mount: CampusMount, at directory: String) async {
        // On a thread of its own: the loop may wait for reply tasks that need Swift's cooperative pool.
        let stopped = await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: mount.stop(timeout: .seconds(15))) }.start()
        }
        #expect(stopped, "the FUSE loop did not end within 15 s")
        if isMounted(directory) {
            _ = try? await shell("fusermount3 -u -z \(quoted(directory)) || umount -l \(quoted(directory))")
        }
    }

    /// Lets the outbox's handler reach the workspace made after it.
    actor Settled {
        var workspace: Workspace?
        func set(_ workspace: Workspace) { self.workspace = workspace }
    }

    /// The documents of the general folder as the lecturer sees them through the API.
    static func lecturerSees(_ campus: Campus) async throws -> [RemoteDocument] {
        let configuration = ClientConfiguration(
            baseURL: campus.sim.baseURL, credentials: .basic(username: "test_dozent", password: "testing"))
        return try await withSource(configuration) { source in
            try await #require(source.writer).documents(inFolder: generalID)
        }
    }

    @Test func aCopyIntoAWritableFolderIsTheDocumentTheLecturerSees() async throws {
        try await Self.withWritingMount { mounted, workspace in
            let local = try temporaryDirectory("campusfs-local")
            defer { try? FileManager.default.removeItem(atPath: local) }
            let bytes = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
            #expect(FileManager.default.createFile(atPath: local + "/Abgabe 1.pdf", contents: Data(bytes)))
            let copied = try await shell(
                "timeout 30 cp \(quoted(local + "/Abgabe 1.pdf")) \(mounted.path(Self.general))/")
            #expect(copied.status == 0, "\(copied.stderr)")
            // Shown at once, before Stud.IP has it.
            let listed = try await shell("timeout 10 ls \(mounted.path(Self.general))")
            #expect(listed.stdout.contains("Abgabe 1.pdf"))

            let seen = try await MountHarness.settled({ try await Self.lecturerSees(mounted.campus) }) {
                $0.contains { $0.name == "Abgabe 1.pdf" }
            }
            let document = try #require(seen.first { $0.name == "Abgabe 1.pdf" }, "the lecturer does not see it")
            #expect(seen.filter { $0.name.hasPrefix("Abgabe 1") }.count == 1, "uploaded once")
            #expect(try await mounted.campus.serverBytes(document.id) == bytes)

            // The tree then shows the store's document, and the draft is gone.
            let stored = try await MountHarness.settled({ workspace.isEmpty }) { $0 }
            #expect(stored, "the confirmed draft stayed")
            let read = try await shell(
                "timeout 30 cmp \(quoted(local + "/Abgabe 1.pdf")) \(mounted.path(Self.general + "/Abgabe 1.pdf"))")
            #expect(read.status == 0, "\(read.stdout)\(read.stderr)")
        }
    }

    /// Saving over one's own document (`cp` opens it with `O_TRUNC`) is a new version: the same document id, the
    /// new bytes.
    @Test func savingOverOnesOwnDocumentIsANewVersion() async throws {
        try await Self.withWritingMount { mounted, workspace in
            let local = try temporaryDirectory("campusfs-local")
            defer { try? FileManager.default.removeItem(atPath: local) }
            let first = Array("first version\n".utf8)
            let second = Array("second version, longer\n".utf8)
            #expect(FileManager.default.createFile(atPath: local + "/notes.txt", contents: Data(first)))
            let target = mounted.path(Self.general + "/notes.txt")
            #expect(try await shell("timeout 30 cp \(quoted(local + "/notes.txt")) \(target)").status == 0)
            let uploaded = try await MountHarness.settled({ try await Self.lecturerSees(mounted.campus) }) {
                $0.contains { $0.name == "notes.txt" }
            }
            let document = try #require(uploaded.first { $0.name == "notes.txt" })
            _ = try await MountHarness.settled({ workspace.isEmpty }) { $0 }

            #expect(FileManager.default.createFile(atPath: local + "/notes.txt", contents: Data(second)))
            let saved = try await shell("timeout 30 cp \(quoted(local + "/notes.txt")) \(target)")
            #expect(saved.status == 0, "\(saved.stderr)")
            let after = try await MountHarness.settled({ try await Self.lecturerSees(mounted.campus) }) {
                $0.first { $0.name == "notes.txt" }?.size == Int64(second.count)
            }
            #expect(after.filter { $0.name.hasPrefix("notes") }.map(\.id) == [document.id], "the same document")
            #expect(try await mounted.campus.serverBytes(document.id) == second)
        }
    }

    /// A homework hand-in: confirmed by the 201, never listed back to the student, so the local copy stays,
    /// read-only, marked `handed-in`.
    @Test func aHandedInHomeworkStaysAsAReadOnlyCopy() async throws {
        try await Self.withWritingMount { mounted, workspace in
            let local = try temporaryDirectory("campusfs-local")
            defer { try? FileManager.default.removeItem(atPath: local) }
            let bytes = Array("Blatt 1, Lösung\n".utf8)
            #expect(FileManager.default.createFile(atPath: local + "/Blatt 1.txt", contents: Data(bytes)))
            let homework = mounted.path(Self.homework)
            #expect(try await shell("timeout 30 cp \(quoted(local + "/Blatt 1.txt")) \(homework)/").status == 0)
            let state = try await MountHarness.settled({
                try await shell(
                    "timeout 10 getfattr --only-values -n user.campusfs.state \(mounted.path(Self.homework + "/Blatt 1.txt"))"
                ).stdout
            }) { $0 == "handed-in" }
            #expect(state == "handed-in")
            let listed = try await shell("timeout 10 stat -c '%A %s' \(mounted.path(Self.homework + "/Blatt 1.txt"))")
            #expect(listed.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "-r--r--r-- \(bytes.count)")
            #expect(!workspace.isEmpty)
        }
    }

    @Test func aCopyIntoAFolderStudIPRefusesIsEACCES() async throws {
        try await Self.withWritingMount { mounted, _ in
            let result = try await shell("timeout 10 cp /etc/hostname \(mounted.path(Self.dateFolder))/")
            #expect(result.status != 0)
            #expect(result.stderr.contains("Permission denied"), "\(result.stderr)")
        }
    }
}
