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
        let indented = "  " + replacing("\n", with: "\n  ", in: lines)
        return "\n\nExamples:\n" + replacing(" ", with: noBreakSpace, in: indented)
    }

    /// `text` as a person copies it: ordinary spaces.
    static func printable(_ text: String) -> String {
        replacing(Character(noBreakSpace), with: " ", in: text)
    }

    /// A plain loop, neither Foundation's `replacingOccurrences` nor a generic split, map and join: every command
    /// builds the examples as it starts, and those cost it about 1 ms, in Foundation's first string search and in the
    /// runtime's lookups of generic conformances in a binary this large (docs/performance.md, "Process start").
    private static func replacing(_ character: Character, with replacement: String, in text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for next in text {
            if next == character { result += replacement } else { result.append(next) }
        }
        return result
    }
}
