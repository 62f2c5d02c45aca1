import FUSEKit
import Foundation
import TestSupport
import Testing

/// Shutdown by signal, with the example filesystem served by a child process: this test binary re-run with
/// only ``ServeHelper`` selected and the mountpoint in `FUSEKIT_SERVE_MOUNTPOINT`.
@Suite struct SignalTests {
    @Test(arguments: [SIGTERM, SIGINT, SIGHUP])
    func aSignalUnmountsABusyMount(signal: Int32) async throws {
        let directory = try temporaryDirectory("fusekit")
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        server.arguments = ["--testing-library", "swift-testing", "--filter", "ServeHelper"]
        server.environment = ProcessInfo.processInfo.environment.merging(
            [ServeHelper.variable: directory], uniquingKeysWith: { $1 })
        server.standardOutput = FileHandle.nullDevice
        server.standardInput = FileHandle.nullDevice
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/bin/sh")
        holder.arguments = ["-c", "exec 3<'\(directory)/hello.txt'; cd '\(directory)'; exec sleep 20"]
        defer {
            for process in [holder, server] where process.isRunning {
                kill(process.processIdentifier, SIGKILL)
            }
            removeMountpoint(directory)
            #expect(!isMounted(directory))
        }
        try server.run()
        try #require(await waitUntil(seconds: 15) { isMounted(directory) }, "the server did not mount")
        try holder.run()
        let holding = await waitUntil(seconds: 5) {
            let descriptors =
                (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(holder.processIdentifier)/fd")) ?? []
            return descriptors.contains { descriptor in
                let target = try? FileManager.default.destinationOfSymbolicLink(
                    atPath: "/proc/\(holder.processIdentifier)/fd/\(descriptor)")
                return target == directory + "/hello.txt"
            }
        }
        try #require(holding, "the holder did not open the file")

        kill(server.processIdentifier, signal)
        #expect(await waitUntil(seconds: 5) { !server.isRunning }, "the server did not end within 5 s")
        #expect(!isMounted(directory))
        if !server.isRunning {
            #expect(server.terminationReason == .exit)
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
