/// Help text that must reach the reader as written. ArgumentParser wraps a command's discussion to the terminal's
/// width and breaks lines at ASCII spaces only, so it would cut an example in the middle of a command, and the copied
/// command would fail. Example lines therefore carry no-break spaces, which ``printable(_:)`` turns back into
/// spaces just before ArgumentParser's text is printed (``CampusFSCommand/main()``).
enum HelpText {
    static let noBreakSpace = "\u{00A0}"

    /// A paragraph "Examples:" and `lines`, indented by two, each kept whole. It must end the discussion: a line wider than the
    /// terminal is then printed whole (the terminal folds it and copies it as one line); before more prose,
    /// ArgumentParser would break that prose's first line instead.
    static func examples(_ lines: String) -> String {
        let indented = lines.split(separator: "\n", omittingEmptySubsequences: false).map { "  " + $0 }
        return "\n\nExamples:\n" + indented.joined(separator: "\n").replacingOccurrences(of: " ", with: noBreakSpace)
    }

    /// `text` as a person copies it: ordinary spaces.
    static func printable(_ text: String) -> String {
        text.replacingOccurrences(of: noBreakSpace, with: " ")
    }
}
