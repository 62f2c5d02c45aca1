import ArgumentParser
import ControlProtocol
import Daemon
import Foundation
import MetadataStore

/// `campusfs unmount`: ends a mount and its daemon, also when the mount is busy.
struct UnmountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmount",
        abstract: "Unmount (the profile's mount, or the one at MOUNTPOINT) and stop its daemon.",
        discussion: """
            Programs still holding files in the mount get errors from then on; nothing waits for them. A mount whose \
            daemon was killed is detached as well.
            """)

    @Option(help: .configuredProfile)
    var profile: String?

    @Argument(help: "The mountpoint; default: wherever the profile is mounted.")
    var mountpoint: String?

    func run() async throws {
        try await reportingErrors {
            let paths = Paths()
            let target = mountpoint.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
            let named = try target == nil ? profile ?? ProfileOptions.defaultProfileName(paths: paths) : nil
            let socket =
                named.map { paths.socket(profile: $0) }
                ?? DaemonDirectory.sockets(paths).first { DaemonDirectory.status($0)?.mountpoint == target }
            if let socket, let status = DaemonDirectory.status(socket) {
                _ = try? ControlClient.send(.unmount, to: socket.path)
                try await waitUntilUnmounted(status.mountpoint, socket: socket)
                print("unmounted \(status.mountpoint)")
                return
            }
            let (stale, owner) = try abandonedMount(at: target, profile: named, paths: paths)
            try MountRecord.detach(stale.path)
            try? FileManager.default.removeItem(at: paths.mountRecord(profile: owner))
            print("detached \(stale.path) (its daemon was gone)")
        }
    }

    /// The mount a killed daemon left behind — the `named` profile's, else the one at `target` — and the profile it
    /// belongs to. Only a mount a daemon of this user's profiles recorded (``MountRecord``) qualifies, and only once
    /// that daemon is gone: anything else may be another profile's or another user's, and is never touched.
    private func abandonedMount(
        at target: String?, profile named: String?, paths: Paths
    ) throws(CLIError) -> (MountEntry, profile: String) {
        if let target, MountEntry.at(target)?.isOwnCampusFS != true {
            throw .usage("no CampusFS mount of yours at \(target)")
        }
        for name in named.map({ [$0] }) ?? DaemonDirectory.recordedProfiles(paths) {
            guard let record = MountRecord.read(paths.mountRecord(profile: name)),
                target == nil || record.mountpoint == target, let entry = record.mount(of: name)
            else { continue }
            guard record.daemonIsGone else {
                throw .other(
                    "the daemon of \(entry.path) (pid \(record.pid)) does not answer; end it with `kill \(record.pid)`")
            }
            return (entry, name)
        }
        if let named { throw .usage("profile \"\(named)\" is not mounted (see `campusfs status`)") }
        throw .usage(
            "\(target ?? "") is not the mount of a profile in this XDG_RUNTIME_DIR; "
                + "if its daemon is gone, `fusermount3 -u -z \(target ?? "")` detaches it")
    }

    private func waitUntilUnmounted(_ path: String, socket: URL) async throws(CLIError) {
        for _ in 0..<200 {
            if !Mountpoint.isMounted(path), !ControlClient.isServing(socket.path) { return }
            try? await Task.sleep(for: .milliseconds(50))
        }
        throw .other("\(path) is still mounted after 10 s; see the daemon's log")
    }
}

