import Foundation

/// The read routes (API.md §3.3): access rules first, then the document.
extension JSONAPIEnvironment {
    func discovery() -> SimResponse {
        let items: [JSON] = JSONAPIHandler.routes.map { route in
            [
                "type": "slim-routes", "id": .string("\(route.method) /\(route.name)"),
                "attributes": [
                    "methods": [.string(route.method)], "name": .null, "pattern": .string("/v1/\(route.name)"),
                ],
            ]
        }
        return document(["data": .array(items)])
    }

    func semesters() -> SimResponse {
        collection(university.orderedSemesters.map(semester), page: Page(query: request.query))
    }

    func semester(id: String) -> SimResponse {
        guard let found = university.semesters[id] else { return notFound() }
        return document(["data": semester(found)])
    }

    func userShow(id: String) -> SimResponse {
        guard let found = university.users[id] else { return notFound() }
        return document(["data": user(found)])
    }

    /// 5.x: only yourself or root; 6.x: other users' courses where they teach.
    func userCourses(id: String, viewer: User) -> SimResponse {
        guard let owner = university.users[id] else { return notFound() }
        var courses = university.courses(of: owner.id)
        if owner.id != viewer.id, !viewer.isRoot {
            guard context.flavour == .v6 else { return forbidden() }
            courses = courses.filter { university.membership(of: owner.id, in: $0.id)?.permission == "dozent" }
        }
        if let semesterID = request.queryValue("filter[semester]") {
            guard university.semesters[semesterID] != nil else {
                return error(400, title: "Bad Request", detail: "Invalid \"semester\".")
            }
            courses = courses.filter { $0.isIn(semester: semesterID) }
        }
        if layout.sortsUserCourses {
            courses = courses.map {
                (key: (university.startTime(of: $0), University.collationKey($0.title)), course: $0)
            }
            .sorted { $0.key != $1.key ? $0.key < $1.key : $0.course.id < $1.course.id }
            .map(\.course)
        }
        return collection(courses.map(course), page: Page(query: request.query))
    }

    func userMemberships(id: String, viewer: User) -> SimResponse {
        guard university.users[id] != nil else { return notFound() }
        guard id == viewer.id else { return forbidden() }
        let items = university.courses(of: id).sorted { $0.id < $1.id }.compactMap { course -> JSON? in
            guard let membership = university.membership(of: id, in: course.id) else { return nil }
            return self.membership(membership, course: course, viewerIsTeacher: membership.isTeacher)
        }
        return collection(items, page: Page(query: request.query))
    }

    /// A user's personal file area; Stud.IP creates the root folder on first access.
    func userFolders(id: String, viewer: User) -> SimResponse {
        guard let owner = university.users[id] else { return notFound() }
        guard owner.id == viewer.id || viewer.isRoot else { return forbidden() }
        var snapshot = university
        if snapshot.personalRootFolder(of: owner.id) == nil {
            snapshot = (try? context.mutate { $0.ensurePersonalRootFolder(of: owner.id) }) ?? snapshot
        }
        guard let root = snapshot.personalRootFolder(of: owner.id) else { return notFound() }
        let env = with(snapshot)
        let items = snapshot.folderTree(from: root.id).map { env.folder($0, viewer: viewer) }
        return env.collection(items, page: Page(query: request.query))
    }

    func courseShow(id: String, viewer: User) -> SimResponse {
        guard let found = university.courses[id] else { return notFound() }
        guard university.canAccess(course: found, user: viewer) else { return forbidden() }
        return document(["data": course(found)])
    }

    /// 403 also when the files tool is off, for teachers too.
    func courseFolders(id: String, viewer: User) -> SimResponse {
        guard let found = university.courses[id] else { return notFound() }
        guard university.canAccess(course: found, user: viewer), found.hasFiles else { return forbidden() }
        let items = university.folderTree(from: found.topFolderID).filter {
            university.canSee(folder: $0, user: viewer)
        }
        return collection(items.map { folder($0, viewer: viewer) }, page: Page(query: request.query))
    }

    /// Only documents the user may download (`RangeFileRefsIndex`); 403 when the files tool is off.
    func courseFileRefs(id: String, viewer: User) -> SimResponse {
        guard let found = university.courses[id] else { return notFound() }
        guard university.canAccess(course: found, user: viewer), found.hasFiles else { return forbidden() }
        let refs = university.folderTree(from: found.topFolderID).flatMap { university.fileRefs(in: $0.id) }
            .filter { university.canDownload($0, user: viewer) }
        return collection(refs.map { fileRef($0, viewer: viewer) }, page: Page(query: request.query))
    }

    func folderShow(id: String, viewer: User) -> SimResponse {
        guard let found = university.folders[id] else { return notFound() }
        guard university.canRead(folder: found, user: viewer) else { return forbidden() }
        return document(["data": folder(found, viewer: viewer)])
    }

    /// Readable children only; `total` counts what is listed.
    func subfolders(id: String, viewer: User) -> SimResponse {
        guard let found = university.folders[id] else { return notFound() }
        guard university.canRead(folder: found, user: viewer) else { return forbidden() }
        let children = university.subfolders(of: id).filter { university.canRead(folder: $0, user: viewer) }
        return collection(children.map { folder($0, viewer: viewer) }, page: Page(query: request.query))
    }

    func folderFileRefs(id: String, viewer: User) -> SimResponse {
        guard let found = university.folders[id] else { return notFound() }
        guard university.canRead(folder: found, user: viewer) else { return forbidden() }
        let refs = university.fileRefs(in: id)
        return collection(refs.map { fileRef($0, viewer: viewer) }, page: Page(query: request.query))
    }

    /// `include=terms-of-use` adds the license as `included`.
    func fileRefShow(id: String, viewer: User) -> SimResponse {
        guard let ref = university.fileRefs[id] else { return notFound() }
        guard let folder = university.folders[ref.folderID], university.canRead(folder: folder, user: viewer) else {
            return forbidden()
        }
        var body: [(String, JSON)] = [("data", fileRef(ref, viewer: viewer))]
        let includes = (request.queryValue("include") ?? "").split(separator: ",").map(String.init)
        if includes.contains("terms-of-use"), let terms = university.termsOfUse[ref.termsOfUseID] {
            body.append(("included", [self.terms(terms)]))
        }
        return document(.object(body))
    }

    func fileShow(id: String) -> SimResponse {
        let references = university.fileRefs(withFileID: id)
        guard let first = references.first else { return notFound() }
        return document(["data": file(first, references: references)])
    }

    /// Paginated, by id (`w1_terms_of_use`).
    func termsList() -> SimResponse {
        let all = university.termsOfUse.values.sorted { $0.id < $1.id }
        return collection(all.map(terms), page: Page(query: request.query))
    }

    func termsShow(id: String) -> SimResponse {
        guard let found = university.termsOfUse[id] else { return notFound() }
        return document(["data": terms(found)])
    }

    /// The same request against another snapshot (after a mutation).
    func with(_ university: University) -> JSONAPIEnvironment {
        var context = self.context
        context.university = university
        return JSONAPIEnvironment(request: request, context: context, layout: layout, route: route)
    }
}

extension University {
    /// Creates a user's personal root folder the way `Folder::findTopFolder` does (empty name, owner = user).
    mutating func ensurePersonalRootFolder(of userID: String, now: Int = Int(Date().timeIntervalSince1970)) {
        guard personalRootFolder(of: userID) == nil else { return }
        add(
            Folder(
                id: PHP.newID(), userID: userID, parentID: "", rangeID: userID, folderType: "RootFolder", name: "",
                mkdate: now, chdate: now, rangeType: "user"))
    }
}
