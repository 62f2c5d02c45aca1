import Foundation
import MetadataStore
import TestSupport
import Testing

@testable import StudIPSimulator

/// `campusfs mount`, `status`, `refresh` and `unmount` as a user runs them: the daemon is a separate process, every
/// client command runs under `timeout`, and every test unmounts and kills only the daemon it started.
@Suite(.serialized)
struct DaemonTests {
    static let course = "WS 2026-27/INF-101 Einführung in die Informatik"
    static let readme = course + "/README.txt"
    static let slides = course + "/Vorlesungsfolien/Kapitel 1 - Einleitung.pdf"
    static let dataFile = course + "/Übungsblätter/daten (groß).bin"

    /// A home, a mountpoint, and the simulator the daemon talks to.
    struct Setup {
        var cli: CLI
        var mountpoint: String
        var sim: Simulator

        func campusfs(_ arguments: [String], timeout: Double = 120) async throws -> CLI.Result {
            try await cli.run(arguments, timeout: timeout)
        }

        /// Mounts, and once mounted waits for a first mount's courses to fill in (issue 20: `campusfs mount`
        /// returns before), so a test finds the whole tree in the store, as after any later mount.
        func mount(_ extra: [String] = [], fillingIn: Bool = true) async throws -> CLI.Result {
            let result = try await campusfs(
                ["mount", mountpoint, "--server", sim.baseURL, "--username", "test_autor"] + extra)
            if result.status == 0, fillingIn { try await waitForTheFirstRefresh() }
            return result
        }

        /// Returns once the daemon runs no refresh (a first mount's refresh sets its progress before it returns).
        func waitForTheFirstRefresh() async throws {
            for _ in 0..<300 {
                let refreshing = try await status()["refreshing"]
                if refreshing == nil || refreshing is NSNull { return }
                try await Task.sleep(for: .milliseconds(100))
            }
            Issue.record("the first refresh did not end within 30 s")
        }

        func path(_ relative: String) -> String { quoted(mountpoint + "/" + relative) }

        /// `export` lines for a shell script whose `campusfs` commands should reach this home's profile and mount.
        var shellExports: String {
            cli.environment.map { "export \($0.key)=\(quoted($0.value)); " }.sorted().joined()
        }

        /// The first column of the first row `query` returns from the daemon's store, read with Python's sqlite3 beside
        /// the daemon (WAL allows it).
        func sqlite(_ query: String) async throws -> String {
            let script = "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])"
            return try await shell(
                "python3 -c \(quoted(script)) \(quoted(cli.database().path)) "
                    + quoted(query)
            ).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Writes `config.toml` with these lines in `[profiles.default]`.
        func configure(_ lines: String) throws {
            let config = cli.home.appendingPathComponent("config/campusfs")
            try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
            try Data("[profiles.default]\n\(lines)\n".utf8).write(to: config.appendingPathComponent("config.toml"))
        }

        /// The document at `relative`, from the daemon's store (WAL: readers beside the daemon are fine), after a
        /// look through the mount while mounted: a first mount stores a course's content when it is looked into.
        func document(_ relative: String) throws -> DocumentInfo {
            if isMounted(mountpoint) {
                #expect(
                    FileManager.default.fileExists(atPath: mountpoint + "/" + relative), "\(relative) is not mounted")
            }
            let store = try MetadataStore(path: cli.database().path)
            return try #require(try store.document(inode: try store.resolve(path: relative).inode))
        }

        func status() async throws -> [String: Any] {
            let result = try await campusfs(["status", "--json"], timeout: 20)
            return (try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]) ?? [:]
        }

