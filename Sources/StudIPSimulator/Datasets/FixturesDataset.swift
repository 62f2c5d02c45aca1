import Digests
import Foundation

/// The Stud.IP 5.0.7 demo installation captured in `shared/studip/fixtures-5.0.7`, rebuilt from
/// `Resources/fixtures-5.0.7/dataset.json` (every value the captured responses show) and the original bytes
/// in `Resources/fixtures-5.0.7/files/`, checked against their SHA-256 on load.
enum FixturesDataset {
    /// Why the bundled data could not be loaded.
    struct LoadError: Error, CustomStringConvertible {
        let description: String
    }

    /// With `later: true`, the installation as `fixtures-5.0.7-more` captured it: plus the announcements, the course
    /// dates and the two courses L-14 and L-17 of `Resources/fixtures-5.0.7/news-and-dates.json`, with the clock
    /// pinned to the capture's time (which news are published and which dates are "this week" depend on it).
    static func load(later: Bool = false) throws -> University {
        guard let directory = Bundle.module.url(forResource: "fixtures-5.0.7", withExtension: nil) else {
            throw LoadError(description: "resource folder fixtures-5.0.7 missing from the bundle")
        }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let data = try decoder.decode(DataFile.self, from: Data(contentsOf: directory.appending(path: "dataset.json")))
        var university = University(
            installationID: data.installationId, timeZone: TimeZone(identifier: data.timeZone) ?? .gmt)
        for user in data.users {
            university.add(
                User(
                    id: user.id, username: user.username, password: data.password, givenName: user.givenName,
                    familyName: user.familyName, perms: user.perms, email: user.email,
                    avatarTimestamp: user.avatarTimestamp,
                    datafields: user.datafields.map {
                        UserDatafield(id: $0.id, name: $0.name, type: $0.type, value: $0.value)
                    }
                ))
        }
        // The installation's only `semester_holiday` (fixtures-5.0.7-writes step 10): 24.12.2021–9.1.2022 (CET).
        let unterbrechung = Holiday(name: "Unterbrechung", begin: 1_640_300_400, end: 1_641_769_199)
        for semester in data.semesters {
            var added = Semester(
                id: semester.id, title: semester.title, begin: semester.begin, end: semester.end,
                lecturesBegin: semester.seminarsBegin, lecturesEnd: semester.seminarsEnd, token: semester.token,
                description: semester.description, visible: semester.visible, isCurrent: semester.isCurrent)
            if added.contains(unterbrechung.begin) { added.holidays = [unterbrechung] }
            university.add(added)
        }
        for terms in data.termsOfUse {
            university.add(
                TermsOfUse(
                    id: terms.id, name: terms.name, icon: terms.icon, position: terms.position, mkdate: terms.mkdate,
                    chdate: terms.chdate, description: terms.description, studentDescription: terms.studentDescription,
                    isDefault: terms.isDefault, downloadCondition: terms.downloadCondition))
        }
        for course in data.courses { university.add(course.course) }
        for folder in data.folders { university.add(folder.folder) }
        for ref in data.fileRefs {
            let bytes = try Data(contentsOf: directory.appending(path: ref.contentFile))
            let digest = Digest.sha256(bytes).map { String(format: "%02x", $0) }.joined()
            guard digest == ref.sha256, bytes.count == ref.size else {
                throw LoadError(description: "\(ref.contentFile) does not match its SHA-256 in dataset.json")
            }
            university.add(
                FileRef(
                    id: ref.id, fileID: ref.fileId, folderID: ref.folderId, name: ref.name, userID: ref.userId,
                    mimeType: ref.mimeType, size: ref.size, mkdate: ref.mkdate, chdate: ref.chdate,
                    fileChdate: ref.fileChdate, content: .bytes(bytes), description: ref.description,
                    downloads: ref.downloads, termsOfUseID: ref.termsOfUseId, inode: ref.inode,
                    fileMtime: ref.fileMtime))
        }
        if later {
            let layer = try decoder.decode(
                LaterFile.self, from: Data(contentsOf: directory.appending(path: "news-and-dates.json")))
            for course in layer.courses { university.add(course.course) }
            for folder in layer.folders { university.add(folder.folder) }
            for row in layer.news {
                university.add(
                    News(
                        id: row.id, title: row.title, content: row.content, authorID: row.authorId,
                        rangeIDs: row.ranges, date: row.date, expire: row.expire, allowComments: row.allowComments,
                        mkdate: row.mkdate, chdate: row.chdate))
            }
            for row in layer.dates {
                university.add(
                    CourseEvent(
                        id: row.id, courseID: row.courseId, cycleID: row.cycleId, start: row.start, end: row.end,
                        category: row.category, cycleDescription: row.cycleDescription, room: row.room,
                        isCancelled: row.cancelled, cancelComment: row.cancelComment, holiday: row.holiday,
                        mkdate: row.mkdate, chdate: row.chdate))
            }
            university.pinnedNow = layer.now
        }
        return university
    }

