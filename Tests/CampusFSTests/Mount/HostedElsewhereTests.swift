import ContentCache
import Daemon
import Foundation
import MetadataStore
import StudIPKit
import StudIPModel
import TestSupport
import Testing

@testable import StudIPSimulator

/// Documents hosted elsewhere (Stud.IP URL files, fixtures-5.0.7-more Part 6): a host that is down is not
/// Stud.IP being down.
@Suite(.serialized)
struct HostedElsewhereTests {
    static let unreachable = "http://127.0.0.1:1/elsewhere/gone.txt"

    /// The open fails with "No route to host", not "Network is down", and the neighbours still open. In-process:
    /// the errno is the filesystem's answer. The refused connection is immediate, but under a loaded test run the
    /// redirect to it could take longer than the 3 s start deadline, whose ENETDOWN (offline) is then right; a
    /// long deadline keeps this about the host.
    @Test func anUnreachableHostFailsTheOpenWithEHOSTUNREACH() async throws {
        try await DriverMode.inProcess.run(
            .generated(.small, seed: 1), flavour: .v55, cache: ContentCacheConfiguration(startDeadline: .seconds(60))
        ) { fs in
            let broken = try fs.campus.path(named: "Linkliste.txt")
            let working = try fs.campus.path(named: "Online-Skript (extern).txt")
            try fs.campus.relink(named: "Linkliste.txt", to: Self.unreachable)
            let read = try await fs.read([broken, working])
            let size = try fs.store.resolve(path: working).size
            #expect(read.first == .failure(Errno(EHOSTUNREACH)))
            #expect(try read.last?.get().count == Int(size))
        }
    }

    /// The small dataset's document hosted elsewhere, recorded on Stud.IP as 0 bytes (as 5.0.7's "add URL" dialog
    /// does) and refreshed into the store: its path below the root, and its id.
    static func recordedAsEmpty(_ fs: any FileSystemDriver) async throws -> (relative: String, id: String) {
        let relative = try fs.campus.path(named: "Online-Skript (extern).txt")
        let id = try #require(try fs.document(relative)?.id)
        _ = try fs.sim.store.mutate { university in
            guard var ref = university.fileRefs[id] else { return }
            ref.size = 0
            try university.update(ref)
        }
        try await fs.refresh()
        return (relative, id)
    }

    /// Stud.IP 5.0.7's "add URL" dialog records 0 bytes whatever the host serves. A 0 means unknown: `cat` gets
    /// what the host sends (it failed with EIO: "Stud.IP sent 123316 bytes, the metadata says 0", refresh or not)
    /// and `stat` shows that length from the open on. Mounted: the kernel cached the size 0 and ends every read
    /// there unless the open makes it forget.
    @Test func aDocumentHostedElsewhereRecordedAsEmptyOpensWithWhatTheHostSends() async throws {
        try await DriverMode.mounted.run(.generated(.small, seed: 1), flavour: .v55) { fs in
            let relative = try await Self.recordedAsEmpty(fs).relative
            #expect(try fs.store.resolve(path: relative).size == 0)
            let served = Int64(ExternalHost.unrecordedLength)
            #expect(try await fs.stat(relative).get().size == 0)
            #expect(try await fs.read(relative).get().count == Int(served))
            #expect(try await fs.stat(relative).get().size == served)
        }
    }

