import Foundation
import MetadataStore
import TestSupport
import Testing

@testable import StudIPSimulator

/// FUSE INTERRUPT on the daemon's mount (docs/mount.md, "Downloads and offline"): a signal ends one opener's wait for a
/// download slot with EINTR, while the download goes on for the others opening the same document.
@Suite(.serialized)
struct InterruptMountTests {
    /// More openers than the daemon has FUSE worker threads (16, `CampusMount.start`): a waiting open that held a
    /// worker would leave none for the lookup below.
    static let readers = 20

    /// Four stalled downloads hold every download slot (the server sends their heads, then nothing for 20 s: longer
    /// than a loaded machine needs for the steps before the signal, shorter than the client's 30 s request timeout).
    /// Twenty `sha256sum`s and a Python process open a fifth document, whose download waits for a slot. SIGALRM (a
    /// handler that returns, so nothing but the kernel ends the call) makes the Python `open(2)` return EINTR at once
    /// — without the daemon's interrupt handling it would return a descriptor once a slot frees; meanwhile a lookup
    /// is answered at once (the waits hold no worker thread), and once the server answers, every reader of the
    /// document gets the server's bytes from the one download. The bounds (3 s for the open, 5 s for the lookup) leave
    /// a loaded machine room and stay far below the 15 s or more until a slot frees.
    @Test func aSignalEndsOneOpenerWhileTheOthersGetTheBytes() async throws {
        try await DaemonTests.with { setup in
            #expect(try await setup.mount().status == 0)
            var documents: [(path: String, sha: String)] = []
            for document in try await ReliabilityTests.documents(setup) where try setup.document(document.path).size > 0
            {
                documents.append(document)
            }
            try #require(documents.count >= 6)
            for held in documents.prefix(4) {
                let id = try setup.document(held.path).id
                setup.sim.faults.add(
                    Fault(action: .stallAfterBytes(0, milliseconds: 20_000), pathContains: id, remaining: 1))
            }
            let daemon = try #require(try await setup.status()["pid"] as? Int)
            let threadsBefore = try Self.threads(of: daemon)
            var background: [pid_t] = []
            defer { for pid in background { kill(pid, SIGKILL) } }
            for held in documents.prefix(4) {
                background.append(try await MountHarness.background("cat \(setup.path(held.path)) >/dev/null"))
            }
            // Every slot is taken once the server holds the four downloads (counted from before their first byte). A
            // fixed wait was too short once under load: a `cat` had not opened yet, and the signalled open got its slot.
            let held = Set(try documents.prefix(4).map { try setup.document($0.path).id })
            let heldAt = try await MountHarness.settled(within: .seconds(30)) {
                held.intersection(setup.sim.statistics.snapshot().downloadsInProgress.keys).count
            } until: {
                $0 == held.count
            }
            try #require(heldAt == held.count, "the four stalled downloads did not start")

            let target = documents[4]
            let outputs = try temporaryDirectory("campusfs-interrupt")
            defer { try? FileManager.default.removeItem(atPath: outputs) }
            for reader in 0..<Self.readers {
                background.append(
                    try await MountHarness.background(
                        "sha256sum < \(setup.path(target.path)) > \(quoted(outputs + "/\(reader)"))"))
            }
            let script = """
                import ctypes, os, signal, sys, time
                # The test process's threads block signals, and children inherit the mask.
                signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGALRM])
                # A handler that returns: Python runs it only after the call returned, so only the daemon's answer ends it.
                signal.signal(signal.SIGALRM, lambda signum, frame: None)
                libc = ctypes.CDLL(None, use_errno=True)
                fires = time.monotonic() + 1.5
                signal.setitimer(signal.ITIMER_REAL, 1.5)
                # libc's open, not os.open: Python would retry after EINTR (PEP 475).
                fd = libc.open(sys.argv[1].encode(), os.O_RDONLY)
                returned = time.monotonic()
                print("opened" if fd >= 0 else os.strerror(ctypes.get_errno()))
                print(round((returned - fires) * 1000))
                """
            let run = try await shell(
                """
                python3 -c \(quoted(script)) \(setup.path(target.path)) > \(quoted(outputs + "/python")) & pid=$!
                # Python may take more than a second to start on a loaded machine: look until the open waits.
                for i in $(seq 200); do
                    wchan=$(cat /proc/$pid/wchan 2>/dev/null)
                    [ "$wchan" = request_wait_answer ] && break
                    sleep 0.05
                done
                echo "$wchan"
                echo "$(ls /proc/\(daemon)/task | wc -l)"
                start=$(date +%s%N)
                timeout 10 stat -c %s \(setup.path(documents[5].path)) >/dev/null
                end=$(date +%s%N)
                echo "$(( (end - start) / 1000000 ))"
                wait $pid
                cat \(quoted(outputs + "/python"))
                """, timeout: 40)
            let lines = run.lines
            print(
                "SIGALRM to one of \(Self.readers + 1) openers waiting for a slot: \(lines); daemon threads before "
                    + "\(threadsBefore)")
            try #require(lines.count == 5, "\(run.stdout) \(run.stderr)")
            #expect(lines[0] == "request_wait_answer", "the open waited in the kernel for the daemon's answer")
            let lookup = try #require(Int(lines[2]))
            #expect(lookup < 5_000, "a lookup took \(lookup) ms while \(Self.readers + 1) opens waited")
            #expect(lines[3] == String(cString: strerror(EINTR)), "the interrupted open: \(lines[3])")
            let elapsed = try #require(Int(lines[4]), "\(lines[4])")
            #expect(elapsed < 3_000, "the interrupted open returned \(elapsed) ms after SIGALRM")

            // The server answers after its stalls: every reader of the document gets its bytes.
            let expected = Array(repeating: target.sha, count: Self.readers)
            let hashes = try await MountHarness.settled(within: .seconds(60)) {
                (0..<Self.readers).map { reader in
                    (try? String(contentsOfFile: outputs + "/\(reader)", encoding: .utf8)) ?? ""
                }
            } until: {
                $0 == expected
            }
            #expect(hashes == expected)
            #expect(try await setup.status()["mounted"] as? Bool == true)
        }
    }

