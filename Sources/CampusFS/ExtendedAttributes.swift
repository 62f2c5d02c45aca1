import ContentCache
import FUSEKit
import Foundation
import Glibc
import MetadataStore

/// The extended attributes of docs/mount.md, "Extended attributes and pins" (list: README.md): what Dolphin,
/// `getfattr`, scripts and the CLI read and write.
public enum CampusAttribute: String, CaseIterable, Sendable {
    case tags = "user.xdg.tags"
    case rating = "user.baloo.rating"
    case comment = "user.xdg.comment"
    case originURL = "user.xdg.origin.url"
    case highlight = "user.campusfs.highlight"
    case newBelow = "user.campusfs.new"
    case state = "user.campusfs.state"
    case pinned = "user.campusfs.pinned"
    case id = "user.campusfs.id"
    case owner = "user.campusfs.owner"
    case license = "user.campusfs.license"
    case mimeType = "user.mime_type"

    var isWritable: Bool {
        switch self {
        case .tags, .rating, .highlight, .pinned: true
        default: false
        }
    }

    /// The value shown for a node; nil when the attribute is absent (`ENODATA`). `user.campusfs.state` needs the
    /// content cache and is answered by the filesystem.
    func value(of info: NodeInfo) -> String? {
        let document = info.document
        switch self {
        case .tags: return info.user.tags.isEmpty ? nil : info.user.tags.joined(separator: ",")
        case .rating: return info.user.rating == 0 ? nil : String(info.user.rating)
        case .comment: return info.description.isEmpty ? nil : info.description
        case .originURL: return info.webURL.isEmpty ? nil : info.webURL
        case .highlight: return info.highlight?.rawValue
        case .newBelow: return info.node.kind == .directory ? String(info.node.highlightedBelow) : nil
        case .state: return nil
        case .pinned: return info.user.pinned ? "1" : nil
        case .id:
            // A course's folder of announcements, its calendar and a semester's timetable are CampusFS's, not
            // Stud.IP objects: the course or semester id they are stored under is no id of theirs.
            return [.announcements, .courseCalendar, .timetable].contains(info.node.item) ? nil : info.node.studipID
        case .owner: return document.flatMap { $0.ownerName.isEmpty ? nil : $0.ownerName }
        case .license: return document.flatMap { $0.license.isEmpty ? nil : $0.license }
        case .mimeType: return document?.mimeType
        }
    }

    /// Whether `listxattr` names the attribute: only what means the same on a copy — the user's tags and rating,
    /// Stud.IP's description and where the item came from (the freedesktop names desktops show). `cp -a`,
    /// `rsync -X` and file managers copy every listed `user.*` name, and CampusFS's own (the cache state, the
    /// highlight, the pin, Stud.IP's ids, the MIME type Stud.IP guessed) mean nothing on a local disk; they answer
    /// `getxattr` by name all the same (docs/mount.md, "Copying out of the mount").
    var isListed: Bool {
        switch self {
        case .tags, .rating, .comment, .originURL: true
        default: false
        }
    }

    /// The attributes `listxattr` names for a node: the listed ones it has.
    static func names(of info: NodeInfo) -> [String] {
        allCases.filter { $0.isListed && $0.value(of: info) != nil }.map(\.rawValue)
    }
}

/// Why a write to an attribute is refused, as the errno the caller sees.
private struct AttributeRefusal: Error {
    let errorNumber: Int32
}

extension CampusFileSystem {
    // MARK: - Reading

    /// `security.*` and `system.*` (asked on every `ls -l`) and unknown `user.*` names are answered from memory;
    /// only the names CampusFS keeps (README.md, "Tags, highlights and pins") reach the store.
    public func getExtendedAttribute(_ inode: Inode, name: String, reply: ExtendedAttributeReply) {
        guard let attribute = CampusAttribute(rawValue: name) else {
            reply.error(Self.isKnownNamespace(name) ? ENODATA : ENOTSUP)
            return
        }
        counters.countAttributeRead()
        // A draft has only its state (docs/writing.md): editing, queued, handed-in, failed.
        if let draft = writer?.workspace.draft(inode: Int64(inode)) {
            return attribute == .state ? reply.value(Array(draft.state.rawValue.utf8)) : reply.error(ENODATA)
        }
        let info: NodeInfo
        do throws(StoreError) {
            guard let found = try store.info(inode: Int64(inode)) else { return reply.error(ENOENT) }
            info = found
        } catch {
            return reply.error(EIO)
        }
        if attribute == .state {
            guard let document = info.document else { return reply.error(ENODATA) }
            let wanted = CacheDocument(id: document.id, version: document.version)
            Task { [cache] in
                let state = await cache.state(of: wanted.id, currentVersion: wanted.version)
                reply.value(Array(state.rawValue.utf8))
            }
            return
        }
        guard let value = attribute.value(of: info) else { return reply.error(ENODATA) }
        reply.value(Array(value.utf8))
    }

    public func listExtendedAttributes(_ inode: Inode, reply: ExtendedAttributeNamesReply) {
        counters.countAttributeRead()
        if writer?.workspace.draft(inode: Int64(inode)) != nil { return reply.names([CampusAttribute.state.rawValue]) }
        do throws(StoreError) {
            guard let info = try store.info(inode: Int64(inode)) else { return reply.error(ENOENT) }
            reply.names(CampusAttribute.names(of: info))
        } catch {
            reply.error(EIO)
        }
    }

    // MARK: - Writing

