import Glibc

/// `UTIME_NOW` and `UTIME_OMIT` from `<sys/stat.h>`: macros Swift does not import.
private let utimeNow = (1 << 30) - 1
private let utimeOmit = (1 << 30) - 2

/// An open file descriptor owned by an object, closed when the last handle or transfer using it goes away.
///
/// Tying `close` to `deinit` means a read can never race a release and hit a descriptor number the kernel has
/// already given to another file. Reads and writes use `pread`/`pwrite`, so sharing one descriptor between the
/// download (writing) and many readers needs no file-position lock.
final class Descriptor: Sendable {
    let fd: Int32
    let path: String

    private init(fd: Int32, path: String) {
        self.fd = fd
        self.path = path
    }

    deinit { close(fd) }

    static func open(_ path: String, flags: Int32, mode: mode_t = 0) throws(ContentCacheError) -> Descriptor {
        let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
        guard fd >= 0 else { throw .system("open", path: path, errno: errno) }
        return Descriptor(fd: fd, path: path)
    }

    /// Up to `count` bytes from `offset`; fewer at end of file, like `pread(2)`.
    func read(at offset: Int64, count: Int) throws(ContentCacheError) -> [UInt8] {
        var failure: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            guard let base = buffer.baseAddress else { return }
            while initialized < count {
                let n = pread(fd, base + initialized, count - initialized, off_t(offset) + off_t(initialized))
                if n > 0 {
                    initialized += n
                } else if n == 0 {
                    return
                } else if errno != EINTR {
                    failure = errno
                    return
                }
            }
        }
        guard failure == 0 else { throw .system("read", path: path, errno: failure) }
        return bytes
    }

    func write(_ bytes: [UInt8], at offset: Int64) throws(ContentCacheError) {
        var failure: Int32 = 0
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var done = 0
            while done < buffer.count {
                let n = pwrite(fd, base + done, buffer.count - done, off_t(offset) + off_t(done))
                if n >= 0 {
                    done += n
                } else if errno != EINTR {
                    failure = errno
                    return
                }
            }
        }
        guard failure == 0 else { throw .system("write", path: path, errno: failure) }
    }

    func sync() throws(ContentCacheError) {
        guard fsync(fd) == 0 else { throw .system("fsync", path: path, errno: errno) }
    }

    /// Sets the modification time to now: the blob's last access for LRU, kept across restarts without
    /// rewriting any metadata (atime is unreliable under `noatime`/`relatime`).
    func markAccessed() {
        let times = [timespec(tv_sec: 0, tv_nsec: utimeOmit), timespec(tv_sec: 0, tv_nsec: utimeNow)]
        _ = times.withUnsafeBufferPointer { futimens(fd, $0.baseAddress) }
    }
}
