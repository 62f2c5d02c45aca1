import Glibc

/// A system call that failed: which one, and the `errno` it left.
public struct SystemCallError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call's name, as in its man page (`pread`, `accept`).
    public let call: String
    public let errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    public var description: String { "\(call): \(String(cString: strerror(errno)))" }
}

/// Calls `body` — one system call returning -1 on failure — again while it fails with `EINTR` (a signal arrived),
/// and throws any other failure with its `errno`. The one EINTR loop of the code base, in the style of swift-nio's
/// `syscall(blocking:)`: a signal handler installed without `SA_RESTART` (libfuse's) must not turn into a spurious
/// error, and no caller should have to remember that.
@discardableResult
public func systemCall<Result: BinaryInteger>(
    _ call: String, _ body: () -> Result
) throws(SystemCallError) -> Result {
    while true {
        let result = body()
        guard result == -1 else { return result }
        let code = Glibc.errno
        guard code == EINTR else { throw SystemCallError(call: call, errno: code) }
    }
}
