import Foundation

/// Who may see what, after Stud.IP's folder types and license download conditions (API.md §0.2, §2.5.5).
///
/// Simplified where the simulator needs no more: members with status `autor` or higher may upload into
/// standard and root folders (the 5.0.7 fixtures show `is-writable: true` for `test_autor`); `HiddenFolder` is
/// for teachers only; a `PermissionEnabledFolder` reads its student bits from `data_content.permission`
/// (`x`=1 visible, `w`=2 writable, `r`=4 readable) — `"1"` makes the visible-but-unreadable subfolder of legacy
/// REST. A user's personal file area belongs to that user alone. License condition 2 restricts downloads to
/// the uploader, 1 ("closed groups only") to teachers and uploader.
extension University {
    /// Member of the course, or root.
    public func canAccess(course: Course, user: User) -> Bool {
        user.isRoot || course.members.contains { $0.userID == user.id }
    }

    public func isTeacher(in course: Course, user: User) -> Bool {
        user.isRoot || membership(of: user.id, in: course.id)?.isTeacher == true
    }

    public func canSee(folder: Folder, user: User) -> Bool {
        folderPermissions(folder, user: user).visible
    }

    public func canRead(folder: Folder, user: User) -> Bool {
        folderPermissions(folder, user: user).readable
    }

    public func canWrite(folder: Folder, user: User) -> Bool {
        folderPermissions(folder, user: user).writable
    }

    /// Rename or delete the folder (`isEditable`): never the root; the owner or a teacher otherwise.
    public func canEdit(folder: Folder, user: User) -> Bool {
        guard !folder.isRoot, canRead(folder: folder, user: user) else { return false }
        return folder.userID == user.id || isManager(ofRangeOf: folder, user: user)
    }

    /// Create subfolders (`isSubfolderAllowed`): teachers in courses, the owner in a personal file area.
    public func canCreateSubfolder(in folder: Folder, user: User) -> Bool {
        canRead(folder: folder, user: user) && isManager(ofRangeOf: folder, user: user)
    }

    /// Rename, replace or delete a document (`is-editable`/`is-writable`): its uploader or a teacher.
    public func canEdit(_ ref: FileRef, user: User) -> Bool {
        guard let folder = folders[ref.folderID], canRead(folder: folder, user: user) else { return false }
        return ref.userID == user.id || isManager(ofRangeOf: folder, user: user)
    }

    public func canDownload(_ ref: FileRef, user: User) -> Bool {
        guard let folder = folders[ref.folderID], canRead(folder: folder, user: user) else { return false }
        if ref.userID == user.id || user.isRoot { return true }
        switch termsOfUse[ref.termsOfUseID]?.downloadCondition ?? 0 {
        case 0: return true
        case 1: return course(ofFolder: folder.id).map { isTeacher(in: $0, user: user) } ?? false
        default: return false
        }
    }

    /// Visible, readable and writable for this user, parents included (a folder below an unreadable one is unreadable).
    public func folderPermissions(_ folder: Folder, user: User) -> (visible: Bool, readable: Bool, writable: Bool) {
        if folder.rangeType == "user" {
            let own = folder.rangeID == user.id || user.isRoot
            return (own, own, own)
        }
        guard let course = course(ofFolder: folder.id), canAccess(course: course, user: user) else {
            return (false, false, false)
        }
        if !folder.parentID.isEmpty, let parent = folders[folder.parentID], !canRead(folder: parent, user: user) {
            return (false, false, false)
        }
        let teacher = isTeacher(in: course, user: user)
        switch folder.folderType {
        case "HiddenFolder":
            return (teacher, teacher, teacher)
        case "PermissionEnabledFolder":
            if teacher { return (true, true, true) }
            let bits = Self.studentPermissionBits(folder.dataContent)
            return (bits & 1 != 0, bits & 4 != 0, bits & 2 != 0)
        default:
            return (
                true, true, teacher || membership(of: user.id, in: course.id).map { $0.permission != "user" } == true
            )
        }
    }

    /// Teachers of the folder's course, or the owner of a personal file area.
    private func isManager(ofRangeOf folder: Folder, user: User) -> Bool {
        if folder.rangeType == "user" { return folder.rangeID == user.id || user.isRoot }
        return course(ofFolder: folder.id).map { isTeacher(in: $0, user: user) } ?? false
    }

    private static func studentPermissionBits(_ dataContent: String) -> Int {
        guard let data = dataContent.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return 7 }
        switch object["permission"] {
        case let text as String: return Int(text) ?? 7
        case let number as Int: return number
        default: return 7
        }
    }
}
