import Daemon
import Foundation
import Glibc
import SystemSupport

/// One mount as `/proc/self/mountinfo` lists it, with what tells whose it is.
struct MountEntry: Equatable {
    /// `major:minor`; no two mounts that exist at the same time share it.
    var device: String
    var path: String
    /// `fuse.campusfs` for every CampusFS mount.
    var type: String
    /// The FUSE fsname: `campusfs:<profile>` (``CampusDaemon/fileSystemName(profile:)``).
    var source: String
    /// Who mounted it: FUSE's `user_id=` option; nil for other filesystems.
    var userID: uid_t?

    /// A CampusFS mount of the user running this command.
    var isOwnCampusFS: Bool { type == "fuse.campusfs" && userID == getuid() }

    /// The kernel's mount table, in mount order (a later entry at the same path covers an earlier one). Read to its
    /// end through a file handle: `String(contentsOfFile:)` stops after the first 4 KiB of a `/proc` file (it
    /// reports size 0), and a machine with a few dozen mounts has a longer table.
    static func table() -> [MountEntry] {
        let bytes = (try? FileHandle(forReadingAtPath: "/proc/self/mountinfo")?.readToEnd()) ?? Data()
        let table = String(decoding: bytes, as: UTF8.self)
        return table.split(separator: "\n").compactMap { line in
            // id parent major:minor root mountpoint options [optional fields…] - type source superoptions
            let fields = line.split(separator: " ").map(String.init)
            guard fields.count > 5, let separator = fields.firstIndex(of: "-"), separator + 3 < fields.count else {
                return nil
            }
            let userID = fields[separator + 3].split(separator: ",").lazy
                .compactMap { $0.hasPrefix("user_id=") ? uid_t($0.dropFirst("user_id=".count)) : nil }.first
            return MountEntry(
                device: fields[2], path: unescape(fields[4]), type: fields[separator + 1],
                source: unescape(fields[separator + 2]), userID: userID)
        }
    }

    /// The mount that is visible at `path`, if any.
    static func at(_ path: String) -> MountEntry? {
        table().last { $0.path == path }
    }

