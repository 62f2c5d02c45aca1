import Foundation
import StudIPKit
import StudIPModel
import TestSupport
import Testing

@testable import StudIPSimulator

/// Retries for what is transient, none for what is not, the request budget, and broken items that do not
/// break their neighbours.
@Suite("Retries, budget and broken items")
struct ResilienceTests {
    static let semesters = "v1/semesters"

    /// Connects with JSON:API to the fixtures, injects `fault` and runs an overview.
    static func overview(
        after fault: Fault, configure: (inout ClientConfiguration) -> Void = { _ in }
    ) async throws -> (result: Result<RemoteOverview, StudIPError>, requests: Int, served: Int) {
        try await withSimulator { sim in
            var configuration = Harness.configuration(sim, api: .jsonAPI)
            configure(&configuration)
            return try await withSource(configuration) { source in
                sim.inject(fault)
                sim.resetStatistics()
                let before = source.requestCount
                let result = await Result { () async throws(StudIPError) in try await source.overview() }
                return (result, source.requestCount - before, sim.served)
            }
        }
    }

    /// Requests a fixtures overview needs: semesters and one course listing per semester (4).
    static let overviewRequests = 5

    @Test("503 twice: retried, succeeds; the count shows the retries")
    func serviceUnavailable() async throws {
        let run = try await Self.overview(
            after: Fault(action: .status(503), pathContains: Self.semesters, remaining: 2))
        #expect(try run.result.get().courses.count == 5)
        #expect(run.requests == Self.overviewRequests + 2)
        #expect(run.served == run.requests)
    }

    @Test("429 is retried")
    func tooManyRequests() async throws {
        let run = try await Self.overview(
            after: Fault(action: .status(429), pathContains: Self.semesters, remaining: 1))
        #expect(try run.result.get().semesters.count == 4)
        #expect(run.requests == Self.overviewRequests + 1)
    }

    @Test("500 for good: retried up to the policy's attempts, then a server error")
    func persistentServerError() async throws {
        let run = try await Self.overview(after: Fault(action: .status(500), pathContains: Self.semesters))
        #expect(run.result.failure == .serverError(status: 500, what: "the semesters"))
        #expect(run.requests == Harness.quickRetry.attempts)
    }

    @Test("404 and 403 are not retried", arguments: [404, 403])
    func clientErrors(status: Int) async throws {
        let run = try await Self.overview(
            after: Fault(action: .status(status), pathContains: Self.semesters, remaining: 1))
        #expect(run.requests == 1)
        switch run.result.failure {
        case .notFound(let what): #expect(status == 404 && what == "the semesters")
        case .forbidden(let what): #expect(status == 403 && what == "the semesters")
        default: Issue.record("unexpected \(String(describing: run.result))")
        }
    }

    @Test("a stall beyond the timeout is retried, then reported as unreachable")
    func stall() async throws {
        let run = try await Self.overview(
            after: Fault(action: .stall(milliseconds: 7_000), pathContains: Self.semesters)
        ) {
            $0.requestTimeout = .seconds(2)
            $0.retry = RetryPolicy(attempts: 3, baseDelay: .milliseconds(5), maxDelay: .milliseconds(10))
        }
        guard case .unreachable(_, let detail) = run.result.failure else {
            Issue.record("expected unreachable, got \(String(describing: run.result))")
            return
        }
        #expect(detail.contains("timed out"))
        #expect(run.requests == 3)
        #expect(run.result.failure?.exitCode == 3)
    }

    @Test("a connection reset mid-body is retried")
    func reset() async throws {
        let run = try await Self.overview(
            after: Fault(action: .resetAfterBytes(20), pathContains: Self.semesters, remaining: 1))
        #expect(try run.result.get().semesters.count == 4)
        #expect(run.requests == Self.overviewRequests + 1)
    }

    /// NIO reports a refused address as `IOError`, a name none of whose addresses answers as `NIOConnectionError`.
    @Test("a refused connection fails at once with unreachable", arguments: ["127.0.0.1", "localhost"])
    func refused(host: String) async throws {
        let sim = try await Simulator.start(SimulatorConfiguration(dataset: .fixtures507))
        let url = sim.baseURL.replacingOccurrences(of: "127.0.0.1", with: host)
        await sim.stop()
        var configuration = ClientConfiguration(
            baseURL: url, credentials: .basic(username: "test_autor", password: "testing"), retry: Harness.quickRetry)
        configuration.requestTimeout = .seconds(5)
        let started = ContinuousClock.now
        let error = await Harness.error { () async throws(StudIPError) in try await StudIP.connect(configuration) }
        guard case .unreachable(_, let detail) = error else {
            Issue.record("expected unreachable, got \(String(describing: error))")
            return
        }
        #expect(detail == "connection refused or host unknown", "not retried as a transient failure")
        #expect(ContinuousClock.now - started < .seconds(3))
    }

