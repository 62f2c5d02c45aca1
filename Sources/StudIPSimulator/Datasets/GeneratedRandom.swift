import Foundation

/// SplitMix64: tiny, fast and fully specified, so a seed yields the same installation on every platform and
/// Swift version (the standard library's generators are either non-deterministic or unspecified).
struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return Self.mix(state)
    }

    /// The SplitMix64 output function; also used stateless for counter-mode streams (random access).
    static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value derived from a seed and an index without walking a stream: block `index` of document `seed`.
    static func derive(_ seed: UInt64, _ index: UInt64) -> UInt64 {
        mix(mix(seed &+ 0x6A09_E667_F3BC_C909) ^ (index &* 0x9E37_79B9_7F4A_7C15))
    }

    /// A uniform integer in `range`. Written out rather than `Int.random(in:using:)`, whose algorithm the
    /// standard library does not promise to keep, so datasets stay identical across Swift versions.
    mutating func int(in range: ClosedRange<Int>) -> Int {
        let width = UInt64(range.upperBound - range.lowerBound) &+ 1
        return width == 0 ? Int(truncatingIfNeeded: next()) : range.lowerBound + Int(next() % width)
    }

    /// A uniform double in [0, 1).
    mutating func unit() -> Double {
        Double(next() >> 11) * 0x1p-53
    }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool {
        unit() < p
    }

    mutating func pick<T>(_ items: [T]) -> T {
        items[int(in: 0...(items.count - 1))]
    }

    /// Fisher–Yates with ``int(in:)``, for the same reason.
    mutating func shuffled<T>(_ items: [T]) -> [T] {
        var result = items
        for index in stride(from: result.count - 1, to: 0, by: -1) {
            result.swapAt(index, int(in: 0...index))
        }
        return result
    }

    /// A Stud.IP-style id: lowercase hex, 32 characters unless told otherwise.
    mutating func id(length: Int = 32) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length)
        while bytes.count < length {
            var word = next()
            for _ in 0..<16 where bytes.count < length {
                bytes.append(Self.hexDigits[Int(word & 0xF)])
                word >>= 4
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// A log-normally distributed value (Box–Muller), the usual shape of file sizes.
    mutating func logNormal(median: Double, sigma: Double) -> Double {
        let u1 = max(unit(), Double.ulpOfOne)
        let u2 = unit()
        let normal = (-2 * Foundation.log(u1)).squareRoot() * cos(2 * Double.pi * u2)
        return median * exp(sigma * normal)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}

/// Wall-clock times in Europe/Berlin without depending on the host's tz database (EU rule: CEST from the last
/// Sunday of March to the last Sunday of October, switching at 01:00 UTC).
enum BerlinTime {
    /// Unix seconds for a Berlin local time.
    static func unix(_ year: Int, _ month: Int, _ day: Int, _ hour: Int = 0, _ minute: Int = 0, _ second: Int = 0)
        -> Int
    {
        let local =
            CivilCalendar.days(year: year, month: month, day: day) * 86_400 + hour * 3_600 + minute * 60 + second
        let utcGuess = local - 3_600
        return isSummerTime(utc: utcGuess - 3_600) ? local - 7_200 : utcGuess
    }

    /// "Now" for every generated dataset, so ages and "changed in the last week" are reproducible.
    static let now = unix(2026, 11, 21, 10, 30)

    /// The day of the month of the first `weekday` (0 = Sunday … 6 = Saturday) on or after the given date.
    static func day(_ weekday: Int, onOrAfter year: Int, _ month: Int, _ day: Int) -> Int {
        let current = CivilCalendar.weekday(days: CivilCalendar.days(year: year, month: month, day: day))
        return day + (weekday - current).floorMod(7)
    }

    private static func isSummerTime(utc: Int) -> Bool {
        let year = CivilCalendar.date(days: utc.floorDiv(86_400)).year
        let start = lastSunday(year, 3) * 86_400 + 3_600
        let end = lastSunday(year, 10) * 86_400 + 3_600
        return utc >= start && utc < end
    }

    private static func lastSunday(_ year: Int, _ month: Int) -> Int {
        let last = CivilCalendar.days(year: year, month: month, day: 31)
        return last - CivilCalendar.weekday(days: last)
    }

    /// "YYYY-MM-DD" of a unix time in Berlin.
    static func dateString(_ unix: Int) -> String {
        let offset = isSummerTime(utc: unix) ? 7_200 : 3_600
        let (year, month, day) = CivilCalendar.date(days: (unix + offset).floorDiv(86_400))
        return "\(year)-\(month.padded(2))-\(day.padded(2))"
    }
}

extension Int {
    /// Decimal with leading zeros, without `String(format:)` (slow on Linux, and `huge` formats 100,000 names).
    func padded(_ width: Int) -> String {
        let digits = String(self)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
