import Foundation
import StudIPModel
import StudIPWire

/// The decoding steps of both sources on any JSON: they may reject items (problems, nil, thrown errors) but
/// never crash, and what they return keeps the promises of Model.swift: ids non-empty and unique, sizes not
/// negative, every folder below one that came before it (the root first), every document in a listed folder,
/// and dates between the years 1 and 9999 (what JSON:API's ISO 8601 can say, and what `stat` can show).
///
/// JSON:API input: a document or a list of documents whose `data` elements are read together, so that one input
/// can hold a course's folders and its documents (Scripts/fuzz makes such a seed from the captured pair).
enum JSONAPITarget {
    static func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let input = try? JSONReader.parse(bytes) else { return }
        let elements = (input.array ?? [input]).flatMap { document in
            document["data"]?.array ?? [document["data"] ?? document]
        }
        for element in elements {
            if let semester = JSONAPIFormat.semester(element) {
                precondition(!semester.id.isEmpty)
                Fixture.check(dates: semester.begin, semester.end)
            }
            if let listed = Fixture.jsonAPI.course(element) { precondition(!listed.course.id.isEmpty) }
        }
        let included = (input.array ?? [input]).flatMap { $0["included"]?.array ?? [] }
        if let news = try? JSONAPIFormat.announcements(elements, included: included, what: "fuzz") {
            Fixture.check(news)
        }
        if let dates = try? JSONAPIFormat.courseDates(elements, what: "fuzz") { Fixture.check(dates) }
        if let slots = try? JSONAPIFormat.schedule(elements, what: "fuzz") { Fixture.check(slots) }
        guard var tree = try? Fixture.jsonAPI.readableTree(elements, course: Fixture.course, label: "fuzz") else {
            return
        }
        for element in elements { tree.add(document: element, listedInFolder: nil) }
        for folder in tree.foldersMissingDocuments() + tree.foldersWithoutCount().prefix(1) {
            for element in elements { tree.add(document: element, listedInFolder: folder.id) }
        }
        Fixture.check(tree.content)
    }
}

enum LegacyTarget {
    static func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let json = try? JSONReader.parse(bytes) else { return }
        for element in json["collection"]?.elements ?? [json] {
            if let semester = LegacyRESTFormat.semester(element) {
                precondition(!semester.id.isEmpty)
                Fixture.check(dates: semester.begin, semester.end)
            }
            if let course = Fixture.legacy.course(element) { precondition(!course.listed.course.id.isEmpty) }
        }
        let elements = json["collection"]?.elements ?? []
        if let news = try? LegacyRESTFormat.announcements(elements, names: [:], what: "fuzz") { Fixture.check(news) }
        if let dates = try? LegacyRESTFormat.courseDates(elements, what: "fuzz") { Fixture.check(dates) }
        if let slots = try? LegacyRESTFormat.schedule(json, what: "fuzz") { Fixture.check(slots) }
        guard let rootID = json["id"]?.id else { return }
        var walk = FolderWalk(course: Fixture.course, rootID: rootID, installation: Fixture.installation)
        // Each subfolder's own listing is its entry in the listing that named it, as far as the input goes.
        var listings = [rootID: json]
        var pending = [RemoteFolder(id: rootID, parentID: nil, name: "", created: .now, changed: .now)]
        while let folder = pending.popLast(), let listing = listings[folder.id] {
            for entry in listing["subfolders"]?.elements ?? [] {
                if let id = entry["id"]?.id, listings[id] == nil { listings[id] = entry }
            }
            pending += walk.add(listing: listing, of: folder.id, parentID: folder.parentID, label: "fuzz")
        }
        Fixture.check(walk.content)
    }
}

/// Each API's format for one installation: the decoding steps need it for the web-UI links.
private enum Fixture {
    static let installation: Installation = {
        do {
            return try Installation("https://studip.example.org/studip")
        } catch {
            fatalError("\(error)")
        }
    }()
    static let jsonAPI = JSONAPIFormat(installation: installation)
    static let legacy = LegacyRESTFormat(installation: installation)
    static let course = RemoteCourse(id: "course", number: "", title: "Fuzz", semesterIDs: [])

    static func check(_ content: CourseContent) {
        var folders = Set<String>()
        for (index, folder) in content.folders.enumerated() {
            precondition(!folder.id.isEmpty, "folder without id")
            if index == 0 {
                precondition(folder.id == content.rootFolderID && folder.parentID == nil, "root folder not first")
            } else {
                precondition(folder.parentID.map(folders.contains) == true, "folder \(folder.id) before its parent")
            }
            precondition(folders.insert(folder.id).inserted, "folder \(folder.id) twice")
            check(dates: folder.created, folder.changed)
        }
        var documents = Set<String>()
        for document in content.documents {
            precondition(!document.id.isEmpty, "document without id")
            precondition(documents.insert(document.id).inserted, "document \(document.id) twice")
            precondition(folders.contains(document.folderID), "document \(document.id) in an unlisted folder")
            precondition(document.size >= 0, "document \(document.id) with a negative size")
            check(dates: document.created, document.changed)
        }
    }

    /// Announcements (issue 18): ids non-empty, dates readable.
    static func check(_ news: [Announcement]) {
        for item in news {
            precondition(!item.id.isEmpty, "announcement without id")
            check(dates: item.published, item.changed)
            if let expires = item.expires { check(dates: expires) }
        }
    }

    /// Course dates: ids non-empty, readable dates, none ending before it starts.
    static func check(_ dates: [CourseDate]) {
        for date in dates {
            precondition(!date.id.isEmpty, "date without id")
            check(dates: date.start, date.end)
            precondition(date.start <= date.end, "date \(date.id) ends before it starts")
        }
    }

    /// Timetable slots: a weekday 1…7 and minutes within the day, in order.
    static func check(_ slots: [ScheduleSlot]) {
        for slot in slots {
            precondition(!slot.id.isEmpty, "slot without id")
            precondition((1...7).contains(slot.weekday), "weekday \(slot.weekday)")
            precondition(0 <= slot.startMinute && slot.startMinute <= slot.endMinute && slot.endMinute <= 24 * 60)
        }
    }

    static func check(dates: Date...) {
        for date in dates {
            precondition(StudIPDate.readable.contains(date), "date \(date.timeIntervalSince1970) s")
        }
    }
}
