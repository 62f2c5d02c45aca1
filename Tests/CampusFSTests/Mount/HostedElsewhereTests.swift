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

    /// The open fails with "No route to host", not "Network is down", and the neighbours still open.
    @Test func anUnreachableHostFailsTheOpenWithEHOSTUNREACH() async throws {
        try await MountedCampus.with(.generated(.small, seed: 1), flavour: .v55) { campus in
            let broken = try campus.path(named: "Linkliste.txt")
            let working = try campus.path(named: "Online-Skript (extern).txt")
            try campus.relink(named: "Linkliste.txt", to: Self.unreachable)
            let script = """
                import errno, os, sys
                for path in sys.argv[1:]:
                    try:
                        with open(path, "rb") as f:
                            print(len(f.read()))
                    except OSError as error:
                        print(errno.errorcode[error.errno])
                """
            let opened = try await shell(
                "python3 -c \(quoted(script)) \(campus.path(broken)) \(campus.path(working))")
            let size = try campus.store.resolve(path: working).size
            #expect(opened.lines == ["EHOSTUNREACH", "\(size)"], "\(opened.stderr)")
        }
    }

    /// The small dataset's document hosted elsewhere, recorded on Stud.IP as 0 bytes (as 5.0.7's "add URL" dialog
    /// does) and refreshed into the store: its path relative to the mountpoint, and its id.
    static func recordedAsEmpty(_ campus: MountedCampus) async throws -> (relative: String, id: String) {
        let relative = try campus.path(named: "Online-Skript (extern).txt")
        let id = try #require(try campus.document(relative)?.id)
        _ = try campus.sim.store.mutate { university in
            guard var ref = university.fileRefs[id] else { return }
            ref.size = 0
            try university.update(ref)
        }
        try await campus.refresh()
        return (relative, id)
    }

    /// Stud.IP 5.0.7's "add URL" dialog records 0 bytes whatever the host serves. A 0 means unknown: `cat` gets
    /// what the host sends (it failed with EIO: "Stud.IP sent 123316 bytes, the metadata says 0", refresh or not)
    /// and `stat` shows that length from the open on.
    @Test func aDocumentHostedElsewhereRecordedAsEmptyOpensWithWhatTheHostSends() async throws {
        try await MountedCampus.with(.generated(.small, seed: 1), flavour: .v55) { campus in
            let relative = try await Self.recordedAsEmpty(campus).relative
            #expect(try campus.store.resolve(path: relative).size == 0)
            let path = campus.path(relative)
            let read = try await shell("stat -c %s \(path) && cat \(path) | wc -c && stat -c %s \(path)")
            let served = String(ExternalHost.unrecordedLength)
            #expect(read.lines == ["0", served, served], "\(read.stderr)")
        }
    }

    /// The length the host sent outlives the cached copy: after `campusfs cache clean` `stat` still shows it (it
    /// showed 0 again), and the next refresh, which reports 0 from Stud.IP again, keeps it and calls nothing changed.
    @Test func theHostsLengthOutlivesTheCachedCopyAndTheNextRefresh() async throws {
        try await MountedCampus.with(.generated(.small, seed: 1), flavour: .v55) { campus in
            let (relative, id) = try await Self.recordedAsEmpty(campus)
            let path = campus.path(relative)
            let served = Int64(ExternalHost.unrecordedLength)
            #expect(try await shell("cat \(path) | wc -c").lines == [String(served)])
            // The open records the length and clears the `changed` the size-0 refresh gave, both a moment after.
            let recorded = try await MountHarness.settled(
                { try campus.store.resolve(path: relative).size }, until: { $0 == served })
            #expect(recorded == served)
            let highlight = try await MountHarness.settled(
                { try await campus.attribute("user.campusfs.highlight", of: relative) }, until: { $0 == nil })
            #expect(highlight == nil)

            let cleaned = await campus.mount.fileSystem.cache.clean(CleanRequest())
            #expect(cleaned.freedDocuments == 1)
            #expect(campus.mount.fileSystem.cache.cachedSize(of: id) == nil)
            // The kernel keeps attributes for a day; a remount, or any refresh that touches the node, asks again.
            var forgotten = RefreshSummary()
            forgotten.changedNodes = [try campus.store.resolve(path: relative).inode]
            campus.mount.apply(forgotten)
            #expect(try await shell("stat -c %s \(path)").lines == [String(served)])

            let report = try await campus.refresh()
            #expect(!report.summary.changed.contains { $0.studipID == id })
            #expect(try await campus.attribute("user.campusfs.highlight", of: relative) == nil)
            #expect(
                try await shell("stat -c %s \(path) && cat \(path) | wc -c").lines == [String(served), String(served)])
        }
    }

    /// A document of unknown size whose host sends more than the cache may hold fails with EFBIG ("File too
    /// large"), and nothing is cached; before, whatever the host sent was written.
    @Test func aHostThatSendsMoreThanTheCacheLimitFailsTheOpenWithEFBIG() async throws {
        let limit: Int64 = 100_000
        try await MountedCampus.with(
            .generated(.small, seed: 1), flavour: .v55, cache: ContentCacheConfiguration(sizeLimit: limit)
        ) { campus in
            #expect(Int64(ExternalHost.unrecordedLength) > limit)
            let (relative, id) = try await Self.recordedAsEmpty(campus)
            let script = """
                import errno, sys
                try:
                    with open(sys.argv[1], "rb") as f:
                        print(len(f.read()))
                except OSError as error:
                    print(errno.errorcode[error.errno])
                """
            let opened = try await shell("python3 -c \(quoted(script)) \(campus.path(relative))")
            #expect(opened.lines == ["EFBIG"], "\(opened.stderr)")
            #expect(campus.mount.fileSystem.cache.cachedSize(of: id) == nil)
            #expect(try campus.store.resolve(path: relative).size == 0)
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

extension MountedCampus {
    /// The mount-relative path of the (only) document with this Stud.IP name.
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
