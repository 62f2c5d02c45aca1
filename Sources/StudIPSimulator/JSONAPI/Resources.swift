import Foundation

/// Resource objects as Stud.IP's schemas emit them (API.md §3.6), in the key order of the release's encoder.
extension JSONAPIEnvironment {
    /// A relationship object; the member order follows the encoder version (``Layout/linksFirst``).
    func relationship(data: JSON? = nil, links: [(String, JSON)] = [], meta: JSON? = nil) -> JSON {
        var linkPart: [(String, JSON)] = []
        if !links.isEmpty { linkPart.append(("links", .object(links))) }
        var dataPart: [(String, JSON)] = []
        if let data { dataPart.append(("data", data)) }
        if let meta { dataPart.append(("meta", meta)) }
        return .object(layout.linksFirst ? linkPart + dataPart : dataPart + linkPart)
    }

    func identifier(_ type: String, _ id: String) -> JSON {
        ["type": .string(type), "id": .string(id)]
    }

    func related(_ path: String) -> JSON { relationship(links: [("related", .string(link(path)))]) }

    func relatedAndSelf(_ type: String, _ id: String, _ name: String) -> JSON {
        relationship(links: [
            ("related", .string(link("\(type)/\(id)/\(name)"))),
            ("self", .string(link("\(type)/\(id)/relationships/\(name)"))),
        ])
    }

    /// A to-one relationship with data and a `related` link to the target.
    func toOne(_ type: String, _ id: String, meta: JSON? = nil) -> JSON {
        relationship(data: identifier(type, id), links: [("related", .string(link("\(type)/\(id)")))], meta: meta)
    }

    func resource(
        _ type: String, _ id: String, attributes: [(String, JSON)], relationships: [(String, JSON)]? = nil,
        meta: JSON? = nil
    ) -> JSON {
        var object: [(String, JSON)] = [
            ("type", .string(type)), ("id", .string(id)), ("attributes", .object(attributes)),
        ]
        if let relationships { object.append(("relationships", .object(relationships))) }
        object.append(("links", ["self": .string(link("\(type)/\(id)"))]))
        if let meta { object.append(("meta", meta)) }
        return .object(object)
    }

    private static func blankIsNull(_ text: String) -> JSON {
        text.trimmingCharacters(in: .whitespaces).isEmpty ? .null : .string(text)
    }

    // MARK: - users

    func user(_ user: User) -> JSON {
        let id = user.id
        let attributes: [(String, JSON)] = [
            ("username", .string(user.username)), ("formatted-name", .string(user.formattedName)),
            ("family-name", .string(user.familyName)), ("given-name", .string(user.givenName)),
            ("name-prefix", .string(user.prefix)), ("name-suffix", .string(user.suffix)),
            ("permission", .string(user.perms)), ("email", .string(user.email)), ("phone", .null),
            ("homepage", .null), ("address", .null),
        ]
        var memberships = relationship(links: [("related", .string(link("users/\(id)/course-memberships")))])
        if layout.membershipDataInUser, request.user?.id == id {
            let ids = university.courses(of: id).map { identifier("course-memberships", "\($0.id)_\(id)") }
            memberships = relationship(
                data: .array(ids), links: [("related", .string(link("users/\(id)/course-memberships")))])
        }
        var relationships: [(String, JSON)] = [("activitystream", related("users/\(id)/activitystream"))]
        if layout.userBlubberThreads {
            relationships.append(("blubber-threads", related("users/\(id)/blubber-threads")))
        }
        relationships += [
            ("config-values", relatedAndSelf("users", id, "config-values")),
            ("contacts", relatedAndSelf("users", id, "contacts")),
            ("courses", related("users/\(id)/courses")), ("course-memberships", memberships),
            ("events", related("users/\(id)/events")), ("file-refs", related("users/\(id)/file-refs")),
            ("folders", related("users/\(id)/folders")), ("inbox", related("users/\(id)/inbox")),
            ("institute-memberships", related("users/\(id)/institute-memberships")),
            ("news", related("users/\(id)/news")), ("outbox", related("users/\(id)/outbox")),
            ("schedule", related("users/\(id)/schedule")),
        ]
        if layout.coursewareAndTools {
            relationships.append(("courseware-bookmarks", relatedAndSelf("users", id, "courseware-bookmarks")))
        }
        let avatar = context.baseURL + "/pictures/user/nobody_"
        let meta: JSON = [
            "avatar": [
                "small": .string("\(avatar)small.png?d=\(user.avatarTimestamp)"),
                "medium": .string("\(avatar)medium.png?d=\(user.avatarTimestamp)"),
                "normal": .string("\(avatar)normal.png?d=\(user.avatarTimestamp)"),
                "original": .string("\(avatar)original.png?d=0"),
            ]
        ]
        return resource("users", id, attributes: attributes, relationships: relationships, meta: meta)
    }

    // MARK: - semesters

