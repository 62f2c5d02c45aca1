import Glibc
import SystemSupport

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
        BlockingPool.checkBlockingAllowed("open of \(path)")
        let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
        guard fd >= 0 else { throw .system("open", path: path, errno: errno) }
        return Descriptor(fd: fd, path: path)
    }

    /// Up to `count` bytes from `offset`; fewer at end of file, like `pread(2)`. Blocks: off the cooperative pool.
    func read(at offset: Int64, count: Int) throws(ContentCacheError) -> [UInt8] {
        BlockingPool.checkBlockingAllowed("pread of \(path)")
        var failure: SystemCallError?
        let bytes = [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            guard let base = buffer.baseAddress else { return }
            do throws(SystemCallError) {
                while initialized < count {
                    let n = try systemCall("pread") {
                        pread(fd, base + initialized, count - initialized, off_t(offset) + off_t(initialized))
                    }
                    guard n > 0 else { return }
                    initialized += n
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw .system("read", path: path, errno: failure.errno) }
        return bytes
    }

    /// Blocks: off the cooperative pool.
    func write(_ bytes: [UInt8], at offset: Int64) throws(ContentCacheError) {
        BlockingPool.checkBlockingAllowed("pwrite of \(path)")
        var failure: SystemCallError?
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var done = 0
            do throws(SystemCallError) {
                while done < buffer.count {
                    done += try systemCall("pwrite") {
                        pwrite(fd, base + done, buffer.count - done, off_t(offset) + off_t(done))
                    }
                }
            } catch {
                failure = error
            }
        }
        if let failure { throw .system("write", path: path, errno: failure.errno) }
    }

    /// `fsync`, or with `dataOnly` `fdatasync` (the bytes, not the timestamps: what a range map needs before it may
    /// claim them). Blocks: off the cooperative pool.
    func sync(dataOnly: Bool = false) throws(ContentCacheError) {
        let call = dataOnly ? "fdatasync" : "fsync"
        BlockingPool.checkBlockingAllowed("\(call) of \(path)")
        do throws(SystemCallError) {
            try systemCall(call) { dataOnly ? fdatasync(fd) : fsync(fd) }
        } catch {
            throw .system(call, path: path, errno: error.errno)
        }
    }

    /// Sets the modification time to now: the blob's last access for LRU, kept across restarts without
    /// rewriting any metadata (atime is unreliable under `noatime`/`relatime`).
    func markAccessed() {
        let times = [timespec(tv_sec: 0, tv_nsec: utimeOmit), timespec(tv_sec: 0, tv_nsec: utimeNow)]
        _ = times.withUnsafeBufferPointer { futimens(fd, $0.baseAddress) }
    }
}
