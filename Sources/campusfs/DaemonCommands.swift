import ArgumentParser
import CampusFS
import Foundation
import MetadataStore

/// `campusfs unmount`: ends a mount and its daemon, also when the mount is busy.
struct UnmountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "unmount",
        abstract: "Unmount (the profile's mount, or the one at MOUNTPOINT) and stop its daemon.",
        discussion: """
            Programs still holding files in the mount get errors from then on; nothing waits for them. A mount whose
            daemon was killed is detached as well.
            """)

    @Option(help: "Profile in config.toml (default: default_profile, else \"default\").")
    var profile: String?

    @Argument(help: "The mountpoint; default: wherever the profile is mounted.")
    var mountpoint: String?

    func run() async throws {
        try await reportingErrors {
            let paths = Paths()
            let target = mountpoint.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
            let socket: URL?
            if let target {
                socket = DaemonDirectory.sockets(paths).first { DaemonDirectory.status($0)?.mountpoint == target }
            } else {
                let name = try profile ?? ProfileOptions.defaultProfileName(paths: paths)
                socket = paths.socket(profile: name)
            }
            if let socket, let status = DaemonDirectory.status(socket) {
                _ = try? ControlClient.send(.unmount, to: socket.path)
                try await waitUntilUnmounted(status.mountpoint, socket: socket)
                print("unmounted \(status.mountpoint)")
                return
            }
            // No daemon answers: a mount left behind by a killed daemon is detached.
            let stale = Mountpoint.mounts().first { $0.type == "fuse.campusfs" && ($0.path == target || target == nil) }
            guard let stale else {
                throw CLIError.usage(
                    target.map { "no CampusFS mount at \($0)" } ?? "profile is not mounted (see `campusfs status`)")
            }
            try detach(stale.path)
            print("detached \(stale.path) (its daemon was gone)")
        }
    }

    private func waitUntilUnmounted(_ path: String, socket: URL) async throws(CLIError) {
        for _ in 0..<200 {
            if !Mountpoint.isMounted(path), !ControlClient.isServing(socket.path) { return }
            try? await Task.sleep(for: .milliseconds(50))
        }
        throw .other("\(path) is still mounted after 10 s; see the daemon's log")
    }

    private func detach(_ path: String) throws(CLIError) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/fusermount3")
        process.arguments = ["-u", "-z", path]
        do {
            try process.run()
        } catch {
            throw .other("cannot run fusermount3 (package fuse3): \(error.localizedDescription)")
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw .other("fusermount3 -u -z \(path) failed") }
    }
}

/// `campusfs status`: is it mounted, is the server there, how full is the cache.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show whether the profile is mounted, the server reachable and logged in, and the cache's use.",
        discussion: """
            --json prints one object: {"mounted", "profile", "mountpoint", "server", "serverDetail", "api",
            "lastRefresh", "lastRefreshError", "cacheBytes", "cacheLimit", "cachedDocuments", "downloadsInFlight",
            "pid"}; without a mount only "mounted", "profile" and "lastRefresh".
            """)

    @Option(help: "Profile in config.toml (default: default_profile, else \"default\").")
    var profile: String?

    @Flag(help: "Print the status as JSON.")
    var json = false

    func run() async throws {
        try await reportingErrors {
            let paths = Paths()
            let name = try profile ?? ProfileOptions.defaultProfileName(paths: paths)
            if let status = DaemonDirectory.status(paths.socket(profile: name)) {
                print(json ? Self.json(status) : Self.text(status))
                return
            }
            let lastRefresh = (try? ProfileStore.open(name, paths: paths)).flatMap {
                try? $0.syncState().lastOverviewAt
            }
            if json {
                var object: [String: Any] = ["mounted": false, "profile": name]
                if let lastRefresh { object["lastRefresh"] = ISO8601DateFormatter().string(from: lastRefresh) }
                print(Self.serialize(object))
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
        lines.append("last refresh: " + (status.lastRefresh.map(format) ?? "never"))
        if let error = status.lastRefreshError { lines.append("              failed since: \(error)") }
        lines.append(
            "cache:        \(bytes(status.cacheBytes)) of \(bytes(status.cacheLimit)) in \(status.cachedDocuments) "
                + "documents, \(status.downloadsInFlight) downloading")
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

    private static func bytes(_ count: Int64) -> String {
        ByteCountFormatter.string(fromByteCount: count, countStyle: .binary)
    }
}

/// The running daemons of this user: one socket per mounted profile.
enum DaemonDirectory {
    static func sockets(_ paths: Paths) -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: paths.runtime.path)) ?? []
        return names.filter { $0.hasSuffix(".sock") }.sorted().map { paths.runtime.appendingPathComponent($0) }
    }

    /// The daemon's status, or nil when none answers at `socket`.
    static func status(_ socket: URL) -> DaemonStatus? {
        (try? ControlClient.send(.status, to: socket.path))?.status
    }
}
