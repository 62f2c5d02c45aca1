import Foundation

/// The objects of the legacy API in PHP's key order (API.md §2.5).
extension LegacyEnvironment {
    func nameObject(_ user: User) -> JSON {
        [
            "username": .string(user.username), "formatted": .string(user.formattedName),
            "family": .string(user.familyName), "given": .string(user.givenName), "prefix": .string(user.prefix),
            "suffix": .string(user.suffix),
        ]
    }

    private func avatars(_ user: User) -> [(String, JSON)] {
        let base = context.baseURL + "/pictures/user/nobody_"
        return [
            ("avatar_small", .string("\(base)small.png?d=\(user.avatarTimestamp)")),
            ("avatar_medium", .string("\(base)medium.png?d=\(user.avatarTimestamp)")),
            ("avatar_normal", .string("\(base)normal.png?d=\(user.avatarTimestamp)")),
            ("avatar_original", .string("\(base)original.png?d=0")),
        ]
    }

    func user(_ user: User) -> JSON {
        let datafields: [JSON] = user.datafields.map {
            ["type": .string($0.type), "id": .string($0.id), "name": .string($0.name), "value": .string($0.value)]
        }
        return .object(
            [
                ("user_id", .string(user.id)), ("username", .string(user.username)), ("name", nameObject(user)),
                ("perms", .string(user.perms)), ("email", .string(user.email)),
            ] + avatars(user) + [
                ("phone", ""), ("homepage", ""), ("privadr", ""), ("datafields", .array(datafields)),
            ])
    }

    /// The short user object of `lecturers` and `owner`.
    func miniUser(_ user: User) -> JSON {
        .object(
            [("id", .string(user.id)), ("href", .string(href("user/\(user.id)"))), ("name", nameObject(user))]
                + avatars(user))
    }

    func semester(_ semester: Semester) -> JSON {
        var fields: [(String, JSON)] = [
            ("id", .string(semester.id)), ("title", .string(semester.title)), ("token", .string(semester.token)),
        ]
        if flavour == .v50 { fields.append(("description", .string(semester.description))) }
        fields += [
            ("begin", .int(semester.begin)), ("end", .int(semester.end)),
            ("seminars_begin", .int(semester.lecturesBegin)), ("seminars_end", .int(semester.lecturesEnd)),
            ("visible", .int(semester.visible ? 1 : 0)),
        ]
        return .object(fields)
    }

    func course(_ course: Course, viewer: User) -> JSON {
        let id = course.id
        var fields: [(String, JSON)] = [
            ("course_id", .string(id)), ("number", .string(course.number)), ("title", .string(course.title)),
            ("subtitle", .string(course.subtitle)), ("type", .string(String(course.type))),
            ("description", .string(course.description)), ("location", .string(course.location)),
        ]
        let lecturers = course.lecturers.compactMap { university.users[$0.userID] }
        if !lecturers.isEmpty {
            fields.append(("lecturers", .object(lecturers.map { (href("user/\($0.id)"), miniUser($0)) })))
        }
        var members: [(String, JSON)] = []
        for status in ["user", "autor", "tutor", "dozent"] {
            members.append((status, .string(href("course/\(id)/members?status=\(status)"))))
            members.append(("\(status)_count", .int(course.members.filter { $0.permission == status }.count)))
        }
        fields.append(("members", .object(members)))
        let start = course.semesterIDs.first ?? university.currentSemester()?.id
        let end = course.semesterIDs.last
        fields.append(("start_semester", start.map { .string(href("semester/\($0)")) } ?? .null))
        fields.append(("end_semester", end.map { .string(href("semester/\($0)")) } ?? .null))
        let moduleRoutes = ["forum": "forum_categories", "documents": "top_folder", "wiki": "wiki"]
        let modules = ["forum", "documents", "wiki"].filter(course.modules.contains).compactMap { name in
            moduleRoutes[name].map { (name, JSON.string(href("course/\(id)/\($0)"))) }
        }
        fields.append(("modules", .object(modules)))
        fields.append(("group", university.membership(of: viewer.id, in: id).map { .int($0.group) } ?? .null))
        return .object(fields)
    }