/// `campusfs status`: is it mounted, is the server there, how full is the cache.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show whether the profile is mounted, the server reachable and logged in, and the cache's use.",
        discussion: """
            --json prints one object: {"mounted", "profile", "mountpoint", "server", "serverDetail", "api", \
            "lastRefresh", "lastRefreshError", "failedCourses", "cacheBytes", "cacheLimit", "cachedDocuments", \
            "downloadsInFlight", "cacheDiskShortage" (only while the cache's disk is too full), "refreshing" \
            ({"done", "total"} courses, only while a refresh runs: after a first mount, until every course is \
            stored), "index" ({"documents", "waiting", "failed", "textBytes"}; `campusfs index --json` adds \
            "indexBytes"), "uploads" ({"pending", "failed", "failures"}; only with uploads = true), "pid"}; without a mount only "mounted", "profile" and "lastRefresh", plus "deadMount" \
            (the mountpoint) when the profile's daemon was killed and left its mount behind; `campusfs unmount` \
            clears that.
            """)

    @Option(help: .mountedProfile)
    var profile: String?

    @Flag(help: "Print the status as JSON.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            let paths = Paths()
            let name: String
            do throws(CLIError) {
                name = try MountedProfiles.name(explicit: profile, paths: paths)
            } catch {
                // A broken config.toml is reported, after what a running mount says about itself.
                let mounted = MountedProfiles.all(paths)
                if let only = profile ?? (mounted.count == 1 ? mounted.first?.profile : nil),
                    let status = DaemonDirectory.status(paths.socket(profile: only))
                {
                    print(json ? Self.json(status) : Self.text(status))
                }
                throw error
            }
            if let status = DaemonDirectory.status(paths.socket(profile: name)) {
                print(json ? Self.json(status) : Self.text(status))
                return
            }
            // Like `mount`: a profile named that neither the config file nor an earlier mount knows is a typo.
            if let profile, try ConfigFile.load(from: paths.configFile).profiles[profile] == nil,
                !FileManager.default.fileExists(atPath: paths.database(profile: profile).path)
            {
                throw ProfileOptions.unknown(profile, paths: paths, serverOptions: false)
            }
            let lastRefresh = (try? ProfileStore.open(name, paths: paths)).flatMap {
                try? $0.syncState().lastOverviewAt
            }
            let dead = MountRecord.read(paths.mountRecord(profile: name)).flatMap { record in
                record.daemonIsGone ? record.mount(of: name)?.path : nil
            }
            if json {
                var object: [String: Any] = ["mounted": false, "profile": name]
                if let lastRefresh { object["lastRefresh"] = ISO8601DateFormatter().string(from: lastRefresh) }
                if let dead { object["deadMount"] = dead }
                print(Self.serialize(object))
            } else if let dead {
                print(
                    "profile \"\(name)\": not mounted — its daemon is gone but left \(dead) behind (\"Transport "
                        + "endpoint is not connected\"); `campusfs unmount --profile \(name)` clears it")
                if let lastRefresh { print("last refresh: \(Self.format(lastRefresh))") }
            } else {
                print("profile \"\(name)\": not mounted")
                if let lastRefresh { print("last refresh: \(Self.format(lastRefresh))") }
            }
        }
    }

    static func text(_ status: DaemonStatus) -> String {
        var lines = [
            "profile \"\(status.profile)\": mounted at \(status.mountpoint) (daemon \(status.pid))",
            "server:       \(status.serverURL) — \(status.server.rawValue)" + (status.api.map { " (\($0))" } ?? ""),
        ]
        if let detail = status.serverDetail { lines.append("              \(detail)") }
        if status.server == .loginNeeded {
            lines.append("              run `campusfs login --profile \(status.profile)` to log in again (no remount)")
        }
        lines.append("last refresh: " + (status.lastRefresh.map(format) ?? "never"))
        if let error = status.lastRefreshError { lines.append("              failed since: \(error)") }
        for course in status.failedCourses.prefix(10) { lines.append("              not read: \(course)") }
        if status.failedCourses.count > 10 {
            lines.append("              and \(status.failedCourses.count - 10) more courses not read (see the log)")
        }
        lines.append(
            "cache:        \(ByteText.format(status.cacheBytes)) of \(ByteText.format(status.cacheLimit)) in \(status.cachedDocuments) "
                + "documents, \(status.downloadsInFlight) downloading")
        if let shortage = status.cacheDiskShortage {
            lines.append(
                "              the cache's disk has only \(ByteText.format(shortage.free)) free, less than the "
                    + "\(ByteText.format(shortage.keptFree)) kept free, so each download evicts the other cached documents; "
                    + "free space on that disk")
        }
        if let index = status.index { lines.append("index:        " + IndexCommand.text(index)) }
        if let uploads = status.uploads {
            lines.append("uploads:      " + (uploads.line ?? "nothing waiting"))
            for failure in uploads.failures { lines.append("              failed: \(failure)") }
            if uploads.failed > 0 {
                lines.append("              `campusfs outbox` lists them, `campusfs outbox retry` sends them again")
            }
        }
        return lines.joined(separator: "\n")
    }

    static func json(_ status: DaemonStatus) -> String {
        let data = ControlResponse(status: status).encoded()
        guard var object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            var fields = object.removeValue(forKey: "status") as? [String: Any]
        else { return "{}" }
        fields["mounted"] = true
        return serialize(fields)
    }

    private static func serialize(_ object: [String: Any]) -> String {
        let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    private static func format(_ date: Date) -> String {
        date.formatted(.dateTime.year().month().day().hour().minute().second())
    }
}

/// The running daemons of this user: one socket per mounted profile.
enum DaemonDirectory {
    static func sockets(_ paths: Paths) -> [URL] {
        names(paths).filter { $0.hasSuffix(".sock") }.map { paths.runtime.appendingPathComponent($0) }
    }

    /// The profiles whose daemon recorded a mount (``MountRecord``), running or killed.
    static func recordedProfiles(_ paths: Paths) -> [String] {
        names(paths).filter { $0.hasSuffix(".mount") }.map { String($0.dropLast(".mount".count)) }
    }

    private static func names(_ paths: Paths) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: paths.runtime.path)) ?? []).sorted()
    }

    /// The daemon's status, or nil when none answers at `socket`.
    static func status(_ socket: URL) -> DaemonStatus? {
        (try? ControlClient.send(.status, to: socket.path))?.status
    }
}
