import Foundation
import StudIPKit
import StudIPModel

@testable import StudIPSimulator

/// What a complete, correct walk must deliver, computed from the simulator's model with Stud.IP's permission
/// rules — independent of either API's wire format.
struct ExpectedContent {
    /// Folder id → (name, parent id; nil for the root).
    var folders: [String: (name: String, parentID: String?)] = [:]
    var documents: [String: FileRef] = [:]
    var downloadable: Set<String> = []

    init(course courseID: String, user username: String, in university: University) {
        guard let course = university.courses[courseID], let user = university.user(named: username) else { return }
        var pending: [(String, String?)] = [(course.topFolderID, nil)]
        while let (id, parent) = pending.popLast() {
            guard let folder = university.folders[id] else { continue }
            folders[id] = (folder.name, parent)
            for ref in university.fileRefs(in: id) {
                documents[ref.id] = ref
                if university.canDownload(ref, user: user) { downloadable.insert(ref.id) }
            }
            for child in university.subfolders(of: id) where university.canRead(folder: child, user: user) {
                pending.append((child.id, id))
            }
        }
    }
}

extension CourseContent {
    var folderIDs: Set<String> { Set(folders.map(\.id)) }
    var documentIDs: Set<String> { Set(documents.map(\.id)) }

    func document(named name: String) -> RemoteDocument? { documents.first { $0.name == name } }
    func folder(named name: String) -> RemoteFolder? { folders.first { $0.name == name } }
}

extension RemoteOverview {
    func course(titled title: String) -> RemoteCourse? { courses.first { $0.title == title } }
}

extension University {
    func course(numbered number: String) -> Course? {
        courses.values.first { $0.number.trimmingCharacters(in: .whitespaces) == number }
    }
}
