import Foundation
import Synchronization
import SystemSupport

/// The fallback for a desktop without a Secret Service: one JSON file, mode 0600 in a 0700 directory, replaced
/// atomically (``AtomicFile``: a new 0600 file, `fsync`, `rename`), so it is never readable by others and never half written.
struct SecretFile: Sendable {
    let url: URL

    /// One read-modify-write at a time within the process (the CLI's `login` and a daemon are separate processes,
    /// and each writes once per login).
    private static let lock = Mutex(())

    private struct Entry: Codable {
        var profile: String
        var server: String
        var kind: String
        var secret: String

        func matches(_ key: SecretKey) -> Bool {
            profile == key.profile && server == key.server && kind == key.kind.rawValue
        }
    }

    private struct Contents: Codable {
        var version = 1
        var secrets: [Entry] = []
    }

    func load(_ key: SecretKey) throws(SecretStoreError) -> String? {
        try Self.lock.withLock { _ throws(SecretStoreError) in
            try read().secrets.first { $0.matches(key) }?.secret
        }
    }

    func save(_ secret: String, for key: SecretKey) throws(SecretStoreError) {
        try Self.lock.withLock { _ throws(SecretStoreError) in
            var contents = try read()
            contents.secrets.removeAll { $0.matches(key) }
            contents.secrets.append(
                Entry(profile: key.profile, server: key.server, kind: key.kind.rawValue, secret: secret))
            try write(contents)
        }
    }

    /// Removes the entries whose key `matches`; returns how many. Leaves the file alone when none does.
    func delete(where matches: (SecretKey) -> Bool) throws(SecretStoreError) -> Int {
        try Self.lock.withLock { _ throws(SecretStoreError) in
            var contents = try read()
            let before = contents.secrets.count
            contents.secrets.removeAll { entry in
                SecretKind(rawValue: entry.kind).map {
                    matches(SecretKey(profile: entry.profile, server: entry.server, kind: $0))
                } ?? false
            }
            let removed = before - contents.secrets.count
            if removed > 0 { try write(contents) }
            return removed
        }
    }

    private func read() throws(SecretStoreError) -> Contents {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch CocoaError.fileReadNoSuchFile {
            return Contents()
        } catch {
            throw SecretStoreError("cannot read \(url.path): \(error.localizedDescription)")
        }
        // The decoder's own message may quote the file's bytes, which are secrets: say only what is wrong.
        guard let contents = try? JSONDecoder().decode(Contents.self, from: data) else {
            throw SecretStoreError(
                "\(url.path) is not a CampusFS secrets file; move it away and run `campusfs login` again")
        }
        return contents
    }

    private func write(_ contents: Contents) throws(SecretStoreError) {
        let directory = url.deletingLastPathComponent()
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        guard let data = try? encoder.encode(contents) else {
            throw SecretStoreError("cannot encode the secrets for \(url.path)")
        }
        try Self.makePrivateDirectory(directory)
        do throws(AtomicFileError) {
            try AtomicFile.replace(url, with: data, mode: 0o600)
        } catch {
            throw SecretStoreError(error.description)
        }
    }

    /// Creates `directory` (and missing parents) 0700, and takes group and others' access away from an existing
    /// one: `$XDG_DATA_HOME/campusfs` holds the user's stores too, which are nobody else's business either.
    private static func makePrivateDirectory(_ directory: URL) throws(SecretStoreError) {
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw SecretStoreError("cannot create \(directory.path): \(error.localizedDescription)")
        }
        var status = stat()
        guard stat(directory.path, &status) == 0 else { throw failure("stat", directory, errno) }
        if status.st_mode & 0o077 != 0, chmod(directory.path, 0o700) != 0 {
            throw failure("make private (chmod 700)", directory, errno)
        }
    }

    private static func failure(_ operation: String, _ path: URL, _ code: Int32) -> SecretStoreError {
        SecretStoreError("cannot \(operation) \(path.path): \(String(cString: strerror(code)))")
    }
}
