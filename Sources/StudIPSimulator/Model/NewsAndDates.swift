import Foundation

/// A Stud.IP announcement (`news`) with the ranges it is published in.
public struct News: Sendable, Hashable {
    public var id: String
    public var title: String
    /// The body as stored: WYSIWYG HTML with the `<!--HTML-->` marker.
    public var content: String
    public var authorID: String
    /// Where it is published, in order: course ids, user ids (profile news) or `studip` (global).
    public var rangeIDs: [String]
    /// Publication start, Unix seconds (Stud.IP stores midnight of the day sent).
    public var date: Int
    /// Seconds after `date` until it expires; Stud.IP counts to the midnight after the last day sent.
    public var expire: Int
    public var allowComments: Bool
    public var mkdate: Int
    public var chdate: Int

    public init(
        id: String, title: String, content: String, authorID: String, rangeIDs: [String], date: Int, expire: Int,
        allowComments: Bool = false, mkdate: Int, chdate: Int
    ) {
        self.id = id
        self.title = title
        self.content = content
        self.authorID = authorID
        self.rangeIDs = rangeIDs
        self.date = date
        self.expire = expire
        self.allowComments = allowComments
        self.mkdate = mkdate
        self.chdate = chdate
    }

    /// Course and global lists show only what is published now (`date < now < date + expire`).
    public func isPublished(at now: Int) -> Bool { date < now && now < date + expire }
}

/// One date of a course (`termine`, or `ex_termine` once cancelled).
public struct CourseEvent: Sendable, Hashable {
    public var id: String
    public var courseID: String
    /// The regular time (`seminar_cycle_dates`) it belongs to; nil for a single date.
    public var cycleID: String?
    /// Unix seconds.
    public var start: Int
    public var end: Int
    /// The date type's name (`Vorlesung`, `Sitzung`, `Exkursion`, …).
    public var category: String
    /// The regular time's description ("Vorlesung"); part of the JSON:API title of regular dates.
    public var cycleDescription: String = ""
    /// Free-text room.
    public var room: String = ""
    public var isCancelled: Bool = false
    /// The comment given when cancelling.
    public var cancelComment: String = ""
    /// A holiday on that day: legacy REST puts its name in `canceled` (not cancelled by itself).
    public var holiday: String?
    public var mkdate: Int
    public var chdate: Int

    /// Stud.IP's default date types (`TERMIN_TYP`) by name; unknown names are "anderer Termin" (5).
    static let typeIDs = [
        "Sitzung": 1, "Vorbesprechung": 2, "Klausur": 3, "Exkursion": 4, "anderer Termin": 5, "Sondersitzung": 6,
        "Vorlesung": 7,
    ]

    public init(
        id: String, courseID: String, cycleID: String? = nil, start: Int, end: Int, category: String,
        cycleDescription: String = "", room: String = "", isCancelled: Bool = false, cancelComment: String = "",
        holiday: String? = nil, mkdate: Int, chdate: Int
    ) {
        self.id = id
        self.courseID = courseID
        self.cycleID = cycleID
        self.start = start
        self.end = end
        self.category = category
        self.cycleDescription = cycleDescription
        self.room = room
        self.isCancelled = isCancelled
        self.cancelComment = cancelComment
        self.holiday = holiday
        self.mkdate = mkdate
        self.chdate = chdate
    }
}

extension University {
    /// News published in a range (course id, user id or `studip`), newest first as Stud.IP orders (`date` desc).
    public func news(inRange rangeID: String, publishedAt now: Int? = nil) -> [News] {
        news.values.filter { $0.rangeIDs.contains(rangeID) && (now.map($0.isPublished) ?? true) }
            .sorted { ($0.date, $0.id) > ($1.date, $1.id) }
    }

    /// Every news the user wrote, whatever its dates (JSON:API `users/{id}/news`), newest first.
    public func news(writtenBy userID: String) -> [News] {
        news.values.filter { $0.authorID == userID }.sorted { ($0.date, $0.id) > ($1.date, $1.id) }
    }

    /// A course's dates by start, cancelled ones included.
    public func events(ofCourse courseID: String) -> [CourseEvent] {
        (eventIDsByCourse[courseID] ?? []).compactMap { events[$0] }.sorted { ($0.start, $0.id) < ($1.start, $1.id) }
    }

    /// The dates of a user's courses starting in `range`, by start.
    public func events(of userID: String, in range: Range<Int>) -> [CourseEvent] {
        courses(of: userID).flatMap { events(ofCourse: $0.id) }.filter { range.contains($0.start) }
            .sorted { ($0.start, $0.id) < ($1.start, $1.id) }
    }

    public mutating func add(_ item: News) { news[item.id] = item }

    public mutating func removeNews(_ id: String) throws(ModelError) {
        guard news.removeValue(forKey: id) != nil else { throw ModelError("no announcement with id \(id)") }
    }
}

/// A course's regular time (`seminar_cycle_dates`) as the timetable routes show it, derived from its dates.
public struct RegularTime: Sendable, Hashable {
    public var id: String
    public var courseID: String
    public var description: String
    /// 1 = Monday … 7 = Sunday.
    public var weekday: Int
    /// Minutes after midnight, installation time.
    public var startMinute: Int
    public var endMinute: Int
    /// Its dates by start, cancelled ones included.
    public var dates: [CourseEvent]

    /// Rooms of the dates that take place, in order of first use.
    public var rooms: [String] {
        dates.filter { !$0.isCancelled && !$0.room.isEmpty }.map(\.room)
            .reduce(into: []) { if !$0.contains($1) { $0.append($1) } }
    }
}

extension University {
    /// The regular times of a course that have a date in the semester, by weekday and start.
    public func regularTimes(ofCourse courseID: String, in semester: Semester) -> [RegularTime] {
        let grouped = Dictionary(grouping: events(ofCourse: courseID).filter { $0.cycleID != nil }) { $0.cycleID ?? "" }
        return grouped.compactMap { id, dates -> RegularTime? in
            guard let first = dates.first, dates.contains(where: { semester.contains($0.start) }) else { return nil }
            let offset = timeZone.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(first.start)))
            let local = first.start + offset
            let minute = local.floorMod(86400) / 60
            let weekday = CivilCalendar.weekday(days: local.floorDiv(86400))
            return RegularTime(
                id: id, courseID: courseID, description: first.cycleDescription,
                weekday: weekday == 0 ? 7 : weekday, startMinute: minute,
                endMinute: minute + (first.end - first.start) / 60, dates: dates)
        }
        .sorted { ($0.weekday, $0.startMinute, $0.id) < ($1.weekday, $1.startMinute, $1.id) }
    }

    /// The regular times of all the user's courses in the semester (the timetable).
    public func regularTimes(of userID: String, in semester: Semester) -> [RegularTime] {
        courses(of: userID).flatMap { regularTimes(ofCourse: $0.id, in: semester) }
            .sorted { ($0.weekday, $0.startMinute, $0.id) < ($1.weekday, $1.startMinute, $1.id) }
    }

    /// One regular time by id, whatever the semester.
    public func regularTime(id: String) -> RegularTime? {
        guard let courseID = events.values.first(where: { $0.cycleID == id })?.courseID else { return nil }
        let all = Semester(id: "", title: "", begin: .min, end: .max, lecturesBegin: .min, lecturesEnd: .max)
        return regularTimes(ofCourse: courseID, in: all).first { $0.id == id }
    }
}
