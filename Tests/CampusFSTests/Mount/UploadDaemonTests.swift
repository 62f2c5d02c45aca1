import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// A daemon with `uploads = true` (issue 32): its outbox and workspace wired into the mount, `campusfs upload`,
/// `outbox` and `status` through its control socket. The daemon is a process of its own, every command runs
/// under `timeout`, and the test unmounts and kills only the daemon it started (``DaemonTests/Setup``).
@Suite(.serialized)
struct UploadDaemonTests {
    static let general = UploadCommandTests.general

    @Test func theMountsDaemonUploadsWhatIsSavedAndWhatUploadHandsItAndStatusCountsTheRest() async throws {
        try await DaemonTests.with(SimulatorConfiguration(dataset: .fixtures507Writes, flavour: .v50)) { setup in
            try setup.configure("url = \"\(setup.sim.baseURL)\"\nusername = \"test_autor\"\nuploads = true")
            let mounted = try await setup.mount()
            #expect(mounted.status == 0, "\(mounted.stderr)")

            // Saved into the mount: the workspace settles it and the daemon's outbox sends it.
            let folder = setup.mountpoint + "/" + Self.general
            let copied = try await shell(
                "printf 'im Zug geschrieben\\n' > \(quoted(folder + "/Mitschrift.txt"))", timeout: 20)
            #expect(copied.status == 0, "\(copied.stderr)")
            let sim = setup.sim
            let view = { try await UploadCommandTests.lecturersView(sim, folder: UploadCommandTests.generalID) }
            #expect(
                try await MountHarness.settled({ try await view()["Mitschrift.txt"]?.bytes }, until: { $0 != nil })
                    == "im Zug geschrieben\n")

            // Handed to the daemon: queued there, followed until Stud.IP confirmed it, then in the tree.
            let handout = setup.cli.home.appendingPathComponent("Handout.md")
            try Data("# Handout\n".utf8).write(to: handout)
            let upload = try await setup.campusfs(["upload", handout.path, folder], timeout: 60)
            #expect(upload.status == 0, "\(upload.stderr)")
            #expect(upload.stdout.contains("uploaded Handout.md to \(Self.general)"), "\(upload.stdout)")
            #expect(try await view()["Handout.md"]?.bytes == "# Handout\n")
            #expect(FileManager.default.fileExists(atPath: folder + "/Handout.md"), "the tree lists it at once")

            // Refused: kept, counted by `status`, listed and dropped through the daemon.
            let program = setup.cli.home.appendingPathComponent("Setup.exe")
            try Data("MZ".utf8).write(to: program)
            let refused = try await setup.campusfs(["upload", program.path, folder], timeout: 60)
            #expect(refused.status == 4, "\(refused.stderr)")
            let status = try await setup.campusfs(["status"], timeout: 20)
            #expect(status.stdout.contains("uploads:      1 upload failed: Setup.exe: "), "\(status.stdout)")
            let uploads = try #require(try await setup.status()["uploads"] as? [String: Any])
            #expect(uploads["failed"] as? Int == 1 && uploads["pending"] as? Int == 0, "\(uploads)")
            let listed = try await setup.campusfs(["outbox"], timeout: 20)
            let row = try #require(listed.lines.first?.split(separator: "\t").map(String.init), "\(listed.stdout)")
            #expect(row[1...3] == ["failed", "upload", "Setup.exe"], "\(row)")
            let discarded = try await setup.campusfs(["outbox", "discard", row[0], "--yes"], timeout: 20)
            #expect(discarded.status == 0, "\(discarded.stderr)")
            let after = try await setup.campusfs(["status"], timeout: 20)
            #expect(after.stdout.contains("uploads:      nothing waiting"), "\(after.stdout)")

            let unmounted = try await setup.campusfs(["unmount"], timeout: 30)
            #expect(unmounted.status == 0, "\(unmounted.stderr)")
        }
    }
}
