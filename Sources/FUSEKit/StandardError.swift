import Glibc
import Synchronization

/// Captures what a libfuse call and the helpers it runs (`fusermount3`) write to standard error.
///
/// Descriptor 2 points at an unlinked temporary file for the call, not a pipe: a helper that outlives the call
/// keeps its copy of the descriptor, and later writes must neither block nor kill it with SIGPIPE. What was
/// captured is written to the real standard error afterwards as well, so the log still has it.
///
/// One capture at a time: descriptor 2 is the process's, and two overlapping captures (sessions mounting at once,
/// as in-process tests do) would each restore what the other had swapped in, leaving standard error pointing at an
/// unlinked file for good (a whole `swift test` run's results vanished that way).
enum StandardError {
    private static let oneAtATime = Mutex(())

    static func capturing<T: Sendable>(_ body: () -> T) -> (T, String) {
        oneAtATime.withLock { _ in swapped(body) }
    }

    private static func swapped<T>(_ body: () -> T) -> (T, String) {
        var template = Array("/tmp/campusfs-stderr-XXXXXX".utf8CString)
        let file = mkstemp(&template)
        if file >= 0 {
            unlink(template)
            _ = fcntl(file, F_SETFD, FD_CLOEXEC)
        }
        let saved = file >= 0 ? dup(STDERR_FILENO) : -1
        guard saved >= 0, dup2(file, STDERR_FILENO) >= 0 else {
            if file >= 0 { close(file) }
            if saved >= 0 { close(saved) }
            return (body(), "")
        }
        let result = body()
        dup2(saved, STDERR_FILENO)
        close(saved)
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = pread(file, &bytes, bytes.count, 0)
        close(file)
        guard count > 0 else { return (result, "") }
        _ = write(STDERR_FILENO, bytes, count)
        let lines = String(decoding: bytes[..<count], as: UTF8.self).split(whereSeparator: \.isNewline)
        return (result, lines.joined(separator: "; "))
    }
}
