import Foundation
import MetadataStore
import StudIPKit
import StudIPModel
import TestSupport
import Testing

@testable import StudIPSimulator
@testable import Uploading

/// A profile's data directory with its store, drafts to hand the outbox, and an outbox over the real client
/// against an in-process simulator.
final class OutboxHarness: Sendable {
    /// "Allgemeiner Dateiordner" of "Test Lehrveranstaltung": writable for test_autor (fixtures-5.0.7-writes).
    static let generalFolder = "ca002fbae136b07e4df29e0136e3bd32"
    /// The date folder test_autor may not write into.
    static let dateFolder = "012cb91a42cf85e5fafdd84e54ed2ec3"
    /// The group folder, where test_autor may make subfolders.
    static let groupFolder = "df122112a21812ff4ffcf1965cb48fc3"
    /// The demo's homework folder: writable, not readable for test_autor.
    static let homeworkFolder = "ad8dc6a6162fb0fe022af4a62a15e309"

    let data: URL
    let outboxDirectory: URL

    init() throws {
        data = FileManager.default.temporaryDirectory.appendingPathComponent("outbox-test-\(UUID().uuidString)")
        outboxDirectory = data.appendingPathComponent("outbox")
        try FileManager.default.createDirectory(
            at: data.appendingPathComponent("drafts"), withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: data) }

    /// The store of the data directory; a second call opens the same file again, as a restarted daemon does.
    func openStore() throws -> MetadataStore {
        try MetadataStore(path: data.appendingPathComponent("campusfs.sqlite").path)
    }

    /// A draft file with `bytes`, as the workspace hands it over.
    func draft(_ name: String, _ bytes: [UInt8]) throws -> String {
        let path = data.appendingPathComponent("drafts").appendingPathComponent(name).path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        return path
    }

    func outboxBytes(of entry: Int64) -> [UInt8]? {
        FileManager.default.contents(atPath: outboxDirectory.appendingPathComponent(String(entry)).path).map(Array.init)
    }

    static func bytes(_ count: Int, seed: UInt8 = 7) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    static func configuration(_ sim: Simulator, user: String = "test_autor", api: ClientConfiguration.API = .auto)
        -> ClientConfiguration
    {
        ClientConfiguration(
            baseURL: sim.baseURL, api: api, credentials: .basic(username: user, password: "testing"),
            retry: RetryPolicy(attempts: 2, baseDelay: .milliseconds(5), maxDelay: .milliseconds(20)))
    }

    /// Runs `body` with a writer of `user` on a fresh simulator of the writes capture's dataset.
    static func withWriter<T: Sendable>(
        user: String = "test_autor", api: ClientConfiguration.API = .auto,
        _ body: (Simulator, any DocumentWriter) async throws -> T
    ) async throws -> T {
        try await withSimulator(.fixtures507Writes) { sim in
            try await withSource(configuration(sim, user: user, api: api)) { source in
                try await body(sim, try #require(source.writer))
            }
        }
    }
}

/// What `onSettled` was told, in order.
actor Settlements {
    private(set) var all: [(entry: OutboxEntry, outcome: OutboxOutcome)] = []

    func record(_ entry: OutboxEntry, _ outcome: OutboxOutcome) { all.append((entry, outcome)) }

    nonisolated var handler: Outbox.SettledHandler { { entry, outcome in await self.record(entry, outcome) } }

    /// The `number`-th outcome reported for `entry`, waiting up to `seconds` for it.
    func outcome(of entry: Int64, number: Int = 1, within seconds: Double = 20) async throws -> OutboxOutcome {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let reported = all.filter { $0.entry.id == entry }
            if reported.count >= number { return reported[number - 1].outcome }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("no outcome for outbox entry \(entry) within \(seconds) s")
        throw CancellationError()
    }
}

extension Outbox {
    /// Runs the sender while `body` runs, and stops it afterwards.
    func running<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        let sender = Task { await self.run() }
        defer { sender.cancel() }
        let result = try await body()
        sender.cancel()
        await sender.value
        return result
    }

    /// The entry once it is `state`, waiting up to `seconds`.
    func wait(for id: Int64, toBe state: OutboxState, within seconds: Double = 20) async throws -> OutboxEntry {
        try await wait(for: id, within: seconds) { $0.state == state }
    }

    /// The entry once `condition` holds for it, waiting up to `seconds`.
    func wait(for id: Int64, within seconds: Double = 20, until condition: (OutboxEntry) -> Bool) async throws
        -> OutboxEntry
    {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let entry = try await entries().first(where: { $0.id == id }), condition(entry) { return entry }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("outbox entry \(id) did not get there within \(seconds) s: \(try await entries())")
        throw CancellationError()
    }
}

extension Simulator {
    func inject(_ fault: Fault) { faults.add(fault) }
    func clearFaults() { faults.clear() }

    /// The lecturer's new version of document `id` through JSON:API `POST file-refs/{id}/content`, a second after
    /// its last change (fixtures-5.0.7-more, Part 2, v3): at the same size, file id and size stay and only the
    /// content's ETag (its mtime) changes.
    func replaceThroughJSONAPI(_ id: String, with bytes: [UInt8]) throws {
        _ = try store.mutate { university in
            var ref = try #require(university.fileRefs[id])
            ref.storeVersion(.bytes(Data(bytes)), size: bytes.count, via: .jsonapi, at: ref.fileMtime + 1)
            try university.update(ref)
        }
    }
}
