import Foundation
import Glibc
import SystemSupport
import Testing

@Suite struct SystemCallTests {
    @Test func interruptedCallsAreRetried() throws {
        var calls = 0
        let result = try systemCall("read") { () -> Int in
            calls += 1
            let call = calls
            guard call > 2 else {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(result == 7)
        #expect(calls == 3)
    }

    @Test func failuresCarryTheCallAndErrno() {
        #expect(throws: SystemCallError(call: "close", errno: EBADF)) {
            try systemCall("close") { close(-1) }
        }
        #expect(SystemCallError(call: "close", errno: EBADF).description == "close: Bad file descriptor")
    }

    /// A real signal, delivered by a handler installed without `SA_RESTART` (as libfuse installs its own), to a
    /// thread blocked in `read(2)`: the read fails with `EINTR` once and is then retried until the byte arrives.
    @Test func aSignalDuringABlockedReadIsRetried() throws {
        var handler = sigaction()
        handler.__sigaction_handler.sa_handler = { _ in }
        handler.sa_flags = 0
        var previous = sigaction()
        try #require(sigaction(SIGUSR2, &handler, &previous) == 0)
        defer { sigaction(SIGUSR2, &previous, nil) }
        var descriptors: [Int32] = [-1, -1]
        try #require(pipe(&descriptors) == 0)
        let (readEnd, writeEnd) = (descriptors[0], descriptors[1])
        defer {
            close(readEnd)
            close(writeEnd)
        }
        let reader = Shared<pthread_t?>(nil)
        let calls = Shared(0)
        let outcome = Shared<Result<Int, SystemCallError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            // Threads started from a dispatch worker inherit its mask, which blocks SIGUSR2.
            var usr2 = sigset_t()
            sigemptyset(&usr2)
            sigaddset(&usr2, SIGUSR2)
            pthread_sigmask(SIG_UNBLOCK, &usr2, nil)
            reader.update { $0 = pthread_self() }
            var byte: UInt8 = 0
            let result = Result { () throws(SystemCallError) -> Int in
                try systemCall("read") { () -> Int in
                    calls.update { $0 += 1 }
                    return read(readEnd, &byte, 1)
                }
            }
            outcome.update { $0 = result }
            done.signal()
        }.start()
        try #require(wait { calls.current > 0 })
        usleep(100_000)
        let thread = try #require(reader.current)
        #expect(pthread_kill(thread, SIGUSR2) == 0)
        #expect(wait { calls.current > 1 }, "the signal did not interrupt the read")
        var byte: UInt8 = 42
        #expect(write(writeEnd, &byte, 1) == 1)
        try #require(done.wait(timeout: .now() + 5) == .success)
        #expect(try outcome.current?.get() == 1)
        #expect(calls.current == 2)
    }

    /// Polls `condition` for up to 5 s.
    private func wait(_ condition: () -> Bool) -> Bool {
        for _ in 0..<5_000 where !condition() { usleep(1_000) }
        return condition()
    }
}
