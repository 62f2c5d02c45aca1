import Glibc

private final class ThreadBody {
    let body: @Sendable () -> Void

    init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
    }
}

/// Runs `body` on a new detached pthread (FUSEKit's few helper threads must not use the Swift concurrency
/// pool, which they would block). Threads inherit the caller's signal mask.
func startThread(_ body: @escaping @Sendable () -> Void) -> Bool {
    let context = Unmanaged.passRetained(ThreadBody(body)).toOpaque()
    var thread = pthread_t()
    let result = pthread_create(
        &thread, nil,
        { context in
            guard let context else { return nil }
            Unmanaged<ThreadBody>.fromOpaque(context).takeRetainedValue().body()
            return nil
        }, context)
    guard result == 0 else {
        Unmanaged<ThreadBody>.fromOpaque(context).release()
        return false
    }
    pthread_detach(thread)
    return true
}
