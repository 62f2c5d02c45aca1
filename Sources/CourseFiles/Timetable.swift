import Foundation
import StudIPModel

/// A semester's timetable (`Stundenplan.ics`): each weekly slot of the schedule route as a repeating event whose
/// occurrences are exactly the dates its course meets (docs/course-files.md).
///
/// The course's dates are the truth, not the slot's weekly rule and not the semester: Stud.IP leaves the holiday
/// break out when it generates a course's dates, a lecturer cancels single dates, and Stud.IP 5.0.7's own rule
/// for a cycle yields days on which the server has no date. So the series starts at the first date, ends at the
/// last, and every week in between without a date (a holiday, a cancellation) is an `EXDATE`.
public enum Timetable {
    /// The events of `slot`. `courseDates` are the dates of the slot's course (cancelled ones included, as
    /// `Termine.ics` has them); those of the semester at the slot's weekday and local times are its occurrences.
    /// nil for an entry that is no course's (the user's own): it has no dates to follow, so it repeats weekly
    /// within the lecture period (the semester when the server gave none). No occurrence, no event.
    ///
    /// One event with a weekly rule, its interval the largest that fits every date (a fortnightly cycle says
    /// `INTERVAL=2`); where the weeks without a date outnumber those with one, one event per date instead, so a
    /// server's odd semester cannot make a rule with thousands of exceptions.
    public static func events(
        _ slot: ScheduleSlot, courseDates: [CourseDate]?, semester: RemoteSemester, host: String, timeZone: TimeZone
    ) -> [ICalendar.Event] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let startMinute = min(max(slot.startMinute, 0), 24 * 60 - 1)
        let duration = TimeInterval(max(slot.endMinute - startMinute, 0) * 60)
        let starts: [Date]
        if let courseDates {
            let local = { (date: Date) -> (weekday: Int, minute: Int) in
                let fields = calendar.dateComponents([.weekday, .hour, .minute], from: date)
                // Foundation's weekday (1 = Sunday) as ISO's (1 = Monday).
                return (((fields.weekday ?? 1) + 5) % 7 + 1, (fields.hour ?? 0) * 60 + (fields.minute ?? 0))
            }
            let held = courseDates.filter { date in
                guard !date.isCancelled, semester.begin <= date.start, date.start <= semester.end,
                    date.end.timeIntervalSince(date.start) == duration
                else { return false }
                let (weekday, minute) = local(date.start)
                return weekday == isoWeekday(slot.weekday) && minute == startMinute
            }
            starts = Set(held.map(\.start)).sorted()
        } else {
            starts = weekly(slot, within: semester.lectures ?? semester.begin...semester.end, calendar)
        }
        guard let first = starts.first, let last = starts.last else { return [] }

        // Each date's week after the first; dates of one slot share weekday and wall-clock time, so each is a
        // whole number of weeks after the first.
        let weeks = starts.map { start in
            (calendar.dateComponents([.day], from: calendar.startOfDay(for: first), to: calendar.startOfDay(for: start))
                .day ?? 0) / 7
        }
        let interval = max(weeks.reduce(0, gcd), 1)
        let held = Set(weeks)
        let missing = ((weeks.last ?? 0) / interval + 1) - held.count
        func event(_ start: Date, uid: String, recurrence: ICalendar.Event.Recurrence?) -> ICalendar.Event {
            ICalendar.Event(
                uid: uid, start: start, end: start.addingTimeInterval(duration), summary: slot.title,
                location: slot.room, description: slot.description, recurrence: recurrence)
        }
        if starts.count == 1 { return [event(first, uid: "\(slot.id)@\(host)", recurrence: nil)] }
        if missing > starts.count {
            return starts.map {
                event($0, uid: "\(slot.id)-\(LocalTime($0, in: timeZone).iCalendar)@\(host)", recurrence: nil)
            }
        }
        let exceptions = stride(from: interval, through: weeks.last ?? 0, by: interval).filter { !held.contains($0) }
            .compactMap { calendar.date(byAdding: .day, value: 7 * $0, to: first) }
        return [
            event(
                first, uid: "\(slot.id)@\(host)",
                recurrence: .weekly(interval: interval, until: last, exceptions: exceptions))
        ]
    }

    /// ISO weekday (1 = Monday … 7 = Sunday) of any integer, folded into a week.
    private static func isoWeekday(_ weekday: Int) -> Int { ((weekday - 1) % 7 + 7) % 7 + 1 }

    private static func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? abs(a) : gcd(b, a % b) }

    /// Most weeks an own entry repeats: a lecture period is about 15, a server's odd one stays a short rule.
    static let maxOwnWeeks = 60

    /// The slot's weekday at its start minute in every week of `period`, at most ``maxOwnWeeks``.
    private static func weekly(_ slot: ScheduleSlot, within period: ClosedRange<Date>, _ calendar: Calendar) -> [Date] {
        let begin = min(max(period.lowerBound, LocalTime.earliest), LocalTime.latest)
        let firstDay = calendar.startOfDay(for: begin)
        let wanted = isoWeekday(slot.weekday) % 7 + 1  // Foundation's weekday, 1 = Sunday
        let offset = (wanted - calendar.component(.weekday, from: firstDay) + 7) % 7
        let startMinute = min(max(slot.startMinute, 0), 24 * 60 - 1)
        var result: [Date] = []
        var week = 0
        while let day = calendar.date(byAdding: .day, value: offset + 7 * week, to: firstDay),
            let start = calendar.date(
                bySettingHour: startMinute / 60, minute: startMinute % 60, second: 0, of: day),
            start <= period.upperBound, week < maxOwnWeeks
        {
            if start >= period.lowerBound { result.append(start) }
            week += 1
        }
        return result
    }
}
