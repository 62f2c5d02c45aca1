import AsyncHTTPClient
import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

@Suite("Fault injection and request counters")
struct FaultInjectionTests {
    private func semesters(_ sim: Simulator) async throws -> HTTPResult {
        try await HTTP.get("\(sim.baseURL)/jsonapi.php/v1/semesters", headers: [HTTP.jsonAPIAccept])
    }

    private func stats(_ sim: Simulator) async throws -> [String: Any] {
        try #require(try await HTTP.get("\(sim.controlURL)/stats").json() as? [String: Any])
    }

    @Test func statusForTheNextNRequestsThenNormalService() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            let added = try await HTTP.control(.POST, "\(sim.controlURL)/faults", #"{"status": 503, "count": 2}"#)
            #expect(added.status == 201)

            let first = try await semesters(sim)
            #expect(first.status == 503)
            #expect(first.header("Content-Type") == "application/json")
            #expect(first.text.contains(#""status":"503""#))
            #expect(try await semesters(sim).status == 503)
            #expect(try await semesters(sim).status == 200)

            let legacyFault = try await HTTP.control(.POST, "\(sim.controlURL)/faults", #"{"status": 500, "count": 1}"#)
            #expect(legacyFault.status == 201)
            let legacy = try await HTTP.get("\(sim.baseURL)/api.php/semesters")
            #expect(legacy.status == 500)
            #expect(legacy.text.contains(#""status":500"#))

            let counters = try await stats(sim)
            #expect(counters["total"] as? Int == 4)
            #expect((counters["routes"] as? [String: Int])?["fault"] == 3)

            _ = try await HTTP.control(.POST, "\(sim.controlURL)/stats/reset")
            #expect(try await stats(sim)["total"] as? Int == 0)
        }
    }

    @Test func shareOfMatchingRequestsIsExact() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            _ = try await HTTP.control(
                .POST, "\(sim.controlURL)/faults", #"{"status": 500, "share": "0.25", "path": "semesters"}"#)
            var failures = 0
            for _ in 0..<12 where try await semesters(sim).status == 500 { failures += 1 }
            #expect(failures == 3)
            let other = try await HTTP.get(
                "\(sim.baseURL)/jsonapi.php/v1/users/me", headers: [HTTP.basic("test_autor"), HTTP.jsonAPIAccept])
            #expect(other.status == 200, "the path filter leaves other routes alone")

            _ = try await HTTP.control(.DELETE, "\(sim.controlURL)/faults")
            for _ in 0..<4 { #expect(try await semesters(sim).status == 200) }
        }
    }

    @Test func resetAfterBytesTruncatesTheBody() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            _ = try await HTTP.control(.POST, "\(sim.controlURL)/faults", #"{"reset_after_bytes": 10000, "count": 1}"#)
            let url = "\(sim.baseURL)/jsonapi.php/v1/file-refs/\(Scenario.bigID)/content"
            await #expect(throws: (any Error).self) {
                _ = try await HTTP.get(url, headers: [HTTP.basic("test_autor")])
            }
            let whole = try await HTTP.get(url, headers: [HTTP.basic("test_autor")])
            #expect(whole.status == 200)
            #expect(whole.body.count == 2 << 20)
            let completed = try await stats(sim)["downloads"] as? [String: [String: Int]]
            #expect(completed?["completed"]?[Scenario.bigID] == 1, "only the second download completed")
        }
    }

    @Test func stallOutlastsTheClientTimeout() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            _ = try await HTTP.control(.POST, "\(sim.controlURL)/faults", #"{"stall_ms": 5000, "count": 1}"#)
            await #expect(throws: HTTPClientError.deadlineExceeded) {
                _ = try await HTTP.request(
                    .GET, "\(sim.baseURL)/jsonapi.php/v1/semesters", headers: [HTTP.jsonAPIAccept],
                    timeout: .milliseconds(300))
            }
        }
    }

    @Test func badFaultDefinitionsAreRefused() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            #expect(try await HTTP.control(.POST, "\(sim.controlURL)/faults", #"{"count": 1}"#).status == 400)
            #expect(try await HTTP.control(.POST, "\(sim.controlURL)/faults", #"{"status": 42}"#).status == 400)
            #expect(try await HTTP.control(.POST, "\(sim.controlURL)/faults", "not json").status == 400)
        }
    }
}

@Suite("Fault injection: bodies and concurrency")
struct FaultBodyTests {
    @Test func malformedBodyWithSuccessStatus() async throws {
        try await withSimulator(Scenario.start()) { sim async throws in
            _ = try await HTTP.control(.POST, "\(sim.controlURL)/faults", #"{"body": "{\"data\": [", "count": 1}"#)
            let broken = try await HTTP.get("\(sim.baseURL)/jsonapi.php/v1/semesters", headers: [HTTP.jsonAPIAccept])
            #expect(broken.status == 200)
            #expect(broken.text == #"{"data": ["#)
            #expect(broken.header("Content-Type") == "application/vnd.api+json")
            #expect(
                try await HTTP.get("\(sim.baseURL)/jsonapi.php/v1/semesters", headers: [HTTP.jsonAPIAccept]).text
                    != broken.text)
        }
    }

    @Test func maxInFlightCountsConcurrentRequests() async throws {
        try await withSimulator(Scenario.start(settings: SimulatorSettings(latencyMilliseconds: 300))) {
            sim async throws in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<3 {
                    group.addTask {
                        try await HTTP.get("\(sim.baseURL)/jsonapi.php/v1/semesters", headers: [HTTP.jsonAPIAccept])
                            .status
                    }
                }
                for try await status in group { #expect(status == 200) }
            }
            let stats = try #require(try await HTTP.get("\(sim.controlURL)/stats").json() as? [String: Any])
            #expect(stats["max_in_flight"] as? Int == 3)
        }
    }
}
