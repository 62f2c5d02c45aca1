internal import CGio
import Dispatch
import Foundation
import Synchronization

/// One notification, as the freedesktop Notifications interface takes it.
public struct DesktopNotification: Sendable, Hashable {
    /// A button (or, keyed `default`, a click on the notification) that opens a folder.
    public struct Action: Sendable, Hashable {
        public var key: String
        public var label: String
        /// The path `xdg-open` opens when the person chooses the action.
        public var opens: String

        public init(key: String, label: String, opens: String) {
            self.key = key
            self.label = label
            self.opens = opens
        }
    }

    public enum Urgency: UInt8, Sendable {
        case low = 0
        case normal = 1
        case critical = 2
    }

    public var summary: String
    public var body: String
    public var actions: [Action]
    public var urgency: Urgency
    /// The specification's category (`transfer.complete`, …), which servers may use for an icon or a sound.
    public var category: String?

    public init(
        summary: String, body: String, actions: [Action] = [], urgency: Urgency = .normal, category: String? = nil
    ) {
        self.summary = summary
        self.body = body
        self.actions = actions
        self.urgency = urgency
        self.category = category
    }
}

/// Why a notification could not be shown: no session bus, no notification server, the bus went away.
public struct NotificationError: Error, Sendable, CustomStringConvertible {
    public var description: String
}

/// The session's notification server (org.freedesktop.Notifications on the D-Bus session bus), through GIO's
/// GDBus — the library the keyring's libsecret already brings, loaded on the first connection (CGio) so that
/// the commands without notifications start without it (docs/performance.md, "Process start"). One connection for the daemon's life, so the server
/// can tell it which action the person chose: a notification's actions only work while its sender is connected.
///
/// ``post(_:)`` is a synchronous D-Bus call (up to 5 s): call it from a thread that may block. The server's
/// signals (an action chosen, a notification closed) arrive on the thread `campusfs-desktop`, which runs a GLib
/// main loop for them and nothing else, and which opens the chosen folder with ``Opener``.
public final class NotificationBus: Sendable {
    private let gio: campusfs_gio
    private let connection: BusConnection
    private let application: String
    private let events: Events
    private let loop: MainLoop
    private let closed = Mutex(false)
    private let loopEnded = DispatchSemaphore(value: 0)

    /// Connects to the bus at `address` (the session's `DBUS_SESSION_BUS_ADDRESS`) and starts listening for the
    /// server's signals. Blocks until connected. A chosen action's folder opens in the session's file manager
    /// (``showFolder(_:on:)``), else with ``Opener``.
    public init(address: String, application: String = "CampusFS") throws(NotificationError) {
        var reason: UnsafePointer<CChar>?
        guard let loaded = campusfs_gio_load(&reason) else {
            throw NotificationError(
                description: "cannot load GIO for the session bus: "
                    + (reason.map { String(cString: $0) } ?? "unknown reason")
                    + "; install it (Debian and Ubuntu: the package libglib2.0-0)")
        }
        let gio = loaded.pointee
        self.gio = gio
        var message: UnsafeMutablePointer<CChar>?
        guard let raw = campusfs_bus_open(address, &message) else {
            defer { gio.g_free(message) }
            throw NotificationError(
                description: "cannot connect to the session bus at \(address): "
                    + (message.map { String(cString: $0) } ?? "unknown error"))
        }
        let connection = BusConnection(raw: raw)
        self.connection = connection
        self.application = application
        events = Events { path in
            if !NotificationBus.showFolder(path, on: connection, gio: gio) { _ = Opener.open(path) }
        }
        loop = MainLoop(gio: gio)
        let started = DispatchSemaphore(value: 0)
        let thread = Thread { [connection, events, loop, loopEnded] in
            gio.g_main_context_push_thread_default(loop.context)
            let retained = Unmanaged.passRetained(events)
            let subscription = UnsafeMutablePointer<campusfs_subscription>.allocate(capacity: 1)
            subscription.initialize(
                to: campusfs_subscription(
                    event: { id, action, context in
                        guard let context else { return }
                        Unmanaged<Events>.fromOpaque(context).takeUnretainedValue()
                            .handle(id: id, action: action.map { String(cString: $0) })
                    }, context: retained.toOpaque()))
            let id = campusfs_subscribe(connection.raw, subscription)
            started.signal()
            gio.g_main_loop_run(loop.loop)
            gio.g_dbus_connection_signal_unsubscribe(connection.raw, id)
            // The subscription's data may be used until what was queued for it is dispatched.
            while gio.g_main_context_iteration(loop.context, 0) != 0 {}
            gio.g_main_context_pop_thread_default(loop.context)
            subscription.deallocate()
            retained.release()
            loopEnded.signal()
        }
        thread.name = "campusfs-desktop"
        thread.start()
        started.wait()
    }

