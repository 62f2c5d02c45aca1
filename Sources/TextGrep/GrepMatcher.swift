import CWctype
import Glibc

/// Finds the matches of grep's patterns in a line: one regex per pattern (a pattern with newlines is several, as
/// in grep), `-F` escaped into a literal, `-w` checked as GNU grep checks it.
public final class GrepMatcher {
    private let regexes: [POSIXRegex]
    private let wholeWords: Bool
    private let required: RequiredLiteral?

    public init(pattern: String, options: GrepOptions) throws(GrepError) {
        var regexes: [POSIXRegex] = []
        for line in pattern.split(separator: "\n", omittingEmptySubsequences: false) {
            let text = options.fixedStrings ? Self.literal(String(line)) : String(line)
            regexes.append(
                try POSIXRegex(
                    text, extended: options.extendedRegexp && !options.fixedStrings,
                    ignoreCase: options.ignoreCase))
        }
        self.regexes = regexes
        wholeWords = options.wordRegexp
        required = RequiredLiteral(pattern: pattern, options: options)
    }

    /// `text` as a BRE that matches exactly it.
    static func literal(_ text: String) -> String {
        var escaped = ""
        for character in text {
            if "\\.[*^$".contains(character) { escaped.append("\\") }
            escaped.append(character)
        }
        return escaped
    }

    /// The first match at or after `start`: the leftmost of all patterns, the longest of those.
    public func firstMatch(in line: UnsafeBufferPointer<UInt8>, from start: Int) -> Range<Int>? {
        var best: Range<Int>?
        for regex in regexes {
            guard
                let match = wholeWords
                    ? wordMatch(regex, line, from: start) : regex.firstMatch(in: line, from: start, to: line.count)
            else { continue }
            if let current = best,
                current.lowerBound < match.lowerBound
                    || (current.lowerBound == match.lowerBound && current.upperBound >= match.upperBound)
            {
                continue
            }
            best = match
        }
        return best
    }

    /// Which of `lines` (ranges of `text` between newlines, in order) match.
    func matchingLines(in text: UnsafeBufferPointer<UInt8>, lines: [Range<Int>]) -> [Bool] {
        var matching = [Bool](repeating: false, count: lines.count)
        var position = 0
        var low = 0
        while let line = nextMatchingLine(in: text, from: position) {
            while low < lines.count, lines[low].lowerBound < line.lowerBound { low += 1 }
            if low < lines.count { matching[low] = true }
            position = line.upperBound + 1
        }
        return matching
    }

    /// The next line at or after `start` (a line's first byte) that has a match, without its newline. A line is
    /// confirmed alone, because a class such as `\s` may match across a newline. Only lines that contain the
    /// required literal are given to `regexec`; without one, one search over the rest of the text finds the next
    /// candidate line, far fewer `regexec` calls than one per line.
    func nextMatchingLine(in text: UnsafeBufferPointer<UInt8>, from start: Int) -> Range<Int>? {
        var position = start
        while position <= text.count {
            let candidate =
                required.map { $0.firstOccurrence(in: text, from: position) }
                ?? firstMatch(in: text, from: position)?.lowerBound
            // A match after the last newline, at the end: the empty line that is not one (as in a file).
            guard let candidate, candidate < text.count || text.last != UInt8(ascii: "\n") else { return nil }
            let line = Self.line(in: text, around: candidate, from: position)
            if firstMatch(in: UnsafeBufferPointer(rebasing: text[line]), from: 0) != nil { return line }
            position = line.upperBound + 1
        }
        return nil
    }

    /// The line (without its newline) that holds `offset`, starting no earlier than `start`.
    private static func line(in text: UnsafeBufferPointer<UInt8>, around offset: Int, from start: Int) -> Range<Int> {
        guard let base = text.baseAddress else { return 0..<0 }
        var lower = offset
        while lower > start, base[lower - 1] != UInt8(ascii: "\n") { lower -= 1 }
        var upper = text.count
        if offset < text.count, let newline = memchr(base + offset, Int32(UInt8(ascii: "\n")), text.count - offset) {
            upper = base.distance(to: newline.assumingMemoryBound(to: UInt8.self))
        }
        return lower..<upper
    }

    /// Every non-empty match, left to right (what `--color` paints).
    func allMatches(in line: UnsafeBufferPointer<UInt8>) -> [Range<Int>] {
        var matches: [Range<Int>] = []
        var start = 0
        while start <= line.count, let match = firstMatch(in: line, from: start) {
            if match.isEmpty {
                start = Self.nextCharacter(in: line, after: match.lowerBound)
            } else {
                matches.append(match)
                start = match.upperBound
            }
        }
        return matches
    }

    /// GNU grep's `-w`: a match counts when no word character (alphanumeric or `_`) touches either end; otherwise
    /// a shorter match at the same start is tried, then a match further on.
    private func wordMatch(_ regex: POSIXRegex, _ line: UnsafeBufferPointer<UInt8>, from start: Int) -> Range<Int>? {
        var start = start
        while start <= line.count, let match = regex.firstMatch(in: line, from: start, to: line.count) {
            if isWordBoundary(line, match) { return match }
            var limit = match.upperBound
            while limit > match.lowerBound {
                limit = Self.previousCharacter(in: line, before: limit)
                guard let shorter = regex.firstMatch(in: line, from: match.lowerBound, to: limit, endIsLineEnd: false),
                    shorter.lowerBound == match.lowerBound, !shorter.isEmpty
                else { break }
                if isWordBoundary(line, shorter) { return shorter }
                limit = shorter.upperBound
            }
            start = Self.nextCharacter(in: line, after: match.lowerBound)
        }
        return nil
    }

    private func isWordBoundary(_ line: UnsafeBufferPointer<UInt8>, _ match: Range<Int>) -> Bool {
        let before =
            match.lowerBound == 0
            ? nil : Self.scalar(in: line, at: Self.previousCharacter(in: line, before: match.lowerBound))
        let after = match.upperBound >= line.count ? nil : Self.scalar(in: line, at: match.upperBound)
        return !(before.map(Self.isWordCharacter) ?? false) && !(after.map(Self.isWordCharacter) ?? false)
    }

    /// GNU grep's word characters: `_` and what the (UTF-8) locale calls alphanumeric.
    static func isWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "_" || iswalnum(wint_t(scalar.value)) != 0
    }

    static func scalar(in line: UnsafeBufferPointer<UInt8>, at offset: Int) -> Unicode.Scalar? {
        var iterator = line[offset...].makeIterator()
        var decoder = Unicode.UTF8()
        if case .scalarValue(let scalar) = decoder.decode(&iterator) { return scalar }
        return nil
    }

    /// The offset of the character that ends at `offset` (a UTF-8 lead byte, or one byte back in invalid text).
    static func previousCharacter(in line: UnsafeBufferPointer<UInt8>, before offset: Int) -> Int {
        var index = offset - 1
        while index > 0, index > offset - 4, line[index] & 0xC0 == 0x80 { index -= 1 }
        return line[index] & 0xC0 == 0x80 ? offset - 1 : index
    }

    static func nextCharacter(in line: UnsafeBufferPointer<UInt8>, after offset: Int) -> Int {
        var index = offset + 1
        while index < line.count, index < offset + 4, line[index] & 0xC0 == 0x80 { index += 1 }
        return index
    }
}
