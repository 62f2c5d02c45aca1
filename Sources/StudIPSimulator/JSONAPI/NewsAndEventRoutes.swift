import Foundation

/// Announcements and course dates (API.md §3.3, fixtures-5.0.7-more Part 1): course and global lists show only
/// published news, `users/{id}/news` every news the user wrote, `news/{id}` any news; course dates include the
/// cancelled ones, marked only in title, categories and description.
extension JSONAPIEnvironment {
    func news(_ item: News) -> JSON {
        let ranges: [JSON] = item.rangeIDs.map { range in
            if range == "studip" { return identifier("global", range) }
            return identifier(university.courses[range] != nil ? "courses" : "users", range)
        }
        return resource(
            "news", item.id,
            attributes: [
                ("title", .string(item.title)), ("content", .string(item.content)), ("mkdate", date(item.mkdate)),
                ("chdate", date(item.chdate)), ("publication-start", date(item.date)),
                ("publication-end", date(item.date + item.expire)), ("comments-allowed", .bool(item.allowComments)),
            ],
            relationships: [
                ("author", toOne("users", item.authorID)),
                ("comments", related("news/\(item.id)/comments")),
                (
                    "ranges",
                    relationship(
                        data: .array(ranges), links: [("self", .string(link("news/\(item.id)/relationships/ranges")))])
                ),
            ])
    }

    /// Stud.IP 5.0.7's `course-events`: no cancelled flag, a fixed `SINGLE` recurrence. Later layouts add
    /// `display-value`, `type` and `is-cancelled` (their values are not captured: the date as Stud.IP's
    /// `getFullname()` formats it and the default date types are assumptions).
    func courseEvent(_ event: CourseEvent) -> JSON {
        var attributes: [(String, JSON)] = [
            ("title", .string(university.calendarTitle(of: event))),
            ("description", .string(event.isCancelled ? event.cancelComment : "")),
        ]
        if layout.courseEventFlags { attributes.append(("display-value", .string(university.timeSpan(of: event)))) }
        attributes += [("start", date(event.start)), ("end", date(event.end))]
        if layout.courseEventFlags { attributes.append(("type", .int(CourseEvent.typeIDs[event.category] ?? 5))) }
        attributes += [
            ("categories", event.isCancelled ? [] : [.string(event.category)]),
            ("location", event.room.isEmpty ? .null : .string(event.room)),
        ]
        if layout.courseEventFlags { attributes.append(("is-cancelled", .bool(event.isCancelled))) }
        attributes += [
            ("mkdate", date(event.mkdate)), ("chdate", date(event.chdate)),
            (
                "recurrence",
                [
                    "ts": 0, "linterval": 0, "sinterval": 0, "wdays": "", "month": 0, "day": 0, "rtype": "SINGLE",
                    "duration": 1,
                ]
            ),
        ]
        return resource(
            "course-events", event.id, attributes: attributes,
            relationships: [("owner", toOne("courses", event.courseID))])
    }

    /// `include=author,ranges` (news) or `include=owner` (events): each related resource once, in order of use.
    private func included(_ references: [(type: String, id: String)]) -> [JSON] {
        var seen: Set<String> = []
        var result: [JSON] = []
        for reference in references where seen.insert("\(reference.type)/\(reference.id)").inserted {
            switch reference.type {
            case "users":
                if let found = university.users[reference.id] {
                    result.append(Self.dropping(["relationships", "links"], from: user(found)))
                }
            case "courses":
                if let found = university.courses[reference.id] {
                    result.append(Self.dropping(["links"], from: course(found)))
                }
            default: break
            }
        }
        return result
    }

    /// neomerx v1 writes included resources without `links`, and included users without relationships.
    private static func dropping(_ keys: Set<String>, from resource: JSON) -> JSON {
        guard case .object(let members) = resource else { return resource }
        return .object(members.filter { !keys.contains($0.0) })
    }

