import Dispatch
import Foundation
import GRDB
import StudIPModel
import Synchronization
import Testing

@testable import MetadataStore

@Suite struct QueryTests {
    let course = "WS 2026-27/INF-101 Foo"

    func bigCourse(count: Int) -> CourseContent {
        content(
            info101,
            folders: [folder("f", in: root(info101), "Folien")],
            documents: (0..<count).map { document("d\($0)", in: "f", "Datei \($0).pdf") })
    }

    @Test func childrenArePagedWithStableOffsets() throws {
        let store = try MetadataStore.withCourse(bigCourse(count: 25))
        let directory = try store.inode(course + "/Folien")
        var seen: [String] = []
        var offset: Int64 = 0
        while true {
            let page = try store.children(of: directory, after: offset, limit: 7)
            guard let last = page.last else { break }
            #expect(page.allSatisfy { $0.offset > 2 })
            seen += page.map(\.node.name)
            offset = last.offset
        }
        #expect(seen.count == 25)
        #expect(Set(seen).count == 25)
        #expect(try store.children(of: directory).map(\.node.name) == seen)

        // Resuming in the middle while a refresh removes and adds entries: no entry twice, none of the
        // untouched ones lost.
        let firstPage = try store.children(of: directory, limit: 10)
        var changed = bigCourse(count: 25)
        changed.documents.removeAll { ["d3", "d15"].contains($0.id) }
        changed.documents.append(document("d-new", in: "f", "Neu.pdf"))
        _ = try store.applyCourse(changed, now: now + day)
        let rest = try store.children(of: directory, after: try #require(firstPage.last).offset, limit: 100)
        let names = firstPage.map(\.node.name) + rest.map(\.node.name)
        #expect(Set(names).count == names.count)
        #expect(names.contains("Neu.pdf"))
        #expect(!rest.map(\.node.name).contains("Datei 15.pdf"))
        #expect(try store.children(of: directory, after: 1_000_000).isEmpty)
    }

    /// A readdir's first page comes from one statement (`QuerySQL.listing`): the same directory, parent, listing
    /// time and children as the single reads give, for every node of a tree with a course link, announcements and
    /// a document (no children), at every offset and with a limit.
    @Test func aListingIsWhatTheSingleReadsSay() throws {
        let seminar = makeCourse("c-sem", "", "Seminar", [ss26, ws2627])
        let store = try MetadataStore.temporary()
        _ = try store.applyOverview(overview([info101, seminar]), now: now)
        _ = try store.applyCourse(bigCourse(count: 5), now: now)
        _ = try store.applyCourse(content(seminar, folders: [folder("g", in: root(seminar), "Texte")]), now: now + day)
        let news = Announcement(
            id: "n1", title: "Raum", html: "<p>neu</p>", authorName: nil, published: now, expires: nil, changed: now,
            commentsAllowed: false)
        let file = GeneratedFile(name: "n1 Raum.md", content: Data("# Raum\n".utf8), changed: now)
        _ = try store.applyCourseExtras(
            CourseExtras(courseID: info101.id, announcements: ("Ankündigungen", [(news, file)]), dates: nil), now: now)
        let nodes = try store.walk().map(\.node)
        let walked = Dictionary(nodes.map { ($0.inode, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(nodes.contains { $0.item == .courseLink } && nodes.contains { $0.item == .announcements })
        for node in nodes + [try #require(try store.node(inode: Node.rootInode))] {
            let parent = try node.parentInode.flatMap { try store.node(inode: $0) }
            let children = try store.children(of: node.inode)
            let courses = try store.placedCourses()
            let listedAt: Date? =
                switch node.item {
                // A course's, also for its links and its announcements, and for its folders listed with it.
                case .course, .courseLink, .announcements: courses.first { $0.courseID == node.studipID }?.listedAt
                case .folder: courses.first { $0.courseID == node.courseID }?.listedAt
                default: nil
                }
            for (offset, limit) in [(0, 1024), (0, 2), (children.first?.offset ?? 0, 2), (1_000_000, 10)] {
                let listing = try #require(try store.listing(of: node.inode, after: offset, limit: limit))
                #expect(listing.directory == node)
                #expect(listing.parent == parent)
                #expect(listing.listedAt == listedAt, "\(node.name)")
                #expect(listing.children == (try store.children(of: node.inode, after: offset, limit: limit)))
                // Read in place (`Database.step`), the children are the nodes GRDB's rows give.
                for child in listing.children { #expect(walked[child.node.inode] == child.node) }
            }
        }
        #expect(try store.listing(of: 999_999) == nil)
    }

    /// A readdir walks the directory's children in `node_parent`'s order: no temporary table for the directory's
    /// columns and no sort of its children, which were a fifth of a cold `find`'s daemon CPU (docs/performance.md,
    /// "Daemon CPU a document").
    @Test func aReaddirNeitherMaterializesNorSorts() throws {
        let store = try MetadataStore.withCourse(bigCourse(count: 5))
        let details = try store.pool.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + QuerySQL.listing, arguments: [nil, nil, nil]).map {
                try $0.decode(String.self, forColumn: "detail")
            }
        }
        #expect(details.contains { $0.hasPrefix("SEARCH child USING INDEX node_parent") }, "\(details)")
        #expect(!details.contains { $0.hasPrefix("MATERIALIZE") || $0.contains("TEMP B-TREE") }, "\(details)")
    }

    @Test func pathsAndNodesRoundTrip() throws {
        let seminar = makeCourse("c-sem", "", "Seminar", [ss26, ws2627])
        let store = try MetadataStore.temporary()
        _ = try store.applyOverview(overview([info101, seminar]), now: now)
        _ = try store.applyCourse(bigCourse(count: 3), now: now)
        _ = try store.applyCourse(
            content(seminar, folders: [folder("g", in: root(seminar), "Texte")]), now: now)
        let entries = try store.walk()
        #expect(entries.count == 11)
        for entry in entries {
            #expect(try store.path(of: entry.node.inode) == entry.path)
            #expect(try store.resolve(path: entry.path, followSymlinks: false).inode == entry.node.inode)
            #expect(try store.resolve(path: "/" + entry.path + "/", followSymlinks: false).inode == entry.node.inode)
        }
        #expect(try store.resolve(path: "SS 2026/Seminar/Texte").inode == store.inode("WS 2026-27/Seminar/Texte"))
        #expect(try store.resolve(path: "WS 2026-27/Seminar/../INF-101 Foo").inode == store.inode(course))
        #expect(throws: StoreError.notFound(path: "WS 2026-27/Nope")) { try store.resolve(path: "WS 2026-27/Nope") }
        #expect(throws: StoreError.self) { try store.resolve(path: course + "/Folien/Datei 0.pdf/x") }
        #expect(try store.path(of: 999_999) == nil)
    }

    @Test func walkIsDepthFirstSortedByName() throws {
        let store = try MetadataStore.withCourse(
            content(
                info101, folders: [folder("b", in: root(info101), "B"), folder("a", in: root(info101), "A")],
                documents: [document("z", in: "a", "z.pdf"), document("y", in: root(info101), "0.pdf")]))
        let walk = try store.walk(from: store.inode(course))
        #expect(walk.map(\.path) == [course, course + "/0.pdf", course + "/A", course + "/A/z.pdf", course + "/B"])
        #expect(walk.map(\.depth) == [0, 1, 1, 2, 1])
        #expect(throws: StoreError.noSuchNode(inode: 424_242)) { try store.walk(from: 424_242) }
    }

    @Test func extendedAttributeData() throws {
        var doc = document("d1", in: root(info101), "a.pdf")
        doc.isDownloadable = false
        let store = try MetadataStore.withCourse(
            content(
                info101,
                folders: [
                    RemoteFolder(
                        id: "f", parentID: root(info101), name: "F", description: "Ordner", created: now, changed: now,
                        webURL: "https://studip.example/folder/f")
                ], documents: [doc]))
        let info = try #require(try store.info(inode: store.inode(course + "/a.pdf")))
        #expect(info.node.studipID == "d1")
        #expect(info.description == "desc d1")
        #expect(info.webURL == "https://studip.example/doc/d1")
        #expect(info.document?.ownerName == "Prof. Owner")
        #expect(info.document?.license == "SELFMADE_NONPUB")
        #expect(info.document?.mimeType == "application/pdf")
        #expect(info.document?.isDownloadable == false)
        #expect(info.document?.version == doc.version)
        #expect(try store.info(inode: store.inode(course + "/F"))?.description == "Ordner")
        #expect(try store.info(inode: store.inode(course + "/F"))?.webURL == "https://studip.example/folder/f")
        let courseInfo = try #require(try store.info(inode: store.inode(course)))
        #expect(courseInfo.description == "About Foo" && courseInfo.node.studipID == "c-101")
        #expect(try store.info(inode: 999_999) == nil)
        #expect(try store.document(inode: store.inode(course)) == nil)
    }

    @Test func everyFilesystemQueryUsesAnIndex() throws {
        let store = try MetadataStore.withCourse(bigCourse(count: 5))
        try store.pool.read { db in
            for (name, sql) in QuerySQL.all {
                let parameters = sql.filter { $0 == "?" }.count
                let plan = try Row.fetchAll(
                    db, sql: "EXPLAIN QUERY PLAN " + sql,
                    arguments: StatementArguments(Array(repeating: DatabaseValue.null, count: parameters)))
                let details = try plan.map { try $0.decode(String.self, forColumn: "detail") }
                for detail in details where detail.hasPrefix("SCAN ") {
                    // Scans of the recursive CTEs' queues, of a readdir's one-row head and of the partial
                    // highlight index are bounded.
                    let allowed =
                        ["SCAN up", "SCAN below", "SCAN head", "SCAN CONSTANT ROW"].contains(detail)
                        || detail.contains("USING INDEX document_highlighted")
                        || detail.contains("USING COVERING INDEX document_highlighted")
                        || detail.contains("USING INDEX generated_file_highlighted")
                        || detail.contains("USING COVERING INDEX generated_file_highlighted")
                    #expect(allowed, "\(name) scans: \(detail)")
                }
                #expect(!details.isEmpty)
            }
        }
    }

    @Test func readsProceedWhileAWriteIsOpen() throws {
        let store = try MetadataStore.withCourse(bigCourse(count: 3))
        let directory = try store.inode(course + "/Folien")
        let writing = DispatchSemaphore(value: 0)
        let finish = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        Thread {
            try? store.pool.write { db in
                try db.execute(sql: "UPDATE node SET size = 4242 WHERE parent = ?", arguments: [directory])
                writing.signal()
                finish.wait()
            }
            done.signal()
        }.start()
        writing.wait()
        // Readers are not blocked by the open write transaction and see the last committed state.
        let start = Date()
        let sizes = try (0..<20).map { _ in try store.children(of: directory).map(\.node.size) }
        #expect(Date().timeIntervalSince(start) < 5)
        #expect(sizes.allSatisfy { $0 == [1000, 1000, 1000] })
        finish.signal()
        done.wait()
        #expect(try store.children(of: directory).map(\.node.size) == [4242, 4242, 4242])
    }

    /// A readdir reads on a connection of its own (`ListingReaders`), not one of GRDB's readers: it answers while
    /// every GRDB reader is held, sees each commit made after its connection opened, and goes on after a schema
    /// change (SQLite re-prepares its statements).
    @Test func aReaddirTakesNoneOfGRDBsReaders() throws {
        let store = try MetadataStore.withCourse(bigCourse(count: 3))
        let directory = try store.inode(course + "/Folien")
        #expect(try store.listing(of: directory)?.children.map(\.node.size) == [1000, 1000, 1000])

        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let released = DispatchSemaphore(value: 0)
        for _ in 0..<MetadataStore.maximumReaderCount {
            Thread {
                try? store.pool.read { _ in
                    held.signal()
                    release.wait()
                }
                released.signal()
            }.start()
        }
        for _ in 0..<MetadataStore.maximumReaderCount { held.wait() }
        let listed = DispatchSemaphore(value: 0)
        let names = Mutex<[String]?>(nil)
        Thread {
            let listing = try? store.listing(of: directory)
            let more = try? store.children(of: directory, after: 0, limit: 2)
            names.withLock { $0 = (listing?.children.map(\.node.name) ?? []) + (more?.map(\.node.name) ?? []) }
            listed.signal()
        }.start()
        let answered = listed.wait(timeout: .now() + 5) == .success
        for _ in 0..<MetadataStore.maximumReaderCount { release.signal() }
        for _ in 0..<MetadataStore.maximumReaderCount { released.wait() }
        if !answered { listed.wait() }
        #expect(answered)
        #expect(names.withLock { $0 } == ["Datei 0.pdf", "Datei 1.pdf", "Datei 2.pdf", "Datei 0.pdf", "Datei 1.pdf"])

        try store.pool.write { db in
            try db.execute(sql: "UPDATE node SET size = 4242 WHERE parent = ?", arguments: [directory])
            try db.execute(sql: "CREATE INDEX node_size ON node(size)")
        }
        #expect(try store.listing(of: directory)?.children.map(\.node.size) == [4242, 4242, 4242])
        #expect(try store.children(of: directory).map(\.node.size) == [4242, 4242, 4242])
    }

    @Test func concurrentRefreshesAndReadsAreSafe() async throws {
        let store = try MetadataStore.temporary()
        let courses = (0..<6).map { makeCourse("c\($0)", "N\($0)", "Kurs \($0)", [ws2627]) }
        _ = try store.applyOverview(overview(courses), now: now)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for course in courses {
                group.addTask {
                    let documents = (0..<40).map { document("\(course.id)-d\($0)", in: root(course), "D\($0).pdf") }
                    _ = try store.applyCourse(content(course, documents: documents), now: now)
                }
                group.addTask {
                    for _ in 0..<20 { _ = try store.children(of: Node.rootInode) }
                }
            }
            try await group.waitForAll()
        }
        #expect(try store.walk().count == 2 + 6 + 6 * 40)
    }

    @Test func theFileIsPrivateAndInWALMode() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("campusfs-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("campusfs.sqlite").path
        let store = try MetadataStore(path: path)
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(try store.pool.read { try String.fetchOne($0, sql: "PRAGMA journal_mode") } == "wal")
        #expect(try store.pool.write { try Int.fetchOne($0, sql: "PRAGMA synchronous") } == 2)
        #expect(store.pool.configuration.maximumReaderCount >= 8)
        #expect(try store.node(inode: Node.rootInode)?.item == .root)
        #expect(throws: StoreError.self) { try MetadataStore(path: directory.path + "/missing/campusfs.sqlite") }
    }
}
