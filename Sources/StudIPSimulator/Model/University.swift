import Foundation

/// Everything a simulated Stud.IP installation knows: users, semesters, courses, folders and documents.
///
/// A value type: request handlers read a snapshot while the control API mutates the live copy under a lock
/// (see ``UniversityStore``), so a response is always rendered from one consistent state. Entities are kept
/// in dictionaries by id with ordered child indices, because the routes ask "children of X" far more often
/// than anything else and `huge` has 100,000 documents.
public struct University: Sendable {
    /// Shown in legacy REST `WWW-Authenticate: Basic realm="…"` (Stud.IP's `STUDIP_INSTALLATION_ID`).
    public var installationID: String
    /// Timezone offset used when rendering JSON:API ISO 8601 dates (Stud.IP's `DEFAULT_TIMEZONE`).
    public var timeZone: TimeZone

    public private(set) var users: [String: User] = [:]
    public private(set) var usersByName: [String: String] = [:]
    /// Semesters in Stud.IP order (`beginn` ascending).
    public private(set) var semesterOrder: [String] = []
    public private(set) var semesters: [String: Semester] = [:]
    public private(set) var courses: [String: Course] = [:]
    public private(set) var folders: [String: Folder] = [:]
    public private(set) var fileRefs: [String: FileRef] = [:]
    public private(set) var termsOfUse: [String: TermsOfUse] = [:]
    public internal(set) var news: [String: News] = [:]
    public private(set) var events: [String: CourseEvent] = [:]
    /// Date ids per course id: timetables and calendars ask per course, and `huge` has thousands of dates.
    var eventIDsByCourse: [String: Set<String>] = [:]
    /// "Now" for what depends on the date (published news, this week's dates) in datasets captured on a fixed
    /// day; nil follows the clock.
    public var pinnedNow: Int?

    /// Child folder ids per folder id, in insertion order; routes sort as Stud.IP does (by name).
    private var childFolders: [String: [String]] = [:]
    /// File-ref ids per folder id, in insertion order.
    private var childFileRefs: [String: [String]] = [:]
    /// Course ids per user id, in membership order (`seminar_user.mkdate`).
    private var coursesOfUser: [String: [String]] = [:]

    public init(
        installationID: String = "demo-installation", timeZone: TimeZone = TimeZone(identifier: "Europe/Berlin") ?? .gmt
    ) {
        self.installationID = installationID
        self.timeZone = timeZone
    }
}

// MARK: - Queries

extension University {
    /// Unix seconds: the pinned capture time or the clock.
    public var now: Int { pinnedNow ?? Int(Date().timeIntervalSince1970) }

    public func user(named username: String) -> User? {
        usersByName[username].flatMap { users[$0] }
    }

    public var orderedSemesters: [Semester] {
        semesterOrder.compactMap { semesters[$0] }
    }

    /// The user's courses in membership order.
    public func courses(of userID: String) -> [Course] {
        (coursesOfUser[userID] ?? []).compactMap { courses[$0] }
    }

    public func membership(of userID: String, in courseID: String) -> Membership? {
        courses[courseID]?.members.first { $0.userID == userID }
    }

    /// Subfolders of a folder in Stud.IP's `ORDER BY name` (see ``collated(_:)``).
    public func subfolders(of folderID: String) -> [Folder] {
        Self.collated((childFolders[folderID] ?? []).compactMap { folders[$0] })
    }

    /// Documents of a folder in Stud.IP's `ORDER BY name`.
    public func fileRefs(in folderID: String) -> [FileRef] {
        Self.collated((childFileRefs[folderID] ?? []).compactMap { fileRefs[$0] })
    }

    /// Every folder of a course, root first, then depth-first with siblings by name (`courses/{id}/folders`).
    public func foldersOfCourse(_ courseID: String) -> [Folder] {
        courses[courseID].map { folderTree(from: $0.topFolderID) } ?? []
    }

    /// Every folder below (and including) a root, root first, depth-first, siblings by name.
    public func folderTree(from rootID: String) -> [Folder] {
        guard let root = folders[rootID] else { return [] }
        var result: [Folder] = []
        func visit(_ folder: Folder) {
            result.append(folder)
            for child in subfolders(of: folder.id) { visit(child) }
        }
        visit(root)
        return result
    }

    /// Every document of a course, folder by folder in the order of ``foldersOfCourse(_:)``.
    public func fileRefsOfCourse(_ courseID: String) -> [FileRef] {
        foldersOfCourse(courseID).flatMap { fileRefs(in: $0.id) }
    }

    /// The course a folder belongs to (its `range_id` when the range is a course).
    public func course(ofFolder folderID: String) -> Course? {
        guard let folder = folders[folderID], folder.rangeType == "course" else { return nil }
        return courses[folder.rangeID]
    }

    /// Number of child folder rows, readable or not (JSON:API `folders.meta.count`).
    public func childFolderCount(_ folderID: String) -> Int {
        childFolders[folderID]?.count ?? 0
    }

