import Foundation

/// The way a new version reaches Stud.IP. The paths change different fields, and clients revalidate with those
/// fields (captured from Stud.IP 5.0.7: `fixtures-5.0.7-more`, Part 2).
enum UploadPath: String, Sendable, CaseIterable {
    /// The web UI's "update file" (`dispatch.php/file/update/{id}`).
    case web
    /// JSON:API `POST file-refs/{id}/content`.
    case jsonapi
    /// Legacy REST `POST file/{id}/update`.
    case rest
}

extension FileRef {
    /// Stores new bytes as Stud.IP does for `path`, `time` being the server's clock.
    ///
    /// The web UI and legacy REST store a new `files` row: new file id and inode, every date = `time`. JSON:API
    /// overwrites the stored bytes in place: file id, inode and the file-ref's `chdate` stay; the row's `chdate`
    /// and size change only if the size does; only the mtime always changes.
    mutating func storeVersion(_ content: Content, size: Int, via path: UploadPath, at time: Int) {
        switch path {
        case .web, .rest:
            fileID = PHP.newID()
            inode = Self.inode(of: fileID)
            chdate = time
            fileMkdate = time
            fileChdate = time
        case .jsonapi:
            if size != self.size { fileChdate = time }
        }
        fileMtime = time
        self.size = size
        self.content = content
    }

    /// A seven-digit pseudo inode (FNV-1a of the file id), stable across runs.
    static func inode(of fileID: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in fileID.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return 1_000_000 + hash % 9_000_000
    }
}