    /// The demo course "Test Lehrveranstaltung" with the folders `fixtures-5.0.7-writes` captured in its step 1
    /// (the demo data's ids, which the first capture did not show: its root replaces the invented one), the
    /// document hosted elsewhere in its root, and that installation's extra licence `CAMPUSFS_NODOWNLOAD`.
    static func addWritableDemoCourse(to university: inout University) throws {
        let courseID = "a07535cf2f8a72df33c12ddfa4b53dde"
        let rootID = "f7fc5ae64d2c453daa9619a820a6467e"
        let owner = "76ed43ef286fb55cf9e41beadb484a9f"
        guard var course = university.courses[courseID] else {
            throw LoadError(description: "the demo course \(courseID) is missing")
        }
        let inventedRoot = course.topFolderID
        course.topFolderID = rootID
        university.add(course)
        try university.removeFolder(inventedRoot)
        let folders:
            [(id: String, type: String, name: String, description: String, mkdate: Int, chdate: Int, data: String)] = [
                (rootID, "RootFolder", "Test Lehrveranstaltung", "", 1_510_849_315, 1_510_849_315, "[]"),
                (
                    "012cb91a42cf85e5fafdd84e54ed2ec3", "CourseDateFolder",
                    "13. Klausur am Wed., 07/27/22, 10:15 - 12:00", "",
                    1_543_859_055, 1_543_859_055, #"{"termin_id":"9ff59e18112a686c553412761a5df85c","permission":5}"#
                ),
                (
                    "ca002fbae136b07e4df29e0136e3bd32", "StandardFolder", "Allgemeiner Dateiordner",
                    "Ablage für allgemeine Ordner und Dokumente der Veranstaltung", 1_343_924_407, 1_343_924_894, "[]"
                ),
                (
                    "df122112a21812ff4ffcf1965cb48fc3", "CourseGroupFolder", "Dateiordner der Gruppe: Studierende",
                    "Ablage für Ordner und Dokumente dieser Gruppe", 1_343_924_860, 1_343_924_860,
                    #"{"group":"2f597139a049a768dbf8345a0a0af3de"}"#
                ),
                (
                    "ad8dc6a6162fb0fe022af4a62a15e309", "HomeworkFolder", "Hausaufgaben", "", 1_343_924_873,
                    1_343_924_877,
                    #"{"permission":"3"}"#
                ),
            ]
        for folder in folders {
            university.add(
                Folder(
                    id: folder.id, userID: owner, parentID: folder.id == rootID ? "" : rootID, rangeID: courseID,
                    folderType: folder.type, name: folder.name, mkdate: folder.mkdate, chdate: folder.chdate,
                    description: folder.description, dataContent: folder.data))
        }
        university.add(
            FileRef(
                id: "f62768f0cbd0bcdc4912ce5e4f84eb14", fileID: "b86665948274be968d78777830990eb5", folderID: rootID,
                name: "mappe_studip-el.pdf", userID: owner, mimeType: "0", size: 314_146, mkdate: 1_607_705_144,
                chdate: 1_607_705_144, content: .external(url: "https://www.studip.de/download/mappe_studip-el.pdf"),
                downloads: 1, termsOfUseID: "FREE_LICENSE"))
        university.add(
            TermsOfUse(
                id: "CAMPUSFS_NODOWNLOAD", name: "Nur Lehrende (kein Download)", icon: "lock-locked", position: 6,
                mkdate: 1_795_850_012, chdate: 1_795_850_012,
                description: "Dokumente dieser Lizenz dürfen Studierende nicht herunterladen.",
                studentDescription: "Kein Download.", downloadCondition: 2))
    }

