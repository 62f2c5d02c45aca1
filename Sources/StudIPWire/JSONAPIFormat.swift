import Foundation
import StudIPModel

/// JSON:API's resources (API.md §3) read into the model: the steps of `JSONAPISource`'s walk that need no
/// connection, apart from it so that `campusfs-fuzz` runs them without the HTTP client (docs/fuzzing.md).
package struct JSONAPIFormat: Sendable {
    /// For the web-UI links of courses, folders and documents.
    package let installation: Installation

    package init(installation: Installation) {
        self.installation = installation
    }

    package static func semester(_ element: JSONValue) -> RemoteSemester? {
        let attributes = element["attributes"]
        guard let id = element["id"]?.id, let begin = StudIPDate.iso8601(attributes?["start"]),
            let end = StudIPDate.iso8601(attributes?["end"])
        else { return nil }
        let lectureBegin = StudIPDate.iso8601(attributes?["start-of-lectures"])
        let lectureEnd = StudIPDate.iso8601(attributes?["end-of-lectures"])
        return RemoteSemester(
            id: id, title: attributes?["title"]?.string ?? id, begin: begin, end: end,
            lectures: CourseItemText.period(lectureBegin, lectureEnd))
    }

    package func course(_ element: JSONValue) -> ListedCourse? {
        guard let id = element["id"]?.id else { return nil }
        let attributes = element["attributes"]
        let endSemester = element["relationships"]?["end-semester"]?["data"]?["id"]?.id
        let course = RemoteCourse(
            id: id, number: (attributes?["course-number"]?.string ?? "").trimmingTrailingWhitespace,
            title: attributes?["title"]?.string ?? "", subtitle: attributes?["subtitle"]?.string ?? "",
            description: attributes?["description"]?.string ?? "", semesterIDs: [],
            webURL: installation.courseWebURL(id))
        return ListedCourse(course: course, hasNoEndSemester: endSemester == nil)
    }

    /// What a page of `folders` is read for: each element's members ``folder(_:courseID:)`` reads, and the page's
    /// `data`, total and `included` the paging reads. The reader builds nothing else (docs/performance.md,
    /// "Fourth pass: decoding"); `ShapedPageTests` holds the models decoded from it to those of the whole page.
    package static let folderPage = page(of: [
        "id": .everything,
        "attributes": whole([
            "mkdate", "chdate", "is-readable", "is-writable", "is-subfolder-allowed", "folder-type", "name",
            "description",
        ]),
        "relationships": .members([
            "parent": .members(["data": .members(["id": .everything])]),
            "file-refs": .members(["meta": .members(["count": .everything])]),
        ]),
    ])

    /// What a page of `file-refs` is read for: each element's members ``document(_:courseID:)`` reads, and what
    /// the paging reads (``folderPage``).
    package static let documentPage = page(of: [
        "id": .everything,
        "attributes": whole([
            "name", "description", "mime-type", "filesize", "mkdate", "chdate", "is-downloadable", "is-writable",
            "is-editable",
        ]),
        "relationships": .members([
            "file": .members(["data": .members(["id": .everything])]),
            "owner": .members(["meta": .members(["name": .everything])]),
            "terms-of-use": .members(["data": .members(["id": .everything])]),
            "parent": .members(["data": .members(["id": .everything])]),
        ]),
    ])

    /// A collection's page whose elements are read as `element` says.
    /// An object of which the members `names` are built whole.
    private static func whole(_ names: [String]) -> JSONShape.Part {
        .members(Dictionary(uniqueKeysWithValues: names.map { ($0, JSONShape.Part.everything) }))
    }

    private static func page(of element: [String: JSONShape.Part]) -> JSONShape {
        JSONShape(
            .members([
                "data": .elements(.members(element)),
                "meta": .members(["page": .members(["total": .everything])]),
                "included": .everything,
            ]))
    }

    /// A `folders` resource of the course `courseID`, decoded.
    package func folder(_ element: JSONValue, courseID: String) -> ListedFolder {
        let attributes = element["attributes"]
        let id = element["id"]?.id
        let dates = StudIPDate.pair(
            created: StudIPDate.iso8601(attributes?["mkdate"]), changed: StudIPDate.iso8601(attributes?["chdate"]))
        let parentID = element["relationships"]?["parent"]?["data"]?["id"]?.id
        // The flags are the asking user's; a flag not sent allows nothing beyond reading what was listed.
        let permissions = FolderPermissions(
            isReadable: attributes?["is-readable"]?.bool != false,
            isWritable: attributes?["is-writable"]?.bool ?? false,
            isSubfolderAllowed: attributes?["is-subfolder-allowed"]?.bool ?? false)
        return ListedFolder(
            id: id, parentID: parentID, isRootFolder: attributes?["folder-type"]?.string == "RootFolder",
            isReadable: permissions.isReadable,
            folder: id.flatMap { id in
                dates.map { dates in
                    RemoteFolder(
                        id: id, parentID: parentID, name: attributes?["name"]?.string ?? "",
                        description: attributes?["description"]?.string ?? "",
                        folderType: attributes?["folder-type"]?.string ?? "", created: dates.created,
                        changed: dates.changed, webURL: installation.folderWebURL(id, courseID: courseID),
                        permissions: permissions)
                }
            },
            documentCount: element["relationships"]?["file-refs"]?["meta"]?["count"]?.int.map { Int($0) })
    }

    /// A `file-refs` resource of the course `courseID`, decoded. Its folder is set when it joins a tree.
    package func document(_ element: JSONValue, courseID: String) -> ListedDocument {
        let attributes = element["attributes"]
        let relationships = element["relationships"]
        let id = element["id"]?.id
        let dates = StudIPDate.pair(
            created: StudIPDate.iso8601(attributes?["mkdate"]), changed: StudIPDate.iso8601(attributes?["chdate"]))
        var document: RemoteDocument?
        if let id, let name = attributes?["name"]?.string, let dates {
            document = RemoteDocument(
                id: id, folderID: "", name: name, description: attributes?["description"]?.string ?? "",
                mimeType: attributes?["mime-type"]?.string ?? "", size: max(0, attributes?["filesize"]?.int ?? 0),
                created: dates.created, changed: dates.changed,
                fileID: relationships?["file"]?["data"]?["id"]?.id ?? "",
                ownerName: relationships?["owner"]?["meta"]?["name"]?.string ?? "",
                license: relationships?["terms-of-use"]?["data"]?["id"]?.id ?? "",
                isDownloadable: attributes?["is-downloadable"]?.bool ?? true,
                webURL: installation.documentWebURL(id, courseID: courseID),
                isWritable: attributes?["is-writable"]?.bool ?? false,
                isEditable: attributes?["is-editable"]?.bool ?? false)
        }
        return ListedDocument(id: id, parentID: relationships?["parent"]?["data"]?["id"]?.id, document: document)
    }

    /// The readable folders below the root: unreadable folders (`is-readable: false`) and everything below
    /// them are left out, so are folders whose parent is not in the list. An unreadable homework folder (a
    /// student's view of one) stays, without anything below it: the student hands in there (docs/client.md,
    /// "Permissions").
    package func readableTree(_ elements: [JSONValue], course: RemoteCourse, label: String) throws(StudIPError)
        -> CourseTree
    {
        try readableTree(elements.map { folder($0, courseID: course.id) }, course: course, label: label)
    }

    /// ``readableTree(_:course:label:)`` of folders decoded page by page.
    package func readableTree(_ folders: [ListedFolder], course: RemoteCourse, label: String) throws(StudIPError)
        -> CourseTree
    {
        let roots = folders.filter { $0.parentID == nil && $0.id != nil }
        guard let root = roots.first(where: \.isRootFolder) ?? roots.first, let rootID = root.id else {
            throw .malformedResponse(what: "the folders of \(label)", detail: "no root folder")
        }
        var children: [String: [ListedFolder]] = [:]
        for folder in folders {
            if let parent = folder.parentID { children[parent, default: []].append(folder) }
        }
        var tree = CourseTree(course: course, rootID: rootID, installation: installation)
        var pending = [(folder: root, parentID: String?.none)]
        while let (listed, parentID) = pending.popLast() {
            guard let folder = tree.add(folder: listed, parentID: parentID), listed.isReadable else { continue }
            for child in (children[folder] ?? []).reversed()
            where child.isReadable || child.folder?.isUnreadableHomework == true {
                pending.append((child, folder))
            }
        }
        return tree
    }
}

