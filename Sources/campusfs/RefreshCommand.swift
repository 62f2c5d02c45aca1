import ArgumentParser
import ControlProtocol
import Daemon
import Foundation
import MetadataStore
import Refreshing
import StudIPKit
import StudIPModel
import Synchronization

/// `campusfs refresh`: fetch what changed on Stud.IP into the metadata store and say what it was.
struct RefreshCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "refresh",
        abstract: "Fetch the current tree from Stud.IP and report what is new, changed or removed.",
        discussion: """
            Prints a summary and the number of HTTP requests it made. With --json, one JSON object for scripts:
            {"api", "requests", "new", "changed", "moved", "removed", "problems"} with paths. While the profile is \
            mounted, its daemon does the refresh and the mount shows the changes at once. With PATH, only the \
            courses below it are refreshed (plus the overview of semesters and courses).
            """)

    @OptionGroup var profile: ProfileOptions

    @Flag(help: "Print the result as JSON.")
    var json = false

    @Flag(name: .shortAndLong, help: "List every item, also on a profile's first refresh, where all are new.")
    var verbose = false

    @Argument(help: "Refresh only the courses below this path (relative to the tree's root); default: everything.")
    var path: String?

    func run() async throws {
        try await reportingErrors {
            let paths = Paths()
            let socket = paths.socket(profile: try profile.name(paths: paths, inferringFrom: path.map { [$0] } ?? []))
            if ControlClient.isServing(socket.path) {
                let outcome = try throughDaemon(socket)
                let server = DaemonDirectory.status(socket)?.serverURL ?? "the server"
                print(json ? Self.json(outcome) : Self.text(outcome, server: server, verbose: verbose))
            } else {
                let profile = try profile.resolve(paths: paths)
                let (outcome, first) = try await directly(profile)
                print(
                    json
                        ? Self.json(outcome)
                        : Self.text(outcome, server: profile.serverURL, verbose: verbose, first: first))
            }
        }
    }

    /// While mounted, the daemon refreshes, so the mount shows the changes at once.
    private func throughDaemon(_ socket: URL) throws(CLIError) -> RefreshOutcome {
        let watcher = isatty(STDERR_FILENO) == 1 ? RefreshWatcher(socket: socket) : nil
        defer { watcher?.stop() }
        let response: ControlResponse
        do throws(ControlSocketError) {
            response = try ControlClient.send(
                .refresh(
                    path: path.map {
                        MountedProfiles.treePath($0, mountpoint: DaemonDirectory.status(socket)?.mountpoint)
                    }),
                to: socket.path)
        } catch {
            throw .other(error.description)
        }
        if let error = response.error { throw CLIError(exitCode: response.exitCode ?? 4, error) }
        guard let outcome = response.refresh else { throw .other("the daemon sent no refresh result") }
        return outcome
    }

    /// Refreshes without a daemon; `first` tells whether the profile had never been refreshed before.
    private func directly(_ profile: Profile) async throws -> (outcome: RefreshOutcome, first: Bool) {
        try Paths.ensureDirectory(profile.databaseURL.deletingLastPathComponent())
        let store: MetadataStore
        do throws(StoreError) {
            store = try MetadataStore(path: profile.databaseURL.path)
        } catch {
            throw CLIError.other(error.description)
        }
        let first = (try? store.syncState())?.lastOverviewAt == nil
        let courseIDs = try courses(below: path, in: store)
        let credentials = try await CredentialSource.resolve(profile)
        let source: any DocumentSource
        do throws(StudIPError) {
            source = try await StudIP.connect(profile.clientConfiguration(credentials))
        } catch {
            // A refused login (an expired OAuth2 grant too) names the command that logs in again.
            guard error.isLoginFailure else { throw error }
            throw CLIError.auth("\(error); run `campusfs login\(profile.option)`")
        }
        let result: Result<Refresher.Report, RefreshError>
        do throws(RefreshError) {
            let refresher = Refresher(
                source: source, store: store, options: profile.treeOptions, semesters: profile.semesterFilter,
                courseFiles: profile.courseFiles)
            var report = try await refresher.refresh(courseIDs: courseIDs)
            report.requests = source.requestCount
            result = .success(report)
        } catch {
            result = .failure(error)
        }
        await source.shutdown()
        switch result {
        case .success(let report): return (RefreshOutcome(report), first)
        case .failure(.studIP(let error)): throw CLIError(error)
        case .failure(let error): throw CLIError(exitCode: error.exitCode, error.description)
        }
    }

    /// The courses below `path`; nil (everything) without a path, or for a path above the courses.
    private func courses(below path: String?, in store: MetadataStore) throws(CLIError) -> Set<String>? {
        guard let path, !path.trimmingCharacters(in: CharacterSet(charactersIn: "/")).isEmpty else { return nil }
        guard (try? store.syncState().lastOverviewAt) ?? nil != nil else {
            throw .usage("nothing is known about this profile yet: run `campusfs refresh` without a path first")
        }
        do throws(StoreError) {
            return try store.courseIDs(below: path)
        } catch {
            throw .usage("\(path): \(error)")
        }
    }

    static let listLimit = 50

    /// The summary line and the items; on a profile's first refresh everything is new, and a list of thousands
    /// hides the summary, so only the count per course is shown unless `verbose`.
    static func text(_ outcome: RefreshOutcome, server: String, verbose: Bool, first: Bool = false) -> String {
        var lines = [
            "\(outcome.new.count) new, \(outcome.changed.count) changed, \(outcome.moved.count) moved, "
                + "\(outcome.removed.count) removed — \(outcome.requests) requests to \(server) (\(outcome.api))"
        ]
        func list(_ label: String, _ paths: [String]) {
            let limit = verbose ? paths.count : listLimit
            for path in paths.prefix(limit) { lines.append("  \(label) \(path)") }
            if paths.count > limit {
                lines.append("  \(label) … and \(paths.count - limit) more (--verbose or --json lists all)")
            }
        }
        if first && !verbose {
            lines.append("  first refresh of this profile, so everything is new; --verbose lists each item")
            for (course, count) in newPerCourse(outcome.new) { lines.append("  \(count) new in \(course)") }
        } else {
            list("new     ", outcome.new)
        }
        list("changed ", outcome.changed)
        list("moved   ", outcome.moved.map { "\($0.from) → \($0.to)" })
        list("removed ", outcome.removed)
        for problem in outcome.problems {
            lines.append("  skipped  \(problem)")
        }
        return lines.joined(separator: "\n")
    }

    /// How many of `paths` lie in each course: below `semester/course/`, the first two components.
    static func newPerCourse(_ paths: [String]) -> [(course: String, count: Int)] {
        var counts: [String: Int] = [:]
        for path in paths {
            let components = path.split(separator: "/", maxSplits: 2)
            guard components.count == 3 else { continue }
            counts["\(components[0])/\(components[1])", default: 0] += 1
        }
        return counts.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    static func json(_ outcome: RefreshOutcome) -> String {
        let object: [String: Any] = [
            "api": outcome.api,
            "requests": outcome.requests,
            "new": outcome.new,
            "changed": outcome.changed,
            "moved": outcome.moved.map { ["from": $0.from, "to": $0.to] },
            "removed": outcome.removed,
            "problems": outcome.problems,
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

/// `campusfs refresh` in a terminal: "refreshing: 12 of 40 courses", from the daemon's status twice a second while
/// the refresh request waits for its answer. Ctrl-C ends the command; the daemon finishes the refresh.
private final class RefreshWatcher: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    init(socket: URL) {
        Thread { [self] in poll(socket) }.start()
    }

    private func poll(_ socket: URL) {
        var line = ProgressLine(terminal: true)
        while !stopped.load(ordering: .acquiring) {
            if let progress = DaemonDirectory.status(socket)?.refreshing {
                line.show(
                    progress.total == 0
                        ? "refreshing: the overview of semesters and courses"
                        : "refreshing: \(progress.done) of \(progress.total) courses", final: false)
            }
            Thread.sleep(forTimeInterval: 0.5)
        }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        finished.signal()
    }

    /// Stops polling and clears the line before the result is printed.
    func stop() {
        stopped.store(true, ordering: .releasing)
        finished.wait()
    }
}
