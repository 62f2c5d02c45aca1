import Foundation

/// Stud.IP 5.0.7's iCalendar export of a user's course dates (`users/{id}/events.ics`, legacy
/// `user/{id}/events.ics`): every date of the user's courses, past and future, first the dates by start, then the
/// cancelled ones (`ex_termine`) by start, each `STATUS:CONFIRMED` — a cancelled date is recognisable only by the
/// " (fällt aus)" in its summary and the comment as description.
enum ICalendarExport {
    static let contentDisposition = "attachment; filename=\"studip.ics\""

    /// `host` is the server name Stud.IP puts into `PRODID` and every `UID`.
    static func calendar(of userID: String, in university: University, host: String) -> String {
        let dates = university.courses(of: userID).flatMap { university.events(ofCourse: $0.id) }
        let ordered =
            dates.filter { !$0.isCancelled }.sorted { ($0.start, $0.id) < ($1.start, $1.id) }
            + dates.filter(\.isCancelled).sorted { ($0.start, $0.id) < ($1.start, $1.id) }
        var lines = [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Stud.IP@\(host)//Stud.IP_iCalendar Library //EN",
            "METHOD:PUBLISH", "CALSCALE:GREGORIAN",
        ]
        lines += timeZoneBlock(university.timeZone)
        let stamp = utc(university.now)
        for event in ordered {
            let zone = university.timeZone.identifier
            lines.append("BEGIN:VEVENT")
            lines.append("DTSTART;TZID=\(zone):\(local(event.start, university.timeZone))")
            lines.append("DTEND;TZID=\(zone):\(local(event.end, university.timeZone))")
            lines.append("SUMMARY:" + escaped(university.calendarTitle(of: event)))
            if event.isCancelled, !event.cancelComment.isEmpty {
                lines.append("DESCRIPTION:" + escaped(event.cancelComment))
            }
            if !event.room.isEmpty { lines.append("LOCATION:" + escaped(event.room)) }
            if !event.isCancelled { lines.append("CATEGORIES:" + escaped(event.category)) }
            lines += [
                "CREATED:\(utc(event.mkdate))", "LAST-MODIFIED:\(utc(event.chdate))", "CLASS:CONFIDENTIAL",
                "UID:Stud.IP-SEM-\(event.id)@\(host)", "STATUS:CONFIRMED", "DTSTAMP:\(stamp)", "END:VEVENT",
            ]
        }
        lines.append("END:VCALENDAR")
        return lines.map(folded).joined(separator: "\r\n") + "\r\n"
    }

    /// The only zone a Stud.IP installation in the simulator uses; other zones get no block.
    private static func timeZoneBlock(_ zone: TimeZone) -> [String] {
        guard zone.identifier == "Europe/Berlin" else { return [] }
        return [
            "BEGIN:VTIMEZONE", "TZID:Europe/Berlin", "BEGIN:DAYLIGHT", "TZOFFSETFROM:+0100", "TZOFFSETTO:+0200",
            "TZNAME:CEST", "DTSTART:19700329T020000", "RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3", "END:DAYLIGHT",
            "BEGIN:STANDARD", "TZOFFSETFROM:+0200", "TZOFFSETTO:+0100", "TZNAME:CET", "DTSTART:19701025T030000",
            "RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10", "END:STANDARD", "END:VTIMEZONE",
        ]
    }

    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: ";", with: "\\;")
            .replacingOccurrences(of: ",", with: "\\,").replacingOccurrences(of: "\r\n", with: "\\n")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    /// The PEAR/Horde fold Stud.IP uses: lines over 75 characters (not octets) are cut after the last `;` or `:`
    /// within the first 75, but after at least 60 characters.
    static func folded(_ line: String) -> String {
        var rest = Array(line)
        guard rest.count > 75 else { return line }
        var parts: [String] = []
        while !rest.isEmpty {
            let window = rest.prefix(75)
            let separator = window.lastIndex { $0 == ";" || $0 == ":" }.map { $0 + 1 } ?? 0
            let cut = min(rest.count, max(60, separator))
            parts.append(String(rest[..<cut]))
            rest.removeFirst(cut)
        }
        return parts.joined(separator: "\r\n ")
    }

    private static func utc(_ time: Int) -> String {
        format(time, TimeZone(identifier: "UTC") ?? .gmt) + "Z"
    }

    private static func local(_ time: Int, _ zone: TimeZone) -> String { format(time, zone) }

    private static func format(_ time: Int, _ zone: TimeZone) -> String {
        let offset = zone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(time)))
        let seconds = time + offset
        let day = CivilCalendar.date(days: seconds.floorDiv(86400))
        let clock = seconds.floorMod(86400)
        return String(
            format: "%04d%02d%02dT%02d%02d%02d", day.year, day.month, day.day, clock / 3600, clock % 3600 / 60,
            clock % 60)
    }
}
