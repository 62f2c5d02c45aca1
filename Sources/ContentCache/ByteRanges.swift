/// The bytes of a document that are present in its sparse cache entry (docs/ranges.md, "In the cache"): a sorted set
/// of disjoint, non-adjacent ranges. A viewer's reads leave a handful of them, so a sorted array beats a tree.
struct ByteRanges: Sendable, Hashable, Codable {
    /// Sorted, non-empty, neither overlapping nor touching: adjacent ranges are merged.
    private(set) var ranges: [Range<Int64>] = []

    init() {}

    /// From ranges read back from disk: normalised (sorted, merged, empty ones dropped).
    init(_ ranges: some Sequence<Range<Int64>>) {
        for range in ranges { insert(range) }
    }

    var isEmpty: Bool { ranges.isEmpty }

    /// Bytes covered.
    var count: Int64 { ranges.reduce(0) { $0 + Int64($1.count) } }

    /// Adds `range`, merging it with every range it overlaps or touches.
    mutating func insert(_ range: Range<Int64>) {
        guard !range.isEmpty else { return }
        // The first range that ends at or after `range` starts, and the first that starts after it ends.
        let first = ranges.partitioningIndex { $0.upperBound >= range.lowerBound }
        let last = ranges[first...].partitioningIndex { $0.lowerBound > range.upperBound }
        guard first < last else {
            ranges.insert(range, at: first)
            return
        }
        let merged =
            min(range.lowerBound, ranges[first].lowerBound)..<max(range.upperBound, ranges[last - 1].upperBound)
        ranges.replaceSubrange(first..<last, with: [merged])
    }

    /// Removes `range` from the set, splitting a range it falls inside.
    mutating func remove(_ range: Range<Int64>) {
        guard !range.isEmpty else { return }
        var result: [Range<Int64>] = []
        for existing in ranges {
            guard existing.overlaps(range) else {
                result.append(existing)
                continue
            }
            if existing.lowerBound < range.lowerBound { result.append(existing.lowerBound..<range.lowerBound) }
            if range.upperBound < existing.upperBound { result.append(range.upperBound..<existing.upperBound) }
        }
        ranges = result
    }

    /// Whether every byte of `range` is present (an empty range always is).
    func contains(_ range: Range<Int64>) -> Bool {
        guard !range.isEmpty else { return true }
        return self.range(containing: range.lowerBound).map { $0.upperBound >= range.upperBound } ?? false
    }

    /// The present range that holds byte `offset`, if any.
    func range(containing offset: Int64) -> Range<Int64>? {
        let index = ranges.partitioningIndex { $0.upperBound > offset }
        guard index < ranges.count, ranges[index].lowerBound <= offset else { return nil }
        return ranges[index]
    }

    /// The parts of `range` not in the set, in order.
    func gaps(in range: Range<Int64>) -> [Range<Int64>] {
        var gaps: [Range<Int64>] = []
        var position = range.lowerBound
        for existing in ranges where existing.upperBound > position {
            guard existing.lowerBound < range.upperBound else { break }
            if existing.lowerBound > position { gaps.append(position..<existing.lowerBound) }
            position = existing.upperBound
            if position >= range.upperBound { break }
        }
        if position < range.upperBound { gaps.append(position..<range.upperBound) }
        return gaps
    }

    /// The set with every range cut to `0..<size`: a map on disk may not claim more than its file holds.
    func clipped(to size: Int64) -> ByteRanges {
        ByteRanges(
            ranges.compactMap { range in
                let (lower, upper) = (max(range.lowerBound, 0), min(range.upperBound, size))
                return lower < upper ? lower..<upper : nil
            })
    }
}

extension Collection {
    /// The first index whose element satisfies `predicate`, which must be false for a prefix and true after.
    fileprivate func partitioningIndex(where predicate: (Element) -> Bool) -> Index {
        var low = startIndex
        var count = distance(from: startIndex, to: endIndex)
        while count > 0 {
            let half = count / 2
            let middle = index(low, offsetBy: half)
            if predicate(self[middle]) {
                count = half
            } else {
                low = index(after: middle)
                count -= half + 1
            }
        }
        return low
    }
}
