import Synchronization

/// Deterministic document bytes with random access, so the simulator can serve gigabytes without storing any.
///
/// Every kind is a pure function of (seed, size, offset): the server streams a document in chunks and may start
/// anywhere, and a chunk costs O(length) — never O(offset).
public enum ContentGenerator {
    /// The bytes in `[offset, min(offset + length, size))` of a generated document.
    public static func bytes(kind: Content.GeneratedKind, seed: UInt64, size: Int, offset: Int, length: Int)
        -> [UInt8]
    {
        let start = max(0, offset)
        let end = min(size, start + max(0, length))
        guard start < end else { return [] }
        switch kind {
        case .binary: return binary(seed: seed, range: start..<end)
        case .text: return text(seed: seed, size: size, range: start..<end)
        case .pdf: return ContentPDF.bytes(seed: seed, size: size, range: start..<end)
        }
    }

    /// The bytes the simulator's external host serves for a document hosted elsewhere: readable text derived
    /// from the URL path, so the dataset can declare the same `size` in the document's metadata.
    public static func externalBytes(path: String, size: Int) -> [UInt8] {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325  // FNV-1a: stable, unlike `Hasher`, which is seeded per process.
        for byte in path.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return bytes(kind: .text, seed: hash, size: size, offset: 0, length: size)
    }

    /// The smallest size for which `.pdf` yields a valid PDF; datasets must not ask for less.
    public static let minimumPDFSize = ContentPDF.sizeBound(pages: 1)

    /// The heading of a generated text or PDF document (its ``ContentProfile``'s title).
    public static func title(seed: UInt64, kind: Content.GeneratedKind = .pdf) -> String {
        ContentProfile(seed: seed, kind: kind).title
    }

    // MARK: - Binary

    /// Counter-mode SplitMix64: byte `p` is byte `p % 8` of `mix(seed, p / 8)`.
    static func binary(seed: UInt64, range: Range<Int>) -> [UInt8] {
        guard !range.isEmpty else { return [] }
        let firstWord = range.lowerBound >> 3
        let lastWord = (range.upperBound - 1) >> 3
        var words: [UInt64] = []
        words.reserveCapacity(lastWord - firstWord + 1)
        for word in firstWord...lastWord {
            words.append(SplitMix64.derive(seed, UInt64(word)).littleEndian)
        }
        let skip = range.lowerBound & 7
        return words.withUnsafeBytes { Array($0[skip..<(skip + range.count)]) }
    }

    // MARK: - Text

    /// Text is cut into blocks of this size, each generated from (seed, block index) alone.
    static let textBlockSize = 4_096

    private static func text(seed: UInt64, size: Int, range: Range<Int>) -> [UInt8] {
        let profile = ContentProfile(seed: seed, kind: .text)
        if profile.role == .code { return ContentCode.bytes(profile: profile, size: size, range: range) }
        let prose = profile.lectures.map { profile.prose(lecture: $0) }
        var result: [UInt8] = []
        result.reserveCapacity(range.count)
        var block = range.lowerBound / textBlockSize
        while block * textBlockSize < range.upperBound {
            let blockStart = block * textBlockSize
            let bytes = textBlock(
                profile: profile, prose: prose, index: block, length: min(textBlockSize, size - blockStart))
            let from = max(range.lowerBound, blockStart) - blockStart
            let to = min(range.upperBound, blockStart + bytes.count) - blockStart
            result.append(contentsOf: bytes[from..<to])
            block += 1
        }
        return result
    }