    /// `folderToJSON`: raw columns, int dates, decoded `data_content`, permissions; unreadable = permissions only.
    func folder(_ folder: Folder, viewer: User, extended: Bool = false) -> JSON {
        let permissions = university.folderPermissions(folder, user: viewer)
        let flags: [(String, JSON)] = [
            ("is_visible", .bool(permissions.visible)), ("is_readable", .bool(permissions.readable)),
            ("is_writable", .bool(permissions.writable)),
        ]
        guard permissions.readable else { return .object(flags) }
        var fields: [(String, JSON)] = [
            ("id", .string(folder.id)), ("user_id", .string(folder.userID)), ("parent_id", .string(folder.parentID)),
            ("range_id", .string(folder.rangeID)), ("range_type", .string(folder.rangeType)),
            ("folder_type", .string(folder.folderType)), ("name", .string(folder.name)),
            ("data_content", JSON.parse(folder.dataContent) ?? .null), ("description", .string(folder.description)),
            ("mkdate", .int(folder.mkdate)), ("chdate", .int(folder.chdate)),
        ]
        fields += flags
        if extended {
            let children = university.subfolders(of: folder.id).filter {
                university.canSee(folder: $0, user: viewer)
            }
            fields.append(("subfolders", .array(children.map { self.folder($0, viewer: viewer) })))
            let refs = university.fileRefs(in: folder.id)
            fields.append(("file_refs", .array(refs.map { fileRef($0, viewer: viewer) })))
        }
        return .object(fields)
    }

    /// `filerefToJSON`; `extended` appends `folder`, `owner` and `terms_of_use`.
    func fileRef(_ ref: FileRef, viewer: User, extended: Bool = false) -> JSON {
        let readable = university.folders[ref.folderID].map { university.canRead(folder: $0, user: viewer) } ?? false
        let editable = university.canEdit(ref, user: viewer)
        var fields: [(String, JSON)] = [
            ("id", .string(ref.id)), ("file_id", .string(ref.fileID)), ("folder_id", .string(ref.folderID)),
            ("downloads", .int(ref.downloads)), ("description", .string(ref.description)),
            ("content_terms_of_use_id", .string(ref.termsOfUseID)), ("user_id", .string(ref.userID)),
            ("name", .string(ref.name)), ("mkdate", .int(ref.mkdate)), ("chdate", .int(ref.chdate)),
            ("size", .int(ref.size)), ("mime_type", .string(ref.mimeType)),
            ("storage", .string(ref.isLink ? "url" : "disk")),
            ("is_readable", .bool(readable)), ("is_downloadable", .bool(university.canDownload(ref, user: viewer))),
            ("is_editable", .bool(editable)), ("is_writable", .bool(editable)),
        ]
        if ref.isLink {
            let query = PHP.buildQuery([("type", "0"), ("file_id", ref.id), ("file_name", ref.name)])
            fields.append(("url", .string(context.basePath + "/sendfile.php?" + query)))
        }
        if extended {
            if let folder = university.folders[ref.folderID] {
                fields.append(("folder", self.folder(folder, viewer: viewer)))
            }
            if let owner = university.users[ref.userID] { fields.append(("owner", miniUser(owner))) }
            if let terms = university.termsOfUse[ref.termsOfUseID] {
                fields.append(("terms_of_use", self.terms(terms)))
            }
        }
        return .object(fields)
    }

    /// Position and download condition as strings (`w1_rest_terms_of_use`).
    func terms(_ terms: TermsOfUse) -> JSON {
        [
            "id": .string(terms.id), "name": .string(terms.name), "position": .string(String(terms.position)),
            "description": .string(terms.description), "student_description": .string(terms.studentDescription),
            "download_condition": .string(String(terms.downloadCondition)), "icon": .string(terms.icon),
            "is_default": .bool(terms.isDefault), "mkdate": .int(terms.mkdate), "chdate": .int(terms.chdate),
        ]
    }
}
