import Foundation
import Glibc
import Synchronization

/// The one home for blocking work (disk I/O, `fsync`, SQLite writes, waits on threads) that code running in a
/// Swift task has to do: a few dedicated threads that tasks hand such work to and await, so Swift's cooperative
/// pool — one thread per core, two on the machines CampusFS runs on — never blocks and keeps serving the mount's
/// downloads, reads and the control socket. docs/threads.md says which threads exist and what may block where.
///
/// Code on threads that may block (libfuse's workers, the control socket's connection threads) calls blocking
/// APIs directly and never hops here.
public final class BlockingPool: Sendable {
    /// The pool every module shares: four threads, enough for an SQLite writer, two downloads' writes and an
    /// `fsync` at once on a 2-core machine without making blocking work compete with the cooperative pool.
    public static let shared = BlockingPool(threads: 4, name: "campusfs-pool")

    private typealias Job = @Sendable () -> Void

    private let jobs = Mutex<[Job]>([])
    /// Counts queued jobs; the threads sleep on it.
    private let queued = DispatchSemaphore(value: 0)

    /// Starts `threads` threads named `<name>-<n>` (at most 15 bytes show in `ps -L` and `/proc/<pid>/task`). They
    /// live as long as the process: the shared pool is never torn down. A `niceness` above 0 lowers the threads'
    /// scheduling priority (Linux's per-thread nice value), and that of the child processes they start: background
    /// work that must not slow the mount.
    public init(threads: Int, name: String, niceness: Int32 = 0) {
        for number in 0..<max(1, threads) {
            let threadName = "\(name)-\(number)"
            Thread { [self] in
                // Foundation on Linux applies neither a name set before `start()` nor `Thread.current.name`, and
                // Glibc's `pthread_setname_np` does not import; without this the thread shows its creator's name.
                try? threadName.write(toFile: "/proc/thread-self/comm", atomically: false, encoding: .utf8)
                // `who` 0 is the calling thread: on Linux the nice value is per thread.
                if niceness > 0 { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness) }
                work()
            }.start()
        }
    }

    /// Runs `body` on one of the pool's threads and returns its result; the calling task suspends meanwhile,
    /// holding no thread.
    ///
    /// Cancellation: `body` runs exactly once and to its end even when the calling task is cancelled while it is
    /// queued or running — a write asked for is done (or fails) as a whole, never silently skipped — and the caller
    /// checks `Task.isCancelled` afterwards if it cares. The queue needs no bound of its own: every queued job has
    /// a task suspended on it, so it holds no more entries than there are tasks waiting.
    public func run<T: Sendable, Failure: Error>(
        _ body: @escaping @Sendable () throws(Failure) -> T
    ) async throws(Failure) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, Failure>, Never>) in
            submit { continuation.resume(returning: Result(catching: body)) }
        }
        return try result.get()
    }

    /// Queues `job` and returns at once: for work nobody waits for (the text indexer's), which must then bound
    /// its own queue.
    public func submit(_ job: @escaping @Sendable () -> Void) {
        jobs.withLock { $0.append(job) }
        queued.signal()
    }

    private func work() {
        while true {
            queued.wait()
            guard let job = jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
            job()
        }
    }
}

extension BlockingPool {
    /// Whether the calling code runs as part of a Swift task. In CampusFS that means on the cooperative pool: no
    /// task runs anywhere else (no custom executors), while libfuse's workers, the pool's threads and the other
    /// dedicated threads never run tasks.
    public static var isInTask: Bool { withUnsafeCurrentTask { $0 != nil } }

    private static let trapping = Atomic<Bool>(false)

    /// From now on, debug builds stop the process in ``checkBlockingAllowed(_:)`` when blocking work runs in a task
    /// (the daemon turns this on; test processes, which call the synchronous APIs from test tasks, leave it off).
    public static func trapBlockingInTasks() {
        trapping.store(true, ordering: .releasing)
    }

    /// Marks a blocking operation: in a debug build that called ``trapBlockingInTasks()``, stops the process with
    /// `operation` named when the caller is a task — blocking work that should have gone through ``run(_:)``. Costs
    /// nothing in release builds.
    @inline(__always)
    public static func checkBlockingAllowed(_ operation: @autoclosure () -> String) {
        #if DEBUG
            if trapping.load(ordering: .acquiring), isInTask {
                fatalError("blocking work on Swift's cooperative pool: \(operation()); run it on BlockingPool")
            }
        #endif
    }
}
