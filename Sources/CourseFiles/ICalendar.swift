import Foundation
import StudIPModel

/// A course's dates or a semester's timetable as an iCalendar file (RFC 5545) that calendar programs import or
/// subscribe to.
///
/// Deterministic: the bytes depend only on the arguments (events sorted by start, then UID; `DTSTAMP` given by
/// the caller), so a file's size and mtime change exactly when its dates do. Times are local to `timeZone`
/// (`DTSTART;TZID=…`) with one `VTIMEZONE` describing its rules, so a date at 10:15 stays at 10:15 on both sides
/// of a daylight saving change. Lines end in CRLF and are folded at 75 octets without splitting a character.
public enum ICalendar {
    public struct Event: Sendable, Hashable {
        /// Stable across refreshes: `<Stud.IP id>@<host>`, so a calendar updates the event instead of adding one.
        public var uid: String
        public var start: Date
        public var end: Date
        public var summary: String
        public var location: String?
        public var description: String?
        public var isCancelled: Bool
        public var lastModified: Date?
        /// A timetable slot: the event repeats weekly (``Timetable``).
        public var recurrence: Recurrence?
        /// The start of the occurrence of the series with the same UID that this event replaces
        /// (`RECURRENCE-ID`): a session at another time that week (``Timetable``).
        public var recurrenceID: Date?

        public enum Recurrence: Sendable, Hashable {
            /// Every `interval` weeks until the instant `until` (the last occurrence's start), without the
            /// occurrences starting at `exceptions` (`EXDATE`).
            case weekly(interval: Int, until: Date, exceptions: [Date])
        }

        public init(
            uid: String, start: Date, end: Date, summary: String, location: String? = nil, description: String? = nil,
            isCancelled: Bool = false, lastModified: Date? = nil, recurrence: Recurrence? = nil,
            recurrenceID: Date? = nil
        ) {
            self.uid = uid
            self.start = start
            self.end = end
            self.summary = summary
            self.location = location
            self.description = description
            self.isCancelled = isCancelled
            self.lastModified = lastModified
            self.recurrence = recurrence
            self.recurrenceID = recurrenceID
        }

        /// One date of `course` (its name), summary "<course> (<kind>)", with the date's topic as description.
        /// Only what both API generations give goes in, so that a JSON:API and a legacy REST mount serve the same
        /// bytes: of a cancelled date its time, kind and status (legacy REST gives neither its room nor the cancel
        /// comment), and no holiday name beside a date (REST only). docs/course-files.md says what that leaves out.
        public init(_ date: CourseDate, course: String, host: String) {
            let kind = date.title?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            let topic = date.isCancelled ? nil : date.description
            self.init(
                uid: "\(date.id)@\(host)", start: date.start, end: date.end,
                summary: kind.isEmpty || kind == course ? course : "\(course) (\(kind))",
                location: date.isCancelled ? nil : date.room,
                description: topic.flatMap { $0.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? nil : $0 },
                isCancelled: date.isCancelled)
        }
    }

