import Foundation
import SystemSupport
import Testing

@Suite struct SubprocessTests {
    /// A child that writes more to stderr than a pipe holds (64 KiB) before it ends stdout: read one after the
    /// other, the runner would wait for stdout's end while the child waits for stderr to drain, for ever.
    @Test func aChildFillingStderrFinishes() throws {
        let output = try Subprocess.run(
            URL(fileURLWithPath: "/usr/bin/timeout"),
            ["-k", "1", "10", "/bin/sh", "-c", "head -c 200000 /dev/zero | tr '\\0' x >&2; echo done"])
        #expect(output.status == 0)
        #expect(output.stdout == Data("done\n".utf8))
        #expect(output.stderr.count == 200_000)
    }

    /// Foundation's `Process.run()` crashes (SIGSEGV in its scan of `/proc/self/fd`) with about 1,400 descriptors
    /// open, as the test process has when its suites run in parallel: the same spawning with Foundation, eight
    /// threads at once, crashed here within seconds (not on every run: it needs the scan's buffer at the end of a
    /// heap). `posix_spawn` scans nothing. No child inherits one of them: only its standard streams (and `ls`'s own
    /// directory) are open.
    @Test func aProcessWithThousandsOfDescriptorsStartsChildrenThatInheritNone() async throws {
        let descriptors = (0..<1400).map { _ in open("/dev/null", O_RDONLY) }
        defer { for descriptor in descriptors where descriptor >= 0 { close(descriptor) } }
        #expect(descriptors.allSatisfy { $0 >= 0 })
        try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await BlockingPool.shared.run { () throws(SubprocessError) in
                        var listings: [String] = []
                        for _ in 0..<25 {
                            let output = try Subprocess.run(URL(fileURLWithPath: "/bin/ls"), ["/proc/self/fd"])
                            listings.append(String(decoding: output.stdout, as: UTF8.self))
                        }
                        return listings
                    }
                }
            }
            for try await listings in group { #expect(Set(listings) == ["0\n1\n2\n3\n"]) }
        }
    }

    /// The daemon ignores SIGPIPE and its threads block signals; a child must start with neither (pdftotext
    /// writing to a closed pipe ends, a password command's Ctrl-C works).
    @Test func aChildStartsWithNoBlockedAndNoIgnoredSignals() async throws {
        // Never restored: SwiftNIO ignores SIGPIPE in this whole process as soon as it opens a socket, and putting
        // back a default taken before that would let the next write to a closed socket kill the test run.
        signal(SIGPIPE, SIG_IGN)
        let status = try await withCheckedThrowingContinuation { continuation in
            Thread {
                var all = sigset_t()
                sigfillset(&all)
                pthread_sigmask(SIG_SETMASK, &all, nil)
                continuation.resume(
                    with: Result { () throws(SubprocessError) in
                        try Subprocess.run(
                            URL(fileURLWithPath: "/bin/grep"), ["^Sig[BI][lg][kn]:", "/proc/self/status"])
                    })
            }.start()
        }
        let masks = String(decoding: status.stdout, as: UTF8.self).split(separator: "\n").compactMap {
            UInt64($0.split(separator: "\t").last ?? "", radix: 16)
        }
        #expect(masks.count == 2)
        #expect(masks.first == 0, "no signal blocked")
        // Signals 32 and 33 (bits 31, 32) are glibc's own (thread cancellation, set*id); its posix_spawn leaves them ignored.
        #expect(masks.last.map { $0 & 0x7fff_ffff } == UInt64(0), "no standard signal ignored: \(masks)")
    }

    @Test func aMissingExecutableSaysWhich() {
        let error = #expect(throws: SubprocessError.self) {
            try Subprocess.run(URL(fileURLWithPath: "/nonexistent/tool"), [])
        }
        #expect(error?.description.hasPrefix("cannot start /nonexistent/tool: ") == true)
    }
}

@Suite struct SubprocessLimitsTests {
    @Test func theTimeLimitKillsTheChild() throws {
        let start = ContinuousClock.now
        let output = try Subprocess.run(
            URL(fileURLWithPath: "/bin/sleep"), ["10"], limits: .init(time: .milliseconds(200)))
        #expect(output.timedOut)
        #expect(output.signaled)
        #expect(ContinuousClock.now - start < .seconds(5))
    }

    @Test func theAddressSpaceLimitStopsAnAllocation() throws {
        let script = ["python3", "-c", "bytearray(400_000_000)"]
        let env = URL(fileURLWithPath: "/usr/bin/env")
        #expect(try Subprocess.run(env, script).status == 0)
        let output = try Subprocess.run(env, script, limits: .init(addressSpace: 200 << 20))
        #expect(output.status != 0)
        #expect(String(decoding: output.stderr, as: UTF8.self).contains("MemoryError"))
    }

    @Test func aLimitedMissingExecutableSaysWhich() {
        #expect(throws: SubprocessError.self) {
            try Subprocess.run(URL(fileURLWithPath: "/nonexistent/tool"), [], limits: .init(addressSpace: 1 << 30))
        }
    }
}
