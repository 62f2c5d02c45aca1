import Foundation

/// A date's wall-clock fields in one time zone, Gregorian, years clamped to 1–9999 so that any `Date` (the
/// distant past, a server's nonsense) formats without trapping and within a fixed width.
struct LocalTime: Hashable {
    var year: Int
    var month: Int
    var day: Int
    var hour: Int
    var minute: Int
    var second: Int

    /// The earliest and latest instants rendered as themselves; others are clamped to them.
    static let earliest = Date(timeIntervalSince1970: -62_135_596_800)  // 0001-01-01T00:00:00Z
    /// The start of 9999, not its end: a time zone's offset added must stay within the year 9999 for readers
    /// (Python's `datetime` rejects 9999-12-31T01:00+01:00).
    static let latest = Date(timeIntervalSince1970: 253_370_764_800)  // 9999-01-01T00:00:00Z

    init(_ date: Date, in timeZone: TimeZone) {
        let seconds = date.timeIntervalSince1970
        let clamped =
            seconds.isNaN ? Self.earliest : min(max(date, Self.earliest), Self.latest)
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let fields = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: clamped)
        year = min(max(fields.year ?? 1, 1), 9999)
        month = fields.month ?? 1
        day = fields.day ?? 1
        hour = fields.hour ?? 0
        minute = fields.minute ?? 0
        second = fields.second ?? 0
    }

    /// `YYYYMMDDTHHMMSS`, iCalendar's local DATE-TIME.
    var iCalendar: String {
        String(format: "%04d%02d%02dT%02d%02d%02d", year, month, day, hour, minute, second)
    }
}

extension TimeZone {
    /// Stud.IP installations' zone, where a caller says nothing else.
    @usableFromInline static let berlin = TimeZone(identifier: "Europe/Berlin") ?? .gmt
}
