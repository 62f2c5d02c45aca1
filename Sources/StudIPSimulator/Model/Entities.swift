import Foundation

/// A Stud.IP account. `perms` is the global permission (`root`, `admin`, `dozent`, `tutor`, `autor`, `user`).
public struct User: Sendable, Hashable {
    public var id: String
    public var username: String
    public var password: String
    public var givenName: String
    public var familyName: String
    public var prefix: String = ""
    public var suffix: String = ""
    public var perms: String
    public var email: String
    /// Part of avatar URLs (`?d=<timestamp>`); Stud.IP uses the avatar file's mtime.
    public var avatarTimestamp: Int = 0
    /// Profile fields shown in legacy `GET user` (`datafields`), e.g. the matriculation number.
    public var datafields: [UserDatafield] = []

    public init(
        id: String, username: String, password: String, givenName: String, familyName: String, perms: String,
        email: String, prefix: String = "", suffix: String = "", avatarTimestamp: Int = 0,
        datafields: [UserDatafield] = []
    ) {
        self.id = id
        self.username = username
        self.password = password
        self.givenName = givenName
        self.familyName = familyName
        self.perms = perms
        self.email = email
        self.prefix = prefix
        self.suffix = suffix
        self.avatarTimestamp = avatarTimestamp
        self.datafields = datafields
    }

    /// "Given Family" as in legacy `name.formatted` and JSON:API `formatted-name`.
    public var formattedName: String {
        [prefix, givenName, familyName, suffix].filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// "Family, Given" as in JSON:API `owner.meta.name` of documents (`get_fullname(…, 'no_title_rev')`).
    public var reversedName: String { "\(familyName), \(givenName)" }

    public var isRoot: Bool { perms == "root" }
}

/// One entry of a user's `datafields` (legacy REST), e.g. `Matrikelnummer`.
public struct UserDatafield: Sendable, Hashable {
    public var id: String
    public var name: String
    /// Stud.IP datafield type, e.g. `textline`.
    public var type: String
    public var value: String

    public init(id: String, name: String, type: String = "textline", value: String) {
        self.id = id
        self.name = name
        self.type = type
        self.value = value
    }
}

public struct Semester: Sendable, Hashable {
    public var id: String
    public var title: String
    public var token: String = ""
    public var description: String = ""
    /// Unix seconds.
    public var begin: Int
    public var end: Int
    public var lecturesBegin: Int
    public var lecturesEnd: Int
    /// Lecture-free breaks (`semester_holiday`, "Unterbrechung" over Christmas): Stud.IP makes no date of a
    /// course's regular time inside one. Neither API shows them.
    public var holidays: [Holiday] = []
    public var visible: Bool = true
    /// Pins `Semester::findCurrent()` for datasets captured on a fixed date; nil lets the clock decide.
    public var isCurrent: Bool?

    public init(
        id: String, title: String, begin: Int, end: Int, lecturesBegin: Int, lecturesEnd: Int,
        token: String = "", description: String = "", visible: Bool = true, isCurrent: Bool? = nil
    ) {
        self.id = id
        self.title = title
        self.begin = begin
        self.end = end
        self.lecturesBegin = lecturesBegin
        self.lecturesEnd = lecturesEnd
        self.token = token
        self.description = description
        self.visible = visible
        self.isCurrent = isCurrent
    }

    public func contains(_ time: Int) -> Bool { begin <= time && time <= end }

    /// Whether `time` falls into one of the semester's breaks.
    public func isHoliday(_ time: Int) -> Bool { holidays.contains { $0.begin <= time && time <= $0.end } }
}

/// A lecture-free break (`semester_holiday`): Unix seconds, both ends included.
public struct Holiday: Sendable, Hashable {
    public var name: String
    public var begin: Int
    public var end: Int

    public init(name: String, begin: Int, end: Int) {
        self.name = name
        self.begin = begin
        self.end = end
    }
}

/// A user's membership in a course (`seminar_user`).
public struct Membership: Sendable, Hashable {
    public var userID: String
    /// `user`, `autor`, `tutor` or `dozent`.
    public var permission: String
    /// Colour group 0–8 on "My courses".
    public var group: Int = 8
    public var position: Int = 0
    public var mkdate: Int
    public var label: String = ""
    public var visible: String = "yes"
    /// Shown to teachers only (JSON:API `course-memberships.comment`).
    public var comment: String = ""

    public init(
        userID: String, permission: String, mkdate: Int, group: Int = 8, position: Int = 0, label: String = "",
        visible: String = "yes", comment: String = ""
    ) {
        self.userID = userID
        self.permission = permission
        self.mkdate = mkdate
        self.group = group
        self.position = position
        self.label = label
        self.visible = visible
        self.comment = comment
    }

