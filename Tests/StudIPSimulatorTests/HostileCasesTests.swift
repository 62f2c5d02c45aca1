import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// The `small` dataset's hostile cases, as a client sees them through both APIs.
@Suite("Hostile cases through the APIs")
struct HostileCasesTests {
    private let student = [HTTP.basic("test_autor"), HTTP.jsonAPIAccept]
    private let lecturer = [HTTP.basic("test_dozent"), HTTP.jsonAPIAccept]

    private func start() async throws -> (Simulator, University) {
        let sim = try await Simulator.start(
            SimulatorConfiguration(dataset: .generated(.small, seed: 1), flavour: .v55))
        return (sim, sim.university)
    }

    private func course(_ title: String, in university: University) throws -> Course {
        try #require(university.courses.values.first { $0.title == title })
    }

    private func folder(_ name: String, in course: Course, _ university: University) throws -> Folder {
        try #require(university.foldersOfCourse(course.id).first { $0.name == name })
    }

    private func data(_ result: HTTPResult) throws -> [[String: Any]] {
        #expect(result.status == 200)
        return try #require((try result.json() as? [String: Any])?["data"] as? [[String: Any]])
    }

    private func names(_ items: [[String: Any]]) -> [String] {
        items.compactMap { ($0["attributes"] as? [String: Any])?["name"] as? String }
    }

    @Test func unreadableAndHiddenFolders() async throws {
        let (started, university) = try await start()
        try await withSimulator(started) { sim async throws in
            let inf = try course("Einführung in die Informatik", in: university)
            let url = "\(sim.baseURL)/jsonapi.php/v1/folders/\(inf.topFolderID)/folders"

            let seenByStudent = names(try data(try await HTTP.get(url, headers: student)))
            #expect(!seenByStudent.contains("Abgaben"), "JSON:API lists only readable children")
            #expect(!seenByStudent.contains("Tutorenmaterial"))
            #expect(seenByStudent.contains("Übungen 1/2"))
            let seenByLecturer = names(try data(try await HTTP.get(url, headers: lecturer)))
            #expect(seenByLecturer.contains("Abgaben") && seenByLecturer.contains("Tutorenmaterial"))

            let root = try await HTTP.get("\(sim.baseURL)/jsonapi.php/v1/folders/\(inf.topFolderID)", headers: student)
            let relationships =
                (try root.json() as? [String: Any]).flatMap { $0["data"] as? [String: Any] }?[
                    "relationships"] as? [String: Any]
            let count = ((relationships?["folders"] as? [String: Any])?["meta"] as? [String: Any])?["count"] as? Int
            #expect(count == university.childFolderCount(inf.topFolderID), "meta.count counts every child row")
            #expect(count == seenByLecturer.count)

            let legacy = try await HTTP.get(
                "\(sim.baseURL)/api.php/folder/\(inf.topFolderID)", headers: [HTTP.basic("test_autor")])
            let subfolders = try #require((try legacy.json() as? [String: Any])?["subfolders"] as? [[String: Any]])
            let permissionOnly = subfolders.filter { $0["id"] == nil }
            #expect(permissionOnly.count == 1, "the visible but unreadable folder is permission keys only")
            #expect(permissionOnly.first.map { Set($0.keys) } == ["is_visible", "is_readable", "is_writable"])
            #expect(permissionOnly.first?["is_readable"] as? Bool == false)
            #expect(!subfolders.contains { $0["name"] as? String == "Tutorenmaterial" })
        }
    }

    @Test func nonDownloadableDocuments() async throws {
        let (started, university) = try await start()
        try await withSimulator(started) { sim async throws in
            let inf = try course("Einführung in die Informatik", in: university)
            let scan = try #require(university.fileRefs.values.first { $0.name == "Lehrbuch Kapitel 3 (Scan).pdf" })

            let forbidden = try await HTTP.get(
                "\(sim.baseURL)/jsonapi.php/v1/file-refs/\(scan.id)/content", headers: [HTTP.basic("test_autor")])
            #expect(forbidden.status == 403)
            #expect(forbidden.text == "Forbidden")
            let allowed = try await HTTP.get(
                "\(sim.baseURL)/jsonapi.php/v1/file-refs/\(scan.id)/content", headers: [HTTP.basic("test_dozent")])
            #expect(allowed.status == 200)
            #expect(allowed.body.count == scan.size)
            let legacy = try await HTTP.get(
                "\(sim.baseURL)/api.php/file/\(scan.id)/download", headers: [HTTP.basic("test_autor")])
            #expect(legacy.status == 403)

            let listed = try data(
                try await HTTP.get("\(sim.baseURL)/jsonapi.php/v1/folders/\(scan.folderID)/file-refs", headers: student)
            )
            let entry = try #require(listed.first { ($0["id"] as? String) == scan.id })
            #expect((entry["attributes"] as? [String: Any])?["is-downloadable"] as? Bool == false)
            let courseWide = try data(
                try await HTTP.get(
                    "\(sim.baseURL)/jsonapi.php/v1/courses/\(inf.id)/file-refs?page[limit]=1000", headers: student))
            #expect(!courseWide.contains { ($0["id"] as? String) == scan.id }, "courses/{id}/file-refs omits it")
            #expect(courseWide.count > 10)
        }
    }