    @Test("https:// typed for a plain HTTP server fails at once, naming the scheme to use")
    func plainHTTPServer() async throws {
        try await withSimulator(.fixtures507) { sim in
            let plain = try #require(URLComponents(string: sim.baseURL))
            let hostAndPort = "\(plain.host ?? ""):\(plain.port ?? 0)"
            let configuration = ClientConfiguration(
                baseURL: "https://" + hostAndPort, credentials: .basic(username: "test_autor", password: "testing"),
                retry: Harness.quickRetry)
            let error = await Harness.error { () async throws(StudIPError) in try await StudIP.connect(configuration) }
            #expect(error == .wrongScheme(typed: "https://\(hostAndPort)", meant: "http://\(hostAndPort)"))
            #expect(sim.requestCount == 0, "the TLS handshake never became a request")
        }
    }

    @Test("the request budget stops a refresh with budgetExhausted, and the next refresh starts afresh")
    func budget() async throws {
        try await withSimulator { sim in
            let capture = LogCapture()
            var configuration = Harness.configuration(sim, api: .jsonAPI, logger: capture.logger)
            configuration.requestBudget = 3
            try await withSource(configuration) { source in
                let error = await Harness.error { () async throws(StudIPError) in try await source.overview() }
                #expect(error == .budgetExhausted(server: sim.baseURL, limit: 3))
                // Connecting, then the budget; a retry while connecting (a loaded machine) adds one.
                #expect((4...(4 + capture.retries)).contains(source.requestCount), "\(capture.retries) retries")
            }
            configuration.requestBudget = 6
            try await withSource(configuration) { source in
                let overview = try await source.overview()
                let error = await Harness.error { () async throws(StudIPError) in
                    try await source.content(of: overview.courses[0])
                }
                #expect(error == .budgetExhausted(server: sim.baseURL, limit: 6))
                let again = try await source.overview()
                #expect(again.courses.count == 5, "overview() starts a new budget")
            }
        }
    }

    @Test(
        "one folder answering 500: that folder is reported, the rest of the course is complete",
        arguments: [
            ClientConfiguration.API.jsonAPI, .legacyREST,
        ])
    func brokenFolder(api: ClientConfiguration.API) async throws {
        try await withSimulator(.generated(.small, seed: 1), flavour: .v55) { sim async throws in
            let model = sim.university
            let course = try #require(model.course(numbered: "INF-101"))
            let slides = try #require(model.subfolders(of: course.topFolderID).first { $0.name == "Vorlesungsfolien" })
            // JSON:API lists this folder one by one (it holds a document the student may not download).
            let path = api == .jsonAPI ? "folders/\(slides.id)" : "folder/\(slides.id)"
            sim.inject(Fault(action: .status(500), pathContains: path))
            try await withSource(Harness.configuration(sim, api: api)) { source in
                let overview = try await source.overview()
                let remote = try #require(overview.courses.first { $0.id == course.id })
                let content = try await source.content(of: remote)
                #expect(content.failedFolderIDs == [slides.id])
                #expect(content.problems.map(\.itemID) == [slides.id])
                #expect(content.problems.first?.message.contains("500") == true)
                let expected = ExpectedContent(course: course.id, user: "test_autor", in: model)
                #expect(content.folderIDs == Set(expected.folders.keys), "the failed folder itself stays listed")
                let outside = Set(expected.documents.values.filter { $0.folderID != slides.id }.map(\.id))
                #expect(outside.isSubset(of: content.documentIDs), "siblings are complete")
            }
        }
    }

    @Test(
        "malformed JSON for one course fails that course only",
        arguments: [
            ClientConfiguration.API.jsonAPI, .legacyREST,
        ])
    func malformedCourse(api: ClientConfiguration.API) async throws {
        try await withSimulator(flavour: .v55) { sim async throws in
            let broken = FixtureTests.inf101
            let path = api == .jsonAPI ? "courses/\(broken)/folders" : "course/\(broken)/top_folder"
            sim.inject(Fault(action: .body(#"{"data": [{"type": "folders", "id": "#), pathContains: path))
            try await withSource(Harness.configuration(sim, api: api)) { source in
                let overview = try await source.overview()
                let inf = try #require(overview.courses.first { $0.id == broken })
                let error = await Harness.error { () async throws(StudIPError) in try await source.content(of: inf) }
                guard case .malformedResponse(let what, _) = error else {
                    Issue.record("expected malformedResponse, got \(String(describing: error))")
                    return
                }
                #expect(what.contains("INF-101"))
                let other = try #require(overview.courses.first { $0.number == "BS-202" })
                let content = try await source.content(of: other)
                #expect(content.documents.count == 8)
            }
        }
    }

    @Test("a folder listing that is not JSON marks that folder failed (legacy REST)")
    func malformedFolder() async throws {
        try await withSimulator(flavour: .v55) { sim async throws in
            let archive = "bc93d53feb18d93c26f8a320ce3d46f7"
            sim.inject(Fault(action: .body("<html>Fehler</html>"), pathContains: "folder/\(archive)"))
            try await withSource(Harness.configuration(sim, api: .legacyREST)) { source in
                let overview = try await source.overview()
                let inf = try #require(overview.courses.first { $0.id == FixtureTests.inf101 })
                let content = try await source.content(of: inf)
                #expect(content.failedFolderIDs == [archive])
                #expect(content.documents.count == 7)
            }
        }
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension Result where Failure == StudIPError {
    init(catching body: () async throws(StudIPError) -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