    func semester(_ semester: Semester) -> JSON {
        var attributes: [(String, JSON)] = [("title", .string(semester.title))]
        if layout.semesterDescription { attributes.append(("description", .string(semester.description))) }
        attributes += [
            ("token", .string(semester.token)), ("start", date(semester.begin)), ("end", date(semester.end)),
            ("start-of-lectures", date(semester.lecturesBegin)), ("end-of-lectures", date(semester.lecturesEnd)),
            ("visible", .bool(semester.visible)),
        ]
        if layout.semesterIsCurrent { attributes.append(("is-current", .bool(university.isCurrent(semester)))) }
        return resource("semesters", semester.id, attributes: attributes)
    }

    // MARK: - courses

    /// Start and end semester ids: the course's semesters, or for open-ended courses a start only.
    func semesterRange(of course: Course) -> (start: String?, end: String?) {
        if let first = course.semesterIDs.first { return (first, course.semesterIDs.last) }
        if layout.openEndedStartIsCurrentSemester { return (university.currentSemester()?.id, nil) }
        return (university.semester(containing: university.startTime(of: course))?.id, nil)
    }

    func course(_ course: Course) -> JSON {
        let id = course.id
        let attributes: [(String, JSON)] = [
            ("course-number", Self.blankIsNull(course.number)), ("title", .string(course.title)),
            ("subtitle", Self.blankIsNull(course.subtitle)), ("course-type", .int(course.type)),
            ("description", Self.blankIsNull(course.description)), ("location", Self.blankIsNull(course.location)),
            ("miscellaneous", Self.blankIsNull(course.miscellaneous)),
        ]
        let (start, end) = semesterRange(of: course)
        var relationships: [(String, JSON)] = [("institute", toOne("institutes", course.instituteID))]
        if let start { relationships.append(("start-semester", toOne("semesters", start))) }
        if let end { relationships.append(("end-semester", toOne("semesters", end))) }
        relationships.append(("participating-institutes", ["data": []]))
        if course.hasFiles {
            relationships += [
                ("file-refs", related("courses/\(id)/file-refs")), ("folders", related("courses/\(id)/folders")),
            ]
        }
        relationships += [
            ("forum-categories", related("courses/\(id)/forum-categories")),
            ("blubber-threads", related("courses/\(id)/blubber-threads")),
        ]
        if layout.coursewareAndTools {
            relationships.append(
                (
                    "courseware",
                    relationship(data: .null, links: [("related", .string(link("courses/\(id)/courseware")))])
                ))
        }
        relationships += [
            ("events", related("courses/\(id)/events")), ("memberships", relatedAndSelf("courses", id, "memberships")),
            ("news", related("courses/\(id)/news")),
            ("sem-class", ["data": identifier("sem-classes", String(course.semClass))]),
            ("sem-type", ["data": identifier("sem-types", String(course.type))]),
            ("status-groups", related("courses/\(id)/status-groups")),
            ("wiki-pages", related("courses/\(id)/wiki-pages")),
        ]
        var meta: JSON?
        if layout.coursewareAndTools {
            relationships.append(("tools", related("courses/\(id)/tools")))
            let avatar = context.basePath + "/pictures/course/nobody_"
            meta = [
                "avatar": [
                    "small": .string("\(avatar)small.png?d=0"), "medium": .string("\(avatar)medium.png?d=0"),
                    "normal": .string("\(avatar)normal.png?d=0"),
                ]
            ]
        }
        return resource("courses", id, attributes: attributes, relationships: relationships, meta: meta)
    }

    func membership(_ membership: Membership, course: Course, viewerIsTeacher: Bool) -> JSON {
        var attributes: [(String, JSON)] = [
            ("permission", .string(membership.permission)), ("position", .int(membership.position)),
            ("group", .int(membership.group)), ("mkdate", date(membership.mkdate)),
            ("label", .string(membership.label)),
            ("visible", .string(membership.visible)),
        ]
        if viewerIsTeacher { attributes.append(("comment", .string(membership.comment))) }
        return resource(
            "course-memberships", "\(course.id)_\(membership.userID)", attributes: attributes,
            relationships: [("course", toOne("courses", course.id)), ("user", toOne("users", membership.userID))])
    }

    // MARK: - folders

    /// The name the `RootFolder` type reports: the course's full name or the user's name.
    func displayName(of folder: Folder) -> String {
        guard folder.isRoot, folder.folderType == "RootFolder" else { return folder.name }
        if folder.rangeType == "user" { return university.users[folder.rangeID]?.formattedName ?? folder.name }
        return university.courses[folder.rangeID]?.fullName ?? folder.name
    }