/// A `folders` resource as the walk needs it: decoded as its page arrives, so the page's JSON can go.
package struct ListedFolder: Sendable {
    package var id: String?
    package var parentID: String?
    package var isRootFolder: Bool
    package var isReadable: Bool
    /// nil when the folder has no dates.
    package var folder: RemoteFolder?
    /// The document count Stud.IP 5.1+ announces.
    package var documentCount: Int?
}

/// A `file-refs` resource as the walk needs it: decoded as its page arrives, so the page's JSON can go.
package struct ListedDocument: Sendable {
    package var id: String?
    /// The folder the resource names; a per-folder listing may name none.
    package var parentID: String?
    /// nil when the document has no id, name or dates.
    package var document: RemoteDocument?
}

/// The content of one course while the JSON:API walk assembles it.
package struct CourseTree {
    package private(set) var content: CourseContent
    private let installation: Installation
    /// Folder id → announced document count (5.1+), for the folders in the tree.
    private var announced: [String: Int] = [:]
    private var listed: [String: Int] = [:]
    private var folderIndex: Set<String> = []
    /// Folders in the tree the user may not list (homework folders): never asked for their documents.
    private var unreadable: Set<String> = []
    private var documentIndex: Set<String> = []

    init(course: RemoteCourse, rootID: String, installation: Installation) {
        content = CourseContent(course: course, rootFolderID: rootID, folders: [], documents: [])
        self.installation = installation
    }

    /// Adds a readable folder; returns its id, or nil when it is unusable or a duplicate.
    mutating func add(folder decoded: ListedFolder, parentID: String?) -> String? {
        guard let id = decoded.id, !folderIndex.contains(id) else { return nil }
        guard var folder = decoded.folder else {
            content.problems.append(ItemProblem(itemID: id, message: "folder without dates, left out"))
            if let parentID { content.failedFolderIDs.insert(parentID) }
            return nil
        }
        folderIndex.insert(id)
        if !decoded.isReadable { unreadable.insert(id) }
        folder.parentID = parentID
        content.folders.append(folder)
        if let count = decoded.documentCount { announced[id] = count }
        return id
    }

    /// Adds a document of a folder in the tree; documents of other folders (unreadable ones) are ignored.
    /// `listedInFolder` is set for per-folder listings, which repeat documents the course list had.
    package mutating func add(document element: JSONValue, listedInFolder: String?) {
        add(
            document: JSONAPIFormat(installation: installation).document(element, courseID: content.course.id),
            listedInFolder: listedInFolder)
    }

    /// ``add(document:listedInFolder:)`` of a document decoded as its page arrived.
    package mutating func add(document decoded: ListedDocument, listedInFolder: String?) {
        let folderID = decoded.parentID ?? listedInFolder
        guard let folderID, folderIndex.contains(folderID) else { return }
        guard let id = decoded.id else {
            fail(folderID, because: "a document without id")
            return
        }
        guard !documentIndex.contains(id) else { return }
        guard var document = decoded.document else {
            content.problems.append(ItemProblem(itemID: id, message: "document without name or dates, left out"))
            content.failedFolderIDs.insert(folderID)
            return
        }
        documentIndex.insert(id)
        if listedInFolder == nil { listed[folderID, default: 0] += 1 }
        document.folderID = folderID
        content.documents.append(document)
    }

    /// Readable folders whose announced document count exceeds what the course-wide list delivered. (A homework
    /// folder counts a student's own submissions, which its listing refuses with 403.)
    package func foldersMissingDocuments() -> [RemoteFolder] {
        content.folders.filter { folder in
            guard let count = announced[folder.id], !unreadable.contains(folder.id) else { return false }
            return count > listed[folder.id, default: 0]
        }
    }

    /// Readable folders without an announced count (all of them on Stud.IP 5.0), in tree order: the root first.
    package func foldersWithoutCount() -> [RemoteFolder] {
        content.folders.filter { announced[$0.id] == nil && !unreadable.contains($0.id) }
    }

    package mutating func fail(_ folderID: String, because reason: String) {
        content.failedFolderIDs.insert(folderID)
        content.problems.append(ItemProblem(itemID: folderID, message: reason))
    }
}
