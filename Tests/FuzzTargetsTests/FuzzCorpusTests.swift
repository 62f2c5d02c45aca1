import Foundation
import FuzzTargets
import TestSupport
import Testing

/// Every fuzz target (docs/fuzzing.md) over its seeds, in every test run: the captured responses Scripts/fuzz
/// starts libFuzzer from, and the inputs in Tests/Fixtures/fuzz-regressions/<target>/ that once broke a target.
/// A broken property traps, so the normal build's `campusfs-fuzz` replays them in a child process: a trap fails
/// this test with the input's name and the property, and the test run goes on. (Not a Swift Testing exit test:
/// its monitor waits for any child with `waitid(P_ALL, WNOWAIT)` and spins on another test's unreaped child.)
struct FuzzCorpusTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Fixtures")
    static let driver = builtProductsDirectory.appending(path: "campusfs-fuzz")

    @Test(arguments: FuzzTarget.allCases)
    func everySeedKeepsTheTargetsProperties(_ target: FuzzTarget) async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.driver.path),
            "no campusfs-fuzz beside the test binary at \(Self.driver.path); the test build builds it")
        let seeds = try target.seeds(fixtures: Self.fixtures)
        #expect(seeds.count >= (target == .html ? 5 : 10), "\(seeds.count) seeds for \(target)")
        let replay = try await runTool(Self.driver.path, [target.rawValue, "--replay-seeds", Self.fixtures.path])
        let lines = replay.stderr.split(separator: "\n")
        let replayed = lines.filter { $0.hasPrefix("\(target.rawValue): ") }
        // On a trap: the last input named, then the property's message.
        let last = lines.lastIndex { $0.hasPrefix("\(target.rawValue): ") } ?? lines.startIndex
        #expect(replay.status == 0, "\(lines[last...].prefix(4).joined(separator: "\n"))")
        #expect(replayed.count == seeds.count, "\(replayed.count) of \(seeds.count) seeds replayed")
    }
}
