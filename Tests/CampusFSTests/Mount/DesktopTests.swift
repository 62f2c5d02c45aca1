import Daemon
import Foundation
import Glibc
import SystemSupport
import TestSupport
import Testing

@testable import StudIPSimulator

/// Issue 19: the daemon under systemd (`Type=notify`) — READY=1 once the mount answers, STATUS= as its state
/// changes, WATCHDOG=1, STOPPING=1 before it unmounts — and a restart after a crash that replaces the dead mount.
/// The service manager is a datagram socket of the test's own, as systemd's is (`Tests/Scripts/install-smoke`
/// starts the installed unit under a real `systemd --user`).
@Suite(.serialized)
struct ServiceManagerTests {
    @Test func readyStatusWatchdogAndStoppingReachTheServiceManager() async throws {
        let port = Int.random(in: 20_000..<30_000)
        try await DaemonTests.with(SimulatorConfiguration(dataset: .fixtures507, flavour: .v55, port: port)) { setup in
            let manager = try NotifyListener()
            var cli = setup.cli
            cli.environment["NOTIFY_SOCKET"] = manager.path
            cli.environment["WATCHDOG_USEC"] = "400000"
            let daemon = try cli.launch([
                "mount", setup.mountpoint, "--foreground", "--server", setup.sim.baseURL, "--username", "test_autor",
            ])
            defer {
                daemon.kill(SIGKILL)
                _ = daemon.reap()
            }

            // READY=1 is the first thing the daemon says, and when it arrives the mount answers.
            let ready = try #require(await manager.first(timeout: 120) { _ in true }, "nothing said within 120 s")
            let listed = (try? FileManager.default.contentsOfDirectory(atPath: setup.mountpoint)) ?? []
            #expect(ready.hasPrefix("READY=1\n"), "\(ready)")
            #expect(listed.contains("WS 2026-27"), "READY=1 came before the mount answered: \(listed)")
            // A first mount is ready before its courses are stored: the status line counts them in.
            #expect(ready.contains("\nSTATUS=Online (JSON:API); refreshing: "), "\(ready)")
            let filled = await manager.first(timeout: 60) { $0.hasPrefix("STATUS=Online (JSON:API); last refresh ") }
            #expect(filled != nil, "no STATUS with the first refresh's result")

            // WATCHDOG_USEC=400000: a ping every 200 ms.
            let pings = await manager.collect(for: 1.5).filter { $0 == "WATCHDOG=1" }
            #expect(pings.count >= 3, "\(pings)")

            // An outage and the recovery show in the status line.
            await setup.sim.stop()
            #expect(try await setup.campusfs(["refresh"], timeout: 30).status == 3)
            let offline = await manager.first(timeout: 10) { $0.hasPrefix("STATUS=Offline: cannot reach ") }
            #expect(
                offline?.contains("; serving the cached tree; last refresh ") == true,
                "no STATUS=Offline after a refresh that could not reach the server: \(offline ?? "none")")
            setup.sim = try await Simulator.start(
                SimulatorConfiguration(dataset: .fixtures507, flavour: .v55, port: port))
            #expect(try await setup.campusfs(["refresh"], timeout: 60).status == 0)
            // The link may say "online" before the refresh is recorded (a line with the first sync's counts).
            let online = await manager.first(timeout: 10) {
                $0.hasPrefix("STATUS=Online (JSON:API); last refresh ") && $0.hasSuffix(": 0 new, 0 changed, 0 removed")
            }
            #expect(online != nil, "no STATUS=Online with the last refresh's counts after the server came back")

            // STOPPING=1 precedes the unmount: with the manager's queue full, the daemon waits to say it and has
            // not unmounted yet; once the manager reads, it unmounts and exits.
            manager.stopReading()
            #expect(manager.fill() > 0)
            kill(daemon.pid, SIGTERM)
            try await Task.sleep(for: .milliseconds(500))
            #expect(isMounted(setup.mountpoint), "the daemon unmounted before the manager heard STOPPING=1")
            manager.startReading()
            let stopping = await manager.first(timeout: 10) { $0.hasPrefix("STOPPING=1") }
            #expect(stopping == "STOPPING=1\nSTATUS=Unmounting \(setup.mountpoint)")
            for _ in 0..<400 where !daemon.hasEnded { try await Task.sleep(for: .milliseconds(50)) }
            #expect(!isMounted(setup.mountpoint))
            let ending = daemon.reap()
            #expect(ending.status == 0 && !ending.signaled, "\(ending)")
        }
    }

    /// A server's error or a mountpoint's name with a newline cannot add a key (`MAINPID=`) to the message.
    @Test func aStatusLineIsOneLine() {
        #expect(
            ServiceManager.status("Offline: no answer\nMAINPID=1\r\u{7}") == "STATUS=Offline: no answer MAINPID=1  ")
    }

    /// The unit's command line names no mountpoint: the profile's `mountpoint` says where (`~/` is the home), so two
    /// profiles can both run as units.
    @Test func aMountWithoutAMountpointGoesWhereTheProfileSays() async throws {
        try await DaemonTests.with { setup in
            try setup.configure(#"mountpoint = "~/Uni TU""#)
            let elsewhere = setup.cli.home.appendingPathComponent("Uni TU").path
            let mounted = try await setup.campusfs(["mount", "--server", setup.sim.baseURL, "--username", "test_autor"])
            #expect(mounted.status == 0, "\(mounted.stderr)")
            #expect(mounted.stdout == "mounted \"default\" at \(elsewhere)\n")
            #expect(isMounted(elsewhere))
            #expect(try await setup.campusfs(["unmount"], timeout: 30).status == 0)
            #expect(!isMounted(elsewhere))

            try setup.configure(#"mountpoint = "Uni TU""#)
            let relative = try await setup.campusfs([
                "mount", "--server", setup.sim.baseURL, "--username", "test_autor",
            ])
            #expect(relative.status == 1)
            #expect(relative.stderr.contains("mountpoint must be absolute or start with ~/"), "\(relative.stderr)")
            // The clean-up's `status` reports a broken config.toml as an error (issue 28).
            try setup.configure("")
        }
    }

    /// `Restart=on-failure` mounts again after a crash: the new daemon replaces the dead mount its predecessor left,
    /// also when its PID went to another process meanwhile (the record's start time tells them apart).
    @Test func aMountAfterACrashReplacesTheDeadMount() async throws {
        try await DaemonTests.with { setup in
            #expect(try await setup.mount().status == 0)
            let killed = try #require(try await setup.status()["pid"] as? Int)
            kill(pid_t(killed), SIGKILL)
            for _ in 0..<200 where kill(pid_t(killed), 0) == 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(isMounted(setup.mountpoint))
            // The PID now names a live process of the same user: another one than the daemon was.
            let stranger = try Subprocess.launch(URL(fileURLWithPath: "/bin/sleep"), ["60"])
            defer {
                stranger.kill(SIGKILL)
                _ = stranger.reap()
            }
            let record = setup.cli.home.appendingPathComponent("run/campusfs/default.mount")
            var fields = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: record)) as? [String: Any])
            #expect(fields["started"] is Int, "the record keeps the daemon's start time")
            fields["pid"] = Int(stranger.pid)
            try JSONSerialization.data(withJSONObject: fields).write(to: record)

            let again = try await setup.mount()
            #expect(again.status == 0, "\(again.stderr)")
            #expect(
                again.stderr.contains(
                    "replacing the mount at \(setup.mountpoint) that a stopped daemon of \"default\" left behind"),
                "\(again.stderr)")
            let cat = try await shell("head -c 10 \(setup.path(DaemonTests.readme)) | wc -c")
            #expect(cat.stdout == "10\n", "\(cat.stderr)")
            #expect(try await setup.status()["pid"] as? Int != killed)
        }
    }
}

