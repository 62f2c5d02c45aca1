import Foundation

/// Who may see what, after Stud.IP's folder types and license download conditions (API.md §0.2, §2.5.5).
///
/// As the 5.0.7 captures show them (fixtures-5.0.7-writes step 1, 6 and 7; docs/simulator.md "Writing"):
/// members with status `autor` or higher may upload into standard, root and group folders; `HiddenFolder` is for
/// teachers only; `PermissionEnabledFolder` and its subclasses `CourseDateFolder` and `HomeworkFolder` read their
/// student bits from `data_content.permission` (`x`=1 visible, `w`=2 writable, `r`=4 readable; default 7, a
/// homework folder's 3: a student may hand in but not read, not even what they handed in). Only tutors and
/// lecturers edit a course's folders (rename, delete; never the root) and create subfolders, except in a
/// `CourseGroupFolder`, where every member who may write may (the simulator has no status groups: every member is
/// in the group); nobody creates one in a homework folder. A user's personal file area belongs to that user alone.
/// License condition 2 restricts downloads to the uploader, 1 ("closed groups only") to teachers and uploader.
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

    /// Rename or delete the folder (`isEditable`): never the root; in a course only teachers, not even the
    /// student who created it (`w7_subfolder_groupfolder_created`).
    public func canEdit(folder: Folder, user: User) -> Bool {
        guard !folder.isRoot, canRead(folder: folder, user: user) else { return false }
        return isManager(ofRangeOf: folder, user: user)
    }

    /// Create subfolders (`isSubfolderAllowed`): teachers, and in a group folder every member who may write;
    /// never in a homework folder.
    public func canCreateSubfolder(in folder: Folder, user: User) -> Bool {
        guard folder.folderType != "HomeworkFolder", canRead(folder: folder, user: user) else { return false }
        if folder.folderType == "CourseGroupFolder" { return canWrite(folder: folder, user: user) }
        return isManager(ofRangeOf: folder, user: user)
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
        case "PermissionEnabledFolder", "CourseDateFolder", "HomeworkFolder":
            if teacher { return (true, true, true) }
            let bits = Self.studentPermissionBits(
                folder.dataContent, default: folder.folderType == "HomeworkFolder" ? 3 : 7)
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

    private static func studentPermissionBits(_ dataContent: String, default bits: Int) -> Int {
        guard let data = dataContent.data(using: .utf8),
            let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return bits }
        switch object["permission"] {
        case let text as String: return Int(text) ?? bits
        case let number as Int: return number
        default: return bits
        }
    }
}
