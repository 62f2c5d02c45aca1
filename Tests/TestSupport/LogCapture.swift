import Logging
import Synchronization

/// Captures every log line, to check what a component logged: that no secret reaches a log, how often it tried.
public final class LogCapture: Sendable {
    private let lines = Mutex<[String]>([])

    public init() {}

    public var logger: Logger {
        var logger = Logger(label: "test") { _ in Handler(capture: self) }
        logger.logLevel = .trace
        return logger
    }

    public var text: String { lines.withLock { $0.joined(separator: "\n") } }

    /// Lines that contain `text`.
    public func count(containing text: String) -> Int { lines.withLock { $0.filter { $0.contains(text) }.count } }

    fileprivate func append(_ line: String) { lines.withLock { $0.append(line) } }

    private struct Handler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            capture.append("\(event.level) \(event.message) \(merged)")
        }
    }
}
