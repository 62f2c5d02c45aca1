import Foundation
import GRDB
import NamingRules
import StudIPModel
import Testing

@testable import MetadataStore

@Suite struct NamingTests {
    @Test func slashesBecomeDashes() {
        #expect(Naming.sanitize("Übung 1/2") == "Übung 1-2")
        #expect(Naming.sanitize("/") == "-")
    }

    @Test func controlCharactersBecomeUnderscores() {
        #expect(bytes(Naming.sanitize("a\u{0}b\u{7}c\u{1b}d\u{7f}e\u{85}f\nx")) == bytes("a_b_c_d_e_f_x"))
    }

    @Test func dotAndDotDotAreEscaped() {
        #expect(Naming.sanitize(".") == "_.")
        #expect(Naming.sanitize("..") == "_..")
        #expect(Naming.sanitize("...") == "...")
        #expect(Naming.sanitize(".hidden") == ".hidden")
    }

    @Test func emptyNamesGetAFallback() {
        #expect(Naming.sanitize("") == "_")
        #expect(Naming.directoryName("", id: "x") == "_")
        #expect(Naming.documentName("", mimeType: "application/pdf", id: "x") == "_.pdf")
    }

    @Test func decomposedInputBecomesNFC() {
        let decomposed = "Cafe\u{301} U\u{308}bung.pdf"
        let name = Naming.documentName(decomposed, mimeType: "application/pdf", id: "d")
        #expect(bytes(name) == bytes("Caf\u{e9} \u{dc}bung.pdf"))
        #expect(name.unicodeScalars.count == decomposed.unicodeScalars.count - 2)
    }

    @Test func missingExtensionComesFromTheMIMEType() {
        #expect(Naming.documentName("Skript", mimeType: "application/pdf", id: "d") == "Skript.pdf")
        #expect(Naming.documentName("Notizen", mimeType: "text/plain; charset=UTF-8", id: "d") == "Notizen.txt")
        #expect(
            Naming.documentName(
                "Bericht", mimeType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", id: "d")
                == "Bericht.docx")
        #expect(Naming.documentName("Foto", mimeType: "IMAGE/JPEG", id: "d") == "Foto.jpg")
        #expect(Naming.documentName("Blatt 3.1", mimeType: "application/pdf", id: "d") == "Blatt 3.1.pdf")
        #expect(Naming.documentName("Folien.PDF", mimeType: "application/pdf", id: "d") == "Folien.PDF")
        #expect(Naming.documentName("data.tar.gz", mimeType: "application/gzip", id: "d") == "data.tar.gz")
    }

    @Test func unknownMIMETypesAddNothing() {
        #expect(Naming.documentName("Skript", mimeType: "0", id: "d") == "Skript")
        #expect(Naming.documentName("Skript", mimeType: "application/octet-stream", id: "d") == "Skript")
        #expect(Naming.documentName("Skript", mimeType: "", id: "d") == "Skript")
        #expect(Naming.documentName("Skript", mimeType: "application/x-made-up", id: "d") == "Skript")
    }

    @Test func longNamesAreCutAtACharacterBoundaryKeepingTheExtension() throws {
        let stem = String(repeating: "ä€😀x", count: 30)  // 2+3+4+1 = 10 bytes each, 300 bytes
        let id = "0123abcdef0123456789abcdef012345"
        let name = Naming.documentName(stem + ".pdf", mimeType: "application/pdf", id: id)
        #expect(name.utf8.count <= 255)
        #expect(name.utf8.count > 245)
        #expect(name.hasSuffix(" ~0123ab.pdf"))
        let cut = try #require(name.components(separatedBy: " ~").first)
        #expect(stem.hasPrefix(cut))
        #expect(String(decoding: Array(name.utf8), as: UTF8.self) == name)

        let directory = Naming.directoryName(String(repeating: "€", count: 100), id: "not hex!")
        #expect(directory.utf8.count <= 255)
        #expect(directory.range(of: #" ~[0-9a-f]{6}$"#, options: .regularExpression) != nil)
        #expect(directory.hasPrefix(String(repeating: "€", count: 80)))
    }

