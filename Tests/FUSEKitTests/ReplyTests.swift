import FUSEKit
import Glibc
import Synchronization
import Testing

/// The guarantees every ``Reply`` gives whatever its sink: one answer, `EIO` for a forgotten one, and interrupt
/// handlers that run once and never after the answer.
@Suite struct ReplyTests {
    final class Sink: ReplySink {
        let answers = Mutex<[ReplyAnswer]>([])
        let handler = Mutex<(@Sendable () -> Void)?>(nil)

        func send(_ answer: ReplyAnswer) -> Bool {
            answers.withLock { $0.append(answer) }
            return true
        }

        func onInterrupt(_ handler: @escaping @Sendable () -> Void) {
            self.handler.withLock { $0 = handler }
        }

        var errors: [Int32?] {
            answers.withLock { $0.map { if case .error(let errno) = $0 { errno } else { nil } } }
        }
    }

    @Test func aSecondAnswerIsIgnoredAndAForgottenOneIsEIO() {
        let sink = Sink()
        do {
            let reply = StatusReply(sink: sink, operation: "test", context: RequestContext())
            reply.ok()
            reply.error(ENOENT)
        }
        #expect(sink.errors == [0])

        let forgotten = Sink()
        do { _ = AttributesReply(sink: forgotten, operation: "test", context: RequestContext()) }
        #expect(forgotten.errors == [EIO])
    }

    @Test func extendedAttributeSizesFollowTheProtocol() {
        func answer(size: Int) -> ReplyAnswer? {
            let sink = Sink()
            ExtendedAttributeNamesReply(sink: sink, operation: "test", context: RequestContext(), size: size)
                .names(["user.a", "user.bc"])
            return sink.answers.withLock { $0.first }
        }
        guard case .attributeSize(15) = answer(size: 0) else {
            Issue.record("size probe")
            return
        }
        guard case .error(ERANGE) = answer(size: 14) else {
            Issue.record("ERANGE")
            return
        }
        guard case .attributeNames(let names) = answer(size: 15) else {
            Issue.record("names")
            return
        }
        #expect(names == ["user.a", "user.bc"])
    }

    @Test func interruptHandlersAreNotRegisteredOnceAnswered() {
        let sink = Sink()
        let reply = OpenReply(sink: sink, operation: "test", context: RequestContext())
        reply.onInterrupt {}
        #expect(sink.handler.withLock { $0 } != nil)
        let answered = Sink()
        let done = OpenReply(sink: answered, operation: "test", context: RequestContext())
        done.open()
        done.onInterrupt {}
        #expect(answered.handler.withLock { $0 } == nil)
        reply.error(EINTR)
    }
}
