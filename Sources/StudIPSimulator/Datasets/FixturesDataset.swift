import Crypto
import Foundation

/// The Stud.IP 5.0.7 demo installation captured in `shared/studip/fixtures-5.0.7`, rebuilt from
/// `Resources/fixtures-5.0.7/dataset.json` (every value the captured responses show) and the original bytes
/// in `Resources/fixtures-5.0.7/files/`, checked against their SHA-256 on load.
enum FixturesDataset {
    /// Why the bundled data could not be loaded.
    struct LoadError: Error, CustomStringConvertible {
        let description: String
    }

    static func load() throws -> University {
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
        for semester in data.semesters {
            university.add(
                Semester(
                    id: semester.id, title: semester.title, begin: semester.begin, end: semester.end,
                    lecturesBegin: semester.seminarsBegin, lecturesEnd: semester.seminarsEnd, token: semester.token,
                    description: semester.description, visible: semester.visible, isCurrent: semester.isCurrent))
        }
        for terms in data.termsOfUse {
            university.add(
                TermsOfUse(
                    id: terms.id, name: terms.name, icon: terms.icon, position: terms.position, mkdate: terms.mkdate,
                    chdate: terms.chdate, description: terms.description, studentDescription: terms.studentDescription,
                    isDefault: terms.isDefault, downloadCondition: terms.downloadCondition))
        }
        for course in data.courses {
            university.add(
                Course(
                    id: course.id, number: course.number, title: course.title, instituteID: course.instituteId,
                    semesterIDs: course.semesterIds,
                    members: course.members.map {
                        Membership(
                            userID: $0.userId, permission: $0.permission, mkdate: $0.mkdate, group: $0.group,
                            visible: $0.visible)
                    },
                    topFolderID: course.topFolderId, mkdate: course.mkdate, chdate: course.chdate,
                    subtitle: course.subtitle, type: course.type, semClass: course.semClass,
                    description: course.description, location: course.location, modules: course.modules,
                    startTime: course.startTime))
        }
        for folder in data.folders {
            university.add(
                Folder(
                    id: folder.id, userID: folder.userId, parentID: folder.parentId, rangeID: folder.rangeId,
                    folderType: folder.folderType, name: folder.name, mkdate: folder.mkdate, chdate: folder.chdate,
                    rangeType: folder.rangeType, description: folder.description, dataContent: folder.dataContent))
        }
        for ref in data.fileRefs {
            let bytes = try Data(contentsOf: directory.appending(path: ref.contentFile))
            let digest = SHA256.hash(data: bytes).map { String(format: "%02x", $0) }.joined()
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
        return university
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
    }

    private struct MemberRow: Decodable {
        var userId, permission, visible: String
        var mkdate, group: Int
    }

    private struct FolderRow: Decodable {
        var id, userId, parentId, rangeId, rangeType, folderType, name, description, dataContent: String
        var mkdate, chdate: Int
    }

    private struct FileRefRow: Decodable {
        var id, fileId, folderId, name, description, userId, mimeType, termsOfUseId, contentFile, sha256: String
        var size, mkdate, chdate, fileChdate, downloads: Int
        /// The captured ETag's inode and mtime, for the documents whose ETag was captured.
        var inode: UInt64?
        var fileMtime: Int?
    }
}
