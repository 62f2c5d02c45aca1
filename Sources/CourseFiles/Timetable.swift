import Foundation
import StudIPModel

/// A semester's timetable (`Stundenplan.ics`): each weekly slot of the schedule route as a repeating event whose
/// occurrences are exactly the dates its course meets (docs/course-files.md).
///
/// The course's dates are the truth, not the slot's weekly rule and not the semester: Stud.IP leaves the holiday
/// break out when it generates a course's dates, a lecturer cancels single dates, and Stud.IP 5.0.7's own rule
/// for a cycle yields days on which the server has no date. So the series starts at the first date, ends at the
/// last, and every week in between without a date (a holiday, a cancellation) is an `EXDATE`, unless a session at
/// another time that week replaces it.
public enum Timetable {
    /// The events of a semester's `slots`. `courseDates` are the dates of each slot's course by course id
    /// (cancelled ones included, as `Termine.ics` has them). An entry that is no course's (the user's own) has no
    /// dates to follow, so it repeats weekly within the lecture period (the semester when the server gave none).
    /// No occurrence, no event.
    ///
    /// Each date of the semester that takes place belongs to at most one slot of its course, so two cycles at
    /// the same time do not both show it: first the slot (by id) at its weekday, local start and length; then a
    /// date at a slot's weekday but another time or length replaces the occurrence of its week where that week
    /// has none (10:15–12:00 for once), an overriding event with the series' UID and a `RECURRENCE-ID` (RFC 5545
    /// §3.8.4.4), so the lecture that happens shows as it happens (docs/course-files.md).
    public static func events(
        _ slots: [ScheduleSlot], courseDates: [String: [CourseDate]], semester: RemoteSemester, host: String,
        timeZone: TimeZone
    ) -> [ICalendar.Event] {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let ordered = slots.sorted { $0.id < $1.id }
        var series: [Series] = ordered.filter { $0.courseID == nil }.map {
            Series(
                $0, starts: weekly($0, within: semester.lectures ?? semester.begin...semester.end, calendar), calendar)
        }
        let courses = Dictionary(grouping: ordered.filter { $0.courseID != nil }) { $0.courseID ?? "" }
        for (course, slots) in courses.sorted(by: { $0.key < $1.key }) {
            series += Self.series(slots, dates: courseDates[course] ?? [], semester: semester, calendar)
        }
        return series.flatMap { $0.events(host: host) }
    }

    /// The series of one course's `slots` (sorted by id), each date that takes place given to at most one.
    private static func series(
        _ slots: [ScheduleSlot], dates: [CourseDate], semester: RemoteSemester, _ calendar: Calendar
    ) -> [Series] {
        let local = { (date: Date) -> (weekday: Int, minute: Int) in
            let fields = calendar.dateComponents([.weekday, .hour, .minute], from: date)
            // Foundation's weekday (1 = Sunday) as ISO's (1 = Monday).
            return (((fields.weekday ?? 1) + 5) % 7 + 1, (fields.hour ?? 0) * 60 + (fields.minute ?? 0))
        }
        var seen = Set<[Date]>()
        let held = dates.filter { !$0.isCancelled && semester.begin <= $0.start && $0.start <= semester.end }
            .sorted { ($0.start, $0.end) < ($1.start, $1.end) }.filter { seen.insert([$0.start, $0.end]).inserted }
        var starts = Array(repeating: [Date](), count: slots.count)
        var others: [CourseDate] = []
        for date in held {
            let (weekday, minute) = local(date.start)
            let index = slots.firstIndex {
                isoWeekday($0.weekday) == weekday && startMinute($0) == minute
                    && date.end.timeIntervalSince(date.start) == duration($0)
            }
            if let index { starts[index].append(date.start) } else { others.append(date) }
        }
        var series = zip(slots, starts).map { Series($0, starts: $1, calendar) }
        for date in others {
            let (weekday, minute) = local(date.start)
            // Of two slots that day without a date that week, the one nearest in time.
            let candidates = series.indices.compactMap { index -> (distance: Int, index: Int, week: Int)? in
                guard isoWeekday(series[index].slot.weekday) == weekday, let week = series[index].gap(at: date.start)
                else { return nil }
                return (abs(minute - startMinute(series[index].slot)), index, week)
            }
            if let best = candidates.min(by: { ($0.distance, $0.index) < ($1.distance, $1.index) }) {
                series[best.index].replacements[best.week] = date
            }
        }
        return series
    }

