/// An async semaphore: at most `limit` holders at once, waiters served first come, first served.
///
/// Bounds the requests in flight against one server however many courses are walked in parallel, and (with a limit
/// of one) runs a daemon's refreshes one after another.
public actor ConcurrencyLimiter {
    private let limit: Int
    private var holders = 0
    private var waiters: [(id: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    private var nextWaiterID = 0

    public init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Runs `body` holding one slot; nil, without running `body`, when the task is cancelled while it waits (callers
    /// turn that into their own "cancelled").
    public nonisolated func withSlot<T: Sendable, Failure: Error>(
        _ body: () async throws(Failure) -> T
    ) async throws(Failure) -> T? {
        guard await acquire() else { return nil }
        do {
            let result = try await body()
            await release()
            return result
        } catch {
            await release()
            throw error
        }
    }

    /// True when a slot was taken, false when the task was cancelled while waiting. Pair with ``release()``;
    /// for slots held beyond one call (a download body being read).
    public func acquire() async -> Bool {
        if Task.isCancelled { return false }
        if holders < limit {
            holders += 1
            return true
        }
        let id = nextWaiterID
        nextWaiterID += 1
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiters.append((id, continuation))
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    public func release() {
        if waiters.isEmpty {
            holders -= 1
        } else {
            // The slot passes straight to the next waiter; `holders` stays the same.
            waiters.removeFirst().continuation.resume(returning: true)
        }
    }

    /// Tasks waiting for a slot; tests wait for a queue to form before they release.
    var waiting: Int { waiters.count }

    private func cancelWaiter(_ id: Int) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(returning: false)
    }
}