/// Issue 19: desktop notifications through the freedesktop Notifications interface, received by a real D-Bus
/// service on a session bus of the test's own.
@Suite(.serialized)
struct NotificationTests {
    static let otherCourse = "WS 2026-27/BS-202 Betriebssysteme & Dateisysteme"

    /// A session bus with a notification server, the daemon's environment pointing at it, and `xdg-open`'s
    /// `BROWSER` fallback recording what an action opens.
    static func with(
        config: String = #"notification_interval = "3s""#, fileManager: Bool = false,
        _ body: (inout DaemonTests.Setup, NotificationServer, URL) async throws -> Void
    ) async throws {
        let server = try await NotificationServer.start(fileManager: fileManager)
        defer { server.stop() }
        try await DaemonTests.with { setup in
            let opened = setup.cli.home.appendingPathComponent("opened.txt")
            let browser = setup.cli.home.appendingPathComponent("browser")
            try Data("#!/bin/sh\necho \"$1\" >> \(quoted(opened.path))\n".utf8).write(to: browser)
            chmod(browser.path, 0o755)
            setup.cli.environment["DBUS_SESSION_BUS_ADDRESS"] = server.address
            setup.cli.environment["BROWSER"] = browser.path
            try setup.configure(config)
            try await body(&setup, server, opened)
        }
    }