    /// One slot's occurrences: `starts` at its weekday, start and length, every `interval` weeks from the first,
    /// and the dates that replace an occurrence of a week without one.
    private struct Series {
        let slot: ScheduleSlot
        let starts: [Date]
        let calendar: Calendar
        /// Each start's week after the first; dates of one slot share weekday and wall-clock time, so each is a
        /// whole number of weeks after the first.
        let weeks: [Int]
        let interval: Int
        var replacements: [Int: CourseDate] = [:]

        init(_ slot: ScheduleSlot, starts: [Date], _ calendar: Calendar) {
            self.slot = slot
            self.starts = starts
            self.calendar = calendar
            let first = starts.first
            weeks = starts.map { start in first.map { Series.days(from: $0, to: start, calendar) / 7 } ?? 0 }
            interval = max(weeks.reduce(0, gcd), 1)
        }

        private static func days(from first: Date, to date: Date, _ calendar: Calendar) -> Int {
            calendar.dateComponents([.day], from: calendar.startOfDay(for: first), to: calendar.startOfDay(for: date))
                .day ?? -1
        }

        /// The week of `date` when it is one of the rule's between the first and the last start without a date
        /// of its own yet.
        func gap(at date: Date) -> Int? {
            guard let first = starts.first, let last = weeks.last else { return nil }
            let days = Series.days(from: first, to: date, calendar)
            let week = days / 7
            guard days > 0, days % 7 == 0, week < last, week % interval == 0, !weeks.contains(week),
                replacements[week] == nil
            else { return nil }
            return week
        }

        /// One event with a weekly rule, its interval the largest that fits every start, and an overriding event
        /// for each replacement; where the weeks without a date outnumber those with one, one event per date
        /// instead, so a server's odd semester cannot make a rule with thousands of exceptions.
        func events(host: String) -> [ICalendar.Event] {
            guard let first = starts.first, let last = starts.last, let lastWeek = weeks.last else { return [] }
            let duration = Timetable.duration(slot)
            func event(
                _ start: Date, end: Date? = nil, room: String? = nil, uid: String,
                recurrence: ICalendar.Event.Recurrence? = nil, replacing: Date? = nil
            ) -> ICalendar.Event {
                ICalendar.Event(
                    uid: uid, start: start, end: end ?? start.addingTimeInterval(duration), summary: slot.title,
                    location: room ?? slot.room, description: slot.description, recurrence: recurrence,
                    recurrenceID: replacing)
            }
            if starts.count == 1 { return [event(first, uid: "\(slot.id)@\(host)")] }
            let held = Set(weeks)
            let missing = (lastWeek / interval + 1) - held.count - replacements.count
            if missing > starts.count + replacements.count {
                let own = { (start: Date) in "\(slot.id)-\(LocalTime(start, in: calendar.timeZone).iCalendar)@\(host)" }
                return starts.map { event($0, uid: own($0)) }
                    + replacements.values.map { event($0.start, end: $0.end, room: $0.room, uid: own($0.start)) }
            }
            let occurrence = { (week: Int) in calendar.date(byAdding: .day, value: 7 * week, to: first) }
            let exceptions = stride(from: interval, through: lastWeek, by: interval)
                .filter { !held.contains($0) && replacements[$0] == nil }.compactMap(occurrence)
            let uid = "\(slot.id)@\(host)"
            return [
                event(first, uid: uid, recurrence: .weekly(interval: interval, until: last, exceptions: exceptions))
            ]
                + replacements.sorted { $0.key < $1.key }.compactMap { week, date in
                    occurrence(week).map { event(date.start, end: date.end, room: date.room, uid: uid, replacing: $0) }
                }
        }
    }

    private static func startMinute(_ slot: ScheduleSlot) -> Int { min(max(slot.startMinute, 0), 24 * 60 - 1) }

    /// The slot's length, none when it ends before it starts.
    private static func duration(_ slot: ScheduleSlot) -> TimeInterval {
        TimeInterval(max(slot.endMinute - startMinute(slot), 0) * 60)
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
        let startMinute = startMinute(slot)
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
