import Foundation

/// Fuzz targets for what CampusFS reads from a server: the JSON reader, both APIs' decoders, the naming rules,
/// the login pages' HTML scanner and the announcements' HTML to Markdown.
///
/// `campusfs-fuzz <target> [files or directories…]`. Built normally it replays the given inputs through the
/// target (a regression run over a corpus: any broken property traps); built with
/// `-sanitize=fuzzer -DFUZZING` (Scripts/fuzz) `main` hands the rest of the command line to libFuzzer instead.
/// One executable for all targets: one sanitizer build instead of four.
@main
enum FuzzMain {
    static let targets: [String: @Sendable (UnsafeBufferPointer<UInt8>) -> Void] = [
        "html": HTMLTarget.run,
        "json": JSONTarget.run,
        "jsonapi": JSONAPITarget.run,
        "legacy": LegacyTarget.run,
        "markdown": MarkdownTarget.run,
        "naming": NamingTarget.run,
    ]

    /// libFuzzer's children (`-jobs`, `-fork`, `-minimize_crash`) get the parent's flags and inputs, not its
    /// first argument: they find the target here.
    static let environmentKey = "CAMPUSFS_FUZZ_TARGET"

    static func main() {
        var arguments = CommandLine.arguments
        if arguments.count > 1, targets[arguments[1]] != nil {
            setenv(environmentKey, arguments.remove(at: 1), 1)
        }
        guard let name = ProcessInfo.processInfo.environment[environmentKey], targets[name] != nil else {
            let names = targets.keys.sorted().joined(separator: ", ")
            FileHandle.standardError.write(Data("usage: campusfs-fuzz <\(names)> [inputs…]\n".utf8))
            exit(2)
        }
        #if FUZZING
            exit(runLibFuzzer(arguments))
        #else
            replay(name, inputs: arguments.dropFirst())
        #endif
    }

    /// Read once: after `main` has set the environment, before the first input.
    static let selected: @Sendable (UnsafeBufferPointer<UInt8>) -> Void =
        ProcessInfo.processInfo.environment[environmentKey].flatMap { targets[$0] } ?? { @Sendable _ in }

    /// Runs every file given, directories recursively, through the target.
    static func replay(_ name: String, inputs: ArraySlice<String>) {
        let target = selected
        var count = 0
        for input in inputs {
            for path in files(at: input) {
                guard let data = FileManager.default.contents(atPath: path) else {
                    FileHandle.standardError.write(Data("campusfs-fuzz: cannot read \(path)\n".utf8))
                    exit(1)
                }
                data.withUnsafeBytes { target($0.bindMemory(to: UInt8.self)) }
                count += 1
            }
        }
        print("campusfs-fuzz \(name): \(count) inputs replayed, no property broken")
    }

    private static func files(at path: String) -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else {
            return [path]
        }
        let entries = FileManager.default.enumerator(atPath: path)?.compactMap { $0 as? String } ?? []
        return entries.sorted().map { path + "/" + $0 }.filter { entry in
            var nested: ObjCBool = false
            return FileManager.default.fileExists(atPath: entry, isDirectory: &nested) && !nested.boolValue
        }
    }
}

/// libFuzzer's entry point: one input through the target the command line chose.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    FuzzMain.selected(UnsafeBufferPointer(start: data, count: size))
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
