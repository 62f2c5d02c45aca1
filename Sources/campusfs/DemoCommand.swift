import ArgumentParser
import Daemon
import Foundation
import StudIPKit
import StudIPSimulator

/// `campusfs demo`: the zero-setup first run — a made-up university served by the built-in simulator, mounted.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Mount a demo university (the built-in Stud.IP simulator): no account, no network needed.",
        discussion: """
            Serves the demo university on 127.0.0.1 as the student test_autor and mounts it, in the foreground:
            Ctrl-C unmounts. Everything works as with a real Stud.IP: lazy downloads, refresh, status. The demo keeps \
            its state in the profile "demo". The demo university is as of November 2026, with this week's uploads \
            (two lectures' slides, an exercise sheet) dated from today, so the first mount shows them as new.
            """
                + HelpText.examples(
                    """
                    campusfs demo                  # mounts at ~/Uni-Demo
                    campusfs demo /tmp/uni --dataset fixtures-5.0.7
                    """))

    @Argument(help: "An empty directory to mount on (default: ~/Uni-Demo, created if missing).")
    var mountpoint: String?

    @Option(help: "The simulator's dataset: \(Dataset.names.joined(separator: ", ")).")
    var dataset = "demo"

    func run() async throws {
        try await reportingErrors {
            guard let chosen = Dataset(name: dataset) else {
                throw CLIError.usage("unknown dataset \"\(dataset)\"; one of \(Dataset.names.joined(separator: ", "))")
            }
            let paths = Paths()
            let mountpoint = try Mountpoint.prepare(
                mountpoint, default: paths.home.appendingPathComponent("Uni-Demo"))
            let simulator: Simulator
            do {
                simulator = try await Simulator.start(SimulatorConfiguration(dataset: chosen, flavour: .v55))
            } catch {
                throw CLIError.other("cannot start the simulator: \(error)")
            }
            // This week's uploads, so that the first mount shows `new` documents (docs/simulator.md).
            if case .generated(.demo, _) = chosen { simulator.addDemoArrivals(now: Date()) }
            let profile = Profile(
                name: "demo", paths: paths, serverURL: simulator.baseURL, api: .auto, university: "Demo University",
                username: "test_autor", login: .basic, passwordCommand: nil, semesters: [], hiddenCourses: [],
                courseNameTemplate: "{number} {title}")
            for directory in [
                profile.databaseURL.deletingLastPathComponent(), paths.cache(profile: "demo"), paths.runtime,
                paths.state,
            ] {
                try Paths.ensureDirectory(directory)
            }
            let daemon: CampusDaemon
            do throws(CLIError) {
                daemon = try await DaemonRunner.start(
                    profile, mountpoint: mountpoint,
                    credentials: .basic(username: "test_autor", password: "testing"), offline: false)
            } catch {
                await simulator.stop()
                throw error
            }
            let campusfs = Self.invocation(searchPath: ProcessInfo.processInfo.environment["PATH"])
            let pathHint =
                campusfs == "campusfs" ? "" : "(To type plain `campusfs`, put it on your PATH: Scripts/install.)\n"
            printNow(
                """
                The demo university is mounted at \(mountpoint) (Stud.IP simulator at \(simulator.baseURL)).
                What the lecturers uploaded this week is marked new (user.campusfs.highlight) until you open it.
                Try, in another terminal:
                  ls "\(mountpoint)"
                  find "\(mountpoint)" -name '*.pdf' | head
                  \(campusfs) new --profile demo
                  \(campusfs) status --profile demo
                \(pathHint)Press Ctrl-C to unmount.
                """)
            await daemon.waitUntilUnmounted()
            await DaemonRunner.shutDown(daemon, profile: profile)
            await simulator.stop()
            printNow("unmounted \(mountpoint)")
        }
    }

    /// How the printed hints start this binary, so that they run as printed in another terminal: `campusfs` when
    /// the first `campusfs` on PATH is this very file (as after Scripts/install), else its absolute path, quoted
    /// for the shell when needed.
    static func invocation(searchPath: String?) -> String {
        let running = DaemonLauncher.executable
        let found = (searchPath ?? "").split(separator: ":").lazy
            .map { URL(fileURLWithPath: String($0)).appendingPathComponent("campusfs") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
        if found?.resolvingSymlinksInPath().path == running { return "campusfs" }
        let plain = running.allSatisfy { $0.isLetter || $0.isNumber || "/._-+".contains($0) }
        return plain ? running : "'" + running.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
