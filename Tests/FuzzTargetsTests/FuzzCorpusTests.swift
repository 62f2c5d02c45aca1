import Foundation
import FuzzTargets
import Testing

/// Every fuzz target (docs/fuzzing.md) over its seeds, in every test run: the captured responses Scripts/fuzz
/// starts libFuzzer from, and the inputs in Tests/Fixtures/fuzz-regressions/<target>/ that once broke a target.
/// A broken property traps, so each target replays in a child process (an exit test): the test fails with the
/// input's name and the trap's message instead of taking the whole test run down.
struct FuzzCorpusTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Fixtures")

    @Test(arguments: FuzzTarget.allCases)
    func everySeedKeepsTheTargetsProperties(_ target: FuzzTarget) async throws {
        let seeds = try target.seeds(fixtures: Self.fixtures)
        #expect(seeds.count >= (target == .html ? 5 : 10), "\(seeds.count) seeds for \(target)")
        let passed = await #expect(processExitsWith: .success) { [target] in
            target.replay(try target.seeds(fixtures: FuzzCorpusTests.fixtures))
        }
        if passed == nil {
            // Swift Testing gives the output of a passing exit test only: once more, for the input's name and the
            // broken property.
            let failed = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) { [target] in
                target.replay(try target.seeds(fixtures: FuzzCorpusTests.fixtures))
            }
            let said = failed.map { String(decoding: $0.standardErrorContent, as: UTF8.self) } ?? ""
            let lines = said.split(separator: "\n")
            let last = lines.lastIndex { $0.hasPrefix("\(target.rawValue): ") } ?? lines.startIndex
            Issue.record("\(lines[last...].prefix(4).joined(separator: "\n"))")
        }
    }
}
