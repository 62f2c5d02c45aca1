import Foundation
import Glibc
import Synchronization
import Testing

@testable import TextGrep

/// ``OrderedWork``: items searched on several threads come back in item order, none lost, none twice; a failure
/// and a consumer that stops end the work the way one thread would have.
@Suite struct OrderedWorkTests {
    struct Failed: Error, Equatable {
        var item: Int
    }

    /// Items finish out of order (later ones fast, earlier ones slow) on four threads; the consumer still sees each
    /// item once, in order, with its own output, and more than one thread did the work.
    @Test func outputsComeBackInItemOrderFromEveryThread() throws {
        let threads = Mutex<Set<UInt>>([])
        var consumed: [Int] = []
        try OrderedWork<Int, Failed>.run(count: 400, threads: 4) { claim, publish in
            threads.withLock { _ = $0.insert(UInt(pthread_self())) }
            while let index = claim() {
                // Every fifth item takes longer, so the items after it are published before it.
                if index % 5 == 0 { usleep(200) }
                publish(index, index * 3)
            }
        } consume: { output in
            consumed.append(output)
            return true
        }
        #expect(consumed == (0..<400).map { $0 * 3 })
        #expect(threads.withLock { $0.count } > 1, "the work was shared")
    }

    /// A failure on item 7: items 0–6 are consumed (as one thread would have printed them), then it is thrown;
    /// nothing after it is consumed.
    @Test func aFailureEndsTheOutputBeforeTheItemThatFailed() {
        var consumed: [Int] = []
        #expect(throws: Failed(item: 7)) {
            try OrderedWork<Int, Failed>.run(count: 100, threads: 2) { claim, publish throws(Failed) in
                while let index = claim() {
                    guard index != 7 else { throw Failed(item: 7) }
                    publish(index, index)
                }
            } consume: { output in
                consumed.append(output)
                return true
            }
        }
        #expect(consumed == Array(0..<7))
    }

    /// A consumer that stops (grep `-q` after a match) gets nothing more, and the threads stop claiming.
    @Test func aConsumerThatStopsEndsTheClaims() throws {
        let claimed = Atomic<Int>(0)
        var consumed: [Int] = []
        try OrderedWork<Int, Failed>.run(count: 10_000, threads: 2) { claim, publish in
            while let index = claim() {
                claimed.add(1, ordering: .relaxed)
                usleep(50)
                publish(index, index)
            }
        } consume: { output in
            consumed.append(output)
            return output < 3
        }
        #expect(consumed == [0, 1, 2, 3])
        #expect(claimed.load(ordering: .relaxed) < 10_000)
    }

    /// No items: the worker runs on the calling thread alone and finds nothing to claim.
    @Test func noItems() throws {
        var consumed = 0
        try OrderedWork<Int, Failed>.run(count: 0, threads: 4) { claim, _ in
            #expect(claim() == nil)
        } consume: { _ in
            consumed += 1
            return true
        }
        #expect(consumed == 0)
    }
}