        /// Unmounts whatever is left and kills the daemon if it is still there; asserts nothing stays mounted.
        func cleanUp() async throws {
            let pid = try await status()["pid"] as? Int
            _ = try? await campusfs(["unmount", mountpoint], timeout: 20)
            if isMounted(mountpoint) {
                _ = try await shell("fusermount3 -u -z \(quoted(mountpoint))")
            }
            if let pid { kill(pid_t(pid), SIGKILL) }
            #expect(!isMounted(mountpoint), "a mount was left behind at \(mountpoint)")
            rmdir(mountpoint)
            cli.removeHome()
        }
    }

    static func with(
        _ configuration: SimulatorConfiguration = SimulatorConfiguration(dataset: .fixtures507, flavour: .v55),
        password: String? = "testing", _ body: (inout Setup) async throws -> Void
    ) async throws {
        let sim = try await Simulator.start(configuration)
        var setup = Setup(
            cli: try CLI(password: password), mountpoint: try temporaryDirectory("campusfs-daemon"),
            sim: sim)
        do {
            try await body(&setup)
        } catch {
            try await setup.cleanUp()
            await setup.sim.stop()
            throw error
        }
        try await setup.cleanUp()
        await setup.sim.stop()
    }

    @Test func mountRefreshStatusUnmount() async throws {
        try await Self.with { setup in
            let mounted = try await setup.mount()
            #expect(mounted.status == 0, "\(mounted.stderr)")
            #expect(isMounted(setup.mountpoint))
            let empty = try await setup.campusfs(["status"], timeout: 20)
            #expect(
                empty.lines.contains { $0.hasPrefix("cache:        0 bytes of ") },
                "\(empty.stdout)")

            let find = try await shell("cd \(setup.path("")) && find . -mindepth 1 | cut -c3-")
            #expect(find.lines.sorted() == FixtureTreeTests.autorTree.sorted())

            let status = try await setup.status()
            #expect(status["mounted"] as? Bool == true)
            #expect(status["mountpoint"] as? String == setup.mountpoint)
            #expect(status["server"] as? String == "online")

            // Changes on the server reach the mount through `campusfs refresh`, although the kernel caches for a day.
            let readme = try setup.document(Self.readme)
            let renamed = try setup.document(Self.course + "/Übungsblätter/leer.txt")
            let deleted = try setup.document(Self.course + "/Übungsblätter/diagramm.png")
            let before = try await shell(
                "cat \(setup.path(Self.readme)); ls \(setup.path(Self.course)) "
                    + setup.path(Self.course + "/Übungsblätter"))
            #expect(before.status == 0)
            let control = setup.sim.controlURL
            let changes = try await shell(
                """
                curl -sf -X PATCH -d '{"text": "Version zwei.\\n"}' \(control)/documents/\(readme.id) >/dev/null &&
                curl -sf -X POST -d '{"folder_id": "\(readme.folderID)", "name": "Neu.txt", "text": "neu\\n"}' \
                  \(control)/documents >/dev/null &&
                curl -sf -X PATCH -d '{"name": "Umbenannt.txt"}' \(control)/documents/\(renamed.id) >/dev/null &&
                curl -sf -X DELETE \(control)/documents/\(deleted.id) >/dev/null
                """)
            #expect(changes.status == 0, "\(changes.stderr)")
            let refresh = try await setup.campusfs(["refresh", "--json"])
            #expect(refresh.status == 0, "\(refresh.stderr)")
            let outcome = try JSONSerialization.jsonObject(with: Data(refresh.stdout.utf8)) as? [String: Any]
            #expect(outcome?["new"] as? [String] == [Self.course + "/Neu.txt"])
            // A rename bumps the document's change date on Stud.IP, so the renamed one may count as changed too.
            #expect((outcome?["changed"] as? [String])?.contains(Self.readme) == true)
            #expect(outcome?["removed"] as? [String] == [Self.course + "/Übungsblätter/diagramm.png"])
            let moved = outcome?["moved"] as? [[String: String]]
            #expect(
                moved == [
                    [
                        "from": Self.course + "/Übungsblätter/leer.txt",
                        "to": Self.course + "/Übungsblätter/Umbenannt.txt",
                    ]
                ])

            let after = try await shell(
                "cat \(setup.path(Self.readme)); cat \(setup.path(Self.course + "/Neu.txt")); "
                    + "LC_ALL=C ls \(setup.path(Self.course + "/Übungsblätter"))")
            #expect(
                after.lines == [
                    "Version zwei.", "neu", "Umbenannt.txt", "daten (groß).bin", "Übungsblatt 1 – Lösungen.txt",
                ], "\(after.stderr)")
            let vanished = try await shell(
                "stat \(setup.path(Self.course + "/Übungsblätter/leer.txt")) || "
                    + "stat \(setup.path(Self.course + "/Übungsblätter/diagramm.png")) || echo gone")
            #expect(vanished.stdout == "gone\n", "renamed and deleted documents must vanish from the mount")

            let unmount = try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30)
            #expect(unmount.status == 0, "\(unmount.stderr)")
            #expect(!isMounted(setup.mountpoint))
            let gone = try await setup.status()
            #expect(gone["mounted"] as? Bool == false)
        }
    }

    /// Server gone, daemon restarted: the tree and the cached documents are there, an uncached document fails
    /// fast with ENETDOWN, and once the server is back it opens without a remount.
    @Test func offlineStartAndRecovery() async throws {
        let port = Int.random(in: 20_000..<30_000)
        try await Self.with(SimulatorConfiguration(dataset: .fixtures507, flavour: .v55, port: port)) { setup in
            #expect(try await setup.mount().status == 0)
            let slides = try setup.document(Self.slides)
            let cached = try await shell("sha256sum < \(setup.path(Self.readme))")
            #expect(cached.status == 0)
            #expect(try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30).status == 0)
            await setup.sim.stop()

            let mounted = try await setup.mount()
            #expect(mounted.status == 0, "mounting offline should work from the store: \(mounted.stderr)")
            let find = try await shell("cd \(setup.path("")) && find . -mindepth 1 | cut -c3-")
            #expect(find.lines.sorted() == FixtureTreeTests.autorTree.sorted())
            let again = try await shell("sha256sum < \(setup.path(Self.readme))")
            #expect(again.stdout == cached.stdout)
            let script = """
                import errno, os, sys, time
                start = time.monotonic()
                try:
                    os.close(os.open(sys.argv[1], os.O_RDONLY))
                    print("ok")
                except OSError as error:
                    print(errno.errorcode[error.errno])
                print(time.monotonic() - start < 5)
                """
            let offline = try await shell(
                "python3 -c \(quoted(script)) \(setup.path(Self.slides))", timeout: 20)
            #expect(offline.lines == ["ENETDOWN", "True"], "\(offline.stderr)")
            #expect(try await setup.status()["server"] as? String == "offline")
            let refresh = try await setup.campusfs(["refresh"], timeout: 30)
            #expect(refresh.status == 3, "\(refresh.stderr)")
            #expect(try await setup.status()["lastRefreshError"] as? String != nil)

            setup.sim = try await Simulator.start(
                SimulatorConfiguration(dataset: .fixtures507, flavour: .v55, port: port))
            let online = try await shell(
                "sha256sum < \(setup.path(Self.slides)); curl -sf \(setup.sim.controlURL)/documents/\(slides.id)/content "
                    + "| sha256sum")
            #expect(online.lines.count == 2 && online.lines[0] == online.lines[1], "\(online.stderr)")
            let recovered = try await setup.status()
            #expect(recovered["server"] as? String == "online")
            #expect(recovered["lastRefreshError"] as? String == nil, "a successful download ends \"failed since\"")
        }
    }

    @Test func mountFailuresSayWhatToDo() async throws {
        try await Self.with(password: "wrong") { setup in
            let missing = try await setup.campusfs([
                "mount", setup.mountpoint + "/nowhere", "--server", setup.sim.baseURL, "--username", "test_autor",
            ])
            #expect(missing.status == 1)
            #expect(missing.stderr.contains("does not exist"), "\(missing.stderr)")

            let login = try await setup.mount()
            #expect(login.status == 2, "\(login.stderr)")
            #expect(!isMounted(setup.mountpoint))

            setup.cli.environment["CAMPUSFS_PASSWORD"] = "testing"
            #expect(try await setup.mount().status == 0)
            let busy = try await setup.mount()
            #expect(busy.status == 1)
            #expect(busy.stderr.contains("already mounted"), "\(busy.stderr)")
        }
    }

    /// SIGTERM and SIGINT unmount cleanly although a process holds a document open; after `kill -9`,
    /// `campusfs unmount` detaches the dead mount and a new mount works.
    @Test(arguments: [SIGTERM, SIGINT])
    func aSignalUnmountsWithAFileHeldOpen(signal: Int32) async throws {
        try await Self.with { setup in
            #expect(try await setup.mount().status == 0)
            let pid = try #require(try await setup.status()["pid"] as? Int)
            let holderPID = try await MountHarness.background("exec 3<\(setup.path(Self.readme)); exec sleep 60")
            defer { kill(holderPID, SIGKILL) }
            try await Task.sleep(for: .milliseconds(200))
            let held = try await shell("ls -l /proc/\(holderPID)/fd/3")
            #expect(held.stdout.contains("README.txt"), "the holder should have the document open: \(held.stderr)")

            kill(pid_t(pid), signal)
            for _ in 0..<100 where isMounted(setup.mountpoint) || kill(pid_t(pid), 0) == 0 {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(!isMounted(setup.mountpoint), "signal \(signal) should unmount")
            #expect(kill(pid_t(pid), 0) != 0, "signal \(signal) should end the daemon")
            #expect(try await setup.mount().status == 0, "the mountpoint should be usable again")
        }
    }

    /// A daemon killed in the middle of a download leaves a partial file; the next mount never serves it as
    /// complete and reads the document correctly.
    @Test func aDaemonKilledDuringADownload() async throws {
        try await Self.with { setup in
            #expect(try await setup.mount().status == 0)
            let document = try setup.document(Self.dataFile)
            // About eight seconds for the whole document: the kill lands in the middle.
            _ = setup.sim.settings.update { $0.bandwidthBytesPerSecond = max(Int(document.size) / 8, 1) }
            let readerPID = try await MountHarness.background("exec cat \(setup.path(Self.dataFile))")
            defer { kill(readerPID, SIGKILL) }
            var started = false
            for _ in 0..<100 where !started {
                try await Task.sleep(for: .milliseconds(50))
                started = (setup.sim.statistics.snapshot().downloadsInProgress[document.id] ?? 0) > 0
            }
            #expect(started, "the download should be in progress")

            let killed = try #require(try await setup.status()["pid"] as? Int)
            kill(pid_t(killed), SIGKILL)
            try await Task.sleep(for: .milliseconds(200))
            #expect(setup.sim.statistics.snapshot().downloadsCompleted[document.id] == nil)
            let detach = try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30)
            #expect(detach.status == 0, "\(detach.stderr)")
            #expect(!isMounted(setup.mountpoint))

            _ = setup.sim.settings.update { $0.bandwidthBytesPerSecond = nil }
            #expect(try await setup.mount().status == 0)
            let bytes = try await shell(
                "sha256sum < \(setup.path(Self.dataFile)); curl -sf \(setup.sim.controlURL)/documents/\(document.id)/content "
                    + "| sha256sum", timeout: 60)
            #expect(bytes.lines.count == 2 && bytes.lines[0] == bytes.lines[1], "\(bytes.stderr)")
        }
    }

    @Test func unmountDetachesAKilledDaemon() async throws {
        try await Self.with { setup in
            #expect(try await setup.mount().status == 0)
            let killed = try #require(try await setup.status()["pid"] as? Int)
            kill(pid_t(killed), SIGKILL)
            try await Task.sleep(for: .milliseconds(200))
            #expect(isMounted(setup.mountpoint))
            let broken = try await shell("ls \(setup.path(""))")
            #expect(broken.status != 0, "a dead daemon's mount should fail, not hang")
            let status = try await setup.campusfs(["status"], timeout: 20)
            #expect(
                status.lines.first
                    == "profile \"default\": not mounted — its daemon is gone but left \(setup.mountpoint) behind "
                    + "(\"Transport endpoint is not connected\"); `campusfs unmount --profile default` clears it",
                "\(status.stdout)")
            #expect(try await setup.status()["deadMount"] as? String == setup.mountpoint)
            let detach = try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30)
            #expect(detach.status == 0, "\(detach.stderr)")
            #expect(!isMounted(setup.mountpoint))

            #expect(try await setup.mount().status == 0)
            let cat = try await shell("head -c 10 \(setup.path(Self.readme)) | wc -c")
            #expect(cat.stdout == "10\n")
        }
    }
    /// Issue 20: `campusfs mount` of an empty store returns once semesters and courses are stored; each course's
    /// content fills in behind it, a listing of a course not stored yet fetches that course first, and every course
    /// is fetched once: the first refresh asks for folders as often as a later full refresh does.
    @Test func aFirstMountReturnsBeforeItsCoursesWhichFillInBehindIt() async throws {
        try await Self.with { setup in
            // Every folder request waits 1.5 s: a mount that waited for its courses would take seconds longer.
            setup.sim.faults.add(Fault(action: .stall(milliseconds: 1500), pathContains: "folders"))
            let mounted = try await setup.mount(fillingIn: false)
            #expect(mounted.status == 0, "\(mounted.stderr)")
            let courses = Int(try await setup.sqlite("SELECT count(*) FROM course")) ?? 0
            let listed = Int(try await setup.sqlite("SELECT count(*) FROM course WHERE listed_at IS NOT NULL")) ?? -1
            #expect(courses >= 4 && listed == 0, "returned with \(courses) courses stored, \(listed) of them listed")
            let semesters = try await shell("ls \(quoted(setup.mountpoint))")
            #expect(semesters.lines.contains("WS 2026-27"), "\(semesters.stdout)")

            let course = try await shell("ls \(setup.path(Self.course))")
            #expect(course.status == 0 && course.lines.contains("README.txt"), "\(course.stdout)\(course.stderr)")

            try await setup.waitForTheFirstRefresh()
            let stored = Int(try await setup.sqlite("SELECT count(*) FROM course WHERE listed_at IS NOT NULL"))
            #expect(stored == courses, "every course is stored once the first refresh ended")
            let folderRequests = { (routes: [String: Int]) in
                routes.filter { $0.key.contains("folders") }.values.reduce(0, +)
            }
            let first = folderRequests(setup.sim.statistics.snapshot().routes)
            setup.sim.faults.clear()
            setup.sim.statistics.reset()
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            let again = folderRequests(setup.sim.statistics.snapshot().routes)
            #expect(first > 0 && first == again, "folder requests: \(first) in the first refresh, \(again) in the next")
        }
    }

    /// A first refresh cut short by `kill -9` loses nothing: the next mount (from the store) fetches a course the
    /// first one did not reach when it is looked into, instead of listing it empty.
    @Test func aCourseAKilledFirstMountDidNotReachIsFetchedWhenOpened() async throws {
        try await Self.with { setup in
            setup.sim.faults.add(Fault(action: .stall(milliseconds: 3000), pathContains: "folders"))
            #expect(try await setup.mount(fillingIn: false).status == 0)
            let pid = try #require(try await setup.status()["pid"] as? Int)
            kill(pid_t(pid), SIGKILL)
            _ = try await shell("fusermount3 -u -z \(quoted(setup.mountpoint))")
            let listed = try await setup.sqlite("SELECT count(*) FROM course WHERE listed_at IS NOT NULL")
            #expect(listed == "0", "killed before any course was stored")

            setup.sim.faults.clear()
            #expect(try await setup.mount(fillingIn: false).status == 0)
            let course = try await shell("ls \(setup.path(Self.course))")
            #expect(course.lines.contains("README.txt"), "\(course.stdout)\(course.stderr)")
        }
    }

    /// Issue 20 (after 14.4): a first mount returns once semesters and courses are stored, so a course that cannot
    /// be read shows when it is opened: its folder fails with EIO (the rest of the tree lists), the log and
    /// `status` name it, and the next look tries again — and lists it once the server answers.
    @Test func aFirstMountWithAnUnreadableCourseSaysSoWhenItIsOpened() async throws {
        try await Self.with { setup in
            let course = try #require(setup.sim.university.courses.values.first { $0.number == "INF-101" })
            setup.sim.faults.add(Fault(action: .status(404), pathContains: "courses/\(course.id)/folders"))
            let mounted = try await setup.mount(fillingIn: false)
            #expect(mounted.status == 0, "\(mounted.stderr)")
            #expect(isMounted(setup.mountpoint))
            let broken = try await shell("ls \(setup.path(Self.course))")
            #expect(
                broken.status != 0 && broken.stderr.contains("Input/output error"), "\(broken.stdout)\(broken.stderr)")
            let others = try await shell("find \(setup.path("")) -name README.txt")
            #expect(!others.lines.isEmpty, "the other courses list: \(others.stderr)")
            let failed = try await MountHarness.settled(
                { try await setup.status()["failedCourses"] as? [String] ?? [] }, until: { !$0.isEmpty })
            #expect(failed.count == 1 && failed.first?.hasPrefix("Einführung in die Informatik") == true, "\(failed)")
            let text = try await setup.campusfs(["status"], timeout: 20)
            #expect(text.stdout.contains("not read: Einführung in die Informatik: not found on Stud.IP"))
            let log = try String(
                contentsOf: setup.cli.home.appendingPathComponent("state/campusfs/default.log"), encoding: .utf8)
            #expect(log.contains("course not refreshed: Einführung in die Informatik"), "\(log)")

            setup.sim.faults.clear()
            let listing = try await shell("ls \(setup.path(Self.course))")
            #expect(
                listing.lines.contains("README.txt"), "the next look fetches it: \(listing.stdout)\(listing.stderr)")
        }
    }

    /// Issue 14.9: idle connections to the control socket do not each get a thread; once they go, it answers.
    @Test func idleControlConnectionsAreBounded() async throws {
        try await Self.with { setup in
            #expect(try await setup.mount().status == 0)
            let pid = try #require(try await setup.status()["pid"] as? Int)
            let threads = { () throws -> Int in
                try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task").count
            }
            let before = try threads()
            let socket = setup.cli.home.appendingPathComponent("run/campusfs/default.sock").path
            let holder = """
                import socket, sys, time
                held = []
                for _ in range(300):
                    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    client.setblocking(False)
                    try:
                        client.connect(sys.argv[1])
                    except BlockingIOError:
                        pass
                    held.append(client)
                time.sleep(60)
                """
            let holderPID = try await MountHarness.background(
                "exec python3 -c \(quoted(holder)) \(quoted(socket))")
            try await Task.sleep(for: .seconds(1))
            let during = try threads()
            kill(holderPID, SIGKILL)
            #expect(during - before <= 8, "\(before) threads before, \(during) with 300 idle connections")
            let status = try await setup.campusfs(["status"], timeout: 20)
            #expect(status.status == 0 && status.stdout.contains("mounted at"), "\(status.stdout) \(status.stderr)")
        }
    }

    /// `unmount` touches only its own profile's mount: from another home (same user, same profile name) it exits 1
    /// and leaves the mount alone, with or without the mountpoint, while the daemon runs and after `kill -9`; the
    /// profile's own `unmount` then detaches it.
    @Test func unmountLeavesOtherProfilesMountsAlone() async throws {
        try await Self.with { setup in
            #expect(try await setup.mount().status == 0)
            let other = try CLI()
            defer { other.removeHome() }
            for arguments in [["unmount"], ["unmount", setup.mountpoint]] {
                let refused = try await other.run(arguments, timeout: 30)
                #expect(refused.status == 1, "\(arguments): \(refused.stdout) \(refused.stderr)")
            }
            #expect(try await setup.status()["mounted"] as? Bool == true, "another home's unmount ended the mount")

            let killed = try #require(try await setup.status()["pid"] as? Int)
            kill(pid_t(killed), SIGKILL)
            try await Task.sleep(for: .milliseconds(200))
            for arguments in [["unmount"], ["unmount", setup.mountpoint]] {
                let refused = try await other.run(arguments, timeout: 30)
                #expect(refused.status == 1, "\(arguments): \(refused.stdout) \(refused.stderr)")
            }
            #expect(isMounted(setup.mountpoint), "another home's unmount detached a killed daemon's mount")
            let own = try await setup.campusfs(["unmount"], timeout: 30)
            #expect(own.status == 0, "\(own.stderr)")
            #expect(!isMounted(setup.mountpoint))
        }
    }

    /// Tags and pins are the user's data: they survive a remount, `kill -9` right after the write, and a rename
    /// plus move of the document on the server.
    @Test func tagsAndPinsSurviveRemountsCrashesAndServerSideMoves() async throws {
        try await Self.with { setup in
            #expect(try await setup.mount().status == 0)
            let slides = try setup.document(Self.slides)
            let sheets = try setup.document(Self.course + "/Übungsblätter/leer.txt")
            let write = try await shell(
                "setfattr -n user.xdg.tags -v 'exam,week 3' \(setup.path(Self.slides)) && "
                    + "setfattr -n user.campusfs.pinned -v 1 \(setup.path(Self.slides))")
            #expect(write.status == 0, "\(write.stderr)")
            func attributes(_ relative: String) async throws -> String {
                try await shell(
                    "getfattr --only-values -n user.xdg.tags \(setup.path(relative)); echo; "
                        + "getfattr --only-values -n user.campusfs.pinned \(setup.path(relative))"
                ).stdout
            }
            let expected = "exam,week 3\n1"

            let killed = try #require(try await setup.status()["pid"] as? Int)
            kill(pid_t(killed), SIGKILL)
            try await Task.sleep(for: .milliseconds(200))
            #expect(try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30).status == 0)
            #expect(try await setup.mount().status == 0)
            #expect(try await attributes(Self.slides) == expected, "after kill -9 and a new mount")

            #expect(try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30).status == 0)
            #expect(try await setup.mount().status == 0)
            #expect(try await attributes(Self.slides) == expected, "after unmount and mount")

            let move = try await shell(
                "curl -sf -X PATCH -d '{\"name\": \"Einleitung.pdf\", \"folder_id\": \"\(sheets.folderID)\"}' "
                    + "\(setup.sim.controlURL)/documents/\(slides.id) >/dev/null")
            #expect(move.status == 0, "\(move.stderr)")
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            let moved = Self.course + "/Übungsblätter/Einleitung.pdf"
            #expect(try await attributes(moved) == expected, "after a rename and move on the server")
            let old = try await shell("stat \(setup.path(Self.slides))")
            #expect(old.status != 0)
        }
    }
    /// `tag`, `tags`, `new`, `pin` and `unpin` through the mount while mounted, and on the store alone after.
    @Test func userStateCommandsMountedAndUnmounted() async throws {
        try await Self.with { setup in
            #expect(try await setup.mount().status == 0)
            let inMount = setup.mountpoint + "/" + Self.slides
            let tag = try await setup.campusfs(["tag", inMount, "+exam", "+week 3"])
            #expect(tag.stdout == Self.slides + ": exam, week 3\n", "\(tag.stderr)")
            let tags = "getfattr --only-values -n user.xdg.tags \(setup.path(Self.slides))"
            #expect(try await shell(tags).stdout == "exam,week 3")
            #expect(try await setup.campusfs(["tags"]).lines == ["exam (1)", "week 3 (1)"])
            #expect(try await setup.campusfs(["tags", "exam"]).lines == [Self.slides])
            // The tag view follows at once, through the daemon's mount.
            let view = try await shell(
                "ls \(setup.path("Tags")) && readlink \(setup.path("Tags/exam/Kapitel 1 - Einleitung.pdf"))")
            #expect(view.lines == ["exam", "week 3", "../../" + Self.slides], "\(view.stderr)")

            let folder = Self.course + "/Vorlesungsfolien"
            let pin = try await setup.campusfs(["pin", setup.mountpoint + "/" + folder], timeout: 60)
            #expect(pin.status == 0, "\(pin.stderr)")
            #expect(pin.stderr.hasSuffix(", done — 3 of 3 documents\n"), "\(pin.stderr)")
            let state = try await shell(
                "getfattr --only-values -n user.campusfs.state \(setup.path(folder + "/Kapitel 2 - Grundlagen.pdf"))")
            #expect(state.stdout == "cached")

            let readme = try setup.document(Self.readme)
            let add = try await shell(
                "curl -sf -X POST -d '{\"folder_id\": \"\(readme.folderID)\", \"name\": \"Neu.txt\", \"text\": \"neu\"}' "
                    + "\(setup.sim.controlURL)/documents >/dev/null")
            #expect(add.status == 0)
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            let new = try await setup.campusfs(["new"])
            #expect(new.lines.first?.hasPrefix("new\t") == true, "\(new.stdout)")
            #expect(new.lines.first?.hasSuffix("\t" + Self.course + "/Neu.txt") == true, "\(new.stdout)")

            #expect(try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30).status == 0)
            let untag = try await setup.campusfs(["tag", Self.slides, "-exam"])
            #expect(untag.stdout == Self.slides + ": week 3\n", "\(untag.stderr)")
            let unpin = try await setup.campusfs(["unpin", folder])
            #expect(unpin.status == 0, "\(unpin.stderr)")
            #expect(try await setup.mount().status == 0)
            #expect(try await shell(tags).stdout == "week 3")
            #expect(try await shell("ls \(setup.path("Tags"))").lines == ["week 3"], "untagged on the store alone")
            let pinned = try await shell("getfattr -n user.campusfs.pinned \(setup.path(folder))")
            #expect(pinned.stderr.contains("No such attribute"), "\(pinned.stderr)")
        }
    }
    /// Without `--profile`, a path inside a mount picks that mount's profile, and a lone mounted profile is the one
    /// meant; `--profile` still wins.
    @Test func commandsFindTheMountedProfile() async throws {
        try await Self.with { setup in
            let mounted = try await setup.mount(["--profile", "lab"])
            #expect(mounted.status == 0, "\(mounted.stderr)")
            let status = try await setup.campusfs(["status"], timeout: 20)
            #expect(
                status.stdout.hasPrefix("profile \"lab\": mounted at \(setup.mountpoint) "),
                "\(status.stdout)\(status.stderr)")
            let new = try await setup.campusfs(["new"])
            #expect(new.status == 0 && new.stderr.isEmpty, "\(new.stderr)")

            let inMount = setup.mountpoint + "/" + Self.course
            let ls = try await setup.campusfs(["ls", inMount])
            #expect(ls.status == 0, "\(ls.stderr)")
            #expect(ls.lines.contains("README.txt"), "\(ls.stdout)")
            let tree = try await setup.campusfs(["tree", "--paths", inMount + "/Vorlesungsfolien"])
            #expect(tree.status == 0, "\(tree.stderr)")
            #expect(tree.lines.contains("Kapitel 1 - Einleitung.pdf"), "\(tree.stdout)")

            let named = try await setup.campusfs(["status", "--profile", "default"], timeout: 20)
            #expect(!named.stdout.contains("mounted at"), "\(named.stdout)")
            #expect((named.stdout + named.stderr).contains("\"default\""), "\(named.stdout)\(named.stderr)")
        }
    }
    /// A mount of a profile that synced before refreshes everything at once, in the background: `status` is soon
    /// online and what changed on the server while nothing was mounted shows without `campusfs refresh`.
    @Test func aMountFromTheStoreRefreshesAtOnce() async throws {
        try await Self.with { setup in
            #expect(try await setup.mount().status == 0)
            let readme = try setup.document(Self.readme)
            #expect(try await setup.campusfs(["unmount"], timeout: 30).status == 0)
            let changes = try await shell(
                """
                curl -sf -X PATCH -d '{"name": "LIESMICH.txt"}' \(setup.sim.controlURL)/documents/\(readme.id) \
                  >/dev/null
                """)
            #expect(changes.status == 0, "\(changes.stderr)")

            #expect(try await setup.mount().status == 0)
            var server: String?
            var listing: [String] = []
            for _ in 0..<50 where server != "online" || !listing.contains("LIESMICH.txt") {
                try await Task.sleep(for: .milliseconds(200))
                server = try await setup.status()["server"] as? String
                listing = try await shell("ls \(setup.path(Self.course))").lines
            }
            #expect(server == "online", "status should know the server soon after mounting")
            #expect(listing.contains("LIESMICH.txt") && !listing.contains("README.txt"), "\(listing)")
        }
    }

    /// A server that stops accepting the login: opens of uncached documents fail with EACCES, `status` says
    /// "login needed", cached documents still read, and it all recovers at the next refresh once the server accepts
    /// again — opens do not send the refused login again (LoginTests).
    @Test func aRejectedLoginIsEACCESAndLoginNeeded() async throws {
        try await Self.with { setup in
            #expect(try await setup.mount().status == 0)
            let cached = try await shell("cat \(setup.path(Self.readme)) | wc -c")
            setup.sim.faults.add(Fault(action: .status(401)))
            #expect(try await MountHarness.openResult(setup.path(Self.slides)) == "EACCES")
            #expect(try await setup.status()["server"] as? String == "login needed")
            let again = try await shell("cat \(setup.path(Self.readme)) | wc -c")
            #expect(again.stdout == cached.stdout, "cached documents need no login")

            setup.sim.faults.clear()
            #expect(
                try await MountHarness.openResult(setup.path(Self.slides)) == "EACCES",
                "an open does not try the refused login again")
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            #expect(try await MountHarness.openResult(setup.path(Self.slides)) == "ok")
            #expect(try await setup.status()["server"] as? String == "online")
        }
    }

    /// One document the server fails on gives EIO; its neighbours read.
    @Test func oneBrokenDocumentIsEIOAndTheOthersRead() async throws {
        try await Self.with { setup in
            #expect(try await setup.mount().status == 0)
            let broken = try setup.document(Self.slides)
            setup.sim.faults.add(Fault(action: .status(500), pathContains: broken.id))
            let result = try await shell(
                "cat \(setup.path(Self.slides)) >/dev/null 2>&1; echo $?; "
                    + "cat \(setup.path(Self.course + "/Vorlesungsfolien/Kapitel 2 - Grundlagen.pdf")) | wc -c",
                timeout: 60)
            let good = try setup.document(Self.course + "/Vorlesungsfolien/Kapitel 2 - Grundlagen.pdf")
            #expect(result.lines == ["1", "\(good.size)"], "\(result.stderr)")
            #expect(try await MountHarness.openResult(setup.path(Self.slides), timeout: 60) == "EIO")
        }
    }
}
