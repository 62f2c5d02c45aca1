import Foundation
import StudIPModel

// Announcements, course dates and the timetable (issue 18) as both APIs send them; the quirks are those of
// Tests/Fixtures/studip-5.0.7-more/README.md. An item without id or times fails the whole list with a
// `malformedResponse`: a course's dates or news are read together, and a silent gap would look like a cancellation.

extension JSONAPIFormat {
    /// `news` resources. `included` holds the users `include=author` brought along; their formatted names become
    /// `authorName`, so no request per author is needed.
    package static func announcements(_ elements: [JSONValue], included: [JSONValue], what: String)
        throws(StudIPError) -> [Announcement]
    {
        var names: [String: String] = [:]
        for user in included where user["type"]?.string == "users" {
            let attributes = user["attributes"]
            let formatted =
                attributes?["formatted-name"]?.string
                ?? [attributes?["given-name"]?.string, attributes?["family-name"]?.string].compactMap { $0 }
                .joined(separator: " ")
            if let id = user["id"]?.id, let name = CourseItemText.nonEmpty(formatted) { names[id] = name }
        }
        var announcements: [Announcement] = []
        for element in elements {
            let attributes = element["attributes"]
            guard let id = element["id"]?.id, let published = StudIPDate.iso8601(attributes?["publication-start"])
            else { throw .malformedResponse(what: what, detail: "an announcement without id or publication-start") }
            let authorID = element["relationships"]?["author"]?["data"]?["id"]?.id
            announcements.append(
                Announcement(
                    id: id, title: attributes?["title"]?.string ?? "",
                    html: CourseItemText.bodyHTML(attributes?["content"]?.string ?? ""),
                    authorName: authorID.flatMap { names[$0] }, published: published,
                    expires: StudIPDate.iso8601(attributes?["publication-end"]),
                    changed: StudIPDate.iso8601(attributes?["chdate"]) ?? StudIPDate.iso8601(attributes?["mkdate"])
                        ?? published,
                    commentsAllowed: attributes?["comments-allowed"]?.bool ?? false))
        }
        return CourseItemText.newestFirst(announcements)
    }

    /// `course-events` of `courses/{id}/events`. Stud.IP 5.5+ says `is-cancelled`; 5.0 includes a cancelled date
    /// only as a date whose title ends in " (fällt aus)", with no categories and the cancel comment as its
    /// description. Both conditions are required there: a course named "… (fällt aus)" has regular dates with that
    /// title too, but with a category. A date without a category (5.0's cancelled ones) takes the kind of the dates
    /// with the same title ("Projekttreffen, <course>" has the category "Sitzung"), which is what legacy REST names;
    /// a date no other shares a title with has none.
    package static func courseDates(_ elements: [JSONValue], what: String) throws(StudIPError) -> [CourseDate] {
        var dates: [CourseDate] = []
        var kindOfTitle: [String: String] = [:]
        var titleOfUnnamed: [Int: String] = [:]
        for element in elements {
            let attributes = element["attributes"]
            guard let id = element["id"]?.id, let start = StudIPDate.iso8601(attributes?["start"]),
                let end = StudIPDate.iso8601(attributes?["end"])
            else { throw .malformedResponse(what: what, detail: "a date without id, start or end") }
            let categories = (attributes?["categories"]?.array ?? []).compactMap(\.string).filter { !$0.isEmpty }
            var title = attributes?["title"]?.string ?? ""
            let marked = title.hasSuffix(CourseItemText.cancelledSuffix)
            if marked { title.removeLast(CourseItemText.cancelledSuffix.count) }
            let isCancelled = attributes?["is-cancelled"]?.bool ?? (marked && categories.isEmpty)
            if let kind = categories.first {
                kindOfTitle[title] = kindOfTitle[title] ?? kind
            } else {
                titleOfUnnamed[dates.count] = title
            }
            let text = CourseItemText.nonEmpty(attributes?["description"]?.string)
            dates.append(
                CourseDate(
                    id: id, start: start, end: max(start, end), title: categories.first,
                    description: isCancelled ? nil : text,
                    room: CourseItemText.nonEmpty(attributes?["location"]?.string), isCancelled: isCancelled,
                    cancellationNote: isCancelled ? text : nil))
        }
        for (index, title) in titleOfUnnamed { dates[index].title = kindOfTitle[title] }
        return CourseItemText.byStart(dates)
    }

