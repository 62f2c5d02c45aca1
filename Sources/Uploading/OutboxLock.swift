import Glibc
import SystemSupport

/// The one sender of a data directory's outbox across processes: the daemon and a daemon-less `campusfs upload`
/// open the same store, and two senders would each send an entry they both found queued (docs/writing.md, "The
/// outbox"). An exclusive `flock` on `outbox/.sender`, held while the instance lives; the kernel drops it when the
/// process dies, so a killed sender leaves no stale lock.
final class OutboxLock: Sendable {
    private let descriptor: Int32

    private init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit { close(descriptor) }

    /// The lock, or nil while another sender holds it. Blocks only for the `open`.
    static func acquire(in bytes: OutboxBytes) throws(OutboxError) -> OutboxLock? {
        BlockingPool.checkBlockingAllowed("locking \(bytes.directory.path)")
        try bytes.prepare()
        let path = bytes.directory.appendingPathComponent(".sender").path
        do throws(SystemCallError) {
            let descriptor = try systemCall("open") { open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600) }
            do throws(SystemCallError) {
                try systemCall("flock") { flock(descriptor, LOCK_EX | LOCK_NB) }
            } catch {
                close(descriptor)
                guard error.errno == EWOULDBLOCK else { throw error }
                return nil
            }
            return OutboxLock(descriptor: descriptor)
        } catch {
            throw .bytes(path: path, operation: "lock", detail: error.description)
        }
    }
}