    /// Shows `notification`; returns the server's id for it.
    @discardableResult
    public func post(_ notification: DesktopNotification) throws(NotificationError) -> UInt32 {
        let strings = notification.actions.flatMap { [$0.key, $0.label] }
        var message: UnsafeMutablePointer<CChar>?
        let id = withCStrings(strings) { actions in
            campusfs_notify(
                connection.raw, application, "folder-remote", notification.summary, notification.body, actions,
                notification.urgency.rawValue, notification.category, -1, &message)
        }
        guard id != 0 else {
            defer { gio.g_free(message) }
            throw NotificationError(
                description: "the notification server did not take the notification: "
                    + (message.map { String(cString: $0) } ?? "unknown error"))
        }
        events.remember(id: id, actions: notification.actions)
        return id
    }

    /// Asks the session's file manager to show `path` (`org.freedesktop.FileManager1`, which GNOME Files, Dolphin,
    /// Nemo, Caja and Thunar offer): it starts by D-Bus activation outside our process, so stopping the mount's
    /// unit does not close its window, and it needs no `DISPLAY` in our environment, which a user unit may lack.
    /// False when no file manager answers. Blocks for the call (up to 10 s).
    fileprivate static func showFolder(_ path: String, on connection: BusConnection, gio: campusfs_gio) -> Bool {
        var message: UnsafeMutablePointer<CChar>?
        let shown = campusfs_show_folder(connection.raw, URL(fileURLWithPath: path).absoluteString, &message) != 0
        gio.g_free(message)
        return shown
    }

    /// Stops listening and closes the connection; blocks until both are done.
    public func close() {
        guard
            !closed.withLock({ closed in
                defer { closed = true }
                return closed
            })
        else { return }
        // A quit before the loop runs is lost (GLib clears it when the loop starts), so it repeats until the loop
        // thread ends.
        repeat {
            gio.g_main_loop_quit(loop.loop)
            gio.g_main_context_wakeup(loop.context)
        } while loopEnded.wait(timeout: .now() + .milliseconds(50)) == .timedOut
        _ = gio.g_dbus_connection_close_sync(connection.raw, nil, nil)
    }

    deinit {
        close()
        gio.g_object_unref(UnsafeMutableRawPointer(connection.raw))
    }
}

/// What the actions of the notifications still shown open, by the server's id.
private final class Events: Sendable {
    private let folders = Mutex<[UInt32: [String: String]]>([:])
    private let open: @Sendable (String) -> Void
    /// A server that never says "closed" (some forget to) must not make this grow for the daemon's life.
    private static let remembered = 64

    init(open: @escaping @Sendable (String) -> Void) { self.open = open }

    func remember(id: UInt32, actions: [DesktopNotification.Action]) {
        guard !actions.isEmpty else { return }
        folders.withLock { folders in
            folders[id] = Dictionary(actions.map { ($0.key, $0.opens) }, uniquingKeysWith: { first, _ in first })
            if folders.count > Self.remembered, let oldest = folders.keys.min() { folders[oldest] = nil }
        }
    }

    /// An action chosen (`action`) or the notification closed (nil): only ids this connection posted count.
    func handle(id: UInt32, action: String?) {
        let path = folders.withLock { folders -> String? in
            guard let action else {
                folders[id] = nil
                return nil
            }
            // One action per notification: the server closes it after a click, and a repeated or forged signal
            // for the same id starts nothing more.
            return folders.removeValue(forKey: id)?[action]
        }
        guard let path else { return }
        // xdg-open may take a while; the loop thread stays free for the next signal.
        Thread { [open] in open(path) }.start()
    }
}

/// GDBus connections are thread-safe; the handle is only ever used through GIO's functions.
private final class BusConnection: @unchecked Sendable {
    let raw: OpaquePointer
    init(raw: OpaquePointer) { self.raw = raw }
}

/// The GLib main loop that delivers the server's signals, and its context; `g_main_loop_quit` may come from any
/// thread, everything else happens on the loop's thread.
private final class MainLoop: @unchecked Sendable {
    let context: OpaquePointer
    let loop: OpaquePointer
    private let gio: campusfs_gio

    init(gio: campusfs_gio) {
        self.gio = gio
        // GLib aborts the process itself when it cannot allocate: never nil.
        guard let context = gio.g_main_context_new(), let loop = gio.g_main_loop_new(context, 0) else {
            fatalError("g_main_context_new or g_main_loop_new returned NULL")
        }
        self.context = context
        self.loop = loop
    }

    deinit {
        gio.g_main_loop_unref(loop)
        gio.g_main_context_unref(context)
    }
}

/// Runs `body` with `strings` as a NULL-terminated C array that lives as long as the call.
private func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> T) -> T {
    let duplicates = strings.map { strdup($0) }
    defer { for duplicate in duplicates { free(duplicate) } }
    let pointers = duplicates.map { UnsafePointer($0) } + [nil]
    return pointers.withUnsafeBufferPointer { body($0.baseAddress) }
}
