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

    /// More blocking jobs than Swift's cooperative pool has threads, running at once: a task started meanwhile
    /// still runs at once, because no cooperative thread is blocked.
    @Test func blockingWorkLeavesTheCooperativePoolFree() async {
        let sleepers = ProcessInfo.processInfo.activeProcessorCount + 2
        let pool = BlockingPool(threads: sleepers, name: "test-block")
        let release = DispatchSemaphore(value: 0)
        let started = Shared(0)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<sleepers {
                group.addTask {
                    await pool.run {
                        started.update { $0 += 1 }
                        release.wait()
                    }
                }
            }
            while started.current < sleepers { await Task.yield() }
            let clock = ContinuousClock()
            let waited = await clock.measure { _ = await Task.detached { 1 }.value }
            #expect(waited < .milliseconds(200))
            for _ in 0..<sleepers { release.signal() }
        }
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
