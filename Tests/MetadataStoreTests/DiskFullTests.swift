import Foundation
import StudIPKit
import TestSupport
import Testing

@testable import MetadataStore

/// Issue 14.4: a full disk under the store is "disk full", not "SQLite error 13" (a real tmpfs of 1 MiB, filled).
@Suite(.serialized)
struct DiskFullTests {
    @Test func aFullDiskIsNamedAsSuch() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("campusfs-full-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(
            try await shell("mount -t tmpfs -o size=1m tmpfs \(quoted(directory))").status == 0,
            "mounting a tmpfs needs root")
        defer { _ = try? blockingShell("umount -l \(quoted(directory))") }

        let store = try MetadataStore(path: directory + "/campusfs.sqlite")
        let courses = (0..<400).map { makeCourse("c-\($0)", "N-\($0)", "Kurs \($0)", [ws2627]) }
        _ = try store.applyOverview(overview(Array(courses.prefix(1))), now: now)
        // Everything but a few pages is taken: the store can still be read, not grow.
        _ = try await shell("dd if=/dev/zero of=\(quoted(directory + "/fill")) bs=4k 2>/dev/null")
        var failure: StoreError?
        do throws(StoreError) {
            let documents = (0..<5_000).map { document("d-\($0)", in: root(courses[0]), "Datei \($0).pdf") }
            _ = try store.applyCourse(content(courses[0], documents: documents), now: now)
            _ = try store.applyOverview(overview(courses), now: now)
        } catch {
            failure = error
        }
        let error = try #require(failure)
        guard case .diskFull = error else {
            Issue.record("expected .diskFull, got \(error)")
            return
        }
        #expect(
            error.description.hasPrefix("disk full: the metadata store \(directory)/campusfs.sqlite could not grow"))
    }
}