    @Test func duplicateSuffixesGoBeforeTheExtensionAndFit() {
        #expect(Naming.candidate("Folien.pdf", number: 2, isDocument: true) == "Folien (2).pdf")
        #expect(Naming.candidate("Folien", number: 3, isDocument: true) == "Folien (3)")
        #expect(Naming.candidate("Version 1.2", number: 2, isDocument: false) == "Version 1.2 (2)")
        let long = String(repeating: "a", count: 251) + ".pdf"
        let second = Naming.candidate(long, number: 2, isDocument: true)
        #expect(second.utf8.count == 255)
        #expect(second.hasSuffix("a (2).pdf"))
    }

    @Test func courseNamesFollowTheTemplate() {
        let course = RemoteCourse(id: "c", number: "INF-101", title: "Foo", subtitle: "Bar", semesterIDs: [])
        let unnumbered = RemoteCourse(id: "c", number: "", title: "Foo", semesterIDs: [])
        #expect(Naming.courseName(template: "{number} {title}", course: course) == "INF-101 Foo")
        #expect(Naming.courseName(template: "{number} {title}", course: unnumbered) == "Foo")
        #expect(Naming.courseName(template: "{title}  –  {subtitle}", course: course) == "Foo – Bar")
        #expect(Naming.courseName(template: "{subtitle}", course: unnumbered) == "Foo")
    }
}

