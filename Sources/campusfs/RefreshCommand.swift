import ArgumentParser
import CampusFS
import Foundation
import MetadataStore
import StudIPKit

/// `campusfs refresh`: fetch what changed on Stud.IP into the metadata store and say what it was.
struct RefreshCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refresh",
        abstract: "Fetch the current tree from Stud.IP and report what is new, changed or removed.",
        discussion: """
            Prints a summary and the number of HTTP requests it made. With --json, one JSON object for scripts:
            {"api", "requests", "new", "changed", "moved", "removed", "problems"} with paths.
            """)

    @OptionGroup var profile: ProfileOptions

    @Flag(help: "Print the result as JSON.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            let profile = try profile.resolve()
            try Paths.ensureDirectory(profile.databaseURL.deletingLastPathComponent())
            let store: MetadataStore
            do throws(StoreError) {
                store = try MetadataStore(path: profile.databaseURL.path)
            } catch {
                throw CLIError.other(error.description)
            }
            let credentials = try CredentialSource.resolve(
                username: profile.username, passwordCommand: profile.passwordCommand)
            let source = try await StudIP.connect(
                ClientConfiguration(baseURL: profile.serverURL, api: profile.api.clientAPI, credentials: credentials))
            let result: Result<Refresher.Report, RefreshError>
            do throws(RefreshError) {
                let refresher = Refresher(
                    source: source, store: store,
                    options: TreeOptions(
                        courseNameTemplate: profile.courseNameTemplate, hiddenCourseIDs: profile.hiddenCourses),
                    semesters: profile.semesters.isEmpty ? nil : Set(profile.semesters))
                var report = try await refresher.refresh()
                report.requests = source.requestCount
                result = .success(report)
            } catch {
                result = .failure(error)
            }
            await source.shutdown()
            switch result {
            case .success(let report): print(json ? Self.json(report) : Self.text(report, profile: profile))
            case .failure(.studIP(let error)): throw CLIError(error)
            case .failure(.store(let error)): throw CLIError.other(error.description)
            }
        }
    }

    static let listLimit = 50

    static func text(_ report: Refresher.Report, profile: Profile) -> String {
        let summary = report.summary
        var lines = [
            "\(summary.added.count) new, \(summary.changed.count) changed, \(summary.moved.count) moved, "
                + "\(summary.removed.count) removed — \(report.requests) requests to \(profile.serverURL) (\(report.api))"
        ]
        func list(_ label: String, _ paths: [String]) {
            for path in paths.prefix(listLimit) { lines.append("  \(label) \(path)") }
            if paths.count > listLimit {
                lines.append("  \(label) … and \(paths.count - listLimit) more (--json lists all)")
            }
        }
        list("new     ", summary.added.map(\.path))
        list("changed ", summary.changed.map(\.path))
        list("moved   ", summary.moved.map { "\($0.from) → \($0.to)" })
        list("removed ", summary.removed.map(\.path))
        for problem in summary.problems + report.failedCourses {
            lines.append("  skipped  \(problem.message)")
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ report: Refresher.Report) -> String {
        let summary = report.summary
        let object: [String: Any] = [
            "api": report.api,
            "requests": report.requests,
            "new": summary.added.map(\.path),
            "changed": summary.changed.map(\.path),
            "moved": summary.moved.map { ["from": $0.from, "to": $0.to] },
            "removed": summary.removed.map(\.path),
            "problems": (summary.problems + report.failedCourses).map(\.description),
        ]
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

extension ProfileOptions.APIChoice {
    var clientAPI: ClientConfiguration.API {
        switch self {
        case .auto: .auto
        case .jsonapi: .jsonAPI
        case .rest: .legacyREST
        }
    }
}