    /// Adds a text document to a folder of the simulator.
    static func add(_ name: String, to folder: String, _ setup: DaemonTests.Setup) async throws {
        let id = try await shell("getfattr --only-values -n user.campusfs.id \(setup.path(folder))").stdout
        let body = #"{"folder_id": "\#(id)", "name": "\#(name)", "text": "neu\n"}"#
        let added = try await shell("curl -sf -X POST -d \(quoted(body)) \(setup.sim.controlURL)/documents")
        try #require(added.status == 0, "\(added.stderr)")
    }

    @Test func oneNotificationPerRefreshGroupedPerCourseWithActionsAndARateLimit() async throws {
        // An interval of 12 s, so that a refresh below usually ends within it even on a loaded machine: with 3 s, a
        // refresh that took longer made the rate-limit check pass without any limit.
        try await Self.with(config: #"notification_interval = "12s""#, fileManager: true) { setup, server, opened in
            #expect(try await setup.mount().status == 0)
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            try await Task.sleep(for: .seconds(1))
            #expect(server.notifications.isEmpty, "the first sync and a refresh that found nothing notify nothing")

            let course = DaemonTests.course
            for name in ["Vorlesung 07.pdf", "Vorlesung 06.pdf", "Q&A <Entwurf>.txt", "Übung 3.pdf"] {
                try await Self.add(name, to: course + "/Vorlesungsfolien", setup)
            }
            try await Self.add("Skript.pdf", to: Self.otherCourse + "/Übungsblätter", setup)
            let readme = try setup.document(DaemonTests.readme)
            let courseID = try await shell("getfattr --only-values -n user.campusfs.id \(setup.path(course))").stdout
            let news = #"{"course_id": "\#(courseID)", "title": "Klausuranmeldung", "content": "<p>Bis Freitag.</p>"}"#
            let changes = try await shell(
                "curl -sf -X PATCH -d '{\"text\": \"Version zwei.\\n\"}' \(setup.sim.controlURL)/documents/\(readme.id)"
                    + " >/dev/null && curl -sf -X POST -d \(quoted(news)) \(setup.sim.controlURL)/news >/dev/null")
            try #require(changes.status == 0, "\(changes.stderr)")
            #expect(try await setup.campusfs(["refresh"]).status == 0)

            let first = await server.notifications(count: 1, timeout: 10)
            try #require(first.count == 1, "one notification for one refresh: \(first)")
            let notification = first[0]
            #expect(notification["app"] as? String == "CampusFS")
            #expect(notification["summary"] as? String == "New on Stud.IP in 2 courses")
            #expect(
                notification["body"] as? String
                    == "BS-202: 1 new document — Skript.pdf\n"
                    + "INF-101: 4 new documents, 1 changed document, 1 new announcement — "
                    + "Q&amp;A &lt;Entwurf&gt;.txt, Vorlesung 06.pdf, Vorlesung 07.pdf, …")
            let actions = notification["actions"] as? [String]
            #expect(
                actions == [
                    "default", "Open Stud.IP folder", "course-0", "Open BS-202", "course-1", "Open INF-101",
                ])