    /// Writes are durable in the store before the reply. Only the writable attributes (README.md, "Tags, highlights and
    /// pins") are accepted: others are `EPERM` (read-only) or `ENOTSUP` (names CampusFS does not keep).
    public func setExtendedAttribute(
        _ inode: Inode, name: String, value: [UInt8], mode: ExtendedAttributeMode, reply: StatusReply
    ) {
        guard let attribute = CampusAttribute(rawValue: name) else { return reply.error(ENOTSUP) }
        guard attribute.isWritable else { return reply.error(EPERM) }
        do {
            guard let info = try store.info(inode: Int64(inode)) else { return reply.error(ENOENT) }
            let exists = attribute.value(of: info) != nil
            if mode == .create, exists { return reply.error(EEXIST) }
            if mode == .replace, !exists { return reply.error(ENODATA) }
            let text = String(decoding: value, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            try write(attribute, text, info: info)
            reply.ok()
        } catch let refusal as AttributeRefusal {
            reply.error(refusal.errorNumber)
        } catch let error as StoreError {
            reply.error(Self.errorNumber(error))
        } catch {
            reply.error(EIO)
        }
    }

    public func removeExtendedAttribute(_ inode: Inode, name: String, reply: StatusReply) {
        guard let attribute = CampusAttribute(rawValue: name) else {
            return reply.error(Self.isKnownNamespace(name) ? ENODATA : ENOTSUP)
        }
        guard attribute.isWritable else { return reply.error(EPERM) }
        do throws(StoreError) {
            guard let info = try store.info(inode: Int64(inode)) else { return reply.error(ENOENT) }
            guard attribute.value(of: info) != nil else { return reply.error(ENODATA) }
            let node = Int64(inode)
            switch attribute {
            case .tags: showInTagView(try store.setTags([], inode: node))
            case .rating: try store.setRating(0, inode: node)
            case .highlight: try store.setFlagged(false, inode: node)
            case .pinned:
                try store.setPinned(false, inode: node)
                try repeatPins(below: info, pinned: false)
            default: break
            }
            reply.ok()
        } catch {
            reply.error(Self.errorNumber(error))
        }
    }

    private func write(_ attribute: CampusAttribute, _ text: String, info: NodeInfo) throws {
        let inode = info.node.inode
        switch attribute {
        case .tags:
            showInTagView(
                try store.setTags(
                    text.split(separator: ",", omittingEmptySubsequences: false).map(String.init), inode: inode))
        case .rating:
            guard let rating = Int(text), (0...10).contains(rating) else { throw AttributeRefusal(errorNumber: EINVAL) }
            try store.setRating(rating, inode: inode)
        case .highlight:
            guard text == Highlight.flagged.rawValue, info.document != nil else {
                throw AttributeRefusal(errorNumber: EINVAL)
            }
            try store.setFlagged(true, inode: inode)
        case .pinned:
            guard text == "1" else { throw AttributeRefusal(errorNumber: EINVAL) }
            try store.setPinned(true, inode: inode)
            try repeatPins(below: info, pinned: true)
        default:
            throw AttributeRefusal(errorNumber: EPERM)
        }
    }

    // MARK: - Pins

    /// Tells the content cache about a pin or unpin of `info` and everything below it, and downloads what a pin
    /// covers at once, in the background (the `setxattr` has returned by then). A document below an unpinned
    /// folder stays pinned when another pin above it remains.
    func repeatPins(below info: NodeInfo, pinned: Bool) throws(StoreError) {
        var documents: [(inode: Int64, document: DocumentInfo)] = []
        if let document = info.document {
            documents = [(info.node.inode, document)]
        } else if info.node.kind == .directory {
            for entry in try store.walk(from: info.node.inode) where entry.node.kind == .file {
                if let document = try store.document(inode: entry.node.inode) {
                    documents.append((entry.node.inode, document))
                }
            }
        }
        if !pinned {
            var unpinned: [(inode: Int64, document: DocumentInfo)] = []
            for entry in documents where try !store.isPinnedOrBelowAPin(inode: entry.inode) { unpinned.append(entry) }
            documents = unpinned
        }
        pinInCache(documents.map(\.document), pinned: pinned)
    }

    /// At start: the cache learns the pins kept in the store, and fetches pinned documents it lacks.
    public func restorePins() throws(StoreError) {
        var documents: [DocumentInfo] = []
        for inode in try store.pinnedDocumentInodes() {
            if let document = try store.document(inode: inode) { documents.append(document) }
        }
        pinInCache(documents, pinned: true)
    }

    private func pinInCache(_ documents: [DocumentInfo], pinned: Bool) {
        guard !documents.isEmpty else { return }
        Task { [cache, logger] in
            for document in documents { await cache.setPinned(document.id, pinned) }
            guard pinned else { return }
            for document in documents where document.isDownloadable {
                do throws(ContentCacheError) {
                    try await cache.prefetch(CacheDocument(id: document.id, version: document.version))
                } catch {
                    logger.warning("cannot download pinned document \(document.id): \(error)")
                }
            }
        }
    }

    // MARK: - Helpers

    private static func isKnownNamespace(_ name: String) -> Bool {
        name.hasPrefix("user.") || name.hasPrefix("security.") || name.hasPrefix("system.")
    }

    private static func errorNumber(_ error: StoreError) -> Int32 {
        switch error {
        case .invalidTag, .invalidRating, .notADocument: EINVAL
        case .notAnItem: EPERM
        case .noSuchNode: ENOENT
        case .diskFull: ENOSPC
        case .tagsTooLong: E2BIG
        default: EIO
        }
    }
}