    /// Exactly `length` bytes of UTF-8 prose about the profile's lectures, ending in a newline; the first block
    /// opens with the title (and, for minutes, the meeting's agenda).
    private static func textBlock(profile: ContentProfile, prose: [[[UInt8]]], index: Int, length: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(length + 128)
        let lectures = profile.lectures
        if index == 0 {
            let title = profile.title
            out += Array(title.utf8) + [newline]
            out += [UInt8](repeating: UInt8(ascii: "="), count: title.count) + [newline, newline]
            let english = profile.course.english
            out += Array("\(profile.course.number) \(profile.course.title)\n\n".utf8)
            if profile.role == .minutes {
                out += Array((english ? "Agenda:\n" : "Themen:\n").utf8)
                for lecture in lectures { out += Array("  - \(lecture.title)\n".utf8) }
                out.append(newline)
            }
        }
        var rng = SplitMix64(seed: SplitMix64.derive(profile.seed, UInt64(index)))
        var column = 0
        var paragraph = index
        while out.count < length {
            let pool = prose[paragraph % prose.count]
            for _ in 0..<rng.int(in: 3...6) {
                let sentence = rng.pick(pool)
                var start = 0
                while start < sentence.count {
                    var end = start
                    var count = 0
                    while end < sentence.count && sentence[end] != space {
                        // Characters, not bytes: UTF-8 continuation bytes do not take a column.
                        if sentence[end] & 0xC0 != 0x80 { count += 1 }
                        end += 1
                    }
                    if column > 0 && column + 1 + count > 72 {
                        out.append(newline)
                        column = 0
                    } else if column > 0 {
                        out.append(space)
                        column += 1
                    }
                    out += sentence[start..<end]
                    column += count
                    start = end + 1
                }
            }
            out += [newline, newline]
            column = 0
            paragraph += 1
        }
        return terminated(out, length: length)
    }

    /// `bytes` cut to `length` (at least 1) ending in a newline, without a UTF-8 sequence cut in half: a text
    /// document of any size stays valid UTF-8.
    static func terminated(_ bytes: [UInt8], length: Int) -> [UInt8] {
        var out = Array(bytes.prefix(length))
        out[length - 1] = newline
        // The last lead byte before the newline, and whether its sequence still fits.
        var start = length - 2
        while start >= 0 && start >= length - 5 && out[start] & 0xC0 == 0x80 { start -= 1 }
        if start >= 0 && out[start] >= 0xC0 {
            let needed = out[start] >= 0xF0 ? 4 : out[start] >= 0xE0 ? 3 : 2
            if start + needed > length - 1 {
                for position in start..<(length - 1) { out[position] = UInt8(ascii: " ") }
            }
        }
        return out
    }

    /// A generated file made of a small head, `padding` generated bytes and a small tail (a PDF's objects around
    /// its padding stream, a program around its padding comments), so any size fits and only head and tail are
    /// kept in memory.
    struct PaddedLayout: Sendable {
        var head: [UInt8]
        var padding: Int
        var tail: [UInt8]

        /// The bytes in `range`; `fill` makes the padding's bytes for a range of it.
        func bytes(_ range: Range<Int>, fill: (Range<Int>) -> [UInt8]) -> [UInt8] {
            var result: [UInt8] = []
            result.reserveCapacity(range.count)
            let headEnd = head.count
            let paddingEnd = headEnd + padding
            if range.lowerBound < headEnd {
                result += head[range.lowerBound..<min(range.upperBound, headEnd)]
            }
            if range.upperBound > headEnd && range.lowerBound < paddingEnd {
                result += fill(
                    (max(range.lowerBound, headEnd) - headEnd)..<(min(range.upperBound, paddingEnd) - headEnd))
            }
            if range.upperBound > paddingEnd {
                let from = max(range.lowerBound, paddingEnd) - paddingEnd
                let to = min(range.upperBound - paddingEnd, tail.count)
                if from < to { result += tail[from..<to] }
            }
            return result
        }
    }

    /// A few recently built documents of one kind: a download asks for the same one chunk after chunk. Bounded,
    /// so it cannot grow.
    final class LayoutCache<Value: Sendable>: Sendable {
        private struct Key: Hashable {
            var seed: UInt64
            var size: Int
        }

        private let entries = Mutex<[Key: Value]>([:])
        private let limit = 32

        func value(seed: UInt64, size: Int, make: () -> Value) -> Value {
            let key = Key(seed: seed, size: size)
            if let value = entries.withLock({ $0[key] }) { return value }
            let value = make()
            entries.withLock { entries in
                if entries.count >= limit { entries.removeAll(keepingCapacity: true) }
                entries[key] = value
            }
            return value
        }
    }

    static let newline = UInt8(ascii: "\n")
    private static let space = UInt8(ascii: " ")
}
