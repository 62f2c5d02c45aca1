import FUSEKit
import Foundation
import SystemSupport
import TestSupport
import Testing

/// Shutdown by signal, with the example filesystem served by a child process: this test binary re-run with
/// only ``ServeHelper`` selected and the mountpoint in `FUSEKIT_SERVE_MOUNTPOINT`.
@Suite struct SignalTests {
    @Test(arguments: [SIGTERM, SIGINT, SIGHUP])
    func aSignalUnmountsABusyMount(signal: Int32) async throws {
        let directory = try temporaryDirectory("fusekit")
        let environment = ProcessInfo.processInfo.environment.merging(
            [ServeHelper.variable: directory], uniquingKeysWith: { $1 })
        let server = try Subprocess.launch(
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath(),
            ["--testing-library", "swift-testing", "--filter", "ServeHelper"], environment: environment)
        var holder: Child?
        defer {
            // Killed and reaped: an unreaped child stays a zombie for the rest of the test run.
            for child in [holder, server].compactMap({ $0 }) {
                if !child.hasEnded { child.kill(SIGKILL) }
                child.reap()
            }
            removeMountpoint(directory)
            #expect(!isMounted(directory))
        }
        // What they print is read so that it never fills a pipe.
        for output in [server.stdout, server.stderr] { Task { _ = await readToEnd(output) } }
        try #require(await waitUntil(seconds: 15) { isMounted(directory) }, "the server did not mount")
        let holding = try Subprocess.launch(
            URL(fileURLWithPath: "/bin/sh"),
            ["-c", "exec 3<'\(directory)/hello.txt'; cd '\(directory)'; exec sleep 20"])
        holder = holding
        let held = await waitUntil(seconds: 5) {
            let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(holding.pid)/fd")) ?? []
            return descriptors.contains { descriptor in
                let target = try? FileManager.default.destinationOfSymbolicLink(
                    atPath: "/proc/\(holding.pid)/fd/\(descriptor)")
                return target == directory + "/hello.txt"
            }
        }
        try #require(held, "the holder did not open the file")

        server.kill(signal)
        #expect(await waitUntil(seconds: 5) { server.hasEnded }, "the server did not end within 5 s")
        #expect(!isMounted(directory))
        if server.hasEnded {
            #expect(!server.reap().signaled, "the server ends itself on the signal")
        }
    }

    /// Polls with `Task.sleep`, never blocking a thread of the cooperative pool.
    private func waitUntil(seconds: Double, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return condition()
    }
}

/// Serves the example filesystem until a termination signal, when run by ``SignalTests`` in a child
/// process; skipped otherwise.
@Suite struct ServeHelper {
    static let variable = "FUSEKIT_SERVE_MOUNTPOINT"

    @Test(.enabled(if: ProcessInfo.processInfo.environment[variable] != nil))
    func serve() throws {
        let directory = try #require(ProcessInfo.processInfo.environment[Self.variable])
        let session = try FUSESession(
            fileSystem: ExampleFileSystem(),
            options: MountOptions(fileSystemName: "fusekit-test", subtype: "fusekittest"))
        try session.mount(at: directory)
        try session.exitOnTerminationSignals()
        try session.run(LoopConfiguration(cloneFD: true))
        exit(0)
    }
}
