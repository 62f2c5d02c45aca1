import StudIPModel

/// A course as one semester's listing showed it.
package struct ListedCourse: Sendable {
    package var course: RemoteCourse
    /// The API says the course has no end semester: it may be open-ended ("unbegrenzt").
    package var hasNoEndSemester: Bool
}

/// Turns per-semester course listings into each course once with its semesters — the same for both APIs.
///
/// Both APIs list a course under every semester it runs in, and an open-ended course under *every* semester
/// (`Course::isInSemester`, API.md §0.2). So a course's semesters are the listings it appeared in, oldest
/// first; a course without an end semester that appeared in all of them is open-ended and gets none.
package struct CourseCollector {
    private let semesterOrder: [String]
    private var courses: [String: ListedCourse] = [:]
    private var listedIn: [String: Set<String>] = [:]
    private var firstSeen: [String] = []

    /// `semesters` oldest first: the order `semesterIDs` take.
    package init(semesters: [RemoteSemester]) {
        semesterOrder = semesters.map(\.id)
    }

    package mutating func add(_ listing: [ListedCourse], semesterID: String) {
        for listed in listing {
            let id = listed.course.id
            if courses[id] == nil {
                courses[id] = listed
                firstSeen.append(id)
            }
            listedIn[id, default: []].insert(semesterID)
        }
    }

    package func result() -> [RemoteCourse] {
        firstSeen.compactMap { id -> RemoteCourse? in
            guard var listed = courses[id] else { return nil }
            let semesters = listedIn[id] ?? []
            let everywhere = semesterOrder.allSatisfy(semesters.contains)
            listed.course.semesterIDs =
                listed.hasNoEndSemester && everywhere ? [] : semesterOrder.filter(semesters.contains)
            return listed.course
        }
    }
}

extension String {
    /// Course numbers arrive with trailing blanks from fixed-width columns (API.md §2.5.3).
    package var trimmingTrailingWhitespace: String {
        var text = Substring(self)
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return String(text)
    }
}
