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

    /// The heading of a generated text or PDF document, so a dataset can name documents after their content.
    public static func title(seed: UInt64) -> String {
        let index = Int(SplitMix64.derive(seed, 0x7171_E000) % UInt64(ContentWords.topics.count))
        return ContentWords.topics[index]
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
        var result: [UInt8] = []
        result.reserveCapacity(range.count)
        var block = range.lowerBound / textBlockSize
        while block * textBlockSize < range.upperBound {
            let blockStart = block * textBlockSize
            let bytes = textBlock(seed: seed, index: block, length: min(textBlockSize, size - blockStart))
            let from = max(range.lowerBound, blockStart) - blockStart
            let to = min(range.upperBound, blockStart + bytes.count) - blockStart
            result.append(contentsOf: bytes[from..<to])
            block += 1
        }
        return result
    }

    /// Exactly `length` bytes of ASCII prose ending in a newline; the first block opens with the title.
    private static func textBlock(seed: UInt64, index: Int, length: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(length + 128)
        if index == 0 {
            let title = Array(title(seed: seed).utf8)
            out += title + [newline] + [UInt8](repeating: UInt8(ascii: "="), count: title.count) + [newline, newline]
        }
        var rng = SplitMix64(seed: SplitMix64.derive(seed, UInt64(index)))
        var column = 0
        while out.count < length {
            for _ in 0..<rng.int(in: 3...6) {
                appendSentence(to: &out, column: &column, rng: &rng)
            }
            out += [newline, newline]
            column = 0
        }
        out.removeLast(out.count - length)
        out[length - 1] = newline
        return out
    }

    private static func appendSentence(to out: inout [UInt8], column: inout Int, rng: inout SplitMix64) {
        let count = rng.int(in: 5...14)
        for position in 0..<count {
            var word = ContentWords.words[rng.int(in: 0...(ContentWords.words.count - 1))]
            if position == 0, let first = word.first, first >= UInt8(ascii: "a"), first <= UInt8(ascii: "z") {
                word[0] = first - 32
            }
            if position == count - 1 { word.append(UInt8(ascii: ".")) }
            if column > 0 && column + 1 + word.count > 72 {
                out.append(newline)
                column = 0
            } else if column > 0 {
                out.append(UInt8(ascii: " "))
                column += 1
            }
            out += word
            column += word.count
        }
    }

    private static let newline = UInt8(ascii: "\n")
}
