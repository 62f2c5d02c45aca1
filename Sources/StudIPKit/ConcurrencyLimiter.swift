import StudIPModel

/// An async semaphore: at most `limit` holders at once, waiters served first come, first served.
///
/// Bounds the requests in flight against one server however many courses are walked in parallel.
actor ConcurrencyLimiter {
    private let limit: Int
    private var holders = 0
    private var waiters: [(id: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    private var nextWaiterID = 0

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Runs `body` holding one slot. A task cancelled while waiting gets `.cancelled` without running `body`.
    nonisolated func withSlot<T: Sendable>(
        _ body: () async throws(StudIPError) -> T
    ) async throws(StudIPError) -> T {
        guard await acquire() else { throw .cancelled }
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
    func acquire() async -> Bool {
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

    func release() {
        if waiters.isEmpty {
            holders -= 1
        } else {
            // The slot passes straight to the next waiter; `holders` stays the same.
            waiters.removeFirst().continuation.resume(returning: true)
        }
    }

    private func cancelWaiter(_ id: Int) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(returning: false)
    }
}