    /// Undoes the kernel's octal escapes (`\040` for a space).
    private static func unescape(_ field: String) -> String {
        var bytes: [UInt8] = []
        var iterator = Array(field.utf8)[...]
        while let byte = iterator.popFirst() {
            if byte == UInt8(ascii: "\\"), iterator.count >= 3,
                let value = UInt8(String(decoding: iterator.prefix(3), as: UTF8.self), radix: 8)
            {
                bytes.append(value)
                iterator = iterator.dropFirst(3)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// What a daemon writes next to its socket once it has mounted (`<profile>.mount`), and removes when it ends.
///
/// A daemon killed with `kill -9` leaves its mount behind and answers nothing; this record is how `campusfs unmount`
/// proves that a mount is this profile's — this path, this very mount (its device), mounted by this user with
/// the profile's fsname — and that its daemon is gone, before it detaches anything.
struct MountRecord: Codable, Equatable {
    var mountpoint: String
    var device: String
    var pid: Int32
    /// When the daemon started (`/proc/PID/stat`'s start time, in clock ticks since boot), so that a PID the kernel
    /// has given to another process since is not taken for the daemon. Absent in records of older versions.
    var started: UInt64?

    /// The record of the mount just made at `mountpoint` for `profile`; nil if the table does not show it.
    static func current(profile: String, mountpoint: String) -> MountRecord? {
        let entry = MountEntry.at(mountpoint)
        guard let entry, entry.isOwnCampusFS, entry.source == CampusDaemon.fileSystemName(profile: profile) else {
            return nil
        }
        return MountRecord(
            mountpoint: mountpoint, device: entry.device, pid: getpid(), started: Self.process(getpid())?.started)
    }

    static func read(_ url: URL) -> MountRecord? {
        (try? Data(contentsOf: url)).flatMap { try? JSONDecoder().decode(MountRecord.self, from: $0) }
    }

    func write(to url: URL) throws(CLIError) {
        do {
            try JSONEncoder().encode(self).write(to: url, options: .atomic)
        } catch {
            throw .other("cannot write \(url.path): \(error.localizedDescription)")
        }
    }

    /// The recorded mount, if it is still there and still `profile`'s and this user's.
    func mount(of profile: String) -> MountEntry? {
        guard let entry = MountEntry.at(mountpoint), entry.isOwnCampusFS, entry.device == device,
            entry.source == CampusDaemon.fileSystemName(profile: profile)
        else { return nil }
        return entry
    }

    /// Whether the daemon has ended: no such process, one that exited and waits to be reaped (a zombie holds no
    /// FUSE connection), or another process that got the PID since (a restart by systemd after a crash, much later).
    var daemonIsGone: Bool {
        guard let process = Self.process(pid), process.state != "Z", process.state != "X" else { return true }
        if let started, process.started != started { return true }
        return false
    }

    /// A process's state letter and start time from `/proc/PID/stat`; nil when there is no such process. Fields are
    /// counted after the command name's closing parenthesis, since the name may contain spaces and parentheses.
    private static func process(_ pid: Int32) -> (state: Character, started: UInt64)? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return nil }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        // fields[0] is field 3 (state), fields[19] field 22 (starttime).
        guard fields.count > 19, let state = fields[0].first, let started = UInt64(fields[19]) else { return nil }
        return (state, started)
    }

    /// Detaches a mount whose daemon is gone (`fusermount3 -u -z`: lazily, so a process still inside cannot block
    /// it).
    static func detach(_ path: String) throws(CLIError) {
        let output: Subprocess.Output
        do throws(SubprocessError) {
            output = try Subprocess.run(URL(fileURLWithPath: "/usr/bin/fusermount3"), ["-u", "-z", path])
        } catch {
            throw .other("cannot run fusermount3 (package fuse3): \(error.reason)")
        }
        guard output.status == 0 else {
            let said = String(decoding: output.stderr, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            throw .other("fusermount3 -u -z \(path) failed" + (said.isEmpty ? "" : ": \(said)"))
        }
    }

    /// Detaches the mount a crashed or killed daemon of `profile` left behind — this user's, with the profile's
    /// fsname, its daemon gone — so that mounting again (a restart by systemd) replaces it. Returns its path.
    static func replaceStale(profile: String, paths: Paths) throws(CLIError) -> String? {
        let url = paths.mountRecord(profile: profile)
        guard let record = read(url), record.daemonIsGone, let entry = record.mount(of: profile) else { return nil }
        try detach(entry.path)
        try? FileManager.default.removeItem(at: url)
        return entry.path
    }
}

/// The profiles of this user that are mounted now, from their daemons' records (``MountRecord``), so that a command
/// given a path inside a mount, or run while one profile alone is mounted, works on that profile without `--profile`.
enum MountedProfiles {
    /// Each live mount's profile and mountpoint: the record's mount is still there and its daemon still runs.
    static func all(_ paths: Paths) -> [(profile: String, mountpoint: String)] {
        DaemonDirectory.recordedProfiles(paths).compactMap { name in
            guard let record = MountRecord.read(paths.mountRecord(profile: name)), !record.daemonIsGone,
                record.mount(of: name) != nil
            else { return nil }
            return (name, record.mountpoint)
        }
    }

    /// The profile a command means: `explicit` (`--profile`), else the profile whose mount contains one of
    /// `arguments` (the innermost mount), else the only mounted profile, else the config file's default.
    /// A broken config.toml is an error here, also where the file is not needed: every command that names a
    /// profile says so, not only `mount`.
    static func name(explicit: String?, arguments: [String] = [], paths: Paths) throws(CLIError) -> String {
        let file = try ConfigFile.load(from: paths.configFile)
        if let explicit { return explicit }
        let mounted = all(paths)
        let containing = arguments.lazy.compactMap { argument in
            mounted.filter { treePath(argument, inside: $0.mountpoint) != nil }
                .max { $0.mountpoint.count < $1.mountpoint.count }
        }.first
        if let containing { return containing.profile }
        if mounted.count == 1, let only = mounted.first { return only.profile }
        return file.defaultProfile ?? "default"
    }

    /// `argument` relative to the tree's root ("" for the mountpoint itself) if it names a path inside the mount at
    /// `mountpoint`; nil otherwise.
    static func treePath(_ argument: String, inside mountpoint: String) -> String? {
        let absolute = URL(fileURLWithPath: argument).standardizedFileURL.path
        guard absolute == mountpoint || absolute.hasPrefix(mountpoint + "/") else { return nil }
        return String(absolute.dropFirst(mountpoint.count))
    }

    /// `argument` relative to the tree's root when it names a path inside the mount at `mountpoint`, else as it
    /// is (then it is relative to the tree's root already): commands take either.
    static func treePath(_ argument: String, mountpoint: String?) -> String {
        mountpoint.flatMap { treePath(argument, inside: $0) } ?? argument
    }
}
