import Foundation
import Logging
import Synchronization

/// Questions on the terminal, for `campusfs login` and for a password nobody stored. Prompts go to stderr, so
/// that stdout stays what a script reads; without a terminal on stdin every question answers nil and the caller
/// says which option or variable to use instead. Each call blocks on the person: call from ``BlockingPool``.
enum Terminal {
    static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 }

    /// A line the person types, shown as typed; nil without a terminal, at end of input, or when nothing was typed.
    static func ask(_ prompt: String) -> String? {
        guard isInteractive else { return nil }
        printError(prompt, terminator: "")
        guard let line = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces), !line.isEmpty
        else { return nil }
        return line
    }

    /// ``ask(_:)`` that gives up, with nil, once `stop` is set: for a question asked while something else may
    /// answer first (the browser coming back). A canonical terminal reports a line ready only when it is whole,
    /// so the read after `poll` does not block.
    static func ask(_ prompt: String, until stop: StopSignal) -> String? {
        guard isInteractive else { return nil }
        printError(prompt, terminator: "")
        var descriptor = pollfd(fd: STDIN_FILENO, events: Int16(POLLIN), revents: 0)
        while !stop.isSet {
            guard poll(&descriptor, 1, 100) != 0 else { continue }
            guard let line = readLine(strippingNewline: true)?.trimmingCharacters(in: .whitespaces), !line.isEmpty
            else { return nil }
            return line
        }
        printError("")  // ends the prompt's line: what follows starts on its own
        return nil
    }

    /// A secret, not echoed, as ssh and sudo ask; nil as for ``ask(_:)``.
    static func askSecret(_ prompt: String) -> String? {
        guard isInteractive else { return nil }
        var saved = termios()
        guard tcgetattr(STDIN_FILENO, &saved) == 0 else { return nil }
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        // Ctrl-C at the prompt must not leave the terminal without echo.
        terminalBeforePrompt.pointee = saved
        let previous = signal(SIGINT, restoreTerminalAndExit)
        defer { signal(SIGINT, previous) }
        // Echo goes off before the prompt shows: TCSAFLUSH drops what was typed before, and a quick answer
        // (pasted, or a script on a pty) would be lost.
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet)
        printError(prompt, terminator: "")
        let line = readLine(strippingNewline: true)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
        printError("")
        guard let line, !line.isEmpty else { return nil }
        return line
    }

    /// Yes or no; anything but an answer starting with y (or j, for the German speakers) is no.
    static func confirm(_ prompt: String) -> Bool {
        guard let answer = ask(prompt + " [y/N] ")?.lowercased() else { return false }
        return answer.hasPrefix("y") || answer.hasPrefix("j")
    }

    /// One of `choices` by its number (1-based); nil without a terminal or when the answer is none of them.
    static func choose(_ prompt: String, _ choices: [String]) -> Int? {
        guard isInteractive else { return nil }
        for (number, choice) in choices.enumerated() { printError("  \(number + 1)) \(choice)") }
        guard let answer = ask(prompt), let number = Int(answer), choices.indices.contains(number - 1) else {
            return nil
        }
        return number - 1
    }
}

/// The terminal's settings while a secret is asked for, for the SIGINT handler (which can capture nothing). Written
/// only before the handler is installed.
nonisolated(unsafe) private let terminalBeforePrompt = UnsafeMutablePointer<termios>.allocate(capacity: 1)

/// Restores echo and ends as SIGINT would; `tcsetattr` and `_exit` are async-signal-safe.
private func restoreTerminalAndExit(_ signal: Int32) {
    tcsetattr(STDIN_FILENO, TCSAFLUSH, terminalBeforePrompt)
    _exit(128 + signal)
}

/// Set once to end a question asked with ``Terminal/ask(_:until:)``.
final class StopSignal: Sendable {
    private let flag = Atomic<Bool>(false)

    func set() { flag.store(true, ordering: .releasing) }
    var isSet: Bool { flag.load(ordering: .acquiring) }
}

/// The log of a command that talks with a person (`campusfs login`): its lines would land between the questions,
/// so they are kept and appended to the profile's log file when the command ends; `--verbose` shows them on stderr
/// too, as they happen. Lines carry what the library logs (steps, hosts, the server's refusal text), never a secret.
final class DialogueLog: Sendable {
    private let lines = Mutex<[String]>([])
    private let verbose: Bool

    init(verbose: Bool) { self.verbose = verbose }

    /// For the library's calls: info and up, debug too with `--verbose`.
    var logger: Logger {
        var logger = Logger(label: "campusfs.studip") { label in Handler(log: self, label: label) }
        logger.logLevel = verbose ? .debug : .info
        return logger
    }

    fileprivate func append(_ line: String) {
        lines.withLock { $0.append(line) }
        if verbose { printError(line) }
    }

    /// Appends the kept lines to `file` (0600, created with its directory). Blocks: call from ``BlockingPool``. A log
    /// that cannot be written is no reason to fail a login.
    func save(to file: URL) {
        let text = lines.withLock { lines in
            defer { lines.removeAll() }
            return lines.map { $0 + "\n" }.joined()
        }
        guard !text.isEmpty else { return }
        try? FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let descriptor = open(file.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }

    private struct Handler: LogHandler {
        let log: DialogueLog
        let label: String
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let merged = metadata.merging(event.metadata ?? [:]) { $1 }
            let details = merged.sorted { $0.key < $1.key }.map { " \($0.key)=\($0.value)" }.joined()
            let time = Date().formatted(.iso8601)
            log.append("\(time) \(event.level) \(label): \(event.message)\(details)")
        }
    }
}