    /// `users/{id}/schedule`: `seminar-cycle-dates` (a course's regular time: `title` "<number> <name>",
    /// `weekday` 0 = Sunday … 6 = Saturday, `start`/`end` "HH:MM", `locations`) and the user's own entries.
    package static func schedule(_ elements: [JSONValue], what: String) throws(StudIPError) -> [ScheduleSlot] {
        var slots: [ScheduleSlot] = []
        for element in elements {
            let attributes = element["attributes"]
            guard let id = element["id"]?.id, let weekday = attributes?["weekday"]?.int, (0...7).contains(weekday),
                let start = CourseItemText.minutes(clock: attributes?["start"]?.string),
                let end = CourseItemText.minutes(clock: attributes?["end"]?.string)
            else { throw .malformedResponse(what: what, detail: "a timetable entry without id, weekday or times") }
            let owner = element["relationships"]?["owner"]?["data"]
            let rooms = (attributes?["locations"]?.array ?? []).compactMap(\.string).filter { !$0.isEmpty }
            slots.append(
                ScheduleSlot(
                    id: id, courseID: owner?["type"]?.string == "courses" ? owner?["id"]?.id : nil,
                    title: attributes?["title"]?.string ?? "", weekday: weekday == 0 ? 7 : Int(weekday),
                    startMinute: start, endMinute: max(start, end),
                    room: rooms.isEmpty ? nil : rooms.joined(separator: ", "),
                    description: CourseItemText.nonEmpty(attributes?["description"]?.string)))
        }
        return CourseItemText.byWeekday(slots)
    }
}

extension LegacyRESTFormat {
    /// News objects of `course/{id}/news`. The body is `body_html` without Stud.IP's
    /// `<div class="formatted-content">` wrapper: for news written in Stud.IP's own markup that is the rendered
    /// HTML, where `body` holds the markup. `names` (user id → name) gives `authorName`: the API sends only
    /// `user_id`, and the course listing already named its lecturers, who write the announcements; others stay nil
    /// rather than costing a request per author.
    package static func announcements(_ elements: [JSONValue], names: [String: String], what: String)
        throws(StudIPError) -> [Announcement]
    {
        var announcements: [Announcement] = []
        for element in elements {
            guard let id = element["news_id"]?.id, let published = StudIPDate.unix(element["date"]) else {
                throw .malformedResponse(what: what, detail: "an announcement without news_id or date")
            }
            let html =
                element["body_html"]?.string.map(CourseItemText.withoutFormattedContentWrapper)
                ?? CourseItemText.bodyHTML(element["body"]?.string ?? "")
            // `expire` is a duration after `date`; one past the year 9999 is no readable end, so none.
            let expire = element["expire"]?.int ?? 0
            let end = published.addingTimeInterval(TimeInterval(expire))
            announcements.append(
                Announcement(
                    id: id, title: element["topic"]?.string ?? "", html: html,
                    authorName: element["user_id"]?.id.flatMap { names[$0] }, published: published,
                    expires: expire > 0 && StudIPDate.readable.contains(end) ? end : nil,
                    changed: StudIPDate.unix(element["chdate"]) ?? StudIPDate.unix(element["mkdate"]) ?? published,
                    commentsAllowed: element["allow_comments"]?.bool ?? false))
        }
        return CourseItemText.newestFirst(announcements)
    }

