import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// A course with its files tool switched off, as Stud.IP 5.0.7 answered for it (fixtures-5.0.7-more Part 5,
/// course L-16; the expected values below are copied from that capture).
@Suite("A course with its files tool switched off")
struct FilesToolTests {
    /// `p5_jsonapi_course_folders`, `p5_jsonapi_course_file_refs`, `p5_jsonapi_course_folders_dozent`.
    static let forbiddenBody = #"{"errors":[{"id":"Forbidden","status":"403"}]}"#
    /// The relationships of `p5_jsonapi_course` (a course with start and end semester), in order.
    static let courseRelationships = [
        "institute", "start-semester", "end-semester", "participating-institutes", "forum-categories",
        "blubber-threads", "events", "memberships", "news", "sem-class", "sem-type", "status-groups", "wiki-pages",
    ]
    /// The keys of `p5_rest_course_top_folder`, in order.
    static let topFolderKeys = [
        "id", "user_id", "parent_id", "range_id", "range_type", "folder_type", "name", "data_content", "description",
        "mkdate", "chdate", "is_visible", "is_readable", "is_writable", "subfolders", "file_refs",
    ]

    /// A new course without files tool in the scenario, with test_autor and test_dozent; its id and root folder.
    static func addCourse(_ sim: Simulator) async throws -> (id: String, rootID: String) {
        let created = try await HTTP.control(
            .POST, "\(sim.controlURL)/courses",
            #"""
            {"title": "Ringvorlesung ohne Dateibereich", "number": "L-16", "semester_ids": ["\#(Scenario.semesterID)"],
             "members": {"test_dozent": "dozent", "test_autor": "autor"}, "files_tool": false}
            """#)
        #expect(created.status == 201, "\(created.text)")
        let object = try #require(try created.json() as? [String: Any])
        return (try #require(object["id"] as? String), try #require(object["top_folder_id"] as? String))
    }

    static func keys(_ json: JSON?) -> [String] {
        guard case .object(let pairs)? = json else { return [] }
        return pairs.map(\.0)
    }

    @Test func jsonAPIAnswersAsCaptured() async throws {
        try await withSimulator(Scenario.start(flavour: .v50)) { sim async throws in
            let course = try await Self.addCourse(sim)
            let api = "\(sim.baseURL)/jsonapi.php/v1"
            for user in ["test_autor", "test_dozent"] {
                let headers = [HTTP.basic(user), HTTP.jsonAPIAccept]
                for route in ["folders", "file-refs"] {
                    let answer = try await HTTP.get("\(api)/courses/\(course.id)/\(route)", headers: headers)
                    #expect(answer.status == 403, "\(user) \(route)")
                    #expect(answer.header("Content-Type") == "application/vnd.api+json")
                    #expect(answer.text == Self.forbiddenBody, "\(user) \(route)")
                }
                let shown = try await HTTP.get("\(api)/courses/\(course.id)", headers: headers)
                #expect(shown.status == 200)
                let data = JSON.parse(shown.text)?["data"]
                #expect(Self.keys(data?["relationships"]) == Self.courseRelationships)
            }
            let headers = [HTTP.basic("test_autor"), HTTP.jsonAPIAccept]
            let other = try await HTTP.get("\(api)/courses/\(Scenario.courseID)", headers: headers)
            let relationships = Self.keys(JSON.parse(other.text)?["data"]?["relationships"])
            #expect(relationships.contains("folders") && relationships.contains("file-refs"), "the tool is on there")

            let userID = try #require(sim.university.user(named: "test_autor")?.id)
            let listed = try await HTTP.get("\(api)/users/\(userID)/courses", headers: headers)
            guard case .array(let entries)? = JSON.parse(listed.text)?["data"] else {
                Issue.record("no course list: \(listed.text.prefix(200))")
                return
            }
            let entry = entries.first { $0["id"] == .string(course.id) }
            #expect(Self.keys(entry?["relationships"]) == Self.courseRelationships, "the course listing agrees")

            for route in ["folders/\(course.rootID)", "folders/\(course.rootID)/file-refs"] {
                #expect(try await HTTP.get("\(api)/\(route)", headers: headers).status == 200, "\(route)")
            }
        }
    }

    @Test func legacyRESTAnswersAsCaptured() async throws {
        try await withSimulator(Scenario.start(flavour: .v50)) { sim async throws in
            let course = try await Self.addCourse(sim)
            for user in ["test_autor", "test_dozent"] {
                let top = try await HTTP.get(
                    "\(sim.baseURL)/api.php/course/\(course.id)/top_folder", headers: [HTTP.basic(user)])
                #expect(top.status == 200, "\(user)")
                let folder = JSON.parse(top.text)
                #expect(Self.keys(folder) == Self.topFolderKeys)
                #expect(folder?["id"] == .string(course.rootID))
                #expect(folder?["folder_type"] == .string("RootFolder"))
                #expect(folder?["subfolders"] == .array([]))
                #expect(folder?["file_refs"] == .array([]))
                for flag in ["is_visible", "is_readable", "is_writable"] {
                    #expect(folder?[flag] == .bool(true), "\(user) \(flag)")
                }
            }
            let shown = try await HTTP.get(
                "\(sim.baseURL)/api.php/course/\(course.id)", headers: [HTTP.basic("test_autor")])
            #expect(Self.keys(JSON.parse(shown.text)?["modules"]) == ["wiki"])
        }
    }

    @Test func laterReleasesRefuseTheFolderRoutesToo() async throws {
        try await withSimulator(Scenario.start(flavour: .v55)) { sim async throws in
            let course = try await Self.addCourse(sim)
            let answer = try await HTTP.get(
                "\(sim.baseURL)/jsonapi.php/v1/courses/\(course.id)/folders",
                headers: [HTTP.basic("test_autor"), HTTP.jsonAPIAccept])
            #expect(answer.status == 403)
        }
    }

    @Test func filesToolMustBeABoolean() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let refused = try await HTTP.control(
                .POST, "\(sim.controlURL)/courses", #"{"title": "Kaputt", "files_tool": "no"}"#)
            #expect(refused.status == 400)
        }
    }
}
