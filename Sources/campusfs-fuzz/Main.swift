import Foundation
import FuzzTargets

/// libFuzzer's driver for the fuzz targets in `FuzzTargets` (docs/fuzzing.md).
///
/// - `campusfs-fuzz <target> --seeds <Tests/Fixtures> <corpus>` writes the target's seeds into the corpus
///   directory (Scripts/fuzz, before fuzzing); `--replay-seeds <Tests/Fixtures>` runs them through the target
///   (`FuzzTargetsTests`, in a child process so that a trap fails one test, not the test run).
/// - `campusfs-fuzz <target> [libFuzzer flags, corpus…]`: built with `-sanitize=fuzzer -DFUZZING` (Scripts/fuzz),
///   `main` hands the command line to libFuzzer. Built normally it replays the given files through the target
///   and traps at a broken property.
/// One executable for all targets: one sanitizer build instead of six.
@main
enum FuzzMain {
    /// libFuzzer's children (`-jobs`, `-fork`, `-minimize_crash`) get the parent's flags and inputs, not its
    /// first argument: they find the target here.
    static let environmentKey = "CAMPUSFS_FUZZ_TARGET"

    static func main() {
        var arguments = CommandLine.arguments
        if arguments.count > 1, FuzzTarget(rawValue: arguments[1]) != nil {
            setenv(environmentKey, arguments.remove(at: 1), 1)
        }
        guard let target = selected else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
            fail(
                "usage: campusfs-fuzz <\(names)> [--seeds <fixtures> <corpus> | --replay-seeds <fixtures> | inputs…]",
                status: 2)
        }
        if arguments.count == 4, arguments[1] == "--seeds" {
            do {
                for seed in try target.seeds(fixtures: URL(fileURLWithPath: arguments[2])) {
                    try seed.bytes.write(to: URL(fileURLWithPath: arguments[3]).appending(path: seed.name))
                }
            } catch {
                fail("campusfs-fuzz: cannot write the seeds: \(error)", status: 1)
            }
            return
        }
        if arguments.count == 3, arguments[1] == "--replay-seeds" {
            do {
                target.replay(try target.seeds(fixtures: URL(fileURLWithPath: arguments[2])))
            } catch {
                fail("campusfs-fuzz: cannot read the seeds: \(error)", status: 1)
            }
            return
        }
        #if FUZZING
            exit(runLibFuzzer(arguments))
        #else
            do {
                target.replay(
                    try arguments.dropFirst().map { path in
                        FuzzInput(name: path, bytes: try Data(contentsOf: URL(fileURLWithPath: path)))
                    })
            } catch {
                fail("campusfs-fuzz: \(error)", status: 1)
            }
        #endif
    }

    /// Read once: after `main` has set the environment, before the first input.
    static let selected = ProcessInfo.processInfo.environment[environmentKey].flatMap(FuzzTarget.init(rawValue:))

    private static func fail(_ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(status)
    }
}

/// libFuzzer's entry point: one input through the target the command line chose.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzMain.selected?.run(UnsafeBufferPointer(start: data, count: size))
    return 0
}

#if FUZZING
    /// libFuzzer's driver (`FuzzerDriver.cpp`), linked by `-sanitize=fuzzer`. Calling it from our own `main`
    /// instead of linking libFuzzer's: SwiftPM links an executable's `main` to the module's entry point, so the
    /// module needs one in both builds.
    @_silgen_name("LLVMFuzzerRunDriver")
    private func llvmFuzzerRunDriver(
        _ argc: UnsafeMutablePointer<Int32>,
        _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
        _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
    ) -> Int32

    private func runLibFuzzer(_ arguments: [String]) -> Int32 {
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var argc = Int32(arguments.count)
        return argv.withUnsafeMutableBufferPointer { buffer in
            guard var base = buffer.baseAddress else { return 2 }
            return llvmFuzzerRunDriver(&argc, &base, fuzzOneInput)
        }
    }
#endif