@Suite struct NamesInTheStoreTests {
    @Test func sanitizedNamesAppearInTheTree() throws {
        let store = try MetadataStore.withCourse(
            content(
                info101,
                folders: [
                    folder("f1", in: root(info101), "Übung 1/2"),
                    folder("f2", in: root(info101), ".."),
                    folder("f3", in: root(info101), ""),
                ],
                documents: [
                    document("d1", in: root(info101), "Tab\there", mime: "0"),
                    document("d2", in: "f1", "Lo\u{308}sung", mime: "application/pdf"),
                ]))
        let names = try store.names("WS 2026-27/INF-101 Foo")
        #expect(Set(names) == ["Übung 1-2", "_..", "_", "Tab_here"])
        let solution = try #require(try store.names("WS 2026-27/INF-101 Foo/Übung 1-2").first)
        #expect(bytes(solution) == bytes("L\u{f6}sung.pdf"))
        // The NFD spelling is a different name to the filesystem.
        #expect(
            try store.lookup(parent: store.inode("WS 2026-27/INF-101 Foo/Übung 1-2"), name: "Lo\u{308}sung.pdf")
                == nil)
    }

    @Test func longNamesInTheStoreKeepTheirExtension() throws {
        let long = String(repeating: "Ärger ", count: 60) + ".pptx"
        let store = try MetadataStore.withCourse(
            content(info101, documents: [document("abcdef99", in: root(info101), long, mime: "0")]))
        let name = try #require(try store.names("WS 2026-27/INF-101 Foo").first)
        #expect(name.utf8.count <= 255)
        #expect(name.hasSuffix(" ~abcdef.pptx"))
    }

    @Test func duplicatesAreNumberedOldestFirst() throws {
        let store = try MetadataStore.withCourse(
            content(
                info101,
                documents: [
                    document("d-b", in: root(info101), "Folien.pdf", created: now - 10 * day),
                    document("d-c", in: root(info101), "Folien.pdf", created: now - 5 * day),
                    document("d-a", in: root(info101), "Folien.pdf", created: now - 10 * day),
                    document("d-x", in: root(info101), "Folien", mime: "application/pdf", created: now - 20 * day),
                ]))
        let names = try store.children(of: store.inode("WS 2026-27/INF-101 Foo")).map {
            ($0.node.studipID ?? "", $0.node.name)
        }
        #expect(
            Dictionary(uniqueKeysWithValues: names) == [
                "d-x": "Folien.pdf", "d-a": "Folien (2).pdf", "d-b": "Folien (3).pdf", "d-c": "Folien (4).pdf",
            ])
    }

    /// The children of a new folder are named before they are written (one write each); a folder into which an
    /// existing document moves is named at the end of the transaction. The same rule either way: oldest first.
    @Test func duplicatesInNewFoldersAreNumberedOldestFirst() throws {
        let course = "WS 2026-27/INF-101 Foo"
        let moving = document("d-m", in: root(info101), "Blatt.pdf", created: now - 5 * day)
        let store = try MetadataStore.withCourse(content(info101, documents: [moving]))
        var movedIn = moving
        movedIn.folderID = "f-moved"
        let documents = [
            document("d-n", in: "f-new", "Blatt.pdf", created: now - 1 * day), movedIn,
            document("d-o", in: "f-new", "Blatt.pdf", created: now - 9 * day),
            document("d-p", in: "f-moved", "Blatt.pdf", created: now - 1 * day),
            document("d-q", in: "f-moved", "Blatt.pdf", created: now - 9 * day),
        ]
        let summary = try store.applyCourse(
            content(
                info101,
                folders: [folder("f-new", in: root(info101), "Neu"), folder("f-moved", in: root(info101), "Alt")],
                documents: documents),
            now: now + day)
        func ids(_ folder: String) throws -> [String: String] {
            Dictionary(
                uniqueKeysWithValues: try store.children(of: store.inode(course + "/" + folder)).map {
                    ($0.node.name, $0.node.studipID ?? "")
                })
        }
        #expect(try ids("Neu") == ["Blatt.pdf": "d-o", "Blatt (2).pdf": "d-n"])
        #expect(try ids("Alt") == ["Blatt.pdf": "d-q", "Blatt (2).pdf": "d-m", "Blatt (3).pdf": "d-p"])
        #expect(summary.changedNames.contains(.init(parent: try store.inode(course + "/Neu"), name: "Blatt (2).pdf")))
        #expect(summary.moved.map(\.to) == [course + "/Alt/Blatt (2).pdf"])
    }

    @Test func anOlderDuplicateArrivingLaterDoesNotTakeTheName() throws {
        let newer = document("d-new", in: root(info101), "Blatt.pdf", created: now - 1 * day)
        let older = document("d-old", in: root(info101), "Blatt.pdf", created: now - 30 * day)
        let store = try MetadataStore.withCourse(content(info101, documents: [newer]))
        let course = "WS 2026-27/INF-101 Foo"
        _ = try store.applyCourse(content(info101, documents: [newer, older]), now: now + day)
        #expect(try store.resolve(path: course + "/Blatt.pdf").studipID == "d-new")
        #expect(try store.resolve(path: course + "/Blatt (2).pdf").studipID == "d-old")
        // Stays put over further refreshes, and when the holder of the plain name goes away.
        _ = try store.applyCourse(content(info101, documents: [older, newer]), now: now + 2 * day)
        #expect(try store.resolve(path: course + "/Blatt.pdf").studipID == "d-new")
        _ = try store.applyCourse(content(info101, documents: [older]), now: now + 3 * day)
        #expect(try store.names(course) == ["Blatt (2).pdf"])
    }

    /// Stud.IP 5.0.7 derives a new version's MIME type from its name again (`Hinweise.`: `text/plain` →
    /// `application/octet-stream`): the document keeps its name and nothing is reported moved; a rename on Stud.IP
    /// still renames it, with the extension its MIME type gives then.
    @Test func aMIMETypeChangeIsNotARename() throws {
        let course = "WS 2026-27/INF-101 Foo"
        let first = document("d-h", in: root(info101), "Hinweise.", mime: "text/plain")
        let store = try MetadataStore.withCourse(content(info101, documents: [first]))
        #expect(try store.names(course) == ["Hinweise..txt"])
        var retyped = first
        retyped.mimeType = "application/octet-stream"
        retyped.fileID = "new-version"
        let summary = try store.applyCourse(content(info101, documents: [retyped]), now: now + day)
        #expect(try store.names(course) == ["Hinweise..txt"])
        #expect(summary.moved.isEmpty)
        #expect(summary.changed.map(\.path) == [course + "/Hinweise..txt"])
        var renamed = retyped
        renamed.name = "Hinweise"
        let again = try store.applyCourse(content(info101, documents: [renamed]), now: now + 2 * day)
        #expect(try store.names(course) == ["Hinweise"])
        #expect(again.moved.map(\.to) == [course + "/Hinweise"])
    }

    @Test func duplicateFoldersAndCoursesAreNumbered() throws {
        let twin = makeCourse("c-twin", "INF-101", "Foo", [ws2627])
        let store = try MetadataStore.temporary()
        _ = try store.applyOverview(overview([info101, twin]), now: now)
        #expect(try store.names("WS 2026-27") == ["INF-101 Foo", "INF-101 Foo (2)"])
        #expect(try store.resolve(path: "WS 2026-27/INF-101 Foo (2)").studipID == "c-twin")
        _ = try store.applyCourse(
            content(
                info101,
                folders: [
                    folder("f-a", in: root(info101), "v1.2", created: now - 9 * day),
                    folder("f-b", in: root(info101), "v1.2", created: now - 8 * day),
                ]),
            now: now)
        #expect(try store.names("WS 2026-27/INF-101 Foo") == ["v1.2", "v1.2 (2)"])
    }

    /// One index keyed by Stud.IP ids, not two (migration v12): it still allows one placement per item and one link
    /// per semester or tag folder, and it is the only index of `node` that holds the ids.
    @Test func oneIndexKeepsOnePlacementPerItem() throws {
        let store = try MetadataStore.withCourse(
            content(
                info101, folders: [folder("f", in: root(info101), "F")], documents: [document("d1", in: "f", "a.pdf")]))
        let course = try store.inode("WS 2026-27/INF-101 Foo")
        let folder = try store.inode("WS 2026-27/INF-101 Foo/F")
        func insert(_ item: String, _ id: String, parent: Int64, name: String) throws {
            try store.pool.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO node (parent, name, base_name, kind, item_kind, studip_id, course_id, mtime,
                                          created)
                        VALUES (?, ?, ?, 'file', ?, ?, 'c-101', 0, 0)
                        """,
                    arguments: [parent, name, name, item, id])
            }
        }
        #expect(throws: DatabaseError.self) { try insert("document", "d1", parent: course, name: "again.pdf") }
        #expect(throws: DatabaseError.self) { try insert("folder", "f", parent: course, name: "F again") }
        try insert("tagLink", "d1", parent: course, name: "link one")
        try insert("tagLink", "d1", parent: folder, name: "link two")
        #expect(throws: DatabaseError.self) { try insert("tagLink", "d1", parent: folder, name: "link three") }
        let indexes = try store.pool.read { db in
            try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'node'")
                .filter { row in (row["sql"] as String?)?.contains("studip_id") == true }.map { $0["name"] as String }
        }
        #expect(indexes == ["node_item"])
    }

    /// Migration v12 on a store holding two links of one document in one tag folder (links were not unique before):
    /// the older stays and the store opens.
    @Test func mergingTheIndexesKeepsTheOlderOfTwoLinksInOneFolder() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("v12-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("campusfs.sqlite").path
        let queue = try DatabaseQueue(path: path)
        try Schema.migrator.migrate(queue, upTo: "issue 32: drafts")
        try queue.write { db in
            try db.execute(
                sql: """
                    INSERT INTO node (inode, parent, name, base_name, kind, item_kind, mtime, created)
                    VALUES (5, 1, 'Tags', 'Tags', 'directory', 'tagView', 0, 0);
                    INSERT INTO node (inode, parent, name, base_name, kind, item_kind, studip_id, mtime, created)
                    VALUES (6, 5, 'exam', 'exam', 'directory', 'tag', 'exam', 0, 0);
                    INSERT INTO node (inode, parent, name, base_name, kind, item_kind, studip_id, mtime, symlink_target,
                                      created)
                    VALUES (7, 6, 'a.pdf', 'a.pdf', 'symlink', 'tagLink', 'd1', 0, 'x', 0),
                           (8, 6, 'a (2).pdf', 'a.pdf', 'symlink', 'tagLink', 'd1', 0, 'x', 0);
                    """)
        }
        try queue.close()
        let store = try MetadataStore(path: path)
        #expect(try store.names("Tags/exam") == ["a.pdf"])
    }

    @Test func theSchemaRejectsADuplicateName() throws {
        let store = try MetadataStore.withCourse(
            content(info101, documents: [document("d1", in: root(info101), "a.pdf")]))
        let course = try store.inode("WS 2026-27/INF-101 Foo")
        #expect(throws: DatabaseError.self) {
            try store.pool.write { db in
                try db.execute(
                    sql: """
                        INSERT INTO node (parent, name, base_name, kind, item_kind, studip_id, course_id, mtime,
                                          created)
                        VALUES (?, 'a.pdf', 'a.pdf', 'file', 'document', 'd2', 'c-101', 0, 0)
                        """,
                    arguments: [course])
            }
        }
        #expect(try store.names("WS 2026-27/INF-101 Foo") == ["a.pdf"])
    }
}
