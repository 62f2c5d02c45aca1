import FUSEKit
import FUSEKitTesting
import Foundation

/// Calls one of `CampusFileSystem`'s handlers as a libfuse worker does and waits for its recorded answer. The call
/// runs on a thread of its own: handlers may block (store reads, reading cached blobs, a first fill's semaphore in
/// `lookup` and `readdir`), and on the cooperative pool — two threads here, shared by the six tests that run at once
/// — that would starve the other tests (docs/threads.md). An answer a handler gives later from a task is awaited.
func handlerAnswer<Kind>(
    size: Int = 0, context: RequestContext, within timeout: Duration,
    _ call: @escaping @Sendable (Reply<Kind>) -> Void
) async throws -> ReplyAnswer {
    let recording = RecordingReply<Kind>(size: size, context: context)
    let reply = recording.reply
    Thread { call(reply) }.start()
    return try await recording.answer(within: timeout)
}
