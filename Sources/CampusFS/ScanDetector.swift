import FUSEKit
import Glibc
import StudIPKit
import StudIPModel
import Synchronization

/// Tells a person opening documents from a scan that opens them all (issue 13): `grep -r`, `rsync`, indexers and
/// thumbnailers must not clear `new`/`changed`, while opening one document does (StudApp's rule).
///
/// Opens are grouped per process into bursts: a burst lasts while the process has a request in flight or was active
/// (open, read, release) less than ``quiet`` ago. When it ends, the documents it opened are cleared unless it was a
/// scan: more than ``personalLimit`` different documents, or a process (or its parent) with a scanner's name.
/// Deciding at the end means the first documents of a scan are spared too, and a burst waits for slow downloads.
final class ScanDetector: Sendable {
    /// What an open served, for clearing its highlight once the burst is judged.
    enum Served: Sendable, Hashable {
        /// A document's version: cleared only while it is still the current one.
        case document(DocumentVersion)
        /// An announcement, calendar or timetable (rendered by the refresh, no version of its own).
        case generated

        var version: DocumentVersion? {
            if case .document(let version) = self { return version }
            return nil
        }
    }

    /// How long a process must be idle before its burst is judged.
    private static let quiet: Duration = .seconds(1)
    /// A person opens one document, or a few at once (`cat a b`); more in one burst is a scan.
    private static let personalLimit = 2
    /// `comm` names (15 characters at most) of programs that read documents without a person looking at them.
    private static let scannerNames: Set<String> = [
        "grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "xargs", "rsync", "cp", "tar", "cpio", "zip", "7z",
        "updatedb", "locate", "rclone", "restic", "borg", "duplicity", "unison",
    ]
    /// Prefixes of indexer `comm` names: Baloo (`baloo_file`, `baloo_file_extr…`), Tracker (`tracker-miner-f`,
    /// `tracker-extract`) and its successor LocalSearch.
    private static let scannerPrefixes = ["baloo", "tracker-", "localsearch"]

    private struct Burst {
        let isScanner: Bool
        var documents: Set<Inode> = []
        /// The files whose open succeeded, with what they served: the ones a person would have seen.
        var opened: [Inode: Served] = [:]
        var inFlight = 0
        var lastActivity = ContinuousClock.now

        var isScan: Bool { isScanner || documents.count > ScanDetector.personalLimit }

        mutating func open(_ inode: Inode) {
            documents.insert(inode)
            inFlight += 1
            lastActivity = .now
        }
    }

    private let bursts = Mutex<[pid_t: Burst]>([:])

    /// What an open is part of, as far as known when it arrives.
    struct Opening {
        /// The caller then awaits the burst's end with ``documentsToClear(after:)``.
        let startsBurst: Bool
        /// A scan already (a scanner's name, or more documents than a person opens): the open should not wait for
        /// the server to confirm cached bytes, which a `grep -r` would pay once per document.
        let isScan: Bool
    }

    /// An open of `inode` by `pid` arrived; ``answered(_:by:served:)`` must follow.
    func opening(_ inode: Inode, by pid: pid_t) -> Opening {
        let joined = bursts.withLock { bursts -> Opening? in
            bursts[pid]?.open(inode)
            return bursts[pid].map { Opening(startsBurst: false, isScan: $0.isScan) }
        }
        if let joined { return joined }
        // Outside the lock, which every read takes; a racing open of the same process reads the same names.
        let isScanner = Self.isScanner(pid)
        return bursts.withLock { bursts in
            let isNew = bursts[pid] == nil
            bursts[pid, default: Burst(isScanner: isScanner)].open(inode)
            return Opening(startsBurst: isNew, isScan: bursts[pid]?.isScan ?? isScanner)
        }
    }

    /// - Parameter served: what the open served; nil when it failed.
    func answered(_ inode: Inode, by pid: pid_t, served: Served?) {
        update(pid) { burst in
            burst.inFlight -= 1
            if let served { burst.opened[inode] = served }
        }
    }

    /// A read or release of a file `pid` opened; `inFlight` for a request answered later.
    /// - Returns: whether a burst counts it; then ``finished(by:)`` must follow an `inFlight` one.
    @discardableResult
    func active(_ pid: pid_t, inFlight: Bool = false) -> Bool {
        update(pid) { burst in
            if inFlight { burst.inFlight += 1 }
        }
    }

    func finished(by pid: pid_t) {
        update(pid) { $0.inFlight -= 1 }
    }

    /// Waits until the burst of `pid` ends and returns the files to clear, with what they served: none for a scan.
    func documentsToClear(after pid: pid_t) async -> [Inode: Served] {
        while true {
            let (ended, wait) = bursts.withLock { bursts -> ([Inode: Served]?, Duration) in
                guard let burst = bursts[pid] else { return ([:], .zero) }
                let idle = ContinuousClock.now - burst.lastActivity
                guard burst.inFlight > 0 || idle < Self.quiet else {
                    bursts[pid] = nil
                    return (burst.isScan ? [:] : burst.opened, .zero)
                }
                return (nil, burst.inFlight > 0 ? Self.quiet : Self.quiet - idle)
            }
            if let ended { return ended }
            try? await Task.sleep(for: wait)
        }
    }

    /// Changes the burst of `pid`, if one is running, and marks it active; returns whether one was.
    @discardableResult
    private func update(_ pid: pid_t, _ change: (inout Burst) -> Void) -> Bool {
        bursts.withLock { bursts in
            guard var burst = bursts[pid] else { return false }
            change(&burst)
            burst.lastActivity = .now
            bursts[pid] = burst
            return true
        }
    }

    /// Whether `pid` or its parent (`find -exec cat {} \;`) has a scanner's name. 0 is a process the mount cannot
    /// see (another pid namespace).
    private static func isScanner(_ pid: pid_t) -> Bool {
        guard pid > 0 else { return false }
        if let name = procFile(pid, "comm"), isScannerName(name) { return true }
        // `stat` is "pid (comm) state ppid …"; comm may contain spaces and parentheses, so parse after the last ")".
        guard let stat = procFile(pid, "stat"), let end = stat.lastIndex(of: ")") else { return false }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 1, let parent = pid_t(fields[1]), parent > 0 else { return false }
        return procFile(parent, "comm").map(isScannerName) ?? false
    }

    private static func isScannerName(_ name: String) -> Bool {
        scannerNames.contains(name) || scannerPrefixes.contains { name.hasPrefix($0) } || name.contains("thumb")
    }

    /// The start of `/proc/<pid>/<file>` without its final newline; nil once the process is gone.
    private static func procFile(_ pid: pid_t, _ file: String) -> String? {
        let descriptor = Glibc.open("/proc/\(pid)/\(file)", O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self)
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }
}
