import Foundation
import Testing

@testable import campusfs

/// Issue 17: the installations `campusfs login` offers. The shipped file is loaded as a user's campusfs loads it,
/// so a bad hand edit fails here; broken copies of it are rejected with the entry named.
@Suite("University list")
struct UniversityListTests {
    @Test func theShippedListLoadsWithASourceForEveryEntry() throws {
        let universities = try UniversityList.load()
        #expect(universities.count >= 20)
        for university in universities {
            #expect(!university.sources.isEmpty, "\(university.name)")
            #expect(university.url.hasPrefix("https://"), "\(university.name)")
        }
        #expect(Set(universities.map { $0.url.lowercased() }).count == universities.count)
        let names = universities.map {
            $0.name.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
        }
        #expect(names == names.sorted(), "the file is sorted by name, so that additions go where a reader looks")
        let passau = try #require(universities.first { $0.name == "Universität Passau" })
        #expect(passau.url == "https://studip.uni-passau.de/studip")
        #expect(passau.methods == [.sso, .oauth2])
        #expect(passau.sso == "shib")
    }

    @Test func filteringIgnoresCaseAndDiacriticsAndLooksAtAliasesAndHosts() throws {
        let universities = try UniversityList.load()
        func names(_ query: String) -> [String] { UniversityList.matching(query, in: universities).map(\.name) }
        #expect(names("uni-passau") == ["Universität Passau"], "the URL's host")
        #expect(names("gottingen") == ["Georg-August-Universität Göttingen"], "ö matched by o")
        #expect(names("GÖTTINGEN") == ["Georg-August-Universität Göttingen"])
        #expect(names("luh") == ["Leibniz Universität Hannover"], "an alias")
        #expect(names("  trier ") == ["Hochschule Trier", "Universität Trier"])
        #expect(names("no such place").isEmpty)
        #expect(names("").count == universities.count)
    }

    @Test func aMatchAtAWordsStartRanksBeforeOneInside() {
        let list = [
            Self.university("Universität Heidelberg", url: "https://heidelberg.example"),
            Self.university("Ludwig-Maximilians-Universität München", url: "https://lmu.example"),
            Self.university("Bergische Universität Wuppertal", url: "https://wuppertal.example"),
        ]
        #expect(
            UniversityList.matching("berg", in: list).map(\.url) == [
                "https://wuppertal.example", "https://heidelberg.example",
            ])
        #expect(UniversityList.matching("munchen", in: list).map(\.url) == ["https://lmu.example"])
        #expect(UniversityList.matching("maximilian", in: list).map(\.url) == ["https://lmu.example"], "after a hyphen")
    }

    @Test func brokenCopiesAreRejectedWithTheEntryNamed() throws {
        let dispatch = try Self.loadError { entries in
            entries[1]["url"] = (entries[1]["url"] as? String ?? "") + "/dispatch.php/start"
        }
        #expect(dispatch.contains("entry 1 (Georg-August-Universität Göttingen)"), "\(dispatch)")
        #expect(dispatch.contains("is not a base URL"), "\(dispatch)")

        let duplicate = try Self.loadError { entries in entries[2]["url"] = entries[0]["url"] }
        #expect(duplicate.contains("entry 2 (Hochschule Flensburg)"), "\(duplicate)")
        #expect(duplicate.contains("already entry 0's"), "\(duplicate)")

        let plain = try Self.loadError { entries in entries[3]["url"] = "http://studip.example.org" }
        #expect(plain.contains("entry 3 ") && plain.contains("not an https:// address"), "\(plain)")

        let unsourced = try Self.loadError { entries in entries[4]["sources"] = [String]() }
        #expect(unsourced.contains("entry 4 ") && unsourced.contains("names no source"), "\(unsourced)")

        let method = try Self.loadError { entries in entries[5]["methods"] = ["telepathy"] }
        #expect(method.contains("entry 5 (field methods.0)"), "\(method)")

        let missing = try Self.loadError { entries in entries[6]["url"] = nil }
        #expect(missing.contains("entry 6: the field url is missing"), "\(missing)")
    }

    @Test func aMissingBundleIsAnErrorThatSaysWhatToDo() throws {
        let empty = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let error = #expect(throws: CLIError.self) { try UniversityList.bundledFile(in: [empty]) }
        let message = error?.description ?? ""
        #expect(message.contains("the list of universities is missing"), "\(message)")
        #expect(message.contains(empty.path) && message.contains("--server"), "\(message)")
        #expect(error?.exitCode == 4)
    }

    /// The message `load(contentsOf:)` gives for the shipped file after `edit` changed its entries.
    private static func loadError(_ edit: (inout [[String: Any]]) -> Void) throws -> String {
        let shipped = try UniversityList.bundledFile(in: [Bundle.main.bundleURL, executableDirectory])
        var root = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: shipped)) as? [String: Any])
        var entries = try #require(root["universities"] as? [[String: Any]])
        edit(&entries)
        root["universities"] = entries
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("universities-\(UUID()).json")
        try JSONSerialization.data(withJSONObject: root).write(to: copy)
        defer { try? FileManager.default.removeItem(at: copy) }
        do {
            _ = try UniversityList.load(contentsOf: copy)
        } catch {
            return error.description
        }
        Issue.record("the broken copy loaded")
        return ""
    }

    private static var executableDirectory: URL {
        URL(fileURLWithPath: DaemonLauncher.executable).deletingLastPathComponent()
    }

    private static func university(_ name: String, url: String) -> University {
        University(
            name: name, aliases: [], url: url, methods: [], sso: nil, oauth2ClientID: nil, sources: ["test"], note: nil)
    }
}
