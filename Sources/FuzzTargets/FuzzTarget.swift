import Foundation

/// The fuzz targets (docs/fuzzing.md) and the inputs they start from. A library, not the executable, so that the
/// same bodies run under libFuzzer (`campusfs-fuzz`, built by Scripts/fuzz with the sanitizer) and over their
/// seeds in the normal build's tests (`FuzzTargetsTests`): a broken property traps in both.
package enum FuzzTarget: String, CaseIterable, Codable, Sendable {
    case html, json, jsonapi, legacy, markdown, naming

    /// One input through the target: returns, or traps with the property it broke.
    package func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        switch self {
        case .html: HTMLTarget.run(bytes)
        case .json: JSONTarget.run(bytes)
        case .jsonapi: JSONAPITarget.run(bytes)
        case .legacy: LegacyTarget.run(bytes)
        case .markdown: MarkdownTarget.run(bytes)
        case .naming: NamingTarget.run(bytes)
        }
    }

    /// Runs every input, writing its name to standard error first, so that a trap's message follows the name of
    /// the input that caused it.
    package func replay(_ inputs: [FuzzInput]) {
        for input in inputs {
            FileHandle.standardError.write(Data("\(rawValue): \(input.name)\n".utf8))
            input.bytes.withUnsafeBytes { run($0.bindMemory(to: UInt8.self)) }
        }
    }

    /// The captured bodies that suit the target (`fixtures` is the repository's Tests/Fixtures), and every input
    /// that once broke it: `fuzz-regressions/<target>/`. Scripts/fuzz starts libFuzzer from these;
    /// `FuzzTargetsTests` replays them in every test run.
    package func seeds(fixtures: URL) throws -> [FuzzInput] {
        var seeds: [FuzzInput] = []
        switch self {
        case .html:
            seeds = try FuzzInput.files(in: fixtures.appending(path: "login-pages"))
        case .markdown:
            // Announcement bodies as Stud.IP sends them, and the login pages for HTML of another kind.
            seeds =
                try FuzzInput.files(in: fixtures.appending(path: "news-html"))
                + FuzzInput.files(in: fixtures.appending(path: "login-pages"))
        case .json, .naming, .jsonapi, .legacy:
            let captures = try FileManager.default.contentsOfDirectory(atPath: fixtures.path)
                .filter { $0.hasPrefix("studip-5.0.7") }.sorted()
            for capture in captures {
                seeds += try FuzzInput.files(in: fixtures.appending(path: capture), prefix: capture + "-") { name in
                    name.hasSuffix(".json") && !name.hasSuffix(".meta.json")
                        && (self != .jsonapi || name.contains("jsonapi")) && (self != .legacy || name.contains("rest"))
                }
            }
            if self == .jsonapi {
                // A course's folders and documents in one input: the seed that reaches the document checks.
                let pair = try ["jsonapi_course_folders", "jsonapi_course_file_refs"].map { name in
                    try Data(contentsOf: fixtures.appending(path: "studip-5.0.7/\(name).json"))
                }
                seeds.append(
                    FuzzInput(
                        name: "course-folders-and-file-refs.json",
                        bytes: Data("[".utf8) + pair[0] + Data(",".utf8) + pair[1] + Data("]".utf8)))
            }
        }
        let regressions = fixtures.appending(path: "fuzz-regressions/\(rawValue)")
        if FileManager.default.fileExists(atPath: regressions.path) {
            seeds += try FuzzInput.files(in: regressions, prefix: "regression-")
        }
        return seeds
    }
}

/// One input of a fuzz target, named as a file in a corpus directory.
package struct FuzzInput: Sendable {
    package let name: String
    package let bytes: Data

    package init(name: String, bytes: Data) {
        self.name = name
        self.bytes = bytes
    }

    /// The files directly in `directory`, by name, that `include` accepts.
    static func files(
        in directory: URL, prefix: String = "", where include: (String) -> Bool = { !$0.hasPrefix(".") }
    ) throws -> [FuzzInput] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter(include).sorted().map { name in
            FuzzInput(name: prefix + name, bytes: try Data(contentsOf: directory.appending(path: name)))
        }
    }
}
