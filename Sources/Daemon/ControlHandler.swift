import ContentCache
import ContentIndexing
import ControlProtocol
import Foundation
import Logging
import MetadataStore
import Refreshing
import StudIPKit
import StudIPModel

/// The daemon's answers to the control socket's requests (docs/mount.md, "Control socket"); the socket itself is
/// ``ControlServer``'s.
struct ControlHandler: Sendable {
    let store: MetadataStore
    let link: ServerLink
    let cache: ContentCache
    let indexer: ContentIndexer
    let refreshes: RefreshCoordinator
    let reporter: StatusReporter
    /// The outbox's requests; nil when the profile's uploads are off.
    let uploads: UploadDesk?
    /// Where refreshed OAuth2 tokens of a login handed over go (the keyring).
    let tokenStorage: (any TokenStorage)?
    /// Ends the mount; returns at once.
    let unmount: @Sendable () -> Void
    let logger: Logger

    func handle(_ request: ControlRequest) async -> ControlResponse {
        switch request {
        case .status:
            return ControlResponse(status: await reporter.status())
        case .unmount:
            logger.info("unmount requested")
            unmount()
            return .ok
        case .refresh(let path):
            return await refresh(below: path)
        case .login(let given):
            guard given.isComplete else { return .failure("the login message is incomplete", exitCode: 4) }
            do throws(StudIPError) {
                try await link.use(given.credentials(storage: tokenStorage))
            } catch {
                return .failure(error.description, exitCode: error.exitCode)
            }
            logger.info("new login accepted")
            // What changed while the login was refused shows without waiting for the poller.
            Task { [refreshes] in _ = await refreshes.refresh() }
            return ControlResponse(status: await reporter.status())
        case .logout:
            await link.logOut()
            logger.info("logged out")
            return ControlResponse(status: await reporter.status())
        case .checkLogin:
            await link.checkLogin()
            return ControlResponse(status: await reporter.status())
        case .cache:
            let inventory = await cache.inventory()
            do throws(StoreError) {
                let pins = try await store.run { store throws(StoreError) in try store.pinnedItems() }
                return ControlResponse(cache: CacheReport(inventory: inventory, pinnedItems: pins))
            } catch {
                return .failure(error.description, exitCode: 4)
            }
        case .cleanCache(let path, let olderThan):
            // The daemon cleans, not the command: only it knows which documents are open.
            let targets: (below: Set<String>?, pinned: Set<String>)
            do throws(StoreError) {
                targets = try await store.run { store throws(StoreError) in try store.cleaningTargets(below: path) }
            } catch {
                return .failure("\(path ?? "/"): \(error)", exitCode: 1)
            }
            return ControlResponse(clean: await cache.clean(CleanRequest(targets, olderThan: olderThan)))
        case .progress(let documents):
            return ControlResponse(progress: await cache.inventory().progress(of: documents))
        case .index(let rebuild):
            if rebuild {
                do throws(StoreError) {
                    let queued = try await indexer.rebuild(from: await cache.inventory())
                    logger.info("rebuilding the search index from \(queued) cached documents")
                } catch {
                    return .failure(error.description, exitCode: 4)
                }
            }
            guard let index = await reporter.indexStatus(measuringSize: true) else {
                return .failure("the search index cannot be read (see the daemon's log)", exitCode: 4)
            }
            return ControlResponse(index: index)
        case .outbox, .retryOutbox, .discardOutbox, .upload, .outboxEntry:
            guard let uploads else { return .failure(Self.uploadsOff, exitCode: 1) }
            return await uploads.handle(request)
        }
    }

    /// What a request about the outbox gets from a mount whose profile does not upload.
    static let uploadsOff =
        "uploads are off for this profile: set uploads = true in its section of config.toml, then remount "
        + "(docs/writing.md)"

    /// `campusfs refresh [PATH]`: the courses below `path` (all without one), and the next open of each of their
    /// cached documents asks the server.
    private func refresh(below path: String?) async -> ControlResponse {
        let courseIDs: Set<String>?
        do throws(StoreError) {
            courseIDs = try await store.run { store throws(StoreError) in try store.courseIDs(below: path) }
        } catch {
            return .failure("\(path ?? "/"): \(error)", exitCode: 1)
        }
        switch await refreshes.refresh(courseIDs: courseIDs) {
        case .success(let report):
            await refreshes.revalidateOnOpen(courseIDs: courseIDs)
            return ControlResponse(refresh: RefreshOutcome(report))
        case .failure(let error): return .failure(error.description, exitCode: error.exitCode)
        }
    }
}
