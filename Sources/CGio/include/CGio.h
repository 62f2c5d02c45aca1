// GIO's D-Bus client (GDBus) for the module Desktop, loaded with dlopen when the daemon first connects for
// notifications, so that every other command starts without GIO, GObject and GLib (docs/performance.md, "Process
// start"). The prototypes are GLib's own (`__typeof__`), so a changed signature fails to compile. Here too: the
// freedesktop calls with their variadic GVariant constructors and the signal callback's C signature, the parts Swift
// cannot write itself.
#pragma once
#include <gio/gio.h>
#include <stdint.h>

// The functions Desktop calls itself, named as GLib names them.
#define CAMPUSFS_GIO_FUNCTIONS(F)                                                                                      \
    F(g_dbus_connection_close_sync)                                                                                    \
    F(g_dbus_connection_signal_unsubscribe)                                                                            \
    F(g_free)                                                                                                          \
    F(g_main_context_iteration)                                                                                        \
    F(g_main_context_new)                                                                                              \
    F(g_main_context_pop_thread_default)                                                                               \
    F(g_main_context_push_thread_default)                                                                              \
    F(g_main_context_unref)                                                                                            \
    F(g_main_context_wakeup)                                                                                           \
    F(g_main_loop_new)                                                                                                 \
    F(g_main_loop_quit)                                                                                                \
    F(g_main_loop_run)                                                                                                 \
    F(g_main_loop_unref)                                                                                               \
    F(g_object_unref)

/// The loaded functions; all of them are set.
typedef struct {
#define CAMPUSFS_GIO_FIELD(name) __typeof__(name) *_Nonnull name;
    CAMPUSFS_GIO_FUNCTIONS(CAMPUSFS_GIO_FIELD)
#undef CAMPUSFS_GIO_FIELD
} campusfs_gio;

/// Loads libgio-2.0.so.0 (once per process; later calls return the same answer): its functions, or NULL and
/// `*message`, dlopen's or dlsym's reason (static storage, never freed), when the library or a function is missing.
/// The functions below may only be called after it succeeded.
const campusfs_gio *_Nullable campusfs_gio_load(const char *_Nullable *_Nonnull message);

/// Connects to the message bus at `address` (a session bus's `unix:path=…`); NULL and `*message` (to free with
/// g_free) on failure. The connection does not exit the process when the bus goes away.
GDBusConnection *_Nullable campusfs_bus_open(const char *_Nonnull address, char *_Nullable *_Nonnull message);

/// org.freedesktop.Notifications.Notify: `actions` is a NULL-terminated list of key, label, key, label …; returns
/// the notification's id, or 0 and `*message` on failure (no notification server, a time-out).
uint32_t campusfs_notify(
    GDBusConnection *_Nonnull connection, const char *_Nonnull application, const char *_Nonnull icon,
    const char *_Nonnull summary, const char *_Nonnull body, const char *_Nullable const *_Nullable actions,
    uint8_t urgency, const char *_Nullable category, int32_t timeout, char *_Nullable *_Nonnull message);

/// org.freedesktop.FileManager1.ShowFolders: the session's file manager (Nautilus, Dolphin, Nemo, Thunar …) opens a
/// window for the folder `uri`, started by D-Bus activation in a process of its own rather than as our child (which
/// systemd would stop with the unit). False and `*message` when no file manager answers.
gboolean campusfs_show_folder(
    GDBusConnection *_Nonnull connection, const char *_Nonnull uri, char *_Nullable *_Nonnull message);

/// What the notification server says about a notification: an action the person chose (`action` set) or that the
/// notification closed (`action` NULL).
typedef void (*campusfs_notification_event)(uint32_t id, const char *_Nullable action, void *_Nullable context);

typedef struct {
    campusfs_notification_event _Nonnull event;
    void *_Nullable context;
} campusfs_subscription;

/// Subscribes to the notification server's signals (only from the name's owner), delivered in the calling thread's
/// default main context; `subscription` must outlive the subscription.
guint campusfs_subscribe(GDBusConnection *_Nonnull connection, const campusfs_subscription *_Nonnull subscription);
