import Foundation
import Synchronization

/// Items `0..<count` worked on by several threads at once, each thread claiming the next unclaimed item, and their
/// outputs handed to the calling thread in item order: `campusfs grep` reads and searches documents on every core
/// and still prints them as one thread would, byte for byte (docs/search.md, "grep"). Plain threads, not tasks:
/// the work blocks on SQLite's reads (docs/threads.md).
public final class OrderedWork<Output: Sendable, Failure: Error>: Sendable {
    private struct State {
        var next = 0
        var outputs: [Output?]
        var consumed = 0
        /// Set by a failure or by the consumer: no item is claimed after it.
        var stopped = false
        var failure: Failure?
        var helpersRunning: Int
    }

    private let count: Int
    private let state: Mutex<State>
    /// Signalled by a helper thread for each output it publishes and when it ends.
    private let signal = DispatchSemaphore(value: 0)

    private init(count: Int, helpers: Int) {
        self.count = count
        state = Mutex(State(outputs: Array(repeating: nil, count: count), helpersRunning: helpers))
    }

    /// Runs `worker` on `threads - 1` new threads and on the calling thread, and hands `consume` the outputs in
    /// item order on the calling thread, as they are ready. A `worker` claims items with `claim` (nil once none is
    /// left) and hands each output to `publish`; the calling thread's `publish` also consumes what is ready, so
    /// output starts before the work ends. `consume` returning false (grep `-q` after a match) stops the claims.
    /// Returns once every thread has ended; the first `worker` failure is thrown after the outputs before the
    /// item that failed are consumed (as one thread would have).
    public static func run(
        count: Int, threads: Int,
        worker: @escaping @Sendable (_ claim: () -> Int?, _ publish: (Int, Output) -> Void) throws(Failure) -> Void,
        consume: (Output) -> Bool
    ) throws(Failure) {
        let helpers = max(0, min(threads, count) - 1)
        let work = OrderedWork(count: count, helpers: helpers)
        for _ in 0..<helpers {
            Thread {
                do throws(Failure) {
                    try worker(work.claim, work.store)
                } catch {
                    work.fail(error)
                }
                work.state.withLock { $0.helpersRunning -= 1 }
                work.signal.signal()
            }.start()
        }
        do throws(Failure) {
            try worker(work.claim) { index, output in
                work.store(index, output)
                work.consumeReady(consume)
            }
        } catch {
            work.fail(error)
        }
        while true {
            work.consumeReady(consume)
            let (done, failure) = work.state.withLock { state in
                (state.consumed == count || (state.stopped && state.helpersRunning == 0), state.failure)
            }
            if done {
                // Every helper has ended before the work is dropped, also when the consumer stopped early.
                while work.state.withLock({ $0.helpersRunning }) > 0 { work.signal.wait() }
                if let failure {
                    // What the helpers published before the item that failed, as one thread would have printed.
                    work.consumeReady(consume)
                    throw failure
                }
                return
            }
            work.signal.wait()
        }
    }

    private func claim() -> Int? {
        state.withLock { state in
            guard !state.stopped, state.next < count else { return nil }
            defer { state.next += 1 }
            return state.next
        }
    }

    private func store(_ index: Int, _ output: Output) {
        state.withLock { $0.outputs[index] = output }
        signal.signal()
    }

    private func fail(_ error: Failure) {
        state.withLock { state in
            state.stopped = true
            if state.failure == nil { state.failure = error }
        }
    }

    /// Hands `consume` every output that is next in order; outside the lock, so the helpers go on meanwhile.
    private func consumeReady(_ consume: (Output) -> Bool) {
        while true {
            let next: Output? = state.withLock { state in
                guard state.consumed < count, let output = state.outputs[state.consumed] else { return nil }
                state.outputs[state.consumed] = nil
                state.consumed += 1
                return output
            }
            guard let next else { return }
            if !consume(next) {
                state.withLock { state in
                    state.stopped = true
                    state.consumed = count
                }
                return
            }
        }
    }
}
