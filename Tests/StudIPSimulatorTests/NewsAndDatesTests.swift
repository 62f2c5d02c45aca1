import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// Announcements and course dates changed through the control API, read back through both APIs the way the
/// captured Stud.IP 5.0.7 shows them (fixtures-5.0.7-more Part 1).
@Suite("Announcements and course dates: control API changes as both APIs show them")
struct NewsAndDatesTests {
    static let inf101 = "29f7bd5e79910822b1be93be3c53a72c"
    private let jsonAPI = [HTTP.basic("test_autor"), HTTP.jsonAPIAccept]

    private func object(_ result: HTTPResult) throws -> [String: Any] {
        try #require(try result.json() as? [String: Any])
    }

    private func jsonAPIItems(_ path: String, _ sim: Simulator) async throws -> [[String: Any]] {
        let result = try await HTTP.get("\(sim.baseURL)/jsonapi.php/v1/\(path)", headers: jsonAPI)
        try #require(result.status == 200, "\(path): \(result.status)")
        return try object(result)["data"] as? [[String: Any]] ?? []
    }

    private func restItems(_ path: String, _ sim: Simulator) async throws -> [[String: Any]] {
        let result = try await HTTP.get("\(sim.baseURL)/api.php/\(path)", headers: [HTTP.basic("test_autor")])
        try #require(result.status == 200, "\(path): \(result.status)")
        let collection = try object(result)["collection"]
        if let keyed = collection as? [String: [String: Any]] { return Array(keyed.values) }
        return collection as? [[String: Any]] ?? []
    }

    private static func attribute(_ item: [String: Any], _ name: String) -> Any? {
        (item["attributes"] as? [String: Any])?[name]
    }

