import Foundation
import StudIPModel
import Testing

@testable import MetadataStore

let day: TimeInterval = 86_400
/// "Now" for the tests: 2026-11-15.
let now = Date(timeIntervalSince1970: 1_794_700_800)

let user = RemoteUser(id: "u1", username: "alice", displayName: "Alice Example")
let ss26 = RemoteSemester(
    id: "sem-ss26", title: "SS 2026", begin: Date(timeIntervalSince1970: 1_774_994_400),
    end: Date(timeIntervalSince1970: 1_790_719_200))
let ws2526 = RemoteSemester(
    id: "sem-ws25", title: "WS 2025/26", begin: Date(timeIntervalSince1970: 1_759_269_600),
    end: Date(timeIntervalSince1970: 1_774_994_399))
let ws2627 = RemoteSemester(
    id: "sem-ws26", title: "WS 2026/27", begin: Date(timeIntervalSince1970: 1_790_805_600),
    end: Date(timeIntervalSince1970: 1_806_530_399))
let allSemesters = [ws2526, ss26, ws2627]

func makeCourse(_ id: String, _ number: String, _ title: String, _ semesters: [RemoteSemester]) -> RemoteCourse {
    RemoteCourse(id: id, number: number, title: title, description: "About \(title)", semesterIDs: semesters.map(\.id))
}

func overview(_ courses: [RemoteCourse], semesters: [RemoteSemester] = allSemesters) -> RemoteOverview {
    RemoteOverview(user: user, semesters: semesters, courses: courses)
}

func folder(_ id: String, in parent: String, _ name: String, created: Date = now - 100 * day) -> RemoteFolder {
    RemoteFolder(id: id, parentID: parent, name: name, created: created, changed: created + day)
}

func document(
    _ id: String, in folder: String, _ name: String, mime: String = "application/pdf", size: Int64 = 1000,
    created: Date = now - 50 * day, changed: Date? = nil, fileID: String? = nil
) -> RemoteDocument {
    RemoteDocument(
        id: id, folderID: folder, name: name, description: "desc \(id)", mimeType: mime, size: size, created: created,
        changed: changed ?? created, fileID: fileID ?? "file-\(id)", ownerName: "Prof. Owner",
        license: "SELFMADE_NONPUB",
        webURL: "https://studip.example/doc/\(id)")
}

/// The root folder of a course is `root-<course id>`.
func root(_ course: RemoteCourse) -> String { "root-\(course.id)" }

func content(
    _ course: RemoteCourse, folders: [RemoteFolder] = [], documents: [RemoteDocument] = [],
    failed: Set<String> = [], problems: [ItemProblem] = []
) -> CourseContent {
    let rootFolder = RemoteFolder(id: root(course), parentID: nil, name: "", created: now - 200 * day, changed: now)
    return CourseContent(
        course: course, rootFolderID: root(course), folders: [rootFolder] + folders, documents: documents,
        failedFolderIDs: failed, problems: problems)
}

let info101 = makeCourse("c-101", "INF-101", "Foo", [ws2627])

extension MetadataStore {
    /// Names in a directory, in readdir order.
    func names(_ path: String) throws -> [String] {
        try children(of: resolve(path: path).inode).map(\.node.name)
    }

    func inode(_ path: String) throws -> Int64 {
        try resolve(path: path, followSymlinks: false).inode
    }

    /// A store with one course in WS 2026/27 after a first sync of `content`.
    static func withCourse(_ content: CourseContent, at time: Date = now) throws -> MetadataStore {
        let store = try MetadataStore.temporary()
        _ = try store.applyOverview(overview([content.course]), now: time)
        _ = try store.applyCourse(content, now: time)
        return store
    }
}

/// The bytes of a string: `==` on `String` treats NFC and NFD as equal, the filesystem does not.
func bytes(_ string: String) -> [UInt8] { Array(string.utf8) }