    /// Tutors and lecturers see what students don't (hidden folders, owner-only documents).
    public var isTeacher: Bool { permission == "tutor" || permission == "dozent" }
}

public struct Course: Sendable, Hashable {
    public var id: String
    /// May be empty; real servers also send trailing blanks.
    public var number: String
    public var title: String
    public var subtitle: String = ""
    /// SEM_TYPE id (1 = lecture, 99 = study group, …).
    public var type: Int = 1
    /// SEM_CLASS id.
    public var semClass: Int = 1
    public var description: String = ""
    public var location: String = ""
    public var miscellaneous: String = ""
    public var instituteID: String
    /// Semester ids in order; empty = open-ended ("unbegrenzt"): the course is in every semester.
    public var semesterIDs: [String]
    public var members: [Membership]
    public var topFolderID: String
    public var mkdate: Int
    public var chdate: Int
    /// Activated tools as named in legacy `modules` (e.g. `documents`, `wiki`, `forum`).
    public var modules: [String] = ["documents", "wiki"]
    /// Stud.IP `start_time`; nil = begin of the first semester. JSON:API 5.x derives the start semester of an
    /// open-ended course from it and sorts `users/{id}/courses` by it.
    public var startTime: Int?

    public init(
        id: String, number: String, title: String, instituteID: String, semesterIDs: [String], members: [Membership],
        topFolderID: String, mkdate: Int, chdate: Int, subtitle: String = "", type: Int = 1, semClass: Int = 1,
        description: String = "", location: String = "", miscellaneous: String = "",
        modules: [String] = ["documents", "wiki"], startTime: Int? = nil
    ) {
        self.id = id
        self.number = number
        self.title = title
        self.instituteID = instituteID
        self.semesterIDs = semesterIDs
        self.members = members
        self.topFolderID = topFolderID
        self.mkdate = mkdate
        self.chdate = chdate
        self.subtitle = subtitle
        self.type = type
        self.semClass = semClass
        self.description = description
        self.location = location
        self.miscellaneous = miscellaneous
        self.modules = modules
        self.startTime = startTime
    }

    public var isOpenEnded: Bool { semesterIDs.isEmpty }

    /// The files tool (`CoreDocuments`) is active. Off (Stud.IP 5.0.7, fixtures-5.0.7-more Part 5), JSON:API
    /// answers 403 for the course's folders and file-refs and leaves those relationships out of the course;
    /// legacy REST still serves `top_folder` (its route checks no tool) and lists no `documents` module.
    public var hasFiles: Bool { modules.contains("documents") }

    /// `Course::isInSemester`: open-ended courses are in every semester.
    public func isIn(semester id: String) -> Bool {
        semesterIDs.isEmpty || semesterIDs.contains(id)
    }

    public var lecturers: [Membership] { members.filter { $0.permission == "dozent" } }

    /// The SEM_TYPE name of Stud.IP's default configuration, used in the JSON:API name of the root folder.
    public var typeName: String {
        Self.defaultTypeNames[type] ?? "Veranstaltung"
    }

    /// `Course::getFullname()`: "<type>: <number> <title>", as the JSON:API shows a course's root folder.
    public var fullName: String {
        let numbered = [number.trimmingCharacters(in: .whitespaces), title].filter { !$0.isEmpty }.joined(
            separator: " ")
        return "\(typeName): \(numbered)"
    }

    private static let defaultTypeNames: [Int: String] = [
        1: "Vorlesung", 2: "Seminar", 3: "Übung", 4: "Praktikum", 5: "Colloquium", 6: "Forschungsgruppe",
        7: "sonstige", 8: "Gremium", 9: "Projektgruppe", 10: "sonstige", 11: "Kulturforum", 12: "Veranstaltungsboard",
        13: "sonstige", 99: "Studiengruppe",
    ]
}

/// A folder row. Readability is decided per user by ``University/canRead(folder:user:)``.
public struct Folder: Sendable, Hashable, Named {
    public var id: String
    /// Owner; may name a deleted user.
    public var userID: String
    /// Empty for a course's root folder.
    public var parentID: String
    public var rangeID: String
    public var rangeType: String = "course"
    /// Stud.IP class name: `RootFolder`, `StandardFolder`, `HiddenFolder`, `PermissionEnabledFolder`, …
    public var folderType: String
    public var name: String
    public var description: String = ""
    /// The decoded `data_content` column as JSON text: `[]`, `null` or an object such as `{"permission":"15"}`.
    public var dataContent: String = "[]"
    public var mkdate: Int
    public var chdate: Int

