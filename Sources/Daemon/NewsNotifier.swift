import AsyncHelpers
import ControlProtocol
import Desktop
import Foundation
import Logging
import MetadataStore
import SystemSupport

/// How the daemon notifies the desktop (profile settings `notifications`, `notification_interval`).
public struct NotificationSettings: Sendable {
    /// The session bus (`DBUS_SESSION_BUS_ADDRESS`); without one, nothing is sent.
    public var busAddress: String
    /// At most one notification about new documents per interval; what later refreshes find within it waits and
    /// goes out in the next one.
    public var minimumInterval: Duration

    public init(busAddress: String, minimumInterval: Duration = .seconds(60)) {
        self.busAddress = busAddress
        self.minimumInterval = minimumInterval
    }
}

/// Desktop notifications about one profile (issue 19): what refreshes found new or changed — documents and
/// announcements — one notification per refresh, grouped per course, whose actions open the course's folder; and a
/// refused login, once per outage. Nothing about the first refresh that fills an empty store (everything is new
/// then), nothing when a refresh found nothing, nothing for a logout the person asked for.
actor NewsNotifier {
    /// One new or changed document or announcement.
    struct Find: Sendable, Hashable {
        /// In the order a notification lists them.
        enum Kind: Int, Sendable { case document, announcement }
        enum Change: Int, Sendable { case new, changed }
        var course: CourseHeading
        var id: String
        var name: String
        var kind: Kind
        var change: Change
    }

    private let bus: NotificationBus
    private let store: MetadataStore
    private let mountpoint: String
    private let loginCommand: String
    private let minimumInterval: Duration
    private let logger: Logger
    private var lastPosted: ContinuousClock.Instant?
    /// Finds waiting for the interval to pass, by item, in the order found.
    private var pending: [Find] = []
    private var flush: Task<Void, Never>?
    /// Whether this outage's refused login was notified already.
    private var loginNotified = false
    /// The server link's state changes, in the order they happened.
    private nonisolated let serverChanges: AsyncStream<ServerChange>.Continuation
    private let serverChangeStream: AsyncStream<ServerChange>

    private struct ServerChange: Sendable {
        var state: DaemonStatus.Server
        var problem: String?
        var loggedOut: Bool
    }

    init(
        bus: NotificationBus, store: MetadataStore, mountpoint: String, loginCommand: String,
        minimumInterval: Duration, logger: Logger
    ) {
        self.bus = bus
        self.store = store
        self.mountpoint = mountpoint
        self.loginCommand = loginCommand
        self.minimumInterval = minimumInterval
        self.logger = logger
        (serverChangeStream, serverChanges) = AsyncStream.makeStream()
    }

    /// The daemon's notifier, when the profile wants notifications and the session bus answers.
    static func connect(
        _ configuration: DaemonConfiguration, store: MetadataStore, logger: Logger
    ) async -> NewsNotifier? {
        guard let settings = configuration.notifications else { return nil }
        do throws(NotificationError) {
            let bus = try await BlockingPool.shared.run { () throws(NotificationError) in
                try NotificationBus(address: settings.busAddress)
            }
            return NewsNotifier(
                bus: bus, store: store, mountpoint: configuration.mountpoint, loginCommand: configuration.loginCommand,
                minimumInterval: settings.minimumInterval, logger: logger)
        } catch {
            logger.warning("no desktop notifications: \(error)")
            return nil
        }
    }

    /// Takes what a refresh found; posts at once, or when ``NotificationSettings/minimumInterval`` has passed since
    /// the last notification.
    func refreshed(_ summary: RefreshSummary) async {
        let items =
            summary.added.filter { $0.highlight == .new }.map { ($0, Find.Change.new) }
            + summary.changed.map { ($0, Find.Change.changed) }
        let relevant = items.filter { $0.0.item == .document || $0.0.item == .announcement }
        guard !relevant.isEmpty else { return }
        let courses: [Int64: CourseHeading]
        do throws(StoreError) {
            courses = try await store.run { store throws(StoreError) in
                try store.courses(containing: relevant.map(\.0.inode))
            }
        } catch {
            logger.warning("no notification about the refresh: \(error)")
            return
        }
        for (item, change) in relevant {
            guard let course = courses[item.inode] else { continue }
            let find = Find(
                course: course, id: item.studipID ?? String(item.inode),
                name: String(item.path.split(separator: "/").last ?? Substring(item.path)),
                kind: item.item == .announcement ? .announcement : .document, change: change)
            // New and then changed before the notification went out is still new.
            if let index = pending.firstIndex(where: { $0.id == find.id && $0.kind == find.kind }) {
                pending[index].name = find.name
            } else {
                pending.append(find)
            }
        }
        scheduleFlush()
    }

    /// Posts what is pending once the interval since the last notification is over, unless a flush is scheduled or
    /// still posting: finds that arrive meanwhile wait for the next one.
    private func scheduleFlush() {
        guard flush == nil, !pending.isEmpty else { return }
        let wait = lastPosted.map { minimumInterval - (ContinuousClock.now - $0) } ?? .zero
        flush = Task {
            if wait > .zero { try? await Task.sleep(for: wait) }
            await postPending()
        }
    }

    /// Takes a change of the server link's state (called on the link's actor, so it must not wait); they are
    /// handled one at a time, in order, by ``handleServerChanges()``.
    nonisolated func serverChanged(to state: DaemonStatus.Server, problem: String?, loggedOut: Bool) {
        serverChanges.yield(ServerChange(state: state, problem: problem, loggedOut: loggedOut))
    }

    /// Runs until ``close()``: notifies a refused login once per outage; an answer from the server ends the outage.
    func handleServerChanges() async {
        for await change in serverChangeStream {
            await handle(change.state, problem: change.problem, loggedOut: change.loggedOut)
        }
    }

    private func handle(_ state: DaemonStatus.Server, problem: String?, loggedOut: Bool) async {
        switch state {
        case .online:
            loginNotified = false
        case .loginNeeded where !loggedOut && !loginNotified:
            loginNotified = true
            await post(
                DesktopNotification(
                    summary: "Stud.IP login needed",
                    body: Self.escaped(
                        (problem.map { $0 + ". " } ?? "")
                            + "Documents already downloaded still open; run \(loginCommand) to log in again."),
                    urgency: .critical))
        case .loginNeeded, .offline, .unknown:
            break
        }
    }

    /// Tells how an operation of the outbox ended (docs/writing.md, "The outbox"): an upload's or a new version's
    /// success, any refusal, a conflict and an upload that cannot be confirmed. Not rate-limited: each is about
    /// something the person did. A discard (the person's own doing) and other operations' success are not told.
    func outboxSettled(_ item: OutboxItem, _ settlement: OutboxSettlement) async {
        guard let notification = Self.notification(for: item, settlement) else { return }
        await post(notification)
    }

    /// Closes the connection to the bus; blocks until its signal thread ended. Finds still waiting for the interval
    /// are not notified.
    nonisolated func close() {
        serverChanges.finish()
        bus.close()
    }

    /// The flush stays scheduled while the call runs (up to 5 s), so finds of a refresh that ends meanwhile wait
    /// for the interval after this notification instead of being posted at once.
    private func postPending() async {
        let finds = pending
        pending = []
        if let notification = Self.notification(for: finds, mountpoint: mountpoint) {
            await post(notification)
            // From when the server had it, so a slow call cannot bring the next one closer.
            lastPosted = .now
        }
        flush = nil
        scheduleFlush()
    }

    private func post(_ notification: DesktopNotification) async {
        do throws(NotificationError) {
            _ = try await BlockingPool.shared.run { [bus] () throws(NotificationError) in try bus.post(notification) }
        } catch {
            logger.warning("desktop notification not shown: \(error)")
        }
    }

    // MARK: - Wording

    /// How many course lines a notification lists, and how many names per course.
    static let coursesShown = 5
    static let namesShown = 3

    /// The notification for `finds`: one course — "INF-101: 3 new documents" with their names; several — one line
    /// per course. Clicking opens the course's folder (several: the mount), buttons open each course's.
    static func notification(for finds: [Find], mountpoint: String) -> DesktopNotification? {
        // Courses by name, and in each the documents before the announcements, new before changed, by name: the
        // same finds read the same whatever order the courses' refreshes finished in.
        let groups = Dictionary(grouping: finds, by: \.course.courseID).values
            .map { group in
                group.sorted {
                    ($0.kind.rawValue, $0.change.rawValue, $0.name) < ($1.kind.rawValue, $1.change.rawValue, $1.name)
                }
            }
            .sorted { $0[0].course.label.localizedStandardCompare($1[0].course.label) == .orderedAscending }
        guard let only = groups.first, let course = only.first?.course else { return nil }
        func folder(_ course: CourseHeading) -> String { mountpoint + "/" + course.path }
        if groups.count == 1 {
            return DesktopNotification(
                summary: "\(course.label): \(counts(only))", body: escaped(names(only)),
                actions: [.init(key: "default", label: "Open folder", opens: folder(course))],
                category: "transfer.complete")
        }
        var lines = groups.prefix(coursesShown).map { group in
            "\(group[0].course.label): \(counts(group)) — \(names(group))"
        }
        if groups.count > coursesShown { lines.append("and \(groups.count - coursesShown) more courses") }
        var actions = [DesktopNotification.Action(key: "default", label: "Open Stud.IP folder", opens: mountpoint)]
        for (index, group) in groups.prefix(3).enumerated() {
            actions.append(
                .init(key: "course-\(index)", label: "Open \(group[0].course.label)", opens: folder(group[0].course)))
        }
        return DesktopNotification(
            summary: "New on Stud.IP in \(groups.count) courses", body: escaped(lines.joined(separator: "\n")),
            actions: actions, category: "transfer.complete")
    }

    /// The notification about an outbox entry that ended; nil for what is not told.
    static func notification(for item: OutboxItem, _ settlement: OutboxSettlement) -> DesktopNotification? {
        let sendsBytes = item.kind == .upload || item.kind == .newVersion
        switch settlement.result {
        case .done where sendsBytes:
            guard let stored = settlement.name else {
                // Stud.IP lets a student not read back what they handed in: the 201 is the confirmation.
                return DesktopNotification(
                    summary: "Handed in \(item.name)", body: escaped("Stud.IP confirmed it (\(item.place))."),
                    category: "transfer.complete")
            }
            let renamed = stored == item.name ? "" : " as \(stored)"
            return DesktopNotification(
                summary: "Uploaded \(stored)",
                body: escaped("Stud.IP stored \(item.name)\(renamed); the course sees it now."),
                category: "transfer.complete")
        case .done, .discarded:
            return nil
        case .conflict:
            return DesktopNotification(
                summary: "\(item.name) changed on Stud.IP",
                body: escaped(
                    "\(settlement.reason ?? "The document changed meanwhile"): kept yours as \(settlement.name ?? "a new document")."
                ),
                category: "transfer.complete")
        case .failed, .unconfirmed:
            let what = item.kind == .upload || item.kind == .newVersion ? "Upload" : "Change"
            let verdict = settlement.result == .failed ? "failed" : "not confirmed"
            return DesktopNotification(
                summary: "\(what) \(verdict): \(item.name)",
                body: escaped(
                    (settlement.reason ?? "Stud.IP refused it") + ". It stays in the outbox: campusfs outbox retry "
                        + "\(item.id) sends it again, campusfs outbox discard \(item.id) drops it."),
                urgency: .critical, category: "transfer.error")
        }
    }

    /// "3 new documents, 1 changed document, 1 new announcement".
    static func counts(_ finds: [Find]) -> String {
        let parts: [(Find.Kind, Find.Change, String, String)] = [
            (.document, .new, "new document", "new documents"),
            (.document, .changed, "changed document", "changed documents"),
            (.announcement, .new, "new announcement", "new announcements"),
            (.announcement, .changed, "changed announcement", "changed announcements"),
        ]
        return parts.compactMap { kind, change, one, many in
            let count = finds.count { $0.kind == kind && $0.change == change }
            return count == 0 ? nil : "\(count) \(count == 1 ? one : many)"
        }.joined(separator: ", ")
    }

    /// "Vorlesung 06.pdf, Übung 3.pdf, Blatt 2.pdf, …".
    static func names(_ finds: [Find]) -> String {
        let shown = finds.prefix(namesShown).map(\.name)
        return shown.joined(separator: ", ") + (finds.count > namesShown ? ", …" : "")
    }

    /// Notification servers read the body as markup (the specification's `body-markup`: GNOME, KDE, dunst), so a
    /// file named `Q&A <draft>.pdf` is escaped to show as it is named.
    static func escaped(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
    }
}
