import AsyncHTTPClient
import CampusFS
import ContentCache
import Daemon
import Foundation
import MetadataStore
import Refreshing
import StudIPKit
import TestSupport

@testable import StudIPSimulator

/// A simulator and a store refreshed from it: what the in-process filesystem tests and the mounts start from.
struct Campus: Sendable {
    let sim: Simulator
    let source: any DocumentSource
    let store: MetadataStore

    /// The document at `relative` (a path below the tree's root).
    func document(_ relative: String) throws -> DocumentInfo? {
        try store.document(inode: try store.resolve(path: relative).inode)
    }

    /// Starts the simulator, refreshes a temporary store from it as `user`, runs `body`, and stops everything.
    static func with(
        _ dataset: Dataset = .fixtures507, flavour: Flavour = .v50, user: String = "test_autor",
        _ body: (Campus) async throws -> Void
    ) async throws {
        try await withSimulator(dataset, flavour: flavour) { sim in
            let configuration = ClientConfiguration(
                baseURL: sim.baseURL, credentials: .basic(username: user, password: "testing"))
            try await withSource(configuration) { source in
                let store = try MetadataStore.temporary()
                _ = try await Refresher(source: source, store: store, options: TreeOptions()).refresh()
                try await body(Campus(sim: sim, source: source, store: store))
            }
        }
    }
}

extension Campus {
    /// Where the simulator serves the bytes a download of `documentID` must produce.
    func contentURL(_ documentID: String) -> String {
        sim.controlURL + "/documents/" + documentID + "/content"
    }

    /// The bytes a download of `documentID` must produce.
    func serverBytes(_ documentID: String) async throws -> [UInt8] {
        let request = HTTPClientRequest(url: contentURL(documentID))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 256 << 20)
        return Array(body.readableBytesView)
    }

    /// `CampusFileSystem` over this campus's store and a content cache in a fresh directory, for calling its
    /// operations directly (FUSEKitTesting's recording replies); the cache directory is removed afterwards.
    func withFileSystem(
        cache configuration: ContentCacheConfiguration = ContentCacheConfiguration(),
        _ body: (CampusFileSystem) async throws -> Void
    ) async throws {
        guard let downloader = source.downloader else { throw MountHarness.Failure.noDownloader }
        let directory = try temporaryDirectory("campusfs-cache")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = try ContentCache(directory: directory, downloader: downloader, configuration: configuration)
        try await body(CampusFileSystem(store: store, cache: cache))
    }
}