    /// The calendar `name` (`X-WR-CALNAME`) with `events`, all stamped `stamp` (when CampusFS last read them).
    public static func calendar(name: String, events: [Event], timeZone: TimeZone, stamp: Date) -> String {
        let sorted = events.sorted { ($0.start, $0.uid) < ($1.start, $1.uid) }
        let zone = timeZone.identifier
        var lines = [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//CampusFS//CampusFS//EN", "CALSCALE:GREGORIAN",
            "X-WR-CALNAME:" + text(name), "X-WR-TIMEZONE:" + text(zone),
        ]
        lines += TimeZoneRules(timeZone, around: stamp).vtimezone
        let utc = TimeZone.gmt
        for event in sorted {
            lines += [
                "BEGIN:VEVENT", "UID:" + text(event.uid), "DTSTAMP:" + LocalTime(stamp, in: utc).iCalendar + "Z",
                "DTSTART;TZID=\(parameter(zone)):" + LocalTime(event.start, in: timeZone).iCalendar,
            ]
            // DTEND must be later than DTSTART; without it the event is an instant.
            if event.end > event.start {
                lines.append("DTEND;TZID=\(parameter(zone)):" + LocalTime(event.end, in: timeZone).iCalendar)
            }
            if let replaced = event.recurrenceID {
                lines.append("RECURRENCE-ID;TZID=\(parameter(zone)):" + LocalTime(replaced, in: timeZone).iCalendar)
            }
            if case .weekly(let interval, let until, let exceptions) = event.recurrence {
                // UNTIL in UTC, as RFC 5545 requires with a DTSTART in a time zone; EXDATE in DTSTART's zone.
                let every = interval > 1 ? ";INTERVAL=\(interval)" : ""
                lines.append("RRULE:FREQ=WEEKLY\(every);UNTIL=" + LocalTime(until, in: utc).iCalendar + "Z")
                if !exceptions.isEmpty {
                    lines.append(
                        "EXDATE;TZID=\(parameter(zone)):"
                            + exceptions.sorted().map { LocalTime($0, in: timeZone).iCalendar }.joined(separator: ","))
                }
            }
            lines.append("SUMMARY:" + text(event.summary))
            // Nothing left after dropping control characters: no property rather than an empty one.
            if let location = event.location.map(text), !location.isEmpty { lines.append("LOCATION:" + location) }
            if let description = event.description.map(text), !description.isEmpty {
                lines.append("DESCRIPTION:" + description)
            }
            lines.append(event.isCancelled ? "STATUS:CANCELLED" : "STATUS:CONFIRMED")
            if let modified = event.lastModified {
                lines.append("LAST-MODIFIED:" + LocalTime(modified, in: utc).iCalendar + "Z")
            }
            lines.append("END:VEVENT")
        }
        lines.append("END:VCALENDAR")
        return lines.map(folded).joined(separator: "\r\n") + "\r\n"
    }

    /// Longest TEXT value written; a longer one is cut (at a character) — no calendar shows more.
    static let maxTextBytes = 64 << 10

    /// A TEXT value: backslash, semicolon, comma and line breaks escaped; other control characters, which
    /// RFC 5545 does not allow, dropped.
    static func text(_ value: String) -> String {
        var result = ""
        var bytes = 0
        var previous: Unicode.Scalar?
        for scalar in value.unicodeScalars {
            defer { previous = scalar }
            var piece: String
            switch scalar {
            case "\\": piece = "\\\\"
            case ";": piece = "\\;"
            case ",": piece = "\\,"
            case "\n": piece = previous == "\r" ? "" : "\\n"
            case "\r": piece = "\\n"
            case "\t": piece = "\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F { continue }
                piece = String(scalar)
            }
            bytes += piece.utf8.count
            if bytes > maxTextBytes { break }
            result += piece
        }
        return result
    }

    /// A parameter value (the zone's name): quoted when it holds `:`, `;` or `,`; quotes and controls dropped.
    static func parameter(_ value: String) -> String {
        let clean = String(value.unicodeScalars.filter { $0.value >= 0x20 && $0 != "\"" && $0.value != 0x7F })
        return clean.contains(where: { ":;,".contains($0) }) ? "\"\(clean)\"" : clean
    }

    /// A content line folded at 75 octets: the first line holds up to 75, each continuation a space and up to 74,
    /// never splitting a UTF-8 sequence.
    static func folded(_ line: String) -> String {
        guard line.utf8.count > 75 else { return line }
        var result = ""
        var width = 0
        var limit = 75
        for scalar in line.unicodeScalars {
            let size = UTF8.width(scalar)
            if width + size > limit {
                result += "\r\n "
                width = 0
                limit = 74
            }
            result.unicodeScalars.append(scalar)
            width += size
        }
        return result
    }
}
