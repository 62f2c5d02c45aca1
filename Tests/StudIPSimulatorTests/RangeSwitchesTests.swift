import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// The switches a range client is tested with (issue 30, docs/simulator.md): `content_ranges` (the content route of
/// a newer Stud.IP), the external host's ranges and `external_ranges`, the `headers` fault, and the `body` fault's
/// HTML on web routes.
@Suite("Range switches: content_ranges, the external host's ranges, the headers fault")
struct RangeSwitchesTests {
    static func content(_ sim: Simulator, _ id: String = Scenario.bigID) -> String {
        "\(sim.baseURL)/jsonapi.php/v1/file-refs/\(id)/content"
    }

    @Test func theContentRouteAnswersRangesOnlyWhenSwitchedOn() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let whole = try await HTTP.get("\(sim.controlURL)/documents/\(Scenario.bigID)/content").body
            let ignored = try await HTTP.get(
                Self.content(sim), headers: [HTTP.basic("test_autor"), ("Range", "bytes=0-0")])
            #expect(ignored.status == 200 && ignored.header("Content-Range") == nil, "5.0.7 ignores Range (captured)")
            #expect(SendfileTests.same(ignored.body, whole))

            let settings = try await HTTP.control(.PUT, "\(sim.controlURL)/settings", #"{"content_ranges": true}"#)
            #expect((try settings.json() as? [String: Any])?["content_ranges"] as? Bool == true)
            for (range, part) in [
                ("bytes=0-0", 0..<1), ("bytes=1000-4999", 1000..<5000), ("bytes=-10", whole.count - 10..<whole.count),
            ] {
                let answer = try await HTTP.get(
                    Self.content(sim), headers: [HTTP.basic("test_autor"), ("Range", range)])
                #expect(answer.status == 206, "\(range)")
                #expect(
                    answer.header("Content-Range") == "bytes \(part.lowerBound)-\(part.upperBound - 1)/\(whole.count)")
                #expect(answer.header("ETag") != nil, "the content route's ETag stays")
                #expect(SendfileTests.same(answer.body, whole.subdata(in: part)), "\(range)")
            }
            let past = try await HTTP.get(
                Self.content(sim), headers: [HTTP.basic("test_autor"), ("Range", "bytes=\(whole.count)-")])
            #expect(past.status == 416)
            let stats = try #require(try await HTTP.get("\(sim.controlURL)/stats").json() as? [String: Any])
            let routes = try #require(stats["routes"] as? [String: Int])
            #expect(routes["jsonapi GET file-refs/{id}/content range"] == 3, "\(routes)")
        }
    }

    @Test func theExternalHostAnswersRangesUnlessSwitchedOff() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let redirect = try await HTTP.get(Self.content(sim, Scenario.linkID), headers: [HTTP.basic("test_autor")])
            let location = try #require(redirect.header("Location"))
            let whole = try await HTTP.get(location).body
            #expect(whole.count == 3000)
            let part = try await HTTP.get(location, headers: [("Range", "bytes=2000-2999")])
            #expect(part.status == 206)
            #expect(part.header("Content-Range") == "bytes 2000-2999/3000")
            #expect(part.body == whole.subdata(in: 2000..<3000))

            _ = try await HTTP.control(.PUT, "\(sim.controlURL)/settings", #"{"external_ranges": false}"#)
            let ignored = try await HTTP.get(location, headers: [("Range", "bytes=2000-2999")])
            #expect(ignored.status == 200 && ignored.header("Content-Range") == nil)
            #expect(ignored.body == whole)
        }
    }

    @Test func theHeadersFaultReplacesHeadersOfTheRealAnswer() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let cookie = try await SendfileTests.session(sim)
            _ = try await HTTP.control(
                .POST, "\(sim.controlURL)/faults",
                #"{"path": "sendfile.php", "headers": {"Content-Range": "bytes 0-99/5"}, "count": 1}"#)
            let faulted = try await HTTP.get(SendfileTests.sendfile(sim), headers: [cookie, ("Range", "bytes=0-99")])
            #expect(faulted.status == 206)
            #expect(faulted.headers["Content-Range"] == ["bytes 0-99/5"], "replaced, not added")
            #expect(faulted.body.count == 100, "the real body")
            let next = try await HTTP.get(SendfileTests.sendfile(sim), headers: [cookie, ("Range", "bytes=0-99")])
            #expect(next.header("Content-Range") == "bytes 0-99/\(2 << 20)", "count 1: the next answer is untouched")
            let stats = try #require(try await HTTP.get("\(sim.controlURL)/stats").json() as? [String: Any])
            #expect(
                (stats["routes"] as? [String: Int])?["web GET sendfile.php range"] == 2, "counted as the real route")
        }
    }

    @Test func aBodyFaultOnAWebRouteIsHTML() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let cookie = try await SendfileTests.session(sim)
            _ = try await HTTP.control(
                .POST, "\(sim.controlURL)/faults", #"{"path": "sendfile.php", "body": "<html>Wartung</html>"}"#)
            let answer = try await HTTP.get(SendfileTests.sendfile(sim), headers: [cookie, ("Range", "bytes=0-99")])
            #expect(answer.status == 200)
            #expect(answer.header("Content-Type") == "text/html; charset=UTF-8")
            #expect(answer.text == "<html>Wartung</html>")
        }
    }
}
