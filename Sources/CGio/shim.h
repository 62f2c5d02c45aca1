// GIO's D-Bus client (GDBus) for the module Desktop: the freedesktop Notifications interface. The variadic
// GVariant constructors and the signal callback's C signature are the parts Swift cannot write itself.
#include <gio/gio.h>
#include <stdint.h>

/// Connects to the message bus at `address` (a session bus's `unix:path=…`); NULL and `*message` (to free with
/// g_free) on failure. The connection does not exit the process when the bus goes away.
static inline GDBusConnection *campusfs_bus_open(const char *address, char **message) {
    GError *error = NULL;
    GDBusConnection *connection = g_dbus_connection_new_for_address_sync(
        address, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION, NULL,
        NULL, &error);
    if (connection == NULL) {
        *message = g_strdup(error != NULL ? error->message : "unknown error");
        g_clear_error(&error);
    }
    return connection;
}

/// org.freedesktop.Notifications.Notify: `actions` is a NULL-terminated list of key, label, key, label …; returns
/// the notification's id, or 0 and `*message` on failure (no notification server, a time-out).
static inline uint32_t campusfs_notify(
    GDBusConnection *connection, const char *application, const char *icon, const char *summary, const char *body,
    const char *const *actions, uint8_t urgency, const char *category, int32_t timeout, char **message) {
    GVariantBuilder actionList;
    g_variant_builder_init(&actionList, G_VARIANT_TYPE("as"));
    for (; actions != NULL && *actions != NULL; actions++) g_variant_builder_add(&actionList, "s", *actions);
    GVariantBuilder hints;
    g_variant_builder_init(&hints, G_VARIANT_TYPE("a{sv}"));
    g_variant_builder_add(&hints, "{sv}", "urgency", g_variant_new_byte(urgency));
    if (category != NULL) g_variant_builder_add(&hints, "{sv}", "category", g_variant_new_string(category));
    GError *error = NULL;
    GVariant *reply = g_dbus_connection_call_sync(
        connection, "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
        "org.freedesktop.Notifications", "Notify",
        g_variant_new("(susssasa{sv}i)", application, (guint32)0, icon, summary, body, &actionList, &hints, timeout),
        G_VARIANT_TYPE("(u)"), G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &error);
    if (reply == NULL) {
        *message = g_strdup(error != NULL ? error->message : "unknown error");
        g_clear_error(&error);
        return 0;
    }
    guint32 id = 0;
    g_variant_get(reply, "(u)", &id);
    g_variant_unref(reply);
    return id;
}

/// org.freedesktop.FileManager1.ShowFolders: the session's file manager (Nautilus, Dolphin, Nemo, Thunar …) opens a
/// window for the folder `uri`, started by D-Bus activation in a process of its own rather than as our child (which
/// systemd would stop with the unit). False and `*message` when no file manager answers.
static inline gboolean campusfs_show_folder(GDBusConnection *connection, const char *uri, char **message) {
    GVariantBuilder uris;
    g_variant_builder_init(&uris, G_VARIANT_TYPE("as"));
    g_variant_builder_add(&uris, "s", uri);
    GError *error = NULL;
    GVariant *reply = g_dbus_connection_call_sync(
        connection, "org.freedesktop.FileManager1", "/org/freedesktop/FileManager1", "org.freedesktop.FileManager1",
        "ShowFolders", g_variant_new("(ass)", &uris, ""), NULL, G_DBUS_CALL_FLAGS_NONE, 10000, NULL, &error);
    if (reply == NULL) {
        *message = g_strdup(error != NULL ? error->message : "unknown error");
        g_clear_error(&error);
        return FALSE;
    }
    g_variant_unref(reply);
    return TRUE;
}

/// What the notification server says about a notification: an action the person chose (`action` set) or that the
/// notification closed (`action` NULL).
typedef void (*campusfs_notification_event)(uint32_t id, const char *action, void *context);

typedef struct {
    campusfs_notification_event event;
    void *context;
} campusfs_subscription;

static inline void campusfs_notification_signal(
    GDBusConnection *connection, const gchar *sender, const gchar *path, const gchar *interface, const gchar *member,
    GVariant *parameters, gpointer data) {
    const campusfs_subscription *subscription = data;
    guint32 id = 0;
    if (g_strcmp0(member, "ActionInvoked") == 0 && g_variant_is_of_type(parameters, G_VARIANT_TYPE("(us)"))) {
        const gchar *action = NULL;
        g_variant_get(parameters, "(u&s)", &id, &action);
        subscription->event(id, action, subscription->context);
    } else if (g_strcmp0(member, "NotificationClosed") == 0 && g_variant_is_of_type(parameters, G_VARIANT_TYPE("(uu)"))) {
        guint32 reason = 0;
        g_variant_get(parameters, "(uu)", &id, &reason);
        subscription->event(id, NULL, subscription->context);
    }
}

/// Subscribes to the notification server's signals (only from the name's owner), delivered in the calling thread's
/// default main context; `subscription` must outlive the subscription.
static inline guint campusfs_subscribe(GDBusConnection *connection, const campusfs_subscription *subscription) {
    return g_dbus_connection_signal_subscribe(
        connection, "org.freedesktop.Notifications", "org.freedesktop.Notifications", NULL,
        "/org/freedesktop/Notifications", NULL, G_DBUS_SIGNAL_FLAGS_NONE, campusfs_notification_signal,
        (gpointer)subscription, NULL);
}
