import Foundation
import MetadataStore
import TestSupport
import Testing

@testable import StudIPSimulator

/// FUSE INTERRUPT against the daemon: a signal ends an open that waits, instead of leaving the process blocked until
/// the server gets round to it.
@Suite(.serialized)
struct InterruptTests {
    /// Four downloads hold every download slot (the server sends their heads, then stalls for 20 s: longer than a loaded machine needs for the steps before the signal, shorter than the client's 30 s request timeout); a fifth open
    /// waits for a slot. SIGINT to its process (Python, with a handler that raises) ends it within a second, where
    /// without interrupt support it stays blocked until a slot frees. The daemon serves on, and the document opens
    /// later with the server's bytes.
    @Test func aSignalEndsAnOpenWaitingForADownloadSlot() async throws {
        try await DaemonTests.with { setup in
            #expect(try await setup.mount().status == 0)
            var documents: [(path: String, sha: String)] = []
            for document in try await ReliabilityTests.documents(setup) where try setup.document(document.path).size > 0
            {
                documents.append(document)
            }
            try #require(documents.count >= 5)
            for held in documents.prefix(4) {
                let id = try setup.document(held.path).id
                setup.sim.faults.add(
                    Fault(action: .stallAfterBytes(0, milliseconds: 20_000), pathContains: id, remaining: 1))
            }
            var readers: [pid_t] = []
            for held in documents.prefix(4) {
                readers.append(try await MountHarness.background("cat \(setup.path(held.path)) >/dev/null"))
            }
            defer { for reader in readers { kill(reader, SIGKILL) } }
            try await Task.sleep(for: .milliseconds(1_500))

            let fifth = documents[4]
            let script = """
                import errno, os, signal, sys
                def interrupted(signum, frame):
                    raise KeyboardInterrupt
                signal.signal(signal.SIGINT, interrupted)
                # The test process's threads block SIGINT, and children inherit the mask.
                signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
                try:
                    os.close(os.open(sys.argv[1], os.O_RDONLY))
                    print("opened")
                except KeyboardInterrupt:
                    print("KeyboardInterrupt")
                except OSError as error:
                    print(errno.errorcode[error.errno])
                """
            let run = try await shell(
                """
                python3 -c \(quoted(script)) \(setup.path(fifth.path)) & pid=$!
                sleep 1
                cat /proc/$pid/wchan
                echo
                start=$(date +%s%N); kill -INT $pid; wait $pid; end=$(date +%s%N)
                echo "$(( (end - start) / 1000000 )) ms"
                """, timeout: 30)
            let lines = run.lines
            print("SIGINT to an open waiting for a download slot: \(lines)")
            #expect(lines.first == "request_wait_answer", "the open waited in the kernel for the daemon's answer")
            #expect(lines.dropFirst().first == "KeyboardInterrupt", "\(run.stdout) \(run.stderr)")
            let elapsed = try #require(Int(lines.last?.split(separator: " ").first ?? ""))
            #expect(elapsed < 1_000, "the interrupted open ended \(elapsed) ms after SIGINT")

            #expect(try await setup.status()["mounted"] as? Bool == true)
            let read = try await shell("sha256sum < \(setup.path(fifth.path))", timeout: 60)
            #expect(read.stdout == fifth.sha)
            for held in documents.prefix(4) {
                let again = try await shell("sha256sum < \(setup.path(held.path))", timeout: 60)
                #expect(again.stdout == held.sha, "\(held.path)")
            }
        }
    }
}