    @Test func postedNewsIsListedAndExpiredNewsDisappears() async throws {
        try await withSimulator(.fixtures507More) { sim async throws in
            let before = try await jsonAPIItems("courses/\(Self.inf101)/news", sim)
            let posted = try object(
                try await HTTP.control(
                    .POST, "\(sim.controlURL)/news",
                    #"{"course_id": "\#(Self.inf101)", "title": "Raumänderung", "content": "<p>Heute im Audimax.</p>"}"#
                ))
            let id = try #require(posted["id"] as? String)
            let listed = try await jsonAPIItems("courses/\(Self.inf101)/news", sim)
            #expect(listed.count == before.count + 1)
            #expect(listed.first?["id"] as? String == id, "the newest announcement comes first")
            #expect(Self.attribute(listed[0], "content") as? String == "<!--HTML--><p>Heute im Audimax.</p>")
            let rest = try await restItems("course/\(Self.inf101)/news", sim)
            #expect(rest.contains { $0["news_id"] as? String == id && $0["topic"] as? String == "Raumänderung" })

            let edited = try object(
                try await HTTP.control(.PATCH, "\(sim.controlURL)/news/\(id)", #"{"title": "Raumänderung (neu)"}"#))
            #expect((edited["chdate"] as? Int ?? 0) > (posted["chdate"] as? Int ?? 0))

            _ = try await HTTP.control(.PATCH, "\(sim.controlURL)/news/\(id)", #"{"expire": true}"#)
            let after = try await jsonAPIItems("courses/\(Self.inf101)/news", sim)
            #expect(!after.contains { $0["id"] as? String == id })
            #expect(
                !(try await restItems("course/\(Self.inf101)/news", sim)).contains { $0["news_id"] as? String == id })
            let show = try await HTTP.get("\(sim.baseURL)/jsonapi.php/v1/news/\(id)", headers: jsonAPI)
            #expect(show.status == 200, "an expired announcement stays readable by id")
            let written = try await jsonAPIItems("users/205f3efb7997a0fc9755da2b535038da/news", sim)
            #expect(written.contains { $0["id"] as? String == id }, "users/{id}/news lists expired ones too")
        }
    }

    @Test func cancelledAndMovedDatesShowAsStudIPShowsThem() async throws {
        try await withSimulator(.fixtures507More) { sim async throws in
            let events = try await jsonAPIItems("courses/\(Self.inf101)/events?page[limit]=100", sim)
            let first = try #require(events.first { Self.attribute($0, "categories") as? [String] == ["Vorlesung"] })
            let id = try #require(first["id"] as? String)

            let moved = try object(
                try await HTTP.control(
                    .PATCH, "\(sim.controlURL)/dates/\(id)", #"{"room": "Audimax", "start": 1791880200}"#))
            #expect(moved["id"] as? String == id, "moving keeps the id")
            let afterMove = try await jsonAPIItems("courses/\(Self.inf101)/events?page[limit]=100", sim)
            let movedItem = try #require(afterMove.first { $0["id"] as? String == id })
            #expect(Self.attribute(movedItem, "location") as? String == "Audimax")
            #expect(Self.attribute(movedItem, "start") as? String == "2026-10-13T10:30:00+02:00")

            let cancelled = try object(
                try await HTTP.control(
                    .PATCH, "\(sim.controlURL)/dates/\(id)", #"{"cancelled": true, "note": "Krankheit"}"#))
            let newID = try #require(cancelled["id"] as? String)
            #expect(newID != id, "Stud.IP moves a cancelled date to ex_termine under a new id")
            let afterCancel = try await jsonAPIItems("courses/\(Self.inf101)/events?page[limit]=100", sim)
            let item = try #require(afterCancel.first { $0["id"] as? String == newID })
            #expect(Self.attribute(item, "title") as? String == "Vorlesung, Einführung in die Informatik (fällt aus)")
            #expect((Self.attribute(item, "categories") as? [String])?.isEmpty == true)
            #expect(Self.attribute(item, "description") as? String == "Krankheit")
            let rest = try await restItems("course/\(Self.inf101)/events?limit=100", sim)
            let restItem = try #require(rest.first { $0["event_id"] as? String == newID })
            #expect(restItem["deleted"] as? Bool == true)
            #expect(restItem["room"] as? String == "(fällt aus)")
            #expect(restItem["categories"] as? String == "Vorlesung")

            let added = try object(
                try await HTTP.control(
                    .POST, "\(sim.controlURL)/dates",
                    #"{"course_id": "\#(Self.inf101)", "start": 1795863600, "end": 1795870800, "room": "Labor", "category": "Exkursion"}"#
                ))
            let week = try await jsonAPIItems("users/e7a0a84b161f3e8c09b4a0a2e8a58147/events", sim)
            #expect(week.contains { $0["id"] as? String == added["id"] as? String }, "a new date this week is listed")
        }
    }

    /// What 5.0.7 writes where there is no room or no HTML (fixtures-5.0.7-writes step 10, issue 28): legacy
    /// "keine Raumangabe" and JSON:API null for a date without a room, "(<holiday>)" for one cancelled on a
    /// holiday, a schedule title without "()" when no date has a room, and a `<br>` per line of a text body.
    @Test func noRoomAndNoHTMLAsStudIPWritesThem() async throws {
        var university = try Dataset.fixtures507More.load()
        let dates = university.events(ofCourse: Self.inf101)
        for var date in dates where date.cycleID != nil {
            date.room = ""
            university.add(date)
        }
        var whit = try #require(dates.first { $0.cycleID == nil && !$0.isCancelled })
        whit.isCancelled = true
        whit.holiday = "Pfingstmontag"
        university.add(whit)
        university.add(
            News(
                id: "plainnews0000000000000000000000a", title: "Text", content: "Zeile 1\nZeile <2>",
                authorID: "205f3efb7997a0fc9755da2b535038da", rangeIDs: [Self.inf101], date: university.now - 60,
                expire: 86_400, mkdate: university.now - 60, chdate: university.now - 60))
        try await withSimulator(.custom(university)) { sim async throws in
            let rest = try await restItems("course/\(Self.inf101)/events?limit=100", sim)
            let jsonAPIEvents = try await jsonAPIItems("courses/\(Self.inf101)/events?page[limit]=100", sim)
            let regular = try #require(dates.first { $0.cycleID != nil && !$0.isCancelled })
            #expect(rest.first { $0["event_id"] as? String == regular.id }?["room"] as? String == "keine Raumangabe")
            let item = try #require(jsonAPIEvents.first { $0["id"] as? String == regular.id })
            #expect((item["attributes"] as? [String: Any])?["location"] is NSNull)
            let cancelled = try #require(rest.first { $0["event_id"] as? String == whit.id })
            #expect(
                cancelled["room"] as? String == "(Pfingstmontag)" && cancelled["canceled"] as? String == "Pfingstmontag"
            )
            let schedule = try object(
                try await HTTP.get(
                    "\(sim.baseURL)/api.php/user/e7a0a84b161f3e8c09b4a0a2e8a58147/schedule",
                    headers: [HTTP.basic("test_autor")]))
            let tuesday = try #require(schedule["1"] as? [String: [String: Any]])
            #expect(tuesday.values.map { $0["title"] as? String } == ["Vorlesung"])
            let news = try await restItems("course/\(Self.inf101)/news", sim)
            let body = news.first { $0["news_id"] as? String == "plainnews0000000000000000000000a" }?["body_html"]
            #expect(body as? String == "<div class=\"formatted-content\">Zeile 1<br>\nZeile &lt;2&gt;</div>")
        }
    }
}

extension NewsAndDatesTests {
    @Test("Later JSON:API layouts flag a cancelled date", arguments: [Flavour.v55, .v6])
    func laterLayoutsFlagCancelledDates(flavour: Flavour) async throws {
        try await withSimulator(.fixtures507More, flavour: flavour) { sim async throws in
            let result = try await HTTP.get(
                "\(sim.baseURL)/jsonapi.php/v1/courses/\(Self.inf101)/events", headers: jsonAPI)
            let items = try object(result)["data"] as? [[String: Any]] ?? []
            let cancelled = items.filter { Self.attribute($0, "is-cancelled") as? Bool == true }
            #expect(cancelled.map { $0["id"] as? String } == ["e5184063f32dcb46ccc9dd663caee8be"])
            #expect(items.count == 19)
            let exam = try #require(items.first { $0["id"] as? String == "f84ff469016fe49940fde3a9f1d04fbf" })
            #expect(Self.attribute(exam, "type") as? Int == 3)
            #expect(Self.attribute(exam, "display-value") as? String == "Tuesday, 09.02.2027 10:00 - 12:00")
        }
    }
}
