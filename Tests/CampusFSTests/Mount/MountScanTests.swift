import Foundation
import MetadataStore
import TestSupport
import Testing

/// Issue 13: `grep -r` over the mount took `campusfs new` from 6 to 0. Scans leave `new`/`changed` alone; a person
/// opening one document clears it (docs/mount.md, "Highlights: a person opening, not a scan").
@Suite(.serialized)
struct MountScanTests {
    static let sheets = "WS 2026-27/INF-101 Einführung in die Informatik/Übungsblätter"
    static let added = ["Neu-1.txt", "Neu-2.txt", "Neu-3.txt"].map { sheets + "/" + $0 }
    /// Longer than the second of quiet that ends a burst, so its verdict has been applied.
    static let settle = Duration.milliseconds(2500)

    /// The scans, each run twice in a row: the second meets warm caches and sends no READ.
    enum Scan: String, CaseIterable, Sendable {
        /// Known by its name.
        case grep
        /// One `cat` for all documents, started by `find`: known by its parent's name and by opening many.
        case findExecCat
        /// One `cat` per document: only its parent's name, `find`, tells.
        case findExecCatEach
        /// A program without a scanner's name: known by opening more than two documents at once.
        case pythonWalk

        /// A command that reads every document below the mount and prints the names of the added ones.
        func command(_ campus: MountedCampus) -> String {
            let root = campus.path("")
            switch self {
            case .grep:
                return "grep -r -l '^neu Neu-' \(root) 2>/dev/null"
            case .findExecCat:
                return "find \(root) -type f -exec cat {} + 2>/dev/null | grep -a -o 'Neu-[0-9].txt'"
            case .findExecCatEach:
                return "find \(root) -type f -exec cat {} \\; 2>/dev/null | grep -a -o 'Neu-[0-9].txt'"
            case .pythonWalk:
                let script = """
                    import os, sys
                    for directory, _, files in os.walk(sys.argv[1]):
                        for name in files:
                            try:
                                with open(os.path.join(directory, name), "rb") as file:
                                    if file.read().startswith(b"neu Neu-"):
                                        print(name)
                            except OSError:
                                pass
                    """
                return "python3 -c \(quoted(script)) \(root)"
            }
        }

        /// Runs the scan and checks that it read the added documents.
        func run(_ campus: MountedCampus) async throws {
            let result = try await shell(command(campus), timeout: 120)
            let missing = MountScanTests.added.filter { !result.stdout.contains($0.split(separator: "/").last ?? "") }
            #expect(missing.isEmpty, "\(self) did not read \(missing): \(result.stdout)")
        }
    }

    /// Adds three documents on the server and refreshes: they are `new`.
    static func addDocuments(_ campus: MountedCampus) async throws {
        let folder = try #require(try campus.store.resolve(path: sheets).studipID)
        for path in added {
            let name = String(path.split(separator: "/").last ?? "")
            try await campus.simulate(
                "POST", "documents", ["folder_id": folder, "name": name, "text": "neu \(name)\n"])
        }
        try await campus.refresh()
    }

    /// What `campusfs new` lists: each highlighted document's path and highlight.
    static func highlighted(_ campus: MountedCampus) throws -> [String: Highlight] {
        Dictionary(try campus.store.highlightedDocuments().map { ($0.path, $0.highlight) }) { first, _ in first }
    }

    @Test(arguments: Scan.allCases)
    func aScanLeavesEveryHighlight(_ scan: Scan) async throws {
        try await MountedCampus.with { campus in
            try await Self.addDocuments(campus)
            let before = try Self.highlighted(campus)
            #expect(Self.added.allSatisfy { before[$0] == .new }, "\(before)")
            try await scan.run(campus)
            try await scan.run(campus)
            try await Task.sleep(for: Self.settle)
            #expect(try Self.highlighted(campus) == before)
        }
    }

    /// After a scan warmed the kernel's page cache, `cat` of one document (which then sends no READ) clears it;
    /// scans right after it clear nothing else.
    @Test func catOfOneDocumentClearsItButScansRightAfterDoNot() async throws {
        try await MountedCampus.with { campus in
            try await Self.addDocuments(campus)
            let before = try Self.highlighted(campus)
            try await Scan.grep.run(campus)
            let first = Self.added[0]
            let read = try await shell("cat \(campus.path(first))")
            #expect(read.stdout == "neu Neu-1.txt\n")
            try await Scan.findExecCat.run(campus)
            try await Scan.pythonWalk.run(campus)
            let after = try await MountHarness.settled({ try Self.highlighted(campus) }, until: { $0[first] == nil })
            #expect(after[first] == nil, "cat clears the document it opened")
            try await Task.sleep(for: Self.settle)
            var expected = before
            expected[first] = nil
            #expect(try Self.highlighted(campus) == expected)
        }
    }
}