    private var includes: [String] {
        (request.queryValue("include") ?? "").split(separator: ",").map(String.init)
    }

    private func newsIncludes(_ items: [News]) -> [JSON] {
        included(
            items.flatMap { item in
                var references: [(type: String, id: String)] = []
                if includes.contains("author") { references.append(("users", item.authorID)) }
                if includes.contains("ranges") {
                    references += item.rangeIDs.map { (university.courses[$0] != nil ? "courses" : "users", $0) }
                }
                return references
            })
    }

    private func newsCollection(_ items: [News]) -> SimResponse {
        let page = Page(query: request.query)
        return collection(items.map(news), page: page, included: newsIncludes(page.slice(items)))
    }

    func courseNews(id: String, viewer: User) -> SimResponse {
        guard let found = university.courses[id] else { return notFound() }
        guard university.canAccess(course: found, user: viewer) else { return forbidden() }
        return newsCollection(university.news(inRange: id, publishedAt: university.now))
    }

    func globalNews() -> SimResponse {
        newsCollection(university.news(inRange: "studip", publishedAt: university.now))
    }

    func userNews(id: String) -> SimResponse {
        guard university.users[id] != nil else { return notFound() }
        return newsCollection(university.news(writtenBy: id))
    }

    func newsShow(id: String) -> SimResponse {
        guard let found = university.news[id] else { return notFound() }
        var body: [(String, JSON)] = [("data", news(found))]
        let extra = newsIncludes([found])
        if !extra.isEmpty { body.append(("included", .array(extra))) }
        return document(.object(body))
    }

    /// Comments are not simulated: an existing news has none.
    func newsComments(id: String) -> SimResponse {
        guard university.news[id] != nil else { return notFound() }
        return collection([], page: Page(query: request.query))
    }

    func courseEvents(id: String, viewer: User) -> SimResponse {
        guard let found = university.courses[id] else { return notFound() }
        guard university.canAccess(course: found, user: viewer) else { return forbidden() }
        return eventCollection(university.events(ofCourse: id))
    }

    /// Own dates only (404 for others, on purpose in Stud.IP): from 00:00 of today or of `filter[timestamp]`'s
    /// day, for ``University/eventWindowDays``.
    func userEvents(id: String, viewer: User) -> SimResponse {
        guard id == viewer.id else { return notFound() }
        let reference = request.queryValue("filter[timestamp]").flatMap { Int($0) } ?? university.now
        let start = university.startOfDay(reference)
        return eventCollection(university.events(of: id, in: start..<(start + University.eventWindowDays * 86400)))
    }

    /// The iCalendar export of the user's dates; others' are a 404 like their events.
    func userCalendar(id: String, viewer: User) -> SimResponse {
        guard id == viewer.id else { return notFound() }
        return .text(
            ICalendarExport.calendar(of: id, in: university, host: request.serverName), status: 200,
            contentType: "text/calendar;charset=UTF-8",
            headers: [("Content-Disposition", ICalendarExport.contentDisposition)], route: route)
    }

    /// The timetable of the semester containing `filter[timestamp]` (default now): not paginated, others' 403,
    /// `links.self` with the API prefix twice as Stud.IP 5.0.7 writes it.
    func userSchedule(id: String, viewer: User) -> SimResponse {
        guard university.users[id] != nil else { return notFound() }
        guard id == viewer.id else { return forbidden() }
        let time = request.queryValue("filter[timestamp]").flatMap { Int($0) } ?? university.now
        let semester =
            request.queryValue("filter[timestamp]") == nil
            ? university.currentSemester(now: Date(timeIntervalSince1970: TimeInterval(time)))
            : university.orderedSemesters.first { $0.contains(time) }
        guard let semester else { return error(404, title: "Could not find semester.") }
        return document([
            "meta": ["semester": .string(link("semesters/\(semester.id)"))],
            "links": [
                "self": .string(prefix + link("users/\(id)/schedule") + "?filter%5Btimestamp%5D=\(semester.begin)")
            ],
            "data": .array(university.regularTimes(of: id, in: semester).map(regularTime)),
        ])
    }

