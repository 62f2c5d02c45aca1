import CFuse3
import Glibc
import Synchronization
import SystemSupport

/// The write end of the pipe signal handlers report to; -1 while no watcher is installed. Global because a
/// signal handler has no context argument; an atomic load and `write(2)` are async-signal-safe.
private let signalPipe = Atomic<Int32>(-1)

/// Reports a termination signal to the watcher thread.
private func forwardSignal(_ signal: Int32) {
    let descriptor = signalPipe.load(ordering: .acquiring)
    guard descriptor >= 0 else { return }
    let savedErrno = errno
    var byte = UInt8(truncatingIfNeeded: signal)
    _ = write(descriptor, &byte, 1)
    errno = savedErrno
}

/// Installs handlers for termination signals and runs `onSignal` on a dedicated thread when one arrives.
final class TerminationSignalWatcher: Sendable {
    private let signals: [Int32]
    private let writeEnd: Int32

    init(signals: [Int32], onSignal: @escaping @Sendable () -> Void) throws(FUSEKitError) {
        var descriptors: [Int32] = [-1, -1]
        guard pipe(&descriptors) == 0 else { throw .signalSetupFailed(errno: errno) }
        let (readEnd, writeEnd) = (descriptors[0], descriptors[1])
        _ = fcntl(readEnd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(writeEnd, F_SETFD, FD_CLOEXEC)
        guard signalPipe.compareExchange(expected: -1, desired: writeEnd, ordering: .acquiringAndReleasing).exchanged
        else {
            close(readEnd)
            close(writeEnd)
            throw .signalSetupFailed(errno: EBUSY)
        }
        self.signals = signals
        self.writeEnd = writeEnd
        let started = startThread {
            var byte: UInt8 = 0
            while let count = try? systemCall("read", { read(readEnd, &byte, 1) }), count == 1, byte != 0 {
                log(FUSE_LOG_INFO, "signal \(byte) received, unmounting")
                onSignal()
            }
            close(readEnd)
        }
        guard started else {
            signalPipe.store(-1, ordering: .releasing)
            close(readEnd)
            close(writeEnd)
            throw .signalSetupFailed(errno: EAGAIN)
        }
        for signal in signals where cfuse_install_signal_handler(signal, { forwardSignal($0) }, 1) != 0 {
            let failure = errno
            stop()
            throw .signalSetupFailed(errno: failure)
        }
    }

    /// Restores the default dispositions and ends the watcher thread (a 0 byte).
    func stop() {
        for signal in signals { cfuse_reset_signal_handler(signal) }
        guard signalPipe.compareExchange(expected: writeEnd, desired: -1, ordering: .acquiringAndReleasing).exchanged
        else { return }
        var byte: UInt8 = 0
        _ = write(writeEnd, &byte, 1)
        close(writeEnd)
    }
}
