import Foundation
import Glibc
import SystemSupport
import Testing

@Suite struct BlockingPoolTests {
    @Test func workRunsOnThePoolsThreadsNotInATask() async {
        #expect(BlockingPool.isInTask)
        let pool = BlockingPool(threads: 2, name: "test-pool")
        let (inTask, name) = await pool.run { () -> (Bool, String) in
            (BlockingPool.isInTask, (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "")
        }
        #expect(!inTask)
        #expect(name.hasPrefix("test-pool-"))
    }

    /// A niced pool runs its jobs, and the children they start, at that nice value; the rest of the process keeps
    /// its own (the nice value is per thread on Linux).
    @Test func aNicedPoolLowersOnlyItsOwnThreadsAndTheirChildren() async throws {
        let pool = BlockingPool(threads: 1, name: "test-nice", niceness: 7)
        let (own, child) = try await pool.run { () throws(SubprocessError) -> (Int32, Data) in
            (
                getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0),
                try Subprocess.run(URL(fileURLWithPath: "/bin/sh"), ["-c", "cut -d' ' -f19 /proc/self/stat"]).stdout
            )
        }
        #expect(own == 7)
        #expect(String(decoding: child, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) == "7")
        #expect(getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) == 0)
    }

    /// More blocking jobs than Swift's cooperative pool has threads, running at once, each waiting for a task
    /// started after them: the task runs, because no cooperative thread is blocked. (Run on the cooperative pool,
    /// the jobs would hold every thread and time out after 10 s, the task never having run.)
    @Test func blockingWorkLeavesTheCooperativePoolFree() async {
        let sleepers = ProcessInfo.processInfo.activeProcessorCount + 2
        let pool = BlockingPool(threads: sleepers, name: "test-block")
        let release = DispatchSemaphore(value: 0)
        let started = Shared(0)
        let released = Shared(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<sleepers {
                group.addTask {
                    await pool.run {
                        started.update { $0 += 1 }
                        if release.wait(timeout: .now() + 10) == .success { released.update { $0 += 1 } }
                    }
                }
            }
            while started.current < sleepers { await Task.yield() }
            await Task.detached { for _ in 0..<sleepers { release.signal() } }.value
        }
        #expect(released.current == sleepers, "the jobs waited in vain for a task to run")
    }

    @Test func typedErrorsComeThrough() async {
        let pool = BlockingPool(threads: 1, name: "test-error")
        await #expect(throws: SystemCallError(call: "fsync", errno: EBADF)) {
            try await pool.run { () throws(SystemCallError) in try systemCall("fsync") { fsync(-1) } }
        }
    }

    /// A cancelled caller still gets its job run, to the end, exactly once.
    @Test func cancellationDoesNotSkipQueuedWork() async {
        let pool = BlockingPool(threads: 1, name: "test-cancel")
        let blocker = DispatchSemaphore(value: 0)
        let blocking = Shared(false)
        let runs = Shared(0)
        let first = Task {
            await pool.run {
                blocking.update { $0 = true }
                blocker.wait()
            }
        }
        while !blocking.current { try? await Task.sleep(for: .milliseconds(1)) }
        let queued = Task { () -> (Int, Bool) in
            let value = await pool.run {
                runs.update { $0 += 1 }
                return 5
            }
            return (value, Task.isCancelled)
        }
        try? await Task.sleep(for: .milliseconds(50))
        queued.cancel()
        blocker.signal()
        await first.value
        let (value, sawCancellation) = await queued.value
        #expect(value == 5)
        #expect(sawCancellation)
        #expect(runs.current == 1)
    }
}
