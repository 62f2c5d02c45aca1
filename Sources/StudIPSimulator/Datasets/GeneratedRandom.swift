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

    /// A uniform integer in `range`.
    mutating func int(in range: ClosedRange<Int>) -> Int {
        Int.random(in: range, using: &self)
    }

    /// True with probability `p`.
    mutating func chance(_ p: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < p
    }

    mutating func pick<T>(_ items: [T]) -> T {
        items[int(in: 0...(items.count - 1))]
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
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
        let u2 = Double.random(in: 0..<1, using: &self)
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
        let local = daysFromCivil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second
        let utcGuess = local - 3_600
        return isSummerTime(utc: utcGuess - 3_600) ? local - 7_200 : utcGuess
    }

    /// "Now" for every generated dataset, so ages and "changed in the last week" are reproducible.
    static let now = unix(2026, 11, 21, 10, 30)

    private static func isSummerTime(utc: Int) -> Bool {
        let year = civilYear(days: utc.floorDiv(86_400))
        let start = lastSunday(year, 3) * 86_400 + 3_600
        let end = lastSunday(year, 10) * 86_400 + 3_600
        return utc >= start && utc < end
    }

    private static func lastSunday(_ year: Int, _ month: Int) -> Int {
        let last = daysFromCivil(year, month, 31)
        let weekday = (last + 4).floorMod(7)  // 1970-01-01 was a Thursday (4); Sunday = 0.
        return last - weekday
    }

    /// Days since 1970-01-01 (Howard Hinnant's algorithm).
    private static func daysFromCivil(_ year: Int, _ month: Int, _ day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = y.floorDiv(400)
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private static func civilYear(days: Int) -> Int {
        let z = days + 719_468
        let era = z.floorDiv(146_097)
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let month = mp < 10 ? mp + 3 : mp - 9
        return yoe + era * 400 + (month <= 2 ? 1 : 0)
    }
}

extension Int {
    fileprivate func floorDiv(_ divisor: Int) -> Int {
        (self >= 0 ? self : self - divisor + 1) / divisor
    }

    fileprivate func floorMod(_ divisor: Int) -> Int {
        self - floorDiv(divisor) * divisor
    }

    /// Decimal with leading zeros, without `String(format:)` (slow on Linux, and `huge` formats 100,000 names).
    func padded(_ width: Int) -> String {
        let digits = String(self)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