    /// The layout of `news-and-dates.json`.
    private struct LaterFile: Decodable {
        var now: Int
        var courses: [CourseRow]
        var folders: [FolderRow]
        var news: [NewsRow]
        var dates: [DateRow]
    }

    private struct NewsRow: Decodable {
        var id, title, content, authorId: String
        var ranges: [String]
        var date, expire, mkdate, chdate: Int
        var allowComments: Bool
    }

    private struct DateRow: Decodable {
        var id, courseId, category, cycleDescription, room, cancelComment: String
        var cycleId, holiday: String?
        var start, end, mkdate, chdate: Int
        var cancelled: Bool
    }

    /// The layout of `dataset.json` (snake_case keys).
    private struct DataFile: Decodable {
        var installationId: String
        var timeZone: String
        var password: String
        var users: [UserRow]
        var semesters: [SemesterRow]
        var termsOfUse: [TermsRow]
        var courses: [CourseRow]
        var folders: [FolderRow]
        var fileRefs: [FileRefRow]
    }

    private struct UserRow: Decodable {
        var id, username, givenName, familyName, perms, email: String
        var avatarTimestamp: Int
        var datafields: [DatafieldRow]
    }

    private struct DatafieldRow: Decodable {
        var id, name, type, value: String
    }

    private struct SemesterRow: Decodable {
        var id, title, token, description: String
        var begin, end, seminarsBegin, seminarsEnd: Int
        var visible: Bool
        var isCurrent: Bool?
    }

    private struct TermsRow: Decodable {
        var id, name, description, studentDescription, icon: String
        var position, downloadCondition, mkdate, chdate: Int
        var isDefault: Bool
    }

    private struct CourseRow: Decodable {
        var id, number, title, subtitle, description, location, instituteId, topFolderId: String
        var type, semClass, mkdate, chdate: Int
        var startTime: Int?
        var semesterIds, modules: [String]
        var members: [MemberRow]

        var course: Course {
            Course(
                id: id, number: number, title: title, instituteID: instituteId, semesterIDs: semesterIds,
                members: members.map {
                    Membership(
                        userID: $0.userId, permission: $0.permission, mkdate: $0.mkdate, group: $0.group,
                        visible: $0.visible)
                },
                topFolderID: topFolderId, mkdate: mkdate, chdate: chdate, subtitle: subtitle, type: type,
                semClass: semClass, description: description, location: location, modules: modules,
                startTime: startTime)
        }
    }

    private struct MemberRow: Decodable {
        var userId, permission, visible: String
        var mkdate, group: Int
    }

    private struct FolderRow: Decodable {
        var id, userId, parentId, rangeId, rangeType, folderType, name, description, dataContent: String
        var mkdate, chdate: Int

        var folder: Folder {
            Folder(
                id: id, userID: userId, parentID: parentId, rangeID: rangeId, folderType: folderType, name: name,
                mkdate: mkdate, chdate: chdate, rangeType: rangeType, description: description,
                dataContent: dataContent)
        }
    }

    private struct FileRefRow: Decodable {
        var id, fileId, folderId, name, description, userId, mimeType, termsOfUseId, contentFile, sha256: String
        var size, mkdate, chdate, fileChdate, downloads: Int
        /// The captured ETag's inode and mtime, for the documents whose ETag was captured.
        var inode: UInt64?
        var fileMtime: Int?
    }
}
