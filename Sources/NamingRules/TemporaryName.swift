/// Editors' temporary and lock files (docs/writing.md, "Local first: drafts"): names that never leave the machine.
/// Editors save through such files and renames; a whole course would see them on Stud.IP, so a draft with one of
/// these names stays local until it is deleted or renamed to a final name.
package enum TemporaryName {
    /// Whether `name` is an editor's temporary or lock file, or hidden (any name starting with `.`, which covers
    /// LibreOffice's `.~lock.<name>#`, vim's `.<name>.swp`, GNOME's `.goutputstream-*`, Emacs's `.#<name>`, rsync's
    /// `.<name>.XXXXXX`).
    package static func isTemporary(_ name: String) -> Bool {
        name.hasPrefix(".")
            // Backups of vim, Emacs, gedit, Kate.
            || name.hasSuffix("~")
            // Microsoft Office's owner files.
            || name.hasPrefix("~$")
            // LibreOffice's `lu<random>.tmp`, and many others'.
            || name.lowercased().hasSuffix(".tmp")
            // Emacs's auto-save files.
            || name.count > 1 && name.hasPrefix("#") && name.hasSuffix("#")
            || name.hasSuffix(".swp") || name.hasSuffix(".swo") || name.hasSuffix(".swx")
            || isVimWriteProbe(name) || isSedInPlace(name)
    }

    /// vim checks whether it may create a file in the directory with `4913`, then `5036`, … (`4913 + 123 n`).
    private static func isVimWriteProbe(_ name: String) -> Bool {
        guard name.utf8.count <= 9, let number = Int(name), number >= 4913 else { return false }
        return (number - 4913) % 123 == 0 && String(number) == name
    }

    /// `sed -i` writes the new text to `sed` and six random letters or digits (`mkstemp`), and renames it over the
    /// file. A word such as `sediments` is no such name: `mkstemp`'s six almost always hold a capital or a digit.
    private static func isSedInPlace(_ name: String) -> Bool {
        let random = name.utf8.dropFirst(3)
        return name.utf8.count == 9 && name.hasPrefix("sed")
            && random.allSatisfy {
                (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0)
            }
            && random.contains { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) }
    }
}
