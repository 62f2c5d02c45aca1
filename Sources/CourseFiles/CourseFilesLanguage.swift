import Foundation

/// The language of the names and labels CampusFS makes for a course's announcements and dates (the profile's
/// `language`); German by default, Stud.IP's own language.
public enum CourseFilesLanguage: String, Sendable, Hashable, Codable, CaseIterable {
    case german
    case english

    public static let `default` = CourseFilesLanguage.german

    /// The folder of a course's announcements.
    public var announcementsFolder: String {
        switch self {
        case .german: "Ankündigungen"
        case .english: "Announcements"
        }
    }

    /// A course's dates as one iCalendar file.
    public var datesFile: String {
        switch self {
        case .german: "Termine.ics"
        case .english: "Dates.ics"
        }
    }

    /// A semester's weekly timetable as one iCalendar file.
    public var timetableFile: String {
        switch self {
        case .german: "Stundenplan.ics"
        case .english: "Timetable.ics"
        }
    }

    var authorLabel: String {
        switch self {
        case .german: "Autor"
        case .english: "Author"
        }
    }

    var publishedLabel: String {
        switch self {
        case .german: "Veröffentlicht"
        case .english: "Published"
        }
    }

    var expiresLabel: String {
        switch self {
        case .german: "Läuft ab"
        case .english: "Expires"
        }
    }

    /// The heading of an announcement without a title.
    var untitled: String {
        switch self {
        case .german: "(ohne Titel)"
        case .english: "(untitled)"
        }
    }

    /// Dates in headers: what a reader of that language expects, never the machine's locale (the bytes must not
    /// depend on where the daemon runs).
    func format(_ date: Date, in timeZone: TimeZone) -> String {
        let local = LocalTime(date, in: timeZone)
        let time = String(format: "%02d:%02d", local.hour, local.minute)
        return switch self {
        case .german: String(format: "%02d.%02d.%04d", local.day, local.month, local.year) + " " + time
        case .english: String(format: "%04d-%02d-%02d", local.year, local.month, local.day) + " " + time
        }
    }
}
