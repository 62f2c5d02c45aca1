import Foundation
import StudIPKit
import StudIPModel
import TestSupport
import Testing

@testable import StudIPSimulator

/// Issue 14.3: a server whose listings stall is asked a bounded number of times, not courses × attempts, and the
/// error says it is not answering.
@Suite("circuit breaker")
struct CircuitBreakerTests {
    @Test func aStallingServerIsNotAskedAgainAfterFourTimeoutsInARow() async throws {
        try await withSimulator(.generated(.small, seed: 1), flavour: .v55) { sim async throws in
            var configuration = Harness.configuration(sim, api: .jsonAPI)
            configuration.requestTimeout = .seconds(2)
            try await withSource(configuration) { source in
                let courses = try await source.overview().courses
                #expect(courses.count >= 5)
                sim.inject(Fault(action: .stall(milliseconds: 10_000), pathContains: "/folders"))
                let before = source.requestCount
                let errors = await withTaskGroup(of: StudIPError?.self) { group in
                    for course in courses {
                        group.addTask {
                            await Harness.error { () async throws(StudIPError) in try await source.content(of: course) }
                        }
                    }
                    return await group.reduce(into: [StudIPError?]()) { $0.append($1) }
                }
                let sent = source.requestCount - before
                // Each course's file-refs answer, its folders stall. Requests in flight when the breaker opens still
                // time out, and a few retries slip in before it does; after that nothing is sent.
                #expect(
                    sent <= courses.count + 3 * configuration.maxConcurrentRequests,
                    "\(sent) requests for \(courses.count) courses (without a breaker: \(courses.count) × 4 attempts)")
                for error in errors {
                    guard case .unreachable(_, let detail)? = error else {
                        Issue.record("expected unreachable, got \(String(describing: error))")
                        continue
                    }
                    #expect(detail.contains("timed out") || detail.contains("Stud.IP is not answering"), "\(detail)")
                }
                #expect(
                    errors.contains {
                        $0?.description.contains("Stud.IP is not answering (4 requests in a row") == true
                    })
            }
        }
    }
}
