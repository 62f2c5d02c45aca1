import Foundation
import StudIPKit
import StudIPModel
import TestSupport
import Testing

@testable import StudIPSimulator

/// docs/architecture.md, "Targets": a cold walk costs at most 2 + semesters + 3 × courses requests, and never more than
/// the configured number of requests are in flight.
@Suite("Request counts and concurrency on large")
struct RequestCountTests {
    struct Measured: Sendable {
        var served: Int
        var counted: Int
        var semesters: Int
        var courses: Int
        var documents: Int
        var maxInFlight: Int
        /// Requests sent twice after a transient failure (see ``LogCapture/retries``).
        var retries: Int
    }

    /// A cold refresh as the daemon does it: connect, overview, every course's content in parallel.
    static func coldWalk(
        _ sim: Simulator, api: ClientConfiguration.API, maxConcurrent: Int = 4
    ) async throws -> Measured {
        sim.resetStatistics()
        let capture = LogCapture()
        var configuration = Harness.configuration(sim, api: api, logger: capture.logger)
        configuration.maxConcurrentRequests = maxConcurrent
        return try await withSource(configuration) { source in
            let overview = try await source.overview()
            let contents = try await withThrowingTaskGroup(of: CourseContent.self) { group in
                for course in overview.courses { group.addTask { try await source.content(of: course) } }
                var all: [CourseContent] = []
                for try await content in group { all.append(content) }
                return all
            }
            #expect(contents.allSatisfy { $0.failedFolderIDs.isEmpty })
            return Measured(
                served: sim.served, counted: source.requestCount, semesters: overview.semesters.count,
                courses: overview.courses.count, documents: contents.reduce(0) { $0 + $1.documents.count },
                maxInFlight: sim.maxInFlight, retries: capture.retries)
        }
    }

    /// The requests of a JSON:API walk with ``ClientConfiguration/listsRestrictedDocuments`` off.
    static func walkWithoutRestrictedDocuments(_ sim: Simulator) async throws -> Int {
        var configuration = Harness.configuration(sim, api: .jsonAPI)
        configuration.listsRestrictedDocuments = false
        return try await withSource(configuration) { source in
            let overview = try await source.overview()
            for course in overview.courses { _ = try await source.content(of: course) }
            return source.requestCount
        }
    }

    /// On 5.0 (no folder counts) each course's listing looks in one folder on its own for documents the
    /// student may not download: the bound exactly, as every course has a readable root folder.
    @Test("JSON:API cold walk of large on 5.0 stays within 2 + semesters + 3 × courses")
    func jsonAPIBoundFiveZero() async throws {
        try await withSimulator(.generated(.large, seed: 1), flavour: .v50) { sim async throws in
            let measured = try await Self.coldWalk(sim, api: .jsonAPI)
            let bound = 2 + measured.semesters + 3 * measured.courses
            print("large 5.0 JSON:API: \(measured.served) requests (bound \(bound)), \(measured.documents) documents")
            #expect(measured.courses >= 10)
            #expect(measured.documents > 1_000)
            #expect(measured.served == bound + measured.retries, "\(sim.statistics.snapshot().routes)")
            #expect(measured.counted == measured.served, "the source counts what the server saw")

            let lean = try await Self.walkWithoutRestrictedDocuments(sim)
            print("large 5.0 JSON:API without restricted documents: \(lean) requests (bound \(bound))")
            #expect(lean == 2 + measured.semesters + 2 * measured.courses)
        }
    }

    /// On 5.1+ the folder counts reveal documents the course-wide list omits; each folder holding some costs one
    /// more request. `large` has about 70 such folders in 40 courses, more than the bound's one per course.
    @Test("JSON:API cold walk of large on 5.5: two requests per course plus one per folder with restricted documents")
    func jsonAPIBoundFiveFive() async throws {
        try await withSimulator(.generated(.large, seed: 1), flavour: .v55) { sim async throws in
            let model = sim.university
            let user = try #require(model.user(named: "test_autor"))
            let restrictedFolders = Set(
                model.courses(of: user.id).flatMap { course in
                    ExpectedContent(course: course.id, user: "test_autor", in: model).documents.values
                        .filter { !model.canDownload($0, user: user) }.map(\.folderID)
                })
            let complete = try await Self.coldWalk(sim, api: .jsonAPI)
            let bound = 2 + complete.semesters + 3 * complete.courses
            print(
                "large 5.5 JSON:API: \(complete.served) requests (bound \(bound), \(restrictedFolders.count) folders "
                    + "with restricted documents), \(complete.documents) documents")
            #expect(
                complete.served == 2 + complete.semesters + 2 * complete.courses + restrictedFolders.count
                    + complete.retries, "\(sim.statistics.snapshot().routes)")
            #expect(complete.counted == complete.served)

            let lean = try await Self.walkWithoutRestrictedDocuments(sim)
            print("large 5.5 JSON:API without restricted documents: \(lean) requests (bound \(bound))")
            #expect(lean == 2 + complete.semesters + 2 * complete.courses)
            #expect(lean <= bound)
        }
    }

    @Test("legacy REST cold walk of large: 2 + semesters + courses + one per readable subfolder")
    func legacyWalk() async throws {
        try await withSimulator(.generated(.large, seed: 1), flavour: .v50) { sim async throws in
            let model = sim.university
            let user = try #require(model.user(named: "test_autor"))
            let subfolders = model.courses(of: user.id).reduce(0) { count, course in
                count + ExpectedContent(course: course.id, user: "test_autor", in: model).folders.count - 1
            }
            let measured = try await Self.coldWalk(sim, api: .legacyREST)
            print("large 5.0 legacy REST: \(measured.served) requests, \(measured.documents) documents")
            #expect(
                measured.served == 2 + measured.semesters + measured.courses + subfolders + measured.retries,
                "\(sim.statistics.snapshot().routes)")
            #expect(measured.counted == measured.served)
        }
    }

    @Test("at most 4 requests in flight by default, with latency")
    func concurrencyBound() async throws {
        let settings = SimulatorSettings(latencyMilliseconds: 5)
        try await withSimulator(.generated(.large, seed: 1), flavour: .v55, settings: settings) { sim async throws in
            let json = try await Self.coldWalk(sim, api: .jsonAPI)
            #expect(json.maxInFlight <= 4)
            #expect(json.maxInFlight >= 2, "courses are walked in parallel")
        }
    }

    @Test("legacy REST stays within the bound too, with latency")
    func legacyConcurrencyBound() async throws {
        let settings = SimulatorSettings(latencyMilliseconds: 2)
        try await withSimulator(.generated(.demo, seed: 1), flavour: .v55, settings: settings) { sim async throws in
            let legacy = try await Self.coldWalk(sim, api: .legacyREST)
            #expect(legacy.maxInFlight <= 4)
            #expect(legacy.maxInFlight >= 2)
            #expect(legacy.counted == legacy.served)
        }
    }

    @Test("a limit of 1 serialises every request")
    func serialised() async throws {
        let settings = SimulatorSettings(latencyMilliseconds: 2)
        try await withSimulator(.generated(.small, seed: 1), flavour: .v55, settings: settings) { sim async throws in
            let measured = try await Self.coldWalk(sim, api: .legacyREST, maxConcurrent: 1)
            #expect(measured.maxInFlight == 1)
        }
    }
}