    func folder(_ folder: Folder, viewer: User) -> JSON {
        let id = folder.id
        let permissions = university.folderPermissions(folder, user: viewer)
        var attributes: [(String, JSON)] = [
            ("folder-type", .string(folder.folderType)), ("name", .string(displayName(of: folder))),
            ("description", Self.blankIsNull(folder.description)), ("mkdate", date(folder.mkdate)),
            ("chdate", date(folder.chdate)), ("is-visible", .bool(permissions.visible)),
            ("is-readable", .bool(permissions.readable)), ("is-writable", .bool(permissions.writable)),
            ("is-editable", .bool(university.canEdit(folder: folder, user: viewer))),
        ]
        let files = university.fileRefs(in: id).count
        let children = university.childFolderCount(id)
        if layout.folderIsEmpty { attributes.append(("is-empty", .bool(files == 0 && children == 0))) }
        attributes.append(("is-subfolder-allowed", .bool(university.canCreateSubfolder(in: folder, user: viewer))))
        if permissions.readable { attributes.append(("data-content", JSON.parse(folder.dataContent) ?? .null)) }

        let counts = layout.folderRelationshipCounts
        var relationships: [(String, JSON)] = [
            (
                "file-refs",
                relationship(
                    links: [("related", .string(link("folders/\(id)/file-refs")))],
                    meta: counts ? ["count": .int(files)] : nil)
            ),
            (
                "folders",
                relationship(
                    links: [("related", .string(link("folders/\(id)/folders")))],
                    meta: counts ? ["count": .int(children)] : nil)
            ),
        ]
        if let owner = university.users[folder.userID] {
            let meta: JSON? = layout.folderOwnerName ? ["name": .string(owner.formattedName)] : nil
            relationships.append(("owner", toOne("users", owner.id, meta: meta)))
        }
        if !folder.isRoot { relationships.append(("parent", toOne("folders", folder.parentID))) }
        relationships.append(("range", toOne(folder.rangeType == "user" ? "users" : "courses", folder.rangeID)))
        return resource("folders", id, attributes: attributes, relationships: relationships)
    }

    // MARK: - file-refs, files, terms of use

    func fileRef(_ ref: FileRef, viewer: User) -> JSON {
        let id = ref.id
        let readable = university.folders[ref.folderID].map { university.canRead(folder: $0, user: viewer) } ?? false
        let editable = university.canEdit(ref, user: viewer)
        let attributes: [(String, JSON)] = [
            ("name", .string(ref.name)), ("description", .string(ref.description)), ("mkdate", date(ref.mkdate)),
            ("chdate", date(ref.chdate)), ("downloads", .int(ref.downloads)), ("filesize", .int(ref.size)),
            ("mime-type", .string(ref.mimeType)), ("is-readable", .bool(readable)),
            ("is-downloadable", .bool(university.canDownload(ref, user: viewer))), ("is-editable", .bool(editable)),
            ("is-writable", .bool(editable)),
        ]
        let owner: JSON
        if let user = university.users[ref.userID] {
            owner = toOne("users", user.id, meta: ["name": .string(user.reversedName)])
        } else {
            owner = relationship(data: .null, meta: ["name": .string(ref.authorName)])
        }
        let range = university.folders[ref.folderID]
        let relationships: [(String, JSON)] = [
            ("file", toOne("files", ref.fileID)), ("owner", owner), ("parent", toOne("folders", ref.folderID)),
            ("range", toOne(range?.rangeType == "user" ? "users" : "courses", range?.rangeID ?? "")),
            (
                "terms-of-use",
                relationship(
                    data: identifier("terms-of-use", termsOfUseID(of: ref)),
                    links: [("self", .string(link("file-refs/\(id)/relationships/terms-of-use")))])
            ),
        ]
        let downloadURL =
            layout.downloadURLIsContentRoute
            ? link("file-refs/\(id)/content")
            : context.basePath + "/sendfile.php?"
                + PHP.buildQuery([("type", "0"), ("file_id", id), ("file_name", ref.name)])
        return resource(
            "file-refs", id, attributes: attributes, relationships: relationships,
            meta: ["download-url": .string(downloadURL)])
    }

    /// The licence id; one the installation does not know (an upload's unchecked `term-id`) shows as `UNDEFINED`
    /// (`w3_upload_term_id_invalid_file_ref`).
    func termsOfUseID(of ref: FileRef) -> String {
        university.termsOfUse[ref.termsOfUseID] == nil ? "UNDEFINED" : ref.termsOfUseID
    }

    func file(_ ref: FileRef, references: [FileRef]) -> JSON {
        let attributes: [(String, JSON)] = [
            ("name", .string(ref.fileName)), ("mime-type", .string(ref.mimeType)), ("filesize", .int(ref.size)),
            ("mkdate", date(ref.fileMkdate)), ("chdate", date(ref.fileChdate)),
        ]
        let relationships: [(String, JSON)] = [
            ("owner", related("users/\(ref.userID)")),
            (
                "file-refs",
                relationship(
                    data: .array(references.map { identifier("file-refs", $0.id) }),
                    links: [("self", .string(link("files/\(ref.fileID)/relationships/file-refs")))])
            ),
        ]
        return resource("files", ref.fileID, attributes: attributes, relationships: relationships)
    }

    func terms(_ terms: TermsOfUse) -> JSON {
        resource(
            "terms-of-use", terms.id,
            attributes: [
                ("name", .string(terms.name)), ("description", Self.blankIsNull(terms.description)),
                ("icon", .string(terms.icon)), ("is-default", .bool(terms.isDefault)),
                ("download-condition", .int(terms.downloadCondition)), ("mkdate", date(terms.mkdate)),
                ("chdate", date(terms.chdate)),
            ])
    }
}
