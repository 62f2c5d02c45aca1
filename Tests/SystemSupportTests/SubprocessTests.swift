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
