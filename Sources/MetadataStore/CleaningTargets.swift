import Foundation

extension MetadataStore {
    /// What `campusfs cache clean [PATH]` may remove: the ids of the documents below `path` (nil, empty or `/`:
    /// nil, every document), and the ids of every pinned document, which it spares.
    public func cleaningTargets(below path: String?) throws(StoreError) -> (below: Set<String>?, pinned: Set<String>) {
        var pinned: Set<String> = []
        for inode in try pinnedDocumentInodes() {
            if let document = try document(inode: inode) { pinned.insert(document.id) }
        }
        let trimmed = (path ?? "").trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        guard !trimmed.isEmpty else { return (nil, pinned) }
        var below: Set<String> = []
        for entry in try walk(from: try resolve(path: trimmed).inode) where entry.node.kind == .file {
            if let document = try document(inode: entry.node.inode) { below.insert(document.id) }
        }
        return (below, pinned)
    }
}