    /// The length the host sent outlives the cached copy: after `campusfs cache clean` `stat` still shows it (it
    /// showed 0 again), and the next refresh, which reports 0 from Stud.IP again, keeps it and calls nothing changed.
    /// In-process: the length is the store's; mounted, the kernel would keep the attributes for a day anyway.
    @Test func theHostsLengthOutlivesTheCachedCopyAndTheNextRefresh() async throws {
        try await DriverMode.inProcess.run(.generated(.small, seed: 1), flavour: .v55) { fs in
            let (relative, id) = try await Self.recordedAsEmpty(fs)
            let served = Int64(ExternalHost.unrecordedLength)
            #expect(try await fs.read(relative).get().count == Int(served))
            // The open records the length and clears the `changed` the size-0 refresh gave, both a moment after.
            let recorded = try await MountHarness.settled(
                { try fs.store.resolve(path: relative).size }, until: { $0 == served })
            #expect(recorded == served)
            let highlight = try await MountHarness.settled(
                { try await fs.attribute("user.campusfs.highlight", of: relative) }, until: { $0 == nil })
            #expect(highlight == nil)

            let cleaned = await fs.fileSystem.cache.clean(CleanRequest())
            #expect(cleaned.freedDocuments == 1)
            #expect(fs.fileSystem.cache.cachedSize(of: id) == nil)
            #expect(try await fs.stat(relative).get().size == served)

            let report = try await fs.refresh()
            #expect(!report.summary.changed.contains { $0.studipID == id })
            #expect(try await fs.attribute("user.campusfs.highlight", of: relative) == nil)
            #expect(try await fs.stat(relative).get().size == served)
            #expect(try await fs.read(relative).get().count == Int(served))
        }
    }

    /// A document of unknown size whose host sends more than the cache may hold fails with EFBIG ("File too
    /// large"), and nothing is cached; before, whatever the host sent was written. In-process: the errno and the
    /// cache are the filesystem's.
    @Test func aHostThatSendsMoreThanTheCacheLimitFailsTheOpenWithEFBIG() async throws {
        let limit: Int64 = 100_000
        try await DriverMode.inProcess.run(
            .generated(.small, seed: 1), flavour: .v55, cache: ContentCacheConfiguration(sizeLimit: limit)
        ) { fs in
            #expect(Int64(ExternalHost.unrecordedLength) > limit)
            let (relative, id) = try await Self.recordedAsEmpty(fs)
            #expect(try await fs.read(relative) == .failure(Errno(EFBIG)))
            #expect(fs.fileSystem.cache.cachedSize(of: id) == nil)
            #expect(try fs.store.resolve(path: relative).size == 0)
        }
    }

    /// `campusfs status` reads the server link's state: another host that is down leaves it online.
    @Test func anUnreachableHostLeavesTheServerOnline() async throws {
        try await withSimulator(.generated(.small, seed: 1), flavour: .v55) { sim async throws in
            let link = ServerLink(
                configuration: ClientConfiguration(
                    baseURL: sim.baseURL, credentials: .basic(username: "test_autor", password: "testing")))
            do {
                let broken = try #require(sim.university.fileRefs.values.first { $0.name == "Linkliste.txt" }?.id)
                try sim.relink(broken, to: Self.unreachable)
                _ = try await link.connected()
                #expect(await link.state == .online)
                do throws(StudIPError) {
                    _ = try await link.download(DownloadRequest(documentID: broken))
                    Issue.record("the download of an unreachable host's document succeeded")
                } catch {
                    if case .hostUnreachable(let host, _, _) = error {
                        #expect(host == "http://127.0.0.1:1")
                    } else {
                        Issue.record("expected hostUnreachable, got \(error)")
                    }
                }
                #expect(await link.state == .online)
                #expect(await link.problem == nil)
                #expect(await link.isKnownUnavailable == false)
            } catch {
                await link.shutdown()
                throw error
            }
            await link.shutdown()
        }
    }
}

extension Campus {
    /// The path below the root of the (only) document with this Stud.IP name.
    func path(named name: String) throws -> String {
        let walked = try store.walk().first { $0.node.item == .document && $0.node.name == name }
        return try #require(walked?.path, "no document \(name)")
    }

    /// Points the document hosted elsewhere with this name to another address.
    func relink(named name: String, to url: String) throws {
        try sim.relink(try #require(sim.university.fileRefs.values.first { $0.name == name }?.id), to: url)
    }
}

extension Simulator {
    /// Points a document hosted elsewhere to another address.
    func relink(_ id: String, to url: String) throws {
        _ = try store.mutate { university in
            guard var ref = university.fileRefs[id] else { return }
            ref.content = .external(url: url)
            try university.update(ref)
        }
    }
}