    /// A read waiting for bytes of a download stalled mid-body is a background READ (asynchronous reads), which the
    /// kernel never interrupts; a fatal signal still ends the reader at once (`timeout -s INT cat`: SIGINT without a
    /// handler), and the download goes on: a second reader of the document, waiting beside it, gets the server's bytes
    /// once the stall ends, and the reader's death cancelled nothing of it.
    @Test func aFatalSignalEndsAReaderOfAStalledDownloadAndTheOtherReaderGetsTheBytes() async throws {
        try await DaemonTests.with { setup in
            #expect(try await setup.mount().status == 0)
            let documents = try await ReliabilityTests.documents(setup)
            let target = try #require(
                try documents.max { try setup.document($0.path).size < setup.document($1.path).size })
            try #require(try setup.document(target.path).size > 256 << 10)
            setup.sim.faults.add(
                Fault(
                    action: .stallAfterBytes(64 << 10, milliseconds: 15_000),
                    pathContains: try setup.document(target.path).id, remaining: 1))
            let outputs = try temporaryDirectory("campusfs-interrupt")
            defer { try? FileManager.default.removeItem(atPath: outputs) }
            let run = try await shell(
                """
                sha256sum < \(setup.path(target.path)) > \(quoted(outputs + "/patient")) & patient=$!
                sleep 0.5
                start=$(date +%s%N)
                timeout -s INT 1.5 cat \(setup.path(target.path)) > /dev/null
                status=$?
                end=$(date +%s%N)
                echo "$status $(( (end - start) / 1000000 ))"
                wait $patient
                cat \(quoted(outputs + "/patient"))
                """, timeout: 60)
            print("SIGINT to cat reading a stalled download: \(run.lines)")
            try #require(run.lines.count == 2, "\(run.stdout) \(run.stderr)")
            let fields = run.lines[0].split(separator: " ")
            #expect(fields.first == "124", "cat was ended by the signal, not by the bytes")
            let elapsed = try #require(Int(fields.last ?? ""))
            #expect(elapsed < 6_000, "cat ended \(elapsed) ms after it started, the signal came at 1.5 s")
            #expect(run.lines[1] + "\n" == target.sha, "the other reader got the server's bytes")
        }
    }

    private static func threads(of pid: Int) throws -> Int {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").count
    }
}
