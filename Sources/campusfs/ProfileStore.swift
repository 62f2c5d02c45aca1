import Foundation
import MetadataStore

/// Opens a profile's metadata store for the commands that only read it (`ls`, `tree`).
enum ProfileStore {
    static func open(_ profile: String, paths: Paths = Paths()) throws(CLIError) -> MetadataStore {
        let url = paths.database(profile: profile)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw .usage("nothing known about profile \"\(profile)\" yet: run `campusfs refresh` first")
        }
        let store: MetadataStore
        let synced: Bool
        do throws(StoreError) {
            store = try MetadataStore(path: url.path)
            synced = try store.syncState().lastOverviewAt != nil
        } catch {
            throw .other(error.description)
        }
        guard synced else {
            throw .usage("nothing known about profile \"\(profile)\" yet: run `campusfs refresh` first")
        }
        return store
    }

    /// The store's node for a path given on the command line ("" or "/" is the root).
    static func node(_ path: String?, in store: MetadataStore) throws(CLIError) -> Node {
        let trimmed = (path ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        do {
            return try store.resolve(path: trimmed)
        } catch {
            throw .usage("\(path ?? "/"): \(error)")
        }
    }

    static func path(of node: Node, in store: MetadataStore) throws(CLIError) -> String {
        do {
            return try store.path(of: node.inode) ?? ""
        } catch {
            throw .other(error.description)
        }
    }
}
