import Testing

@testable import AsyncHelpers

@Suite("ConcurrencyLimiter")
struct ConcurrencyLimiterTests {
    @Test func neverMoreHoldersThanTheLimit() async {
        let limiter = ConcurrencyLimiter(limit: 3)
        let gauge = Gauge()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<20 {
                group.addTask {
                    _ = await limiter.withSlot { () async -> Void in
                        gauge.enter()
                        try? await Task.sleep(for: .milliseconds(2))
                        gauge.leave()
                    }
                }
            }
        }
        #expect(gauge.maximum == 3)
    }

    @Test func waitersAreServedInTheOrderTheyCame() async {
        let limiter = ConcurrencyLimiter(limit: 1)
        #expect(await limiter.acquire())
        let order = Log<Int>()
        var waiters: [Task<Void, Never>] = []
        for number in 0..<6 {
            waiters.append(
                Task {
                    _ = await limiter.withSlot { () async -> Void in order.append(number) }
                })
            #expect(await eventually { await limiter.waiting == number + 1 })
        }
        await limiter.release()
        for waiter in waiters { await waiter.value }
        #expect(order.values == Array(0..<6))
    }

    /// The cancelled waiter must leave the queue: were it still there, the release would hand the slot to a task
    /// that no longer wants it, and the next one would wait for ever.
    @Test func aCancelledWaiterLeaksNoSlot() async {
        let limiter = ConcurrencyLimiter(limit: 1)
        #expect(await limiter.acquire())
        let ran = Counter()
        let cancelled = Task { await limiter.withSlot { () async -> Int in ran.increment() } }
        #expect(await eventually { await limiter.waiting == 1 })
        cancelled.cancel()
        #expect(await within { await cancelled.value } == .some(nil), "a cancelled waiter stops waiting, gets nil")
        #expect(await limiter.waiting == 0)
        await limiter.release()

        #expect(await within { await limiter.withSlot { () async -> Int in 42 } } == 42, "the slot is free")
        #expect(ran.value == 0, "the cancelled waiter's body never ran")
        // Exactly one slot again: one holder passes, a second waits.
        #expect(await limiter.acquire())
        let second = Task { await limiter.acquire() }
        #expect(await eventually { await limiter.waiting == 1 })
        await limiter.release()
        #expect(await second.value)
    }

    @Test func aTaskCancelledBeforeAskingGetsNoSlot() async {
        let limiter = ConcurrencyLimiter(limit: 1)
        let ran = Counter()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await limiter.withSlot { () async -> Void in ran.increment() }
        }
        #expect(await task.value == nil)
        #expect(ran.value == 0)
        #expect(await within { await limiter.acquire() } == true, "no slot was taken")
    }

    struct Failure: Error, Equatable {}

    @Test func aBodyThatThrowsGivesItsSlotBack() async {
        let limiter = ConcurrencyLimiter(limit: 1)
        await #expect(throws: Failure.self) {
            try await limiter.withSlot { () async throws(Failure) -> Void in throw Failure() }
        }
        #expect(await within { await limiter.withSlot { () async -> Int in 1 } } == 1)
    }
}
