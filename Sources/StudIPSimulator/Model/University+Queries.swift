import Foundation

/// Queries the API handlers need beyond ``University``'s indices.
extension University {
    /// A user's personal root folder (`range_type = 'user'`), if it exists yet.
    public func personalRootFolder(of userID: String) -> Folder? {
        folders.values.first { $0.rangeType == "user" && $0.rangeID == userID && $0.isRoot }
    }

    /// All document rows that point to one `files` row.
    public func fileRefs(withFileID fileID: String) -> [FileRef] {
        fileRefs.values.filter { $0.fileID == fileID }.sorted { $0.id < $1.id }
    }

    /// `Semester::findCurrent()`: the pinned current semester, else the one containing `now`.
    public func currentSemester(now: Date = Date()) -> Semester? {
        if let pinned = orderedSemesters.first(where: { $0.isCurrent == true }) { return pinned }
        if orderedSemesters.contains(where: { $0.isCurrent != nil }) { return nil }
        let time = Int(now.timeIntervalSince1970)
        return orderedSemesters.first { $0.contains(time) }
    }

    public func isCurrent(_ semester: Semester) -> Bool {
        currentSemester()?.id == semester.id
    }

    /// `start_time` of a course: explicit, else the begin of its first semester, else its creation.
    public func startTime(of course: Course) -> Int {
        course.startTime ?? course.semesterIDs.first.flatMap { semesters[$0]?.begin } ?? course.mkdate
    }

    /// The semester containing a point in time (`Semester::findByTimestamp`).
    public func semester(containing time: Int) -> Semester? {
        orderedSemesters.first { $0.contains(time) }
    }
}
