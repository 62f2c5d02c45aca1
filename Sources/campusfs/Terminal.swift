import Foundation

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
