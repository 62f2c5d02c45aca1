import Testing

@testable import AsyncHelpers

@Suite("SingleFlight")
struct SingleFlightTests {
    struct Failure: Error, Equatable {
        let run: Int
    }

    /// Every caller arrives while the run is held at the gate; each run answers with its number.
    @Test func concurrentCallersShareOneRun() async throws {
        let flight = SingleFlight<Int, Failure>()
        let runs = Counter()
        let arrived = Counter()
        let gate = Gate()
        let callers = (0..<8).map { _ in
            Task { () async throws(Failure) -> Int in
                arrived.increment()
                return try await flight.run { () async throws(Failure) -> Int in
                    let run = runs.increment()
                    await gate.pass()
                    return run
                }
            }
        }
        #expect(await eventually { arrived.value == 8 })
        try await Task.sleep(for: .milliseconds(200))
        #expect(flight.isRunning)
        gate.open()
        for caller in callers { #expect(try await caller.value == 1) }
        #expect(runs.value == 1)
        #expect(!flight.isRunning)
    }

    @Test func aFailureReachesEveryCallerAndTheNextCallStartsAnew() async throws {
        let flight = SingleFlight<Int, Failure>()
        let runs = Counter()
        let gate = Gate()
        let arrived = Counter()
        let callers = (0..<5).map { _ in
            Task { () async -> Result<Int, Failure> in
                arrived.increment()
                do throws(Failure) {
                    return .success(
                        try await flight.run { () async throws(Failure) -> Int in
                            let run = runs.increment()
                            await gate.pass()
                            throw Failure(run: run)
                        })
                } catch {
                    return .failure(error)
                }
            }
        }
        #expect(await eventually { arrived.value == 5 })
        try await Task.sleep(for: .milliseconds(200))
        gate.open()
        for caller in callers { #expect(await caller.value == .failure(Failure(run: 1))) }
        let again = try await flight.run { () async throws(Failure) -> Int in runs.increment() }
        #expect(again == 2, "a call after the run ended starts a new one")
    }

    @Test func aCancelledCallerLeavesTheRunToTheOthers() async throws {
        let flight = SingleFlight<Int, Never>()
        let gate = Gate()
        let sawCancellation = Log<Bool>()
        let operation: @Sendable () async -> Int = {
            await gate.pass()
            sawCancellation.append(Task.isCancelled)
            return 7
        }
        let first = Task { await flight.run(operation) }
        #expect(await eventually { flight.isRunning })
        let second = Task { await flight.run(operation) }
        try await Task.sleep(for: .milliseconds(100))
        first.cancel()
        gate.open()
        #expect(await second.value == 7)
        #expect(await first.value == 7)
        #expect(sawCancellation.values == [false], "one run, not cancelled with its first caller")
    }

    /// A first mount's course fetches: callers for one key share its run, another key runs beside it.
    @Test func keyedRunsShareOneRunPerKeyAndRunKeysSideBySide() async throws {
        let flight = KeyedSingleFlight<String, Int, Never>()
        let runs = Log<String>()
        let gate = Gate()
        let callers = ["a", "a", "b", "a", "b"].map { key in
            Task {
                await flight.run(key) {
                    runs.append(key)
                    await gate.pass()
                    return key == "a" ? 1 : 2
                }
            }
        }
        #expect(await eventually { flight.isRunning("a") && flight.isRunning("b") })
        try await Task.sleep(for: .milliseconds(100))
        gate.open()
        var values: [Int] = []
        for caller in callers { values.append(await caller.value) }
        #expect(values == [1, 1, 2, 1, 2])
        #expect(runs.values.sorted() == ["a", "b"], "one run per key")
        #expect(!flight.isRunning("a") && !flight.isRunning("b"))
        let again = await flight.run("a") {
            runs.append("a")
            return 3
        }
        #expect(again == 3, "a call after the run ended starts anew")
    }

    /// An actor that stores what the run brings (a rotated token) must do so before anyone else on it can start a
    /// run with the stale value: were the run forgotten before the storing caller resumed on the actor, a call that
    /// slips in between would start a second run from the same token, and there would be more runs than tokens.
    @Test func anActorAppliesTheResultBeforeAnotherRunCanStart() async {
        let session = Session()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<500 { await session.renew(replacing: await session.token) }
                }
            }
        }
        let token = await session.token
        #expect(token > 0)
        #expect(session.runs.value == token, "one run per token")
    }
}

/// Renews a token that rotates, through a ``SingleFlight``.
private actor Session {
    let flight = SingleFlight<Int, Never>()
    let runs = Counter()
    var token = 0

    /// As `BearerAuthenticator` does: renews unless another call already did; a caller that hears the result late
    /// (after a newer run) leaves the newer token alone.
    func renew(replacing stale: Int) async {
        guard token == stale else { return }
        let fresh = await flight.run { [runs] in
            runs.increment()
            await Task.yield()
            return stale + 1
        }
        if token == stale { token = fresh }
    }
}
