import Foundation
import TestSupport
import Testing

@testable import StudIPSimulator

/// Issue 32, "Done when": writing into the mount as a student does it, with real programs (`cp`, `gio save`,
/// LibreOffice, vim) on a daemon mount with `uploads = true`, checked on the other side as the lecturer (and another
/// student) see the course on the simulator through its JSON:API. What the programs do on disk is in
/// Tests/Fixtures/editor-saves/README.md; the rules they are reconciled by in docs/writing.md.
///
/// The daemon and the programs run as an ordinary user (65534, as a student is no root), who alone can reach the
/// mount (no `allow_other`); the test itself checks the simulator's side as root (docs/testing.md, "Writing").
@Suite(.serialized)
struct WritingMountTests {
    static let course = "SS 2022/12345 Test Lehrveranstaltung"
    /// "Allgemeiner Dateiordner": students may upload (fixtures-5.0.7-writes step 1), empty at the start.
    static let general = course + "/Allgemeiner Dateiordner"
    static let generalID = "ca002fbae136b07e4df29e0136e3bd32"
    static let homework = course + "/Hausaufgaben"
    static let homeworkID = "ad8dc6a6162fb0fe022af4a62a15e309"
    static let keys = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Fixtures/editor-saves/keys.py").path

    /// A document as a user sees it on Stud.IP: its id, name, and the SHA-256 of its content.
    struct Remote: Hashable, CustomStringConvertible {
        var id: String
        var name: String
        var sha256: String

        var description: String { "\(name) (\(id), \(sha256.prefix(12)))" }
    }

    /// `fixtures-5.0.7-writes` with a second student in the demo course (the capture had one; H-B's
    /// `StudIPKitTests/WriteTests` adds the same one).
    static func writesWithSecondStudent() throws -> University {
        var university = try Dataset.fixtures507Writes.load()
        let second = User(
            id: "e7a0a84b161f3e8c09b4a0a2e8a58148", username: "test_autor2", password: "testing",
            givenName: "Zweiter", familyName: "Student", perms: "autor", email: "autor2@example.org")
        university.add(second)
        var course = try #require(university.courses["a07535cf2f8a72df33c12ddfa4b53dde"])
        course.members.append(Membership(userID: second.id, permission: "autor", mkdate: 1_795_850_000))
        university.add(course)
        return university
    }

    /// test_autor's daemon mount of the write dataset with `uploads = true`, and a local directory for the files a
    /// test copies in.
    static func withWritingMount(_ body: (inout DaemonTests.Setup, String) async throws -> Void) async throws {
        let configuration = SimulatorConfiguration(dataset: .custom(try writesWithSecondStudent()), flavour: .v50)
        try await DaemonTests.with(configuration) { setup in
            try setup.configure("uploads = true")
            try await setup.cli.runAsOrdinaryUser(student)
            try #require(try await shell("chown \(student):\(student) \(quoted(setup.mountpoint))").status == 0)
            let mounted = try await setup.mount()
            try #require(mounted.status == 0, "\(mounted.stderr)")
            let local = try temporaryDirectory("campusfs-writing")
            defer { try? FileManager.default.removeItem(atPath: local) }
            // The student's own files; the keys script where they can read it (the checkout may be root's alone).
            try FileManager.default.copyItem(atPath: keys, toPath: local + "/keys.py")
            try #require(try await shell("chown -R \(student):\(student) \(quoted(local))").status == 0)
            try await body(&setup, local)
        }
    }

    /// The ordinary user the daemon and the student's programs run as.
    static let student: uid_t = 65534

    /// Runs `command` as the student, in the daemon's environment: the only user who can reach the mount.
    static func student(_ command: String, _ setup: DaemonTests.Setup, timeout: Int = 30) async throws
        -> CommandResult
    {
        try await shell(setup.cli.asUser(command), timeout: timeout)
    }

