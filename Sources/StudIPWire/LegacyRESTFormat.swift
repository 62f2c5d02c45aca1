import Foundation
import StudIPModel

/// Legacy REST's resources (API.md §2) read into the model: the steps of `LegacyRESTSource`'s walk that need no
/// connection, apart from it so that `campusfs-fuzz` runs them without the HTTP client (docs/fuzzing.md).
package struct LegacyRESTFormat: Sendable {
    /// For the web-UI links of courses, folders and documents.
    package let installation: Installation

    package init(installation: Installation) {
        self.installation = installation
    }

    package static func semester(_ element: JSONValue) -> RemoteSemester? {
        guard let id = element["id"]?.id, let begin = StudIPDate.unix(element["begin"]),
            let end = StudIPDate.unix(element["end"])
        else { return nil }
        return RemoteSemester(
            id: id, title: element["title"]?.string ?? id, begin: begin, end: end,
            lectures: CourseItemText.period(
                StudIPDate.unix(element["seminars_begin"]), StudIPDate.unix(element["seminars_end"])))
    }

    /// The course, and its lecturers' display names by user id: file-refs name only the uploader's id.
    package func course(_ element: JSONValue) -> (listed: ListedCourse, lecturerNames: [String: String])? {
        guard let id = element["course_id"]?.id ?? element["id"]?.id else { return nil }
        var lecturers: [String] = []
        var lecturerNames: [String: String] = [:]
        for lecturer in element["lecturers"]?.elements ?? [] {
            guard let name = lecturer["name"]?["formatted"]?.string, !name.isEmpty else { continue }
            lecturers.append(name)
            if let lecturerID = lecturer["id"]?.id { lecturerNames[lecturerID] = name }
        }
        let course = RemoteCourse(
            id: id, number: (element["number"]?.string ?? "").trimmingTrailingWhitespace,
            title: element["title"]?.string ?? "", subtitle: element["subtitle"]?.string ?? "",
            description: element["description"]?.string ?? "", semesterIDs: [], lecturers: lecturers.sorted(),
            webURL: installation.courseWebURL(id))
        let endSemester = element["end_semester"]
        let listed = ListedCourse(course: course, hasNoEndSemester: endSemester == nil || endSemester?.isNull == true)
        return (listed, lecturerNames)
    }
}

/// The content of one course while the legacy walk assembles it, folder listing by folder listing.
package struct FolderWalk {
    package private(set) var content: CourseContent
    /// User id → display name, for documents' `ownerName`.
    package var names: [String: String] = [:]
    /// The logged-in user: owning a document means being allowed to change it where Stud.IP sends no flags
    /// (docs/client.md, "Permissions"); nil, such a document is read-only.
    package var userID: String?
    private let installation: Installation
    private var folderIndex: Set<String> = []
    private var documentIndex: Set<String> = []

    package init(course: RemoteCourse, rootID: String, installation: Installation) {
        content = CourseContent(course: course, rootFolderID: rootID, folders: [], documents: [])
        self.installation = installation
    }

    /// Takes in one extended folder object (`top_folder` or `folder/{id}`): the folder itself, its documents
    /// and its readable subfolders, which are returned for listing next. Permission-only entries (a visible
    /// but unreadable subfolder has no id, API.md §2.5.4) are skipped.
    package mutating func add(listing json: JSONValue, of folderID: String, parentID: String?, label: String)
        -> [RemoteFolder]
    {
        guard json["id"]?.id == folderID else {
            fail(folderID, because: "the listing of folder \(folderID) in \(label) describes another folder")
            return []
        }
        guard let folder = self.folder(json, parentID: parentID) else {
            fail(folderID, because: "the folder has no dates")
            return []
        }
        if folderIndex.insert(folder.id).inserted {
            content.folders.append(folder)
        } else if let index = content.folders.firstIndex(where: { $0.id == folder.id }) {
            content.folders[index] = folder
        }
        for element in json["file_refs"]?.elements ?? [] {
            add(document: element, folderID: folderID)
        }
        var subfolders: [RemoteFolder] = []
        for entry in json["subfolders"]?.elements ?? [] {
            guard entry["is_readable"]?.bool != false, let child = self.folder(entry, parentID: folderID),
                folderIndex.insert(child.id).inserted
            else { continue }
            content.folders.append(child)
            subfolders.append(child)
        }
        return subfolders
    }

    private func folder(_ json: JSONValue, parentID: String?) -> RemoteFolder? {
        guard let id = json["id"]?.id else { return nil }
        let dates = StudIPDate.pair(
            created: StudIPDate.unix(json["mkdate"]), changed: StudIPDate.unix(json["chdate"]))
        guard let dates else { return nil }
        let folderType = json["folder_type"]?.string ?? ""
        let isWritable = json["is_writable"]?.bool ?? false
        return RemoteFolder(
            id: id, parentID: parentID, name: json["name"]?.string ?? "",
            description: json["description"]?.string ?? "", folderType: folderType,
            created: dates.created, changed: dates.changed,
            webURL: installation.folderWebURL(id, courseID: content.course.id),
            permissions: FolderPermissions(
                isReadable: json["is_readable"]?.bool != false, isWritable: isWritable,
                isSubfolderAllowed: isWritable && folderType == Self.groupFolderType))
    }

    /// Legacy REST sends no subfolder flag: of the folders a student may write to, Stud.IP 5.0.7 lets them create
    /// folders only in a group's folder (captured, fixtures-5.0.7-writes step 7; docs/client.md, "Permissions").
    static let groupFolderType = "CourseGroupFolder"

    private mutating func add(document json: JSONValue, folderID: String) {
        guard let id = json["id"]?.id else {
            fail(folderID, because: "a document without id")
            return
        }
        guard !documentIndex.contains(id) else { return }
        let dates = StudIPDate.pair(
            created: StudIPDate.unix(json["mkdate"]), changed: StudIPDate.unix(json["chdate"]))
        guard let name = json["name"]?.string, let dates else {
            content.problems.append(ItemProblem(itemID: id, message: "document without name or dates, left out"))
            content.failedFolderIDs.insert(folderID)
            return
        }
        documentIndex.insert(id)
        let isOwn = userID != nil && json["user_id"]?.id == userID
        let isLink = json["storage"]?.string == "url"
        let detailsURL = installation.documentWebURL(id, courseID: content.course.id)
        // 4.x sends the external address; 5.x a `sendfile.php` URL of the installation, which is no better.
        let externalURL = json["url"]?.string.flatMap { $0.contains("sendfile.php") ? nil : $0 }
        content.documents.append(
            RemoteDocument(
                id: id, folderID: folderID, name: name, description: json["description"]?.string ?? "",
                mimeType: json["mime_type"]?.string ?? "", size: max(0, json["size"]?.int ?? 0),
                created: dates.created, changed: dates.changed, fileID: json["file_id"]?.id ?? "",
                ownerName: json["user_id"]?.id.flatMap { names[$0] } ?? "",
                license: json["content_terms_of_use_id"]?.string ?? "",
                isDownloadable: json["is_downloadable"]?.bool ?? true, isLink: isLink,
                webURL: isLink ? externalURL ?? detailsURL : detailsURL,
                isWritable: json["is_writable"]?.bool ?? isOwn, isEditable: json["is_editable"]?.bool ?? isOwn))
    }

    package mutating func fail(_ folderID: String, because reason: String) {
        content.failedFolderIDs.insert(folderID)
        content.problems.append(ItemProblem(itemID: folderID, message: reason))
    }
}
