import Foundation

/// Legacy REST announcements and dates (API.md §2.3, fixtures-5.0.7-more Part 1): numbers as strings in news,
/// `user/{id}/news` means news on the user's profile, course dates mark a cancelled date with `deleted: true`
/// and carry a holiday's name in `canceled`.
extension LegacyEnvironment {
    func news(_ item: News) -> JSON {
        var object: [(String, JSON)] = [
            ("news_id", .string(item.id)), ("topic", .string(item.title)), ("body", .string(item.content)),
            ("date", .string(String(item.date))), ("user_id", .string(item.authorID)),
            ("expire", .string(String(item.expire))), ("allow_comments", .string(item.allowComments ? "1" : "0")),
            ("chdate", .string(String(item.chdate))), ("chdate_uid", ""), ("mkdate", .string(String(item.mkdate))),
            ("body_html", .string(Self.formatted(item.content))),
        ]
        if item.allowComments {
            object.append(("comments", .string(href("news/\(item.id)/comments"))))
            object.append(("comments_count", 0))
        }
        let ranges: [JSON] = item.rangeIDs.map { range in
            if range == "studip" { return .string(href("studip/news")) }
            return .string(href(university.courses[range] != nil ? "course/\(range)/news" : "user/\(range)/news"))
        }
        object.append(("ranges", .array(ranges)))
        return .object(object)
    }

    /// `formatReady`: the stored HTML without its marker, in Stud.IP's content wrapper; a body without the marker
    /// is text, escaped, with a `<br>` for each line break.
    static func formatted(_ content: String) -> String {
        let body =
            content.hasPrefix("<!--HTML-->")
            ? String(content.dropFirst("<!--HTML-->".count))
            : content.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\r\n", with: "\n")
                .replacingOccurrences(of: "\n", with: "<br>\n")
        return "<div class=\"formatted-content\">" + body + "</div>"
    }

    private func newsList(_ items: [News]) -> SimResponse {
        tagged(envelope(items.map { (key: href("news/\($0.id)"), value: news($0)) }, keyed: true))
    }

    func courseNews(id: String, viewer: User) -> SimResponse {
        guard let found = university.courses[id] else { return error(404, "Course not found") }
        guard university.canAccess(course: found, user: viewer) else { return error(401, "") }
        return newsList(university.news(inRange: id, publishedAt: university.now))
    }

    func globalNews() -> SimResponse { newsList(university.news(inRange: "studip", publishedAt: university.now)) }

    /// News on a user's profile (not the news the user wrote, unlike JSON:API).
    func profileNews(id: String) -> SimResponse {
        guard university.users[id] != nil else { return error(404, "User not found") }
        return newsList(university.news(inRange: id, publishedAt: university.now))
    }

    /// Any news by id, also expired or not yet published; `Cache-Control`/`Expires` count `expire` from now.
    func newsShow(id: String) -> SimResponse {
        guard let found = university.news[id] else { return error(404, "News not found") }
        return tagged(
            news(found),
            headers: [
                ("Last-Modified", StudIPDate.http(found.chdate)), ("Cache-Control", "max-age=\(found.expire)"),
                ("Expires", StudIPDate.http(university.now + found.expire)),
            ])
    }

    func newsComments(id: String) -> SimResponse {
        guard university.news[id] != nil else { return error(404, "News not found") }
        return tagged(envelope([], keyed: true))
    }

    func courseEvents(id: String, viewer: User) -> SimResponse {
        guard let found = university.courses[id] else { return error(404, "Course not found") }
        guard university.canAccess(course: found, user: viewer) else { return error(401, "") }
        let items = university.events(ofCourse: id).map { event -> (key: String, value: JSON) in
            let value: JSON = [
                "event_id": .string(event.id), "start": .string(String(event.start)),
                "end": .string(String(event.end)), "title": .string(university.timeSpan(of: event)), "description": "",
                "categories": .string(event.category),
                "room": .string(Self.room(of: event)),
                "deleted": event.isCancelled ? true : .null,
                "canceled": event.holiday.map(JSON.string) ?? false,
            ]
            return (key: event.id, value: value)
        }
        return tagged(envelope(items, keyed: false))
    }

    /// Own dates from now to the end of the JSON:API window, in calendar form (no `deleted`; cancelled only by
    /// the title).
    func userEvents(id: String, viewer: User) -> SimResponse {
        guard id == viewer.id else { return error(401, "") }
        let now = university.now
        let end = university.startOfDay(now) + University.eventWindowDays * 86400
        let items = university.events(of: id, in: now..<end).map { event -> (key: String, value: JSON) in
            let value: JSON = [
                "event_id": .string(event.id), "course": .string(href("course/\(event.courseID)")),
                "start": .int(event.start), "end": .int(event.end),
                "title": .string(university.calendarTitle(of: event)),
                "description": .string(event.isCancelled ? event.cancelComment : ""),
                "categories": .string(event.isCancelled ? "" : event.category), "room": .string(event.room),
                "canceled": false,
            ]
            return (key: event.id, value: value)
        }
        return tagged(envelope(items, keyed: false))
    }

    /// 5.0.7's `room` of a course date: in parentheses, Stud.IP's placeholder without them when there is none,
    /// and for a cancelled date "(fällt aus)" or the holiday it fell on ("(Pfingstmontag)").
    static func room(of event: CourseEvent) -> String {
        if event.isCancelled { return "(\(event.holiday ?? "fällt aus"))" }
        return event.room.isEmpty ? "keine Raumangabe" : "(\(event.room))"
    }

    func userCalendar(id: String, viewer: User) -> SimResponse {
        guard id == viewer.id else { return error(401, "") }
        return .text(
            ICalendarExport.calendar(of: id, in: university, host: request.serverName), status: 200,
            contentType: "text/calendar;charset=utf-8",
            headers: [("Content-Disposition", ICalendarExport.contentDisposition)], route: route)
    }

    /// The timetable: days "6" (Sunday) down to "0" (Monday), empty ones `[]`, entries keyed
    /// `<course>-<regular time>` with times as HHMM numbers.
    func userSchedule(id: String, semesterID: String?, viewer: User) -> SimResponse {
        guard id == viewer.id else { return error(401, "") }
        let semester = semesterID.map { university.semesters[$0] } ?? university.currentSemester()
        guard let semester else { return error(404, "No such semester.") }
        let times = university.regularTimes(of: id, in: semester)
        let days: [(String, JSON)] = (0...6).reversed().map { day in
            let entries: [(String, JSON)] = times.filter { $0.weekday - 1 == day }.map { time in
                let course = university.courses[time.courseID]
                let lecturers = (course?.lecturers ?? []).compactMap { university.users[$0.userID]?.familyName }
                let name = [course?.number ?? "", course?.title ?? ""].filter { !$0.isEmpty }.joined(separator: " ")
                let group = university.membership(of: id, in: time.courseID)?.group ?? 8
                let value: JSON = [
                    "start": .int(time.startMinute / 60 * 100 + time.startMinute % 60),
                    "end": .int(time.endMinute / 60 * 100 + time.endMinute % 60),
                    "content": .string("\(name) (\(lecturers.joined(separator: ", ")))"),
                    "title": .string(
                        time.description + (time.rooms.isEmpty ? "" : "(\(time.rooms.joined(separator: ", ")))")),
                    "color": .int(group + 1), "type": "sem",
                ]
                return ("\(time.courseID)-\(time.id)", value)
            }
            return (String(day), entries.isEmpty ? .array([]) : .object(entries))
        }
        return tagged(.object(days))
    }
}