            // Clicking "Open INF-101" asks the session's file manager to show the course's folder; a second click
            // and an id the daemon never posted open nothing.
            let id = try #require(notification["id"] as? Int)
            server.invoke(id: id, key: "course-1")
            for _ in 0..<100 where server.shownFolders.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            server.invoke(id: id, key: "course-1")
            server.invoke(id: id + 100, key: "default")
            try await Task.sleep(for: .milliseconds(500))
            let folder = URL(fileURLWithPath: setup.mountpoint + "/" + course).absoluteString
            #expect(server.shownFolders == [folder])
            #expect(
                !FileManager.default.fileExists(atPath: opened.path), "xdg-open ran although a file manager answered")

            // Within the interval a later refresh's find waits, and then comes alone. That it waited shows only when
            // the refresh ended well within the interval; a loaded machine can take longer (once more than 11 s),
            // so such a round proves nothing and the next find is tried, measured from the notification before it.
            var previous = notification
            var posted = 1
            var waited = false
            for round in 1...3 where !waited {
                let name = "Blatt \(3 + round).pdf"
                try await Self.add(name, to: course + "/Vorlesungsfolien", setup)
                #expect(try await setup.campusfs(["refresh"]).status == 0)
                let previousAt = try #require(previous["at"] as? Double)
                var now = timespec()
                clock_gettime(CLOCK_MONOTONIC, &now)  // the server's "at" is Python's time.monotonic()
                waited = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 - previousAt < 11
                if waited {
                    #expect(server.notifications.count == posted, "the refresh's find was posted within the interval")
                }
                let next = await server.notifications(count: posted + 1, timeout: 20)
                try #require(next.count == posted + 1, "the waiting find was never notified")
                posted += 1
                let apart = try #require(next[posted - 1]["at"] as? Double) - previousAt
                if waited { #expect(apart >= 11.9, "two notifications \(apart) s apart, within the interval of 12 s") }
                #expect(next[posted - 1]["summary"] as? String == "INF-101: 1 new document")
                #expect(next[posted - 1]["body"] as? String == name)
                #expect(next[posted - 1]["actions"] as? [String] == ["default", "Open folder"])
                previous = next[posted - 1]
            }
            #expect(waited, "no refresh in 3 ended within 11 s of the notification before it")

            #expect(try await setup.campusfs(["refresh"]).status == 0)
            try await Task.sleep(for: .seconds(4))
            #expect(server.notifications.count == posted, "a refresh that found nothing notifies nothing")
        }
    }

    /// Without a file manager on the bus, an action opens the folder with `xdg-open` (here its `BROWSER`
    /// fallback records what it was asked).
    @Test func withoutAFileManagerAnActionOpensTheFolderWithXdgOpen() async throws {
        try await Self.with { setup, server, opened in
            #expect(try await setup.mount().status == 0)
            try await Self.add("Blatt 4.pdf", to: Self.otherCourse + "/Übungsblätter", setup)
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            let notification = try #require(await server.notifications(count: 1, timeout: 10).first)
            #expect(notification["summary"] as? String == "BS-202: 1 new document")
            server.invoke(id: try #require(notification["id"] as? Int), key: "default")
            var shown = ""
            for _ in 0..<100 where shown.isEmpty {
                try await Task.sleep(for: .milliseconds(50))
                shown = (try? String(contentsOf: opened, encoding: .utf8)) ?? ""
            }
            #expect(shown == setup.mountpoint + "/" + Self.otherCourse + "\n")
        }
    }

    @Test func aRefusedLoginIsNotifiedOncePerOutage() async throws {
        try await Self.with { setup, server, _ in
            #expect(try await setup.mount().status == 0)
            setup.sim.faults.add(Fault(action: .status(401)))
            #expect(try await setup.campusfs(["refresh"]).status == 2)
            #expect(try await setup.campusfs(["refresh"]).status == 2)
            #expect(try await MountHarness.openResult(setup.path(DaemonTests.slides)) == "EACCES")
            let outage = await server.notifications(count: 2, timeout: 3)
            try #require(outage.count == 1, "one notification per outage: \(outage)")
            #expect(outage[0]["summary"] as? String == "Stud.IP login needed")
            let body = outage[0]["body"] as? String ?? ""
            #expect(body.contains("run campusfs login --profile default to log in again"), "\(body)")
            #expect(outage[0]["hints"] as? [String: String] == ["urgency": "2"])

            setup.sim.faults.clear()
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            setup.sim.faults.add(Fault(action: .status(401)))
            #expect(try await setup.campusfs(["refresh"]).status == 2)
            let again = await server.notifications(count: 2, timeout: 10)
            #expect(again.count == 2, "a second outage is notified again: \(again)")
        }
    }

    @Test func turnedOffOrWithoutANotificationServerNothingIsSent() async throws {
        try await Self.with(config: "notifications = false") { setup, server, _ in
            #expect(try await setup.mount().status == 0)
            try await Self.add("Vorlesung 06.pdf", to: DaemonTests.course + "/Vorlesungsfolien", setup)
            #expect(try await setup.campusfs(["refresh"]).status == 0)
            try await Task.sleep(for: .seconds(2))
            #expect(server.notifications.isEmpty, "notifications = false")
            #expect(try await setup.campusfs(["unmount", setup.mountpoint], timeout: 30).status == 0)

            // A bus nobody listens on: the mount works all the same, and the log says why nothing is notified.
            setup.cli.environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + setup.cli.home.path + "/no-bus"
            try setup.configure("")
            #expect(try await setup.mount().status == 0)
            let log = try String(
                contentsOf: setup.cli.home.appendingPathComponent("state/campusfs/default.log"), encoding: .utf8)
            #expect(log.contains("no desktop notifications: cannot connect to the session bus"), "\(log)")
        }
    }
}
