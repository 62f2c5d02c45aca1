import Glibc

/// A string every match of a pattern contains, as GNU grep finds one: a line without it cannot match, so a fast
/// byte search passes over most lines and `regexec` (slow in UTF-8, slower with `REG_ICASE`) sees only the few
/// lines that contain it.
struct RequiredLiteral {
    /// The UTF-8 bytes to find; with ``ignoreCase`` ASCII only, letters in lower case.
    let bytes: [UInt8]
    let ignoreCase: Bool
    /// With ``ignoreCase``: Horspool's shift for each byte under the needle's last position.
    private let shift: [Int]

    /// The longest run of literal characters in the pattern (``IndexWords/parse(_:extended:)``'s atoms), or the
    /// `-F` string itself; nil when there is none or it is not certain (several patterns, an alternation).
    ///
    /// With `-i` only ASCII characters count, and not the letters `i`, `k` and `s`: `REG_ICASE` also matches
    /// `İ`/`ı` and `ſ` (long s) to them, and Unicode lower-cases `K` (Kelvin sign) to `k`; an ASCII comparison
    /// would miss those.
    init?(pattern: String, options: GrepOptions) {
        guard let longest = Self.runs(pattern: pattern, options: options).max(by: { $0.utf8.count < $1.utf8.count }),
            !longest.isEmpty
        else { return nil }
        bytes = Array(longest.utf8)
        ignoreCase = options.ignoreCase
        var shift = [Int](repeating: bytes.count, count: options.ignoreCase ? 256 : 0)
        for (index, byte) in bytes.dropLast().enumerated() where options.ignoreCase {
            shift[Int(byte)] = bytes.count - 1 - index
            shift[Int(Self.upper(byte))] = bytes.count - 1 - index
        }
        self.shift = shift
    }

    /// Every run of literal characters in the pattern, in order (with `-i` lower-cased, only ASCII characters and
    /// none of `unfolded`, the letters whose case variants a search's folding misses); every match contains each of
    /// them. Empty when no run is certain: several patterns, an alternation, a pattern glibc will reject.
    static func runs(pattern: String, options: GrepOptions, unfolded: String = "iIkKsS") -> [String] {
        guard !pattern.utf8.contains(UInt8(ascii: "\n")) else { return [] }
        let atoms: [IndexWords.Atom]
        if options.fixedStrings {
            atoms = pattern.map { .literal($0) }
        } else {
            guard let parsed = IndexWords.parse(pattern, extended: options.extendedRegexp),
                !parsed.contains(.alternation)
            else { return [] }
            atoms = parsed
        }
        var runs: [String] = []
        var run = ""
        func endRun() {
            if !run.isEmpty { runs.append(run) }
            run = ""
        }
        for (index, atom) in atoms.enumerated() {
            guard case .literal(let character) = atom,
                Self.isCertain(character, ignoreCase: options.ignoreCase, unfolded: unfolded)
            else {
                endRun()
                continue
            }
            let text = options.ignoreCase ? character.lowercased() : String(character)
            if index + 1 < atoms.count, case .quantifier(let mayBeAbsent) = atoms[index + 1] {
                // `x*`, `x?` may leave the character out; `x+` keeps one, but what follows is not certain.
                if !mayBeAbsent { run += text }
                endRun()
                continue
            }
            run += text
        }
        endRun()
        return runs
    }

    /// Whether a literal character of the pattern is these bytes in every match. A character that is one
    /// grapheme with a combining mark but starts with a syntax character (`.\u{301}`) is not certain: glibc reads
    /// the `.` alone.
    private static func isCertain(_ character: Character, ignoreCase: Bool, unfolded: String) -> Bool {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return false }
        if ignoreCase {
            return scalars.count == 1 && first.isASCII && !unfolded.unicodeScalars.contains(first)
        }
        return scalars.count == 1 || !(first.isASCII && !first.properties.isAlphabetic && !("0"..."9").contains(first))
    }

    /// The offset of the first occurrence at or after `start`. Case-sensitive: `memchr` (vectorised) for the first
    /// byte, then `memcmp`, faster than Horspool for every word measured (docs/search.md); Glibc's `memmem` is not
    /// visible to Swift. With ``ignoreCase``: Boyer–Moore–Horspool, ASCII letters folded to lower case.
    func firstOccurrence(in text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = text.baseAddress, start + bytes.count <= text.count else { return nil }
        if !ignoreCase {
            var position = start
            while position + bytes.count <= text.count,
                let found = memchr(base + position, Int32(bytes[0]), text.count - bytes.count + 1 - position)
            {
                position = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                if memcmp(base + position, bytes, bytes.count) == 0 { return position }
                position += 1
            }
            return nil
        }
        return bytes.withUnsafeBufferPointer { needle -> Int? in
            shift.withUnsafeBufferPointer { shift -> Int? in
                let last = needle.count - 1
                var position = start
                while position + last < text.count {
                    let byte = base[position + last]
                    if Self.lower(byte) == needle[last] {
                        var index = last - 1
                        while index >= 0, Self.lower(base[position + index]) == needle[index] { index -= 1 }
                        if index < 0 { return position }
                    }
                    position += shift[Int(byte)]
                }
                return nil
            }
        }
    }

    private static func lower(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    private static func upper(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") ? byte & ~0x20 : byte
    }
}