    /// `course/{id}/events`: start and end as Unix seconds (strings in 5.0), `title` a formatted date (useless),
    /// `categories` the date's type, `room` in parentheses, or without them Stud.IP's placeholder for none ("keine
    /// Raumangabe"; JSON:API's `location` is null there). A cancelled date has `deleted: true` and the room
    /// "(fällt aus)" or "(<holiday>)", no comment; `canceled` is false or the name of a holiday the date falls on
    /// ("Fastnacht"), which Stud.IP shows beside a date that still takes place.
    package static func courseDates(_ elements: [JSONValue], what: String) throws(StudIPError) -> [CourseDate] {
        var dates: [CourseDate] = []
        for element in elements {
            guard let id = element["event_id"]?.id, let start = StudIPDate.unix(element["start"]),
                let end = StudIPDate.unix(element["end"])
            else { throw .malformedResponse(what: what, detail: "a date without event_id, start or end") }
            let isCancelled = element["deleted"]?.bool ?? false
            let note = CourseItemText.nonEmpty(element["canceled"]?.string)
            let room = CourseItemText.parenthesised(element["room"]?.string ?? "")
            dates.append(
                CourseDate(
                    id: id, start: start, end: max(start, end),
                    title: CourseItemText.nonEmpty(element["categories"]?.string),
                    description: CourseItemText.nonEmpty(element["description"]?.string),
                    room: isCancelled && (room == CourseItemText.cancelledRoom || room == note) ? nil : room,
                    isCancelled: isCancelled, cancellationNote: note))
        }
        return CourseItemText.byStart(dates)
    }

    /// `user/{id}/schedule/{semester_id}`: an object keyed by day "0" (Monday) … "6" (Sunday), each an object of
    /// entries keyed "<course id>-<cycle id>" (empty days `[]`), `start`/`end` as HHMM integers, `content`
    /// "<number> <name> (<lecturers>)" and `title` "<description>(<room>)".
    package static func schedule(_ json: JSONValue, what: String) throws(StudIPError) -> [ScheduleSlot] {
        guard case .object(let days) = json else {
            throw .malformedResponse(what: what, detail: "no object of weekdays")
        }
        var slots: [ScheduleSlot] = []
        for (day, entries) in days {
            guard let index = Int(day), (0...6).contains(index) else {
                throw .malformedResponse(what: what, detail: "weekday \"\(day)\" is not 0…6")
            }
            guard case .object(let keyed) = entries else { continue }
            for (key, entry) in keyed {
                guard let start = CourseItemText.minutes(hhmm: entry["start"]?.int),
                    let end = CourseItemText.minutes(hhmm: entry["end"]?.int)
                else { throw .malformedResponse(what: what, detail: "a timetable entry without start or end") }
                let parts = key.split(separator: "-", maxSplits: 1).map(String.init)
                let (description, room) = CourseItemText.splitTrailingGroup(entry["title"]?.string ?? "")
                slots.append(
                    ScheduleSlot(
                        id: parts.count == 2 ? parts[1] : key, courseID: parts.count == 2 ? parts[0] : nil,
                        title: CourseItemText.splitTrailingGroup(entry["content"]?.string ?? "").text,
                        weekday: index + 1, startMinute: start, endMinute: max(start, end), room: room,
                        description: CourseItemText.nonEmpty(description)))
            }
        }
        return CourseItemText.byWeekday(slots)
    }
}

