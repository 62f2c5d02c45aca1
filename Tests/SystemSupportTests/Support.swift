import Synchronization

/// A value tests share with the threads and tasks they start (a `Mutex` cannot be captured by escaping closures).
final class Shared<Value: Sendable>: Sendable {
    private let value: Mutex<Value>

    init(_ value: Value) {
        self.value = Mutex(value)
    }

    var current: Value { value.withLock { $0 } }

    @discardableResult
    func update<T: Sendable>(_ change: @Sendable (inout Value) -> T) -> T { value.withLock { change(&$0) } }
}
