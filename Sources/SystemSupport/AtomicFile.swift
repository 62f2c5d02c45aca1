import Foundation

/// Why a file could not be replaced: the operation and the system's reason, with the path.
public struct AtomicFileError: Error, Sendable, CustomStringConvertible {
    public let description: String
}

/// Replacing a small file so that readers see the old contents or the new, never half of either, and never a
/// moment in which others may read it: a new file created `mode` with `O_EXCL`, written and `fsync`ed, renamed over
/// the old one, and the directory `fsync`ed so the rename survives a crash. A symlink is followed: the file it
/// points to is replaced and the link stays (a dotfile repository's `config.toml`).
public enum AtomicFile {
    public static func replace(_ url: URL, with data: Data, mode: mode_t = 0o600) throws(AtomicFileError) {
        let target = url.resolvingSymlinksInPath()
        let directory = target.deletingLastPathComponent()
        let temporary = directory.appendingPathComponent(".\(target.lastPathComponent).\(getpid()).tmp")
        // O_EXCL after removing a leftover of a crashed write: the file is created `mode` by this call, never reused.
        unlink(temporary.path)
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else { throw failure("create", temporary, errno) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        do {
            try handle.write(contentsOf: data)
            try handle.synchronize()
            try handle.close()
        } catch {
            unlink(temporary.path)
            throw AtomicFileError(description: "cannot write \(temporary.path): \(error.localizedDescription)")
        }
        guard rename(temporary.path, target.path) == 0 else {
            let code = errno
            unlink(temporary.path)
            throw failure("rename to \(target.path)", temporary, code)
        }
        let directoryDescriptor = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryDescriptor >= 0 {
            fsync(directoryDescriptor)
            close(directoryDescriptor)
        }
    }

    private static func failure(_ operation: String, _ path: URL, _ code: Int32) -> AtomicFileError {
        AtomicFileError(description: "cannot \(operation) \(path.path): \(String(cString: strerror(code)))")
    }
}
