import Foundation
import MetadataStore

/// Opens a profile's metadata store for the commands that only read it (`ls`, `tree`).
enum ProfileStore {
    /// `readOnly`: without a write or a migration while the schema is current (``MetadataStore/readOnly(path:)``),
    /// for a command that never writes (`search`); an older store is migrated first, as by any command.
    static func open(_ profile: String, paths: Paths = Paths(), readOnly: Bool = false) throws(CLIError)
        -> MetadataStore
    {
        let url = paths.database(profile: profile)
        guard FileManager.default.fileExists(atPath: url.path) else { throw try nothingKnown(profile, paths: paths) }
        let store: MetadataStore
        let synced: Bool
        do throws(StoreError) {
            if readOnly, let current = try MetadataStore.readOnly(path: url.path) {
                store = current
            } else {
                store = try MetadataStore(path: url.path)
            }
            synced = try store.syncState().lastOverviewAt != nil
        } catch {
            throw .other(error.description)
        }
        guard synced else { throw try nothingKnown(profile, paths: paths) }
        return store
    }

    /// Why a profile without a stored tree has none: a name the config file does not know (a typo), or a profile
    /// never refreshed, with the command that refreshes this one.
    private static func nothingKnown(_ profile: String, paths: Paths) throws(CLIError) -> CLIError {
        let file = try ConfigFile.load(from: paths.configFile)
        let defaultName = file.defaultProfile ?? "default"
        if file.profiles[profile] == nil, profile != defaultName {
            return ProfileOptions.unknown(profile, paths: paths, serverOptions: false)
        }
        let option = profile == defaultName ? "" : " --profile \(profile)"
        return .usage("nothing known about profile \"\(profile)\" yet: run `campusfs refresh\(option)` first")
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