    /// The documents of `folderID` as `user` sees them on the simulator, or nil when the listing is refused (403).
    static func documents(inFolder folderID: String, as user: String, _ sim: Simulator) async throws -> [Remote]? {
        let script = """
            import base64, hashlib, json, sys, urllib.error, urllib.request
            base, folder, user = sys.argv[1], sys.argv[2], sys.argv[3]
            auth = "Basic " + base64.b64encode((user + ":testing").encode()).decode()
            def get(path):
                request = urllib.request.Request(base + "/jsonapi.php/v1/" + path, headers={"Authorization": auth})
                return urllib.request.urlopen(request, timeout=20).read()
            try:
                listing = json.loads(get("folders/%s/file-refs?page[limit]=1000" % folder))
            except urllib.error.HTTPError as error:
                print(json.dumps(error.code))
                sys.exit(0)
            print(json.dumps([[ref["id"], ref["attributes"]["name"],
                               hashlib.sha256(get("file-refs/%s/content" % ref["id"])).hexdigest()]
                              for ref in listing["data"]]))
            """
        let result = try await shell(
            "python3 -c \(quoted(script)) \(quoted(sim.baseURL)) \(folderID) \(user)", timeout: 30)
        let answer = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8), options: .fragmentsAllowed)
        if let status = answer as? Int {
            #expect(status == 403, "listing \(folderID) as \(user)")
            return nil
        }
        let rows = try #require(answer as? [[String]], "\(result.stdout) \(result.stderr)")
        return rows.map { Remote(id: $0[0], name: $0[1], sha256: $0[2]) }
    }

    /// What the lecturer sees in `folderID` once it satisfies `done`, or after 30 s what they saw last: the
    /// daemon settles a closed file for 2 s before it sends it (docs/writing.md, "Local first").
    static func lecturerSees(
        inFolder folderID: String, _ sim: Simulator, within limit: Duration = .seconds(30),
        until done: ([Remote]) -> Bool
    ) async throws -> [Remote] {
        try await MountHarness.settled(
            within: limit, { try await documents(inFolder: folderID, as: "test_dozent", sim) ?? [] }, until: done)
    }

    /// Writes `count` bytes that differ for each `seed` to `path`; returns their SHA-256.
    @discardableResult
    static func write(_ count: Int, seed: UInt64, to path: String) throws -> String {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        let bytes = (0..<count).map { _ -> UInt8 in
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt8(truncatingIfNeeded: state)
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return try sha256(path)
    }

    /// The student copies 20,000 bytes in as "Entwurf.txt" (a file in `local`, kept for the next save), the lecturer
    /// sees the upload, and the mount shows the store's document again: where the conflict tests start.
    static func uploadedEntwurf(_ setup: DaemonTests.Setup, _ local: String) async throws -> (
        file: String, inMount: String, uploaded: Remote
    ) {
        let file = local + "/Entwurf.txt"
        try write(20_000, seed: 8, to: file)
        let inMount = setup.path(general + "/Entwurf.txt")
        try #require(try await student("cp \(quoted(file)) \(inMount)", setup).status == 0)
        let uploaded = try await lecturerSees(inFolder: generalID, setup.sim) { !$0.isEmpty }
        try await waitUntilStored(general + "/Entwurf.txt", setup)
        return (file, inMount, try #require(uploaded.first))
    }

    /// The student saves 25,000 new bytes over "Entwurf.txt" (document `id`, which the lecturer changed to bytes
    /// `lecturers`): Stud.IP ends with both, the lecturer's under the name and the student's as "(yours)". Returns
    /// the student's bytes' SHA-256.
    @discardableResult
    static func savedOverLecturersVersion(
        _ id: String, lecturers: String, _ file: String, _ inMount: String, _ setup: DaemonTests.Setup
    ) async throws -> String {
        let mine = try write(25_000, seed: 9, to: file)
        try #require(try await student("cp \(quoted(file)) \(inMount)", setup).status == 0)
        let seen = try await lecturerSees(inFolder: generalID, setup.sim) { $0.count == 2 }
        #expect(
            Set(seen) == [
                Remote(id: id, name: "Entwurf.txt", sha256: lecturers),
                Remote(id: seen.first { $0.id != id }?.id ?? "", name: "Entwurf (yours).txt", sha256: mine),
            ], "\(seen)")
        return mine
    }

    static func sha256(_ path: String) throws -> String {
        let result = try blockingShell("sha256sum < \(quoted(path))")
        return String(result.stdout.prefix(64))
    }

    /// Waits until `relative` is the store's document again, no longer the draft that was uploaded (its
    /// `user.campusfs.state` one of the content cache's, not a draft's): once the outbox confirmed an upload, the
    /// draft stays until the course was refreshed, and a save in between fails (`EROFS`, `ENOENT`) or becomes a
    /// second document `name[2].ext` (a bug, reported with issue 32; a save must not depend on this wait).
    static func waitUntilStored(_ relative: String, _ setup: DaemonTests.Setup) async throws {
        let state = try await MountHarness.settled {
            try await student("getfattr --only-values -n user.campusfs.state \(setup.path(relative))", setup).stdout
        } until: {
            ["remote", "downloading", "cached", "stale"].contains($0)
        }
        #expect(["remote", "downloading", "cached", "stale"].contains(state), "\(relative): \(state)")
    }

    static func sha256(of text: String) async throws -> String {
        let result = try await shell("printf %s \(quoted(text)) | sha256sum")
        return String(result.stdout.prefix(64))
    }

    /// The uploads (new documents and new versions) the simulator was sent, by its statistics.
    static func uploadRequests(_ sim: Simulator) -> (new: Int, versions: Int) {
        let routes = sim.statistics.snapshot().routes
        return (routes["jsonapi POST folders/{id}/file-refs"] ?? 0, routes["jsonapi POST file-refs/{id}/content"] ?? 0)
    }

    // MARK: Copying in

    /// `cp` into a folder the student may write to: after the settle time the lecturer sees one document of
    /// that name with the same bytes.
    @Test func aCopyIntoAWritableFolderReachesTheLecturer() async throws {
        try await Self.withWritingMount { setup, local in
            let file = local + "/Protokoll Sitzung 3.pdf"
            let sha = try Self.write(300_000, seed: 1, to: file)
            let copy = try await Self.student("cp \(quoted(file)) \(setup.path(Self.general))/", setup)
            try #require(copy.status == 0, "\(copy.stderr)")
            let seen = try await Self.lecturerSees(inFolder: Self.generalID, setup.sim) { !$0.isEmpty }
            #expect(seen.map(\.name) == ["Protokoll Sitzung 3.pdf"])
            #expect(seen.map(\.sha256) == [sha])
            #expect(Self.uploadRequests(setup.sim).new == 1)
        }
    }

    /// `cp` into the homework folder: handed in (the lecturer sees it with the same bytes), another student sees
    /// neither the folder's documents nor the submission, and the student still sees their copy in the mount,
    /// marked handed in, also after a refresh.
    @Test func homeworkIsHandedInAndStaysVisibleToTheStudentAlone() async throws {
        try await Self.withWritingMount { setup, local in
            let file = local + "/Abgabe Blatt 1.pdf"
            let sha = try Self.write(120_000, seed: 2, to: file)
            let copy = try await Self.student("cp \(quoted(file)) \(setup.path(Self.homework))/", setup)
            try #require(copy.status == 0, "\(copy.stderr)")
            let seen = try await Self.lecturerSees(inFolder: Self.homeworkID, setup.sim) { !$0.isEmpty }
            #expect(seen.map(\.name) == ["Abgabe Blatt 1.pdf"])
            #expect(seen.map(\.sha256) == [sha])
            #expect(try await Self.documents(inFolder: Self.homeworkID, as: "test_autor2", setup.sim) == nil)
            if let submission = seen.first {
                let other = try await shell(
                    "curl -s -o /dev/null -w '%{http_code}' -u test_autor2:testing "
                        + "\(setup.sim.baseURL)/jsonapi.php/v1/file-refs/\(submission.id)/content")
                #expect(other.stdout == "403")
            }

            let handedIn = setup.path(Self.homework + "/Abgabe Blatt 1.pdf")
            let script = """
                ls \(setup.path(Self.homework))
                getfattr --only-values -n user.campusfs.state \(handedIn); echo
                sha256sum < \(handedIn) | cut -c1-64
                """
            let student = try await Self.student(script, setup)
            #expect(student.lines == ["Abgabe Blatt 1.pdf", "handed-in", sha], "\(student.stderr)")
            let refresh = try await setup.campusfs(["refresh"])
            #expect(refresh.status == 0, "\(refresh.stderr)")
            let afterRefresh = try await Self.student(script, setup)
            #expect(afterRefresh.lines == ["Abgabe Blatt 1.pdf", "handed-in", sha], "\(afterRefresh.stderr)")
            #expect(Self.uploadRequests(setup.sim).new == 1, "handed in once")
        }
    }

    /// Saving over one's own document, in place (`cp` opens it with `O_TRUNC`) and atomically (`gio save` writes
    /// `.goutputstream-*` and renames it over): each is one new version of the same document, never a second one.
    @Test func savingOverOnesOwnDocumentIsANewVersion() async throws {
        try await Self.withWritingMount { setup, local in
            let file = local + "/Gruppenarbeit.txt"
            let first = try Self.write(40_000, seed: 3, to: file)
            let inMount = setup.path(Self.general + "/Gruppenarbeit.txt")
            try #require(try await Self.student("cp \(quoted(file)) \(inMount)", setup).status == 0)
            let uploaded = try await Self.lecturerSees(inFolder: Self.generalID, setup.sim) { !$0.isEmpty }
            try await Self.waitUntilStored(Self.general + "/Gruppenarbeit.txt", setup)
            #expect(uploaded.map(\.sha256) == [first])
            let id = try #require(uploaded.first?.id)

            let second = try Self.write(50_000, seed: 4, to: file)
            let overwrite = try await Self.student("cp \(quoted(file)) \(inMount)", setup)
            try #require(overwrite.status == 0, "\(overwrite.stderr)")
            let afterCopy = try await Self.lecturerSees(inFolder: Self.generalID, setup.sim) {
                $0.map(\.sha256) == [second]
            }
            try await Self.waitUntilStored(Self.general + "/Gruppenarbeit.txt", setup)
            #expect(afterCopy == [Remote(id: id, name: "Gruppenarbeit.txt", sha256: second)])

            let third = try Self.write(45_000, seed: 5, to: file)
            let save = try await Self.student("gio save \(inMount) < \(quoted(file))", setup)
            try #require(save.status == 0, "\(save.stderr)")
            let afterSave = try await Self.lecturerSees(inFolder: Self.generalID, setup.sim) {
                $0.map(\.sha256) == [third]
            }
            #expect(afterSave == [Remote(id: id, name: "Gruppenarbeit.txt", sha256: third)])
            let requests = Self.uploadRequests(setup.sim)
            #expect(requests.new == 1 && requests.versions == 2, "\(requests)")
        }
    }

    // MARK: Editors

    /// LibreOffice converting into the mount (a new PDF, then over it), and nano and vim editing a text file there,
    /// with their lock, swap, backup and temporary files: Stud.IP gets the two documents and their new versions, and
    /// never one of the temporary files, not even for a moment (the simulator counts every upload).
    @Test func libreOfficeAndVimLeaveNoTemporaryFileOnStudIP() async throws {
        try await Self.withWritingMount { setup, local in
            let folder = setup.path(Self.general)
            let notes = local + "/notes.txt"
            try Data("Notes of the seminar, first draft.\n".utf8).write(to: URL(fileURLWithPath: notes))
            // LibreOffice's profile in a home of its own; its first start makes it (a few seconds).
            let office =
                "HOME=\(quoted(local + "/home")) soffice --headless --convert-to pdf --outdir \(folder) \(quoted(notes))"
            let converted = try await Self.student(office, setup, timeout: 120)
            try #require(converted.status == 0, "\(converted.stdout) \(converted.stderr)")
            let pdf = try await Self.lecturerSees(inFolder: Self.generalID, setup.sim) { !$0.isEmpty }
            try await Self.waitUntilStored(Self.general + "/notes.pdf", setup)
            #expect(pdf.map(\.name) == ["notes.pdf"])

            try Data("Notes of the seminar, second draft.\n".utf8).write(to: URL(fileURLWithPath: notes))
            let again = try await Self.student(office, setup, timeout: 120)
            try #require(again.status == 0, "\(again.stdout) \(again.stderr)")
            let pdfInMount = try await Self.student("sha256sum < \(folder)/notes.pdf | cut -c1-64", setup)
            let newPDF = try await Self.lecturerSees(inFolder: Self.generalID, setup.sim) {
                $0.map(\.sha256) == [pdfInMount.stdout.trimmingCharacters(in: .whitespacesAndNewlines)]
            }
            #expect(newPDF.map(\.id) == pdf.map(\.id), "a new version of the same document")

            // nano (Debian's nanorc sets `locking`): its lock file `.notes.txt.swp` is written and closed at the
            // start and stays for the whole edit, here longer than the settle time (the empty keys wait), so only
            // the temporary-name rule keeps it local. It saves in place (O_TRUNC): a new version.
            try #require(try await Self.student("cp \(quoted(notes)) \(folder)/", setup).status == 0)
            _ = try await Self.lecturerSees(inFolder: Self.generalID, setup.sim) { $0.count == 2 }
            try await Self.waitUntilStored(Self.general + "/notes.txt", setup)
            let nano = try await Self.student(
                "cd \(folder) && HOME=\(quoted(local + "/home")) python3 \(quoted(local + "/keys.py")) "
                    + #"'nano: ||||||||^O|\r|^X' nano notes.txt"#, setup, timeout: 60)
            try #require(nano.status == 0, "\(nano.stdout) \(nano.stderr)")
            let nanoSHA = try await Self.sha256(of: "nano: Notes of the seminar, second draft.\n")
            _ = try await Self.lecturerSees(inFolder: Self.generalID, setup.sim) {
                $0.contains { $0.sha256 == nanoSHA }
            }
            try await Self.waitUntilStored(Self.general + "/notes.txt", setup)

            // vim's default save (backupcopy=auto: rename notes.txt to notes.txt~, write a new notes.txt, delete the
            // backup), which it skips under /tmp unless backupskip is emptied (Tests/Fixtures/editor-saves).
            let vim = try await Self.student(
                "cd \(folder) && HOME=\(quoted(local + "/home")) python3 \(quoted(local + "/keys.py")) "
                    + #"'Goadded in vim\e|:wq\r' vim -c 'set backupskip=' notes.txt"#, setup, timeout: 60)
            try #require(vim.status == 0, "\(vim.stdout) \(vim.stderr)")
            let expected = "nano: Notes of the seminar, second draft.\nadded in vim\n"
            let edited = try await Self.student("cat \(folder)/notes.txt", setup)
            #expect(edited.stdout == expected, "\(edited.stderr)")
            let textSHA = try await Self.sha256(of: expected)
            let final = try await Self.lecturerSees(inFolder: Self.generalID, setup.sim) {
                $0.contains { $0.sha256 == textSHA }
            }
            #expect(Set(final.map(\.name)) == ["notes.pdf", "notes.txt"], "\(final)")
            // Give a late temporary file its settle time, then count what was ever sent, and what the outbox holds
            // (a temporary file it took and Stud.IP or the client refused would wait there as failed).
            try await Task.sleep(for: .seconds(3))
            let requests = Self.uploadRequests(setup.sim)
            #expect(requests.new == 2 && requests.versions == 3, "\(requests)")
            let uploads = try await setup.status()["uploads"] as? [String: Any]
            #expect(uploads?["pending"] as? Int == 0 && uploads?["failed"] as? Int == 0, "\(uploads ?? [:])")
            #expect(try await Self.lecturerSees(inFolder: Self.generalID, setup.sim) { _ in true }.count == 2)
            let left = try await Self.student("ls -A \(folder)", setup)
            #expect(left.lines == ["notes.pdf", "notes.txt"], "\(left.stderr)")
        }
    }

    // MARK: Nothing lost, nothing twice

    /// kill -9 of the daemon while its upload is with Stud.IP (the simulator holds the request 3 s before it
    /// stores the document and answers), a restart after Stud.IP stored it all the same: the restarted daemon finds
    /// the document on Stud.IP and does not send it again — exactly one document, the right bytes.
    @Test func aDaemonKilledDuringAnUploadUploadsExactlyOnce() async throws {
        try await Self.withWritingMount { setup, local in
            let file = local + "/Bericht.pdf"
            let sha = try Self.write(2_000_000, seed: 6, to: file)
            let stall = try await shell(
                "curl -sf -X POST -d '{\"path\": \"file-refs\", \"method\": \"POST\", \"stall_ms\": 3000, "
                    + "\"count\": 1}' \(setup.sim.controlURL)/faults")
            try #require(stall.status == 0, "\(stall.stderr)")
            try #require(try await Self.student("cp \(quoted(file)) \(setup.path(Self.general))/", setup).status == 0)
            let sending = try await MountHarness.settled {
                setup.sim.statistics.snapshot().inFlight
            } until: {
                $0 > 0
            }
            try #require(sending > 0, "the upload should be held by the simulator")
            let pid = try #require(try await setup.status()["pid"] as? Int)
            kill(pid_t(pid), SIGKILL)
            for _ in 0..<100 where kill(pid_t(pid), 0) == 0 { try await Task.sleep(for: .milliseconds(50)) }
            // The simulator stores what it was sent although the client is gone, as a PHP request runs to its end.
            let stored = try await Self.lecturerSees(inFolder: Self.generalID, setup.sim, within: .seconds(10)) {
                !$0.isEmpty
            }
            #expect(stored.map(\.sha256) == [sha], "stored after the daemon was killed")
            _ = try await setup.campusfs(["unmount", setup.mountpoint], timeout: 20)

            let again = try await setup.mount()
            try #require(again.status == 0, "\(again.stderr)")
            let uploads = try await MountHarness.settled(within: .seconds(30)) {
                try await setup.status()["uploads"] as? [String: Any]
            } until: {
                ($0?["pending"] as? Int) == 0
            }
            #expect(uploads?["pending"] as? Int == 0 && uploads?["failed"] as? Int == 0, "\(uploads ?? [:])")
            let seen = try await Self.lecturerSees(inFolder: Self.generalID, setup.sim) { _ in true }
            #expect(seen.map(\.name) == ["Bericht.pdf"] && seen.map(\.sha256) == [sha], "\(seen)")
            #expect(Self.uploadRequests(setup.sim).new == 1, "sent once")
            let inMount = try await Self.student(
                "ls \(setup.path(Self.general)); sha256sum < \(setup.path(Self.general))/Bericht.pdf | cut -c1-64",
                setup)
            #expect(inMount.lines == ["Bericht.pdf", sha], "\(inMount.stderr)")
        }
    }

    /// kill -9 of the daemon while a program writes a file into the mount (a copy cut short): after the restart
    /// the file shows as failed, `campusfs status` counts it, and nothing reaches Stud.IP.
    @Test func aFileTornByKillingTheDaemonIsHeldBackAfterTheRestart() async throws {
        try await Self.withWritingMount { setup, local in
            let inMount = setup.path(Self.general + "/Teil.txt")
            let marker = local + "/written"
            // Half the file, flushed to the mount, then the program waits with the file open.
            let script =
                "import sys, time; f = open(sys.argv[1], 'w'); f.write('erste Haelfte\\n'); f.flush(); "
                + "open(sys.argv[2], 'w').close(); time.sleep(15)"
            let command = setup.cli.asUser(
                "timeout 20 python3 -c \(quoted(script)) \(inMount) \(quoted(marker))")
            let writer = Task { try await shell(command, timeout: 30) }
            let written = try await MountHarness.settled(within: .seconds(20)) {
                FileManager.default.fileExists(atPath: marker)
            } until: {
                $0
            }
            if !written {
                let result = try await writer.value
                Issue.record("the writer did not get its first half into the mount: \(result.stderr)")
                return
            }
            let pid = try #require(try await setup.status()["pid"] as? Int)
            kill(pid_t(pid), SIGKILL)
            for _ in 0..<100 where kill(pid_t(pid), 0) == 0 { try await Task.sleep(for: .milliseconds(50)) }
            _ = try await setup.campusfs(["unmount", setup.mountpoint], timeout: 20)
            _ = try await writer.value
            let again = try await setup.mount()
            try #require(again.status == 0, "\(again.stderr)")

            // Past the settle time: a torn draft would be in the outbox or on Stud.IP by now.
            try await Task.sleep(for: .seconds(4))
            let state = try await Self.student("getfattr --only-values -n user.campusfs.state \(inMount)", setup)
            #expect(state.stdout == "failed", "\(state.stderr)")
            let uploads = try await setup.status()["uploads"] as? [String: Any]
            #expect(uploads?["pending"] as? Int == 0 && uploads?["failed"] as? Int == 1, "\(uploads ?? [:])")
            #expect(Self.uploadRequests(setup.sim).new == 0, "the torn file was sent")
            #expect(try await Self.lecturerSees(inFolder: Self.generalID, setup.sim) { _ in true }.isEmpty)
        }
    }

    /// A copy made while Stud.IP is down stays in the outbox and is uploaded once the server is back, without a
    /// remount.
    @Test func aCopyWhileOfflineIsUploadedWhenTheServerReturns() async throws {
        try await Self.withWritingMount { setup, local in
            // The port the simulator found free, for the one that comes back.
            let port = try #require(URLComponents(string: setup.sim.baseURL)?.port)
            let file = local + "/Offline.txt"
            let sha = try Self.write(10_000, seed: 7, to: file)
            await setup.sim.stop()
            let copy = try await Self.student("cp \(quoted(file)) \(setup.path(Self.general))/", setup)
            try #require(copy.status == 0, "\(copy.stderr)")
            // The settle time and a first attempt that finds the server gone.
            let waiting = try await MountHarness.settled(within: .seconds(20)) {
                try await setup.status()["uploads"] as? [String: Any]
            } until: {
                ($0?["pending"] as? Int) == 1
            }
            #expect(waiting?["pending"] as? Int == 1, "\(waiting ?? [:])")
            try await Task.sleep(for: .seconds(3))

            setup.sim = try await Simulator.start(
                SimulatorConfiguration(dataset: .custom(try Self.writesWithSecondStudent()), flavour: .v50, port: port))
            let seen = try await Self.lecturerSees(inFolder: Self.generalID, setup.sim, within: .seconds(60)) {
                !$0.isEmpty
            }
            #expect(seen.map(\.name) == ["Offline.txt"] && seen.map(\.sha256) == [sha], "\(seen)")
        }
    }

    /// While Stud.IP is down, files waiting in the outbox are renamed and saved over (docs/writing.md, "Renaming or
    /// deleting a file in the outbox"): `mv` of a copied file, and vim's save (rename to `notes.txt~`, write a new
    /// `notes.txt`, delete the backup). Once the server is back: one document under the new name, one `notes.txt`
    /// with vim's bytes, uploaded once each and no new version, nothing of the old name or the backup.
    @Test func filesInTheOutboxWhileOfflineAreRenamedAndSavedOver() async throws {
        try await Self.withWritingMount { setup, local in
            let port = try #require(URLComponents(string: setup.sim.baseURL)?.port)
            let folder = setup.path(Self.general)
            let file = local + "/Kopie.txt"
            let sha = try Self.write(10_000, seed: 11, to: file)
            try Data("Notes of the seminar.\n".utf8).write(to: URL(fileURLWithPath: local + "/notes.txt"))
            try FileManager.default.createDirectory(atPath: local + "/home", withIntermediateDirectories: true)
            try #require(try await shell("chown -R \(Self.student) \(quoted(local))").status == 0)
            await setup.sim.stop()
            func pending(_ count: Int) async throws {
                let uploads = try await MountHarness.settled(within: .seconds(20)) {
                    try await setup.status()["uploads"] as? [String: Any]
                } until: {
                    ($0?["pending"] as? Int) == count
                }
                try #require(uploads?["pending"] as? Int == count, "\(uploads ?? [:])")
            }

            try #require(try await Self.student("cp \(quoted(file)) \(folder)/", setup).status == 0)
            try await pending(1)
            let moved = try await Self.student("mv \(folder)/Kopie.txt \(folder)/Endfassung.txt", setup)
            #expect(moved.status == 0, "\(moved.stderr)")
            try #require(try await Self.student("cp \(quoted(local))/notes.txt \(folder)/", setup).status == 0)
            try await pending(2)
            let vim = try await Self.student(
                "cd \(folder) && HOME=\(quoted(local + "/home")) python3 \(quoted(local + "/keys.py")) "
                    + #"'Goadded in vim\e|:wq\r' vim -c 'set backupskip=' notes.txt"#, setup, timeout: 60)
            try #require(vim.status == 0, "\(vim.stdout) \(vim.stderr)")
            let expected = "Notes of the seminar.\nadded in vim\n"
            #expect(try await Self.student("cat \(folder)/notes.txt", setup).stdout == expected)
            // Past the settle time: both wait in the outbox under the names the user gave them.
            try await Task.sleep(for: .seconds(3))
            try await pending(2)
            let listed = try await Self.student("ls -A \(folder)", setup)
            #expect(listed.lines == ["Endfassung.txt", "notes.txt"], "\(listed.stderr)")

            setup.sim = try await Simulator.start(
                SimulatorConfiguration(dataset: .custom(try Self.writesWithSecondStudent()), flavour: .v50, port: port))
            let notesSHA = try await Self.sha256(of: expected)
            let seen = try await Self.lecturerSees(inFolder: Self.generalID, setup.sim, within: .seconds(60)) {
                $0.count == 2
            }
            #expect(
                Set(seen.map { [$0.name, $0.sha256] }) == [["Endfassung.txt", sha], ["notes.txt", notesSHA]],
                "\(seen)")
            try await pending(0)
            #expect(Self.uploadRequests(setup.sim) == (new: 2, versions: 0), "\(Self.uploadRequests(setup.sim))")
        }
    }

    /// The lecturer changes the student's document on Stud.IP while the student saves over their copy: nothing
    /// is overwritten — the lecturer's version stays, the student's bytes are kept beside it as
    /// "<name> (yours).<ext>", on Stud.IP and in the student's mount.
    @Test func aConflictingLecturerChangeKeepsBoth() async throws {
        try await Self.withWritingMount { setup, local in
            let (file, inMount, uploaded) = try await Self.uploadedEntwurf(setup, local)
            let id = uploaded.id

            let change = try await shell(
                "curl -sf -X PATCH -d '{\"text\": \"Fassung der Dozentin.\\n\"}' "
                    + "\(setup.sim.controlURL)/documents/\(id)")
            try #require(change.status == 0, "\(change.stderr)")
            let lecturers = try await shell("printf 'Fassung der Dozentin.\\n' | sha256sum | cut -c1-64")
                .stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let mine = try await Self.savedOverLecturersVersion(id, lecturers: lecturers, file, inMount, setup)
            // The student's mount shows both as Stud.IP has them once it refreshed: theirs is not laid over the
            // lecturer's.
            let refresh = try await setup.campusfs(["refresh"])
            #expect(refresh.status == 0, "\(refresh.stderr)")
            let mount = try await Self.student(
                "cd \(setup.path(Self.general)) && LC_ALL=C ls && sha256sum Entwurf.txt 'Entwurf (yours).txt' | cut -c1-64",
                setup)
            #expect(mount.lines == ["Entwurf (yours).txt", "Entwurf.txt", lecturers, mine], "\(mount.stderr)")
        }
    }

    /// The lecturer replaces the student's document through JSON:API at the same size after the student read it
    /// (fixtures-5.0.7-more, Part 2, v3: file id and size stay, only the content's ETag changes); the student's save
    /// over it is kept beside it as "(yours)", found by the ETag the content cache holds for what the student read.
    @Test func aSameSizeLecturerReplacementThroughJSONAPIKeepsBoth() async throws {
        try await Self.withWritingMount { setup, local in
            let (file, inMount, uploaded) = try await Self.uploadedEntwurf(setup, local)
            let id = uploaded.id
            // The student reads it: the content cache holds it with its ETag.
            try #require(try await Self.student("cat \(inMount) >/dev/null", setup).status == 0)

            let change = try await shell(
                "curl -sf -X PATCH -d '{\"size\": 20000, \"via\": \"jsonapi\"}' "
                    + "\(setup.sim.controlURL)/documents/\(id)")
            try #require(change.status == 0, "\(change.stderr)")
            let lecturers = try #require(
                try await Self.lecturerSees(inFolder: Self.generalID, setup.sim) {
                    $0.first?.sha256 != uploaded.sha256
                }
                .first?.sha256)
            #expect(lecturers != uploaded.sha256, "the lecturer's version did not change the bytes")
            try await Self.savedOverLecturersVersion(id, lecturers: lecturers, file, inMount, setup)
        }
    }

    /// Appending to a file right after its upload was confirmed (before the course's refresh replaced the draft, or
    /// while it does) is a new version of that document, never a second document `name[2].ext`, and never `EIO`.
    @Test func aSaveRightAfterTheUploadIsANewVersion() async throws {
        try await Self.withWritingMount { setup, local in
            let file = local + "/Liste.txt"
            try Data("erste Zeile\n".utf8).write(to: URL(fileURLWithPath: file))
            let inMount = setup.path(Self.general + "/Liste.txt")
            try #require(try await Self.student("cp \(quoted(file)) \(inMount)", setup).status == 0)
            // As soon as the lecturer can see it (a quick poll in the shell), one more line.
            let script = """
                for i in $(seq 200); do
                  curl -s -u test_dozent:testing \(setup.sim.baseURL)/jsonapi.php/v1/folders/\(Self.generalID)/file-refs \\
                    | grep -q Liste.txt && echo seen && break
                  sleep 0.02
                done
                echo 'zweite Zeile' >> \(inMount)
                """
            let append = try await Self.student(script, setup)
            #expect(append.status == 0, "\(append.stderr)")
            #expect(append.lines == ["seen"], "the append came before the lecturer saw the upload")
            let uploaded = try await Self.lecturerSees(inFolder: Self.generalID, setup.sim) { !$0.isEmpty }
            let expected = try await Self.sha256(of: "erste Zeile\nzweite Zeile\n")
            let seen = try await Self.lecturerSees(inFolder: Self.generalID, setup.sim) {
                $0.contains { $0.sha256 == expected }
            }
            #expect(seen == [Self.Remote(id: uploaded.first?.id ?? "", name: "Liste.txt", sha256: expected)], "\(seen)")
        }
    }
}
