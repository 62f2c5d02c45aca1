import Foundation

/// A time zone's daylight saving rules as an iCalendar `VTIMEZONE`: one `STANDARD` and one `DAYLIGHT`
/// observance, each a yearly rule (`RRULE:FREQ=YEARLY;BYMONTH=…;BYDAY=…`) read off the zone's transitions in the
/// year of `reference` — for Europe/Berlin the last Sunday of March at 02:00 (+01:00 → +02:00) and the last
/// Sunday of October at 03:00 (+02:00 → +01:00). A zone without daylight saving time that year gets one
/// `STANDARD` observance with its offset.
///
/// The rules of one year (the calendar's `DTSTAMP`: the rules in force when CampusFS read the dates) stand for
/// every year: right for Europe/Berlin since 1996, and for the semesters a mount shows; one odd date in the
/// list does not change them. Derived from the system's time zone data, not written down, so that a caller's
/// other zone is described as correctly.
struct TimeZoneRules {
    struct Observance {
        var isDaylight: Bool
        var offsetFrom: Int
        var offsetTo: Int
        /// The wall-clock time of the change, in the offset before it.
        var month: Int
        var hour: Int
        var minute: Int
        /// `-1SU` (the last Sunday) or `2SU` (the second); Foundation's weekday, 1 = Sunday.
        var ordinal: Int
        var weekday: Int
    }

    let identifier: String
    let observances: [Observance]
    let fixedOffset: Int

    init(_ timeZone: TimeZone, around reference: Date) {
        identifier = timeZone.identifier
        let year = LocalTime(reference, in: timeZone).year
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let yearStart =
            calendar.date(from: DateComponents(year: year, month: 1, day: 1)) ?? Date(timeIntervalSince1970: 0)
        let yearEnd = calendar.date(byAdding: .year, value: 1, to: yearStart) ?? yearStart
        var found: [Observance] = []
        var cursor = yearStart
        while found.count < 4, let change = timeZone.nextDaylightSavingTimeTransition(after: cursor), change < yearEnd {
            let before = timeZone.secondsFromGMT(for: change.addingTimeInterval(-1))
            let after = timeZone.secondsFromGMT(for: change)
            // The wall clock just before the change, read in UTC shifted by the offset in force then.
            let wall = calendar.dateComponents(
                [.month, .day, .hour, .minute, .weekday], from: change.addingTimeInterval(TimeInterval(before)))
            let day = wall.day ?? 1
            let daysInMonth =
                calendar.range(of: .day, in: .month, for: change.addingTimeInterval(TimeInterval(before)))?.count
                ?? 31
            found.append(
                Observance(
                    isDaylight: timeZone.isDaylightSavingTime(for: change), offsetFrom: before, offsetTo: after,
                    month: wall.month ?? 1, hour: wall.hour ?? 0, minute: wall.minute ?? 0,
                    ordinal: day + 7 > daysInMonth ? -1 : (day - 1) / 7 + 1, weekday: wall.weekday ?? 1))
            cursor = change
        }
        // A yearly rule needs one change each way; anything else (a zone that changed its base offset that year)
        // is described by the offset at the reference date.
        let isYearly = found.count == 2 && found[0].isDaylight != found[1].isDaylight
        observances = isYearly ? found : []
        fixedOffset = timeZone.secondsFromGMT(for: reference)
    }

    var vtimezone: [String] {
        var lines = ["BEGIN:VTIMEZONE", "TZID:" + ICalendar.text(identifier)]
        if observances.isEmpty {
            lines += [
                "BEGIN:STANDARD", "DTSTART:19700101T000000", "TZOFFSETFROM:" + Self.offset(fixedOffset),
                "TZOFFSETTO:" + Self.offset(fixedOffset), "END:STANDARD",
            ]
        }
        for observance in observances.sorted(by: { $0.isDaylight && !$1.isDaylight }) {
            let kind = observance.isDaylight ? "DAYLIGHT" : "STANDARD"
            lines += [
                "BEGIN:" + kind, "TZOFFSETFROM:" + Self.offset(observance.offsetFrom),
                "TZOFFSETTO:" + Self.offset(observance.offsetTo), "DTSTART:" + Self.firstOnset(observance),
                "RRULE:FREQ=YEARLY;BYMONTH=\(observance.month);BYDAY=\(observance.ordinal)"
                    + Self.weekdays[observance.weekday - 1],
                "END:" + kind,
            ]
        }
        return lines + ["END:VTIMEZONE"]
    }

    private static let weekdays = ["SU", "MO", "TU", "WE", "TH", "FR", "SA"]

    /// `+0100`, `-0330`.
    private static func offset(_ seconds: Int) -> String {
        let minutes = abs(seconds) / 60
        return (seconds < 0 ? "-" : "+") + String(format: "%02d%02d", minutes / 60, minutes % 60)
    }

    /// The rule's day in 1970 at the change's wall-clock time: the observance's first onset, as DTSTART must be.
    private static func firstOnset(_ observance: Observance) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = .gmt
        let first = calendar.date(from: DateComponents(year: 1970, month: observance.month, day: 1)) ?? .distantPast
        let days = calendar.range(of: .day, in: .month, for: first)?.count ?? 31
        let firstWeekday = calendar.component(.weekday, from: first)
        let firstMatch = 1 + (observance.weekday - firstWeekday + 7) % 7
        let day =
            observance.ordinal < 0
            ? firstMatch + (days - firstMatch) / 7 * 7 : firstMatch + (observance.ordinal - 1) * 7
        return String(format: "1970%02d%02dT%02d%02d00", observance.month, day, observance.hour, observance.minute)
    }
}