    func regularTimeShow(id: String) -> SimResponse {
        guard let found = university.regularTime(id: id) else { return notFound() }
        return document(["data": regularTime(found)])
    }

    func regularTime(_ time: RegularTime) -> JSON {
        let course = university.courses[time.courseID]
        let title = [course?.number ?? "", course?.title ?? ""].filter { !$0.isEmpty }.joined(separator: " ")
        let held = time.dates.filter { !$0.isCancelled }
        return resource(
            "seminar-cycle-dates", time.id,
            attributes: [
                ("title", .string(title)), ("description", .string(time.description)),
                ("start", .string(Self.clock(time.startMinute))), ("end", .string(Self.clock(time.endMinute))),
                // 0 = Sunday … 6 = Saturday, as 5.0.7 says 2 for Tuesday.
                ("weekday", .int(time.weekday % 7)),
                (
                    "recurrence",
                    [
                        "FREQ": "WEEKLY", "INTERVAL": 1, "DTSTART": held.first.map { date($0.start) } ?? .null,
                        "UNTIL": held.last.map { date($0.start) } ?? .null,
                        "EXDATES": .array(time.dates.filter(\.isCancelled).map { date($0.start) }),
                    ]
                ),
                ("locations", .array(time.rooms.map(JSON.string))),
            ],
            relationships: [("owner", toOne("courses", time.courseID))])
    }

    /// "HH:MM" of minutes after midnight.
    static func clock(_ minutes: Int) -> String { String(format: "%02d:%02d", minutes / 60, minutes % 60) }

    private func eventCollection(_ events: [CourseEvent]) -> SimResponse {
        let page = Page(query: request.query)
        let owners = includes.contains("owner") ? page.slice(events).map { (type: "courses", id: $0.courseID) } : []
        return collection(events.map(courseEvent), page: page, included: included(owners))
    }
}

extension University {
    /// The calendar title both APIs show: "<regular time's description>, <course>" or the course name for single
    /// dates, with " (fällt aus)" when cancelled.
    func calendarTitle(of event: CourseEvent) -> String {
        let course = courses[event.courseID]?.title ?? ""
        let title =
            event.cycleID == nil || event.cycleDescription.isEmpty ? course : "\(event.cycleDescription), \(course)"
        return event.isCancelled ? title + " (fällt aus)" : title
    }

    /// "Two weeks" of `users/{id}/events` as the capture shows it: a Wednesday 15 days later was listed, a
    /// Wednesday 16 days later was not (`jsonapi_user_events`, `_ts_ss26`), so 16 days from midnight.
    static let eventWindowDays = 16

    /// "Tuesday, 13.10.2026 10:15 - 11:45" in the installation's time zone (legacy `course/{id}/events` titles).
    func timeSpan(of event: CourseEvent) -> String {
        let names = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]
        func local(_ time: Int) -> (day: Int, minute: Int) {
            let shifted = time + timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(time)))
            return (shifted.floorDiv(86400), shifted.floorMod(86400) / 60)
        }
        let (day, start) = local(event.start)
        let end = local(event.end).minute
        let date = CivilCalendar.date(days: day)
        return "\(names[CivilCalendar.weekday(days: day)]), \(date.day.padded(2)).\(date.month.padded(2)).\(date.year) "
            + "\(JSONAPIEnvironment.clock(start)) - \(JSONAPIEnvironment.clock(end))"
    }

    /// Midnight of the day `time` falls on, in the installation's time zone.
    func startOfDay(_ time: Int) -> Int {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return Int(calendar.startOfDay(for: Date(timeIntervalSince1970: TimeInterval(time))).timeIntervalSince1970)
    }
}