    @Test func openEndedAndMultiSemesterCourses() async throws {
        let (started, university) = try await start()
        try await withSimulator(started) { sim async throws in
            let userID = try #require(university.user(named: "test_autor")?.id)
            let group = try course("Lerngruppe Analysis", in: university)
            let project = try course("Projektseminar: Robotik", in: university)
            #expect(group.semesterIDs.isEmpty)
            #expect(project.semesterIDs.count == 2)
            for semester in university.orderedSemesters {
                let ids = try data(
                    try await HTTP.get(
                        "\(sim.baseURL)/jsonapi.php/v1/users/\(userID)/courses?filter[semester]=\(semester.id)",
                        headers: student)
                ).compactMap { $0["id"] as? String }
                #expect(ids.contains(group.id), "an open-ended course is in every semester")
                #expect(ids.contains(project.id) == project.semesterIDs.contains(semester.id))

                let legacy = try await HTTP.get(
                    "\(sim.baseURL)/api.php/user/\(userID)/courses?semester=\(semester.id)",
                    headers: [HTTP.basic("test_autor")])
                #expect(legacy.text.contains(group.id))
            }
        }
    }

    @Test func hostileNamesDuplicatesOddIdsAndDeletedOwners() async throws {
        let (started, university) = try await start()
        try await withSimulator(started) { sim async throws in
            let inf = try course("Einführung in die Informatik", in: university)
            let slides = try folder("Vorlesungsfolien", in: inf, university)

            let listed = names(
                try data(
                    try await HTTP.get(
                        "\(sim.baseURL)/jsonapi.php/v1/folders/\(slides.id)/file-refs", headers: lecturer)))
            #expect(listed.sorted() == university.fileRefs(in: slides.id).map(\.name).sorted())
            for hostile in ["Klausur WS 2025/26.pdf", "bell\u{1}char.txt", "line\nbreak.txt", "Party 🎉.pdf"] {
                #expect(listed.contains(hostile), "\(hostile.debugDescription) survives the wire unchanged")
            }
            #expect(listed.filter { $0 == "Folien.pdf" }.count == 2, "duplicates are both listed")
            let composed = listed.filter { $0.unicodeScalars.elementsEqual("\u{DC}bung.txt".unicodeScalars) }
            let decomposed = listed.filter { $0.unicodeScalars.elementsEqual("U\u{308}bung.txt".unicodeScalars) }
            #expect(composed.count == 1 && decomposed.count == 1, "NFC and NFD arrive as sent")

            for document in university.fileRefs.values where document.id.count != 32 {
                let single = try await HTTP.get(
                    "\(sim.baseURL)/jsonapi.php/v1/file-refs/\(document.id)", headers: student)
                #expect(single.status == 200, "an id of \(document.id.count) characters works")
            }

            let orphan = try #require(university.fileRefs.values.first { $0.name == "Altes Skript.pdf" })
            #expect(university.users[orphan.userID] == nil)
            let single = try await HTTP.get("\(sim.baseURL)/jsonapi.php/v1/file-refs/\(orphan.id)", headers: student)
            let relationships =
                (try single.json() as? [String: Any]).flatMap { $0["data"] as? [String: Any] }?[
                    "relationships"] as? [String: Any]
            let owner = try #require(relationships?["owner"] as? [String: Any])
            #expect(owner["data"] is NSNull)
            #expect((owner["meta"] as? [String: Any])?["name"] as? String == "Hans-Peter Ehemalig")
        }
    }

    @Test func latencyDelaysEveryAPIRequest() async throws {
        // Generous deadlines for a loaded machine, all well below the latency: an API request cannot make it,
        // a control request must.
        try await withSimulator(Scenario.start(settings: SimulatorSettings(latencyMilliseconds: 10_000))) {
            sim async throws in
            await #expect(throws: (any Error).self) {
                _ = try await HTTP.request(
                    .GET, "\(sim.baseURL)/jsonapi.php/v1/semesters", headers: [HTTP.jsonAPIAccept],
                    timeout: .milliseconds(1000))
            }
            let control = try await HTTP.request(.GET, "\(sim.controlURL)/stats", timeout: .milliseconds(5000))
            #expect(control.status == 200, "the control API is never delayed")
        }
    }
}
