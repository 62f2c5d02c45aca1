import Synchronization

/// A counter tasks share.
final class Counter: Sendable {
    private let count = Atomic<Int>(0)

    var value: Int { count.load(ordering: .acquiring) }

    /// Adds one; returns the new value.
    @discardableResult
    func increment() -> Int { count.add(1, ordering: .acquiringAndReleasing).newValue }

}

/// What tasks report, in the order they report it.
final class Log<T: Sendable>: Sendable {
    private let entries = Mutex<[T]>([])

    var values: [T] { entries.withLock { $0 } }

    func append(_ value: T) { entries.withLock { $0.append(value) } }
}

/// The most holders seen at once.
final class Gauge: Sendable {
    private let state = Mutex((current: 0, maximum: 0))
    var maximum: Int { state.withLock { $0.maximum } }
    func enter() {
        state.withLock {
            $0.current += 1
            $0.maximum = max($0.maximum, $0.current)
        }
    }
    func leave() { state.withLock { $0.current -= 1 } }
}

/// Holds operations until opened.
final class Gate: Sendable {
    private let opened = Atomic<Bool>(false)

    func open() { opened.store(true, ordering: .releasing) }

    func pass() async {
        while !opened.load(ordering: .acquiring) { try? await Task.sleep(for: .milliseconds(2)) }
    }
}

/// Polls `condition` until it holds or `limit` has passed; returns whether it held.
func eventually(within limit: Duration = .seconds(5), _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return await condition()
}

/// `body`'s result, or nil when it takes longer than `limit`, so that a test that would hang fails instead (`body`
/// is left running then).
func within<T: Sendable>(_ limit: Duration = .seconds(5), _ body: @escaping @Sendable () async -> T) async -> T? {
    await withCheckedContinuation { (continuation: CheckedContinuation<T?, Never>) in
        let first = FirstAnswer(continuation)
        Task { first.answer(await body()) }
        Task {
            try? await Task.sleep(for: limit)
            first.answer(nil)
        }
    }
}

/// Resumes a continuation with the first answer only.
private final class FirstAnswer<T: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<T?, Never>?>

    init(_ continuation: CheckedContinuation<T?, Never>) {
        self.continuation = Mutex(continuation)
    }

    func answer(_ value: T?) {
        continuation.withLock { $0.take() }?.resume(returning: value)
    }
}