    /// Sorts by name the way Stud.IP's database collation (`utf8mb4_unicode_ci`) does, near enough: case and
    /// accents ignored, so "Übungsblätter" comes before "Vorlesungsfolien" as in the fixtures; ties by id.
    static func collated<T: Named>(_ items: [T]) -> [T] {
        items.map { (key: collationKey($0.name), item: $0) }
            .sorted { $0.key != $1.key ? $0.key < $1.key : $0.item.id < $1.item.id }
            .map(\.item)
    }

    static func collationKey(_ name: String) -> String {
        name.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            .replacingOccurrences(of: "ß", with: "ss")
    }
}

protocol Named {
    var id: String { get }
    var name: String { get }
}

// MARK: - Mutations

/// Why a mutation was refused; the control API turns it into a 4xx with this text.
public struct ModelError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ description: String) { self.description = description }
}

extension University {
    public mutating func add(_ user: User) {
        users[user.id] = user
        usersByName[user.username] = user.id
    }

    public mutating func add(_ semester: Semester) {
        semesters[semester.id] = semester
        semesterOrder.removeAll { $0 == semester.id }
        semesterOrder.append(semester.id)
        semesterOrder.sort { (semesters[$0]?.begin ?? 0, $0) < (semesters[$1]?.begin ?? 0, $1) }
    }

    public mutating func add(_ terms: TermsOfUse) {
        termsOfUse[terms.id] = terms
    }

    /// Adds a course; its root folder must be added with ``add(_:)-folder`` too.
    public mutating func add(_ course: Course) {
        courses[course.id] = course
        for member in course.members where !(coursesOfUser[member.userID] ?? []).contains(course.id) {
            coursesOfUser[member.userID, default: []].append(course.id)
        }
    }

    public mutating func add(_ folder: Folder) {
        if let old = folders[folder.id], !old.parentID.isEmpty {
            childFolders[old.parentID]?.removeAll { $0 == folder.id }
        }
        folders[folder.id] = folder
        if !folder.parentID.isEmpty {
            childFolders[folder.parentID, default: []].append(folder.id)
        }
    }

    public mutating func add(_ fileRef: FileRef) {
        if let old = fileRefs[fileRef.id] {
            childFileRefs[old.folderID]?.removeAll { $0 == fileRef.id }
        }
        fileRefs[fileRef.id] = fileRef
        childFileRefs[fileRef.folderID, default: []].append(fileRef.id)
    }

    /// Replaces a document's metadata in place (rename, move, new version). The id must exist.
    public mutating func update(_ fileRef: FileRef) throws(ModelError) {
        guard fileRefs[fileRef.id] != nil else { throw ModelError("no document with id \(fileRef.id)") }
        guard folders[fileRef.folderID] != nil else { throw ModelError("no folder with id \(fileRef.folderID)") }
        add(fileRef)
    }

    /// Replaces a folder's metadata in place (rename, move). Refuses to move a folder below itself.
    public mutating func update(_ folder: Folder) throws(ModelError) {
        guard folders[folder.id] != nil else { throw ModelError("no folder with id \(folder.id)") }
        if !folder.parentID.isEmpty {
            var cursor: String? = folder.parentID
            while let id = cursor, !id.isEmpty {
                if id == folder.id { throw ModelError("cannot move folder \(folder.id) below itself") }
                guard let parent = folders[id] else { throw ModelError("no folder with id \(id)") }
                cursor = parent.parentID
            }
        }
        add(folder)
    }

    /// Adds or replaces a date (a replaced one may move to another course).
    public mutating func add(_ event: CourseEvent) {
        if let old = events[event.id] { eventIDsByCourse[old.courseID]?.remove(event.id) }
        events[event.id] = event
        eventIDsByCourse[event.courseID, default: []].insert(event.id)
    }

    public mutating func removeEvent(_ id: String) throws(ModelError) {
        guard let old = events.removeValue(forKey: id) else { throw ModelError("no date with id \(id)") }
        eventIDsByCourse[old.courseID]?.remove(id)
    }

    public mutating func removeFileRef(_ id: String) throws(ModelError) {
        guard let ref = fileRefs.removeValue(forKey: id) else { throw ModelError("no document with id \(id)") }
        childFileRefs[ref.folderID]?.removeAll { $0 == id }
    }

    /// Removes a folder with everything below it. A course's root folder cannot be removed (one the course no
    /// longer points to can).
    public mutating func removeFolder(_ id: String) throws(ModelError) {
        guard let folder = folders[id] else { throw ModelError("no folder with id \(id)") }
        guard !folder.parentID.isEmpty || courses[folder.rangeID]?.topFolderID != id else {
            throw ModelError("folder \(id) is a course's root folder")
        }
        removeSubtree(id)
        childFolders[folder.parentID]?.removeAll { $0 == id }
    }

    private mutating func removeSubtree(_ id: String) {
        for child in childFolders[id] ?? [] { removeSubtree(child) }
        for ref in childFileRefs[id] ?? [] { fileRefs.removeValue(forKey: ref) }
        childFolders[id] = nil
        childFileRefs[id] = nil
        folders[id] = nil
    }
}