    public init(
        id: String, userID: String, parentID: String, rangeID: String, folderType: String, name: String, mkdate: Int,
        chdate: Int, rangeType: String = "course", description: String = "", dataContent: String = "[]"
    ) {
        self.id = id
        self.userID = userID
        self.parentID = parentID
        self.rangeID = rangeID
        self.folderType = folderType
        self.name = name
        self.mkdate = mkdate
        self.chdate = chdate
        self.rangeType = rangeType
        self.description = description
        self.dataContent = dataContent
    }

    public var isRoot: Bool { parentID.isEmpty }
}

/// Where a document's bytes come from.
public enum Content: Sendable, Hashable {
    /// Bytes held in memory (fixtures, uploads).
    case bytes(Data)
    /// Deterministic bytes produced on the fly; `kind` picks the generator, `seed` makes them unique.
    case generated(kind: GeneratedKind, seed: UInt64, size: Int)
    /// A document hosted elsewhere (Stud.IP "URL file"): the content route answers 302 to this URL.
    /// A relative URL (starting with `/`) is resolved against the simulator's external host.
    case external(url: String)

    public enum GeneratedKind: String, Sendable, Hashable {
        /// A real PDF with text pages (lecture slides).
        case pdf
        /// UTF-8 text.
        case text
        /// Arbitrary bytes.
        case binary
    }
}

/// A document: a file-ref with the `files` row it points to folded in.
public struct FileRef: Sendable, Hashable, Named {
    public var id: String
    /// The `files` row id; a new version gets a new row, except one uploaded through JSON:API.
    public var fileID: String
    public var folderID: String
    public var name: String
    /// The `files` row's name (JSON:API `files/{id}`): set by an upload and a new version, kept by a rename.
    public var fileName: String
    public var description: String = ""
    /// Uploader; may name a deleted user (then ``authorName`` is shown).
    public var userID: String
    public var authorName: String = ""
    public var mimeType: String
    public var size: Int
    public var mkdate: Int
    /// The file-ref's chdate (rename, move, new versions except through JSON:API).
    public var chdate: Int
    /// The `files` row's mkdate (JSON:API `files/{id}`): a new row starts with its own.
    public var fileMkdate: Int
    /// The `files` row's chdate (legacy `Last-Modified`, JSON:API `files/{id}`).
    public var fileChdate: Int
    /// Inode of the stored bytes on the server's disk, the ETag's first part.
    public var inode: UInt64
    /// Mtime of the stored bytes, the ETag's second part. Not the row's chdate: an upload of the same size
    /// through JSON:API rewrites the bytes without touching any row.
    public var fileMtime: Int
    public var downloads: Int = 0
    public var termsOfUseID: String = "SELFMADE_NONPUB"
    public var content: Content

    public init(
        id: String, fileID: String, folderID: String, name: String, userID: String, mimeType: String, size: Int,
        mkdate: Int, chdate: Int, fileChdate: Int? = nil, content: Content, description: String = "",
        authorName: String = "", downloads: Int = 0, termsOfUseID: String = "SELFMADE_NONPUB", inode: UInt64? = nil,
        fileMtime: Int? = nil
    ) {
        self.id = id
        self.fileID = fileID
        self.folderID = folderID
        self.name = name
        self.fileName = name
        self.userID = userID
        self.mimeType = mimeType
        self.size = size
        self.mkdate = mkdate
        self.chdate = chdate
        self.fileMkdate = mkdate
        self.fileChdate = fileChdate ?? chdate
        self.inode = inode ?? Self.inode(of: fileID)
        self.fileMtime = fileMtime ?? fileChdate ?? chdate
        self.content = content
        self.description = description
        self.authorName = authorName
        self.downloads = downloads
        self.termsOfUseID = termsOfUseID
    }

    /// Legacy `storage`: `url` for documents hosted elsewhere.
    public var isLink: Bool {
        if case .external = content { return true }
        return false
    }
}

/// A license (`content_terms_of_use_entries`). `downloadCondition`: 0 none, 1 closed groups only, 2 owner only.
public struct TermsOfUse: Sendable, Hashable, Named {
    public var id: String
    public var name: String
    public var description: String = ""
    public var studentDescription: String = ""
    public var icon: String
    public var position: Int
    public var isDefault: Bool = false
    public var downloadCondition: Int = 0
    public var mkdate: Int
    public var chdate: Int

    public init(
        id: String, name: String, icon: String, position: Int, mkdate: Int, chdate: Int, description: String = "",
        studentDescription: String = "", isDefault: Bool = false, downloadCondition: Int = 0
    ) {
        self.id = id
        self.name = name
        self.icon = icon
        self.position = position
        self.mkdate = mkdate
        self.chdate = chdate
        self.description = description
        self.studentDescription = studentDescription
        self.isDefault = isDefault
        self.downloadCondition = downloadCondition
    }
}
