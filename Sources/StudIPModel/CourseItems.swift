import Foundation

/// A course's announcement (Stud.IP "news").
public struct Announcement: Sendable, Hashable, Codable {
    public var id: String
    public var title: String
    /// The body as Stud.IP returns it: HTML (JSON:API `content` / REST `body_html`), the `<!--HTML-->` marker removed.
    public var html: String
    /// Full name when the API gives it (JSON:API include=author / REST user lookup) else nil.
    public var authorName: String?
    public var published: Date  // publication-start / REST `date`
    public var expires: Date?  // publication-end as returned (already a day later than sent: keep as is)
    public var changed: Date  // chdate
    public var commentsAllowed: Bool

    public init(
        id: String, title: String, html: String, authorName: String?, published: Date, expires: Date?, changed: Date,
        commentsAllowed: Bool
    ) {
        self.id = id
        self.title = title
        self.html = html
        self.authorName = authorName
        self.published = published
        self.expires = expires
        self.changed = changed
        self.commentsAllowed = commentsAllowed
    }
}

/// One date of a course (Stud.IP "termin"), cancelled ones included.
public struct CourseDate: Sendable, Hashable, Codable {
    public var id: String
    public var start: Date
    public var end: Date
    public var title: String?  // what the API calls title/type (e.g. "Vorlesung", "Sitzung", "Exkursion")
    public var description: String?  // topic or description
    public var room: String?  // room or free-text room
    /// JSON:API: " (fällt aus)" title suffix / empty categories+comment (see README); REST: deleted == true.
    public var isCancelled: Bool
    public var cancellationNote: String?  // the comment / REST `canceled` text (e.g. a holiday's name)

    public init(
        id: String, start: Date, end: Date, title: String?, description: String?, room: String?, isCancelled: Bool,
        cancellationNote: String?
    ) {
        self.id = id
        self.start = start
        self.end = end
        self.title = title
        self.description = description
        self.room = room
        self.isCancelled = isCancelled
        self.cancellationNote = cancellationNote
    }
}

/// One weekly slot of a user's timetable in one semester.
public struct ScheduleSlot: Sendable, Hashable, Codable {
    public var id: String
    public var courseID: String?
    public var title: String
    public var weekday: Int  // 1 = Monday … 7 = Sunday
    public var startMinute: Int  // minutes after midnight, local time of the installation
    public var endMinute: Int
    public var room: String?
    public var description: String?

    public init(
        id: String, courseID: String?, title: String, weekday: Int, startMinute: Int, endMinute: Int, room: String?,
        description: String?
    ) {
        self.id = id
        self.courseID = courseID
        self.title = title
        self.weekday = weekday
        self.startMinute = startMinute
        self.endMinute = endMinute
        self.room = room
        self.description = description
    }
}