/// The text conventions both APIs share.
package enum CourseItemText {
    static let cancelledSuffix = " (fällt aus)"
    static let cancelledRoom = "fällt aus"

    static func nonEmpty(_ text: String?) -> String? {
        guard let trimmed = text?.trimmingCharacters(in: .whitespacesAndNewlines), !trimmed.isEmpty else {
            return nil
        }
        return trimmed
    }

    /// Stud.IP marks HTML bodies (as opposed to its own markup) with a leading `<!--HTML-->` comment.
    package static func withoutHTMLMarker(_ text: String) -> String {
        guard let end = htmlMarkerEnd(text) else { return text }
        return String(text[end...])
    }

    /// Where a leading `<!--HTML-->` marker ends, blanks allowed around and inside it. Matched by hand: a regex
    /// literal is compiled again each time it is evaluated, 1 % of the daemon's CPU during a first fill
    /// (docs/performance.md, "Decoding").
    static func htmlMarkerEnd(_ text: String) -> String.Index? {
        var rest = text.drop(while: \.isWhitespace)
        for part in ["<!--", "HTML", "-->"] {
            guard rest.hasPrefix(part) else { return nil }
            rest = rest.dropFirst(part.count)
            if part != "-->" { rest = rest.drop(while: \.isWhitespace) }
        }
        return rest.startIndex
    }

    /// A stored body (JSON:API `content`, REST `body`) as HTML: with Stud.IP's marker it is HTML; without, it is
    /// text that Stud.IP shows with its line breaks (REST's `body_html` has a `<br>` for each), so its markup
    /// characters are escaped and each line break becomes a `<br>`.
    static func bodyHTML(_ text: String) -> String {
        if let end = htmlMarkerEnd(text) { return String(text[end...]) }
        var html = ""
        // "\r\n" is one Character in Swift: one break.
        for character in text {
            switch character {
            case "&": html += "&amp;"
            case "<": html += "&lt;"
            case ">": html += "&gt;"
            case "\r\n", "\r", "\n": html += "<br>\n"
            default: html.append(character)
            }
        }
        return html
    }

    /// Legacy REST's `body_html` is the body rendered and wrapped in `<div class="formatted-content">…</div>`.
    static func withoutFormattedContentWrapper(_ html: String) -> String {
        let opening = "<div class=\"formatted-content\">"
        let closing = "</div>"
        guard html.hasPrefix(opening), html.hasSuffix(closing), html.count >= opening.count + closing.count else {
            return withoutHTMLMarker(html)
        }
        return withoutHTMLMarker(String(html.dropFirst(opening.count).dropLast(closing.count)))
    }

    /// "(Hörsaal 1 (Gebäude Ä))" → "Hörsaal 1 (Gebäude Ä)": legacy REST wraps rooms in parentheses. Anything
    /// else is no room: "()", or the placeholder Stud.IP writes without them in its own language ("keine
    /// Raumangabe"), which is not a room.
    static func parenthesised(_ text: String) -> String? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let (before, group) = splitTrailingGroup(trimmed)
        guard before.isEmpty, trimmed.hasPrefix("(") else { return nil }
        return group
    }

    /// "Vorlesung(Hörsaal 1 (Ä))" → ("Vorlesung", "Hörsaal 1 (Ä)"): the text before the balanced parenthesised
    /// group that ends it, and the group's content; (text, nil) when it does not end in one.
    static func splitTrailingGroup(_ text: String) -> (text: String, group: String?) {
        guard text.hasSuffix(")") else { return (text, nil) }
        var depth = 0
        var index = text.endIndex
        while index > text.startIndex {
            index = text.index(before: index)
            switch text[index] {
            case ")": depth += 1
            case "(":
                depth -= 1
                if depth == 0 {
                    let group = String(text[text.index(after: index)..<text.index(before: text.endIndex)])
                    return (text[..<index].trimmingCharacters(in: .whitespaces), nonEmpty(group))
                }
            default: break
            }
        }
        return (text, nil)
    }

    /// A semester's lecture period from its two ends; nil when one is missing or they are reversed.
    static func period(_ begin: Date?, _ end: Date?) -> ClosedRange<Date>? {
        guard let begin, let end, begin <= end else { return nil }
        return begin...end
    }

    /// "10:15" → 615.
    static func minutes(clock: String?) -> Int? {
        let parts = clock?.split(separator: ":") ?? []
        guard parts.count >= 2, let hour = Int(parts[0]), let minute = Int(parts[1]) else { return nil }
        return minutes(hours: hour, minutes: minute)
    }

    /// 1015 → 615.
    static func minutes(hhmm: Int64?) -> Int? {
        guard let hhmm, hhmm >= 0, hhmm <= 2400 else { return nil }
        return minutes(hours: Int(hhmm / 100), minutes: Int(hhmm % 100))
    }

    private static func minutes(hours: Int, minutes: Int) -> Int? {
        guard (0...24).contains(hours), (0..<60).contains(minutes), hours * 60 + minutes <= 24 * 60 else { return nil }
        return hours * 60 + minutes
    }

    static func newestFirst(_ items: [Announcement]) -> [Announcement] {
        items.sorted { ($0.published, $1.id) > ($1.published, $0.id) }
    }

    static func byStart(_ items: [CourseDate]) -> [CourseDate] {
        items.sorted { ($0.start, $0.end, $0.id) < ($1.start, $1.end, $1.id) }
    }

    static func byWeekday(_ items: [ScheduleSlot]) -> [ScheduleSlot] {
        items.sorted { ($0.weekday, $0.startMinute, $0.id) < ($1.weekday, $1.startMinute, $1.id) }
    }
}
