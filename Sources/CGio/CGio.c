#include "CGio.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// The functions only the calls below use; the variadic ones Swift could not import.
#define CAMPUSFS_GIO_CALLS(F)                                                                                          \
    F(g_dbus_connection_call_sync)                                                                                     \
    F(g_dbus_connection_new_for_address_sync)                                                                          \
    F(g_dbus_connection_signal_subscribe)                                                                              \
    F(g_error_free)                                                                                                    \
    F(g_strdup)                                                                                                        \
    F(g_variant_builder_add)                                                                                           \
    F(g_variant_builder_init)                                                                                          \
    F(g_variant_get)                                                                                                   \
    F(g_variant_is_of_type)                                                                                            \
    F(g_variant_new)                                                                                                   \
    F(g_variant_new_byte)                                                                                              \
    F(g_variant_new_string)                                                                                            \
    F(g_variant_unref)

static campusfs_gio functions;
static struct {
#define CAMPUSFS_GIO_FIELD(name) __typeof__(name) *name;
    CAMPUSFS_GIO_CALLS(CAMPUSFS_GIO_FIELD)
#undef CAMPUSFS_GIO_FIELD
} calls;
static const char *failure;
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

/// GLib's G_VARIANT_TYPE without its check, which is a call into GLib (as GLib defines it under G_DISABLE_CHECKS).
#define TYPE(string) ((const GVariantType *)(string))

/// dlerror's message outlives the next dlerror call.
static const char *kept(const char *message) {
    const char *copy = message != NULL ? strdup(message) : NULL;
    return copy != NULL ? copy : "cannot load libgio-2.0.so.0";
}

// Never closed: GLib's type system cannot be unloaded, and the functions stay valid for the process's life.
static void load(void) {
    void *library = dlopen("libgio-2.0.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        failure = kept(dlerror());
        return;
    }
    // dlsym on the library's handle also finds the functions of what it depends on (GObject, GLib).
#define CAMPUSFS_GIO_RESOLVE(table, name)                                                                              \
    table.name = (__typeof__(name) *)dlsym(library, #name);                                                           \
    if (table.name == NULL) {                                                                                          \
        failure = kept(dlerror());                                                                                     \
        return;                                                                                                        \
    }
#define CAMPUSFS_GIO_RESOLVE_FUNCTION(name) CAMPUSFS_GIO_RESOLVE(functions, name)
#define CAMPUSFS_GIO_RESOLVE_CALL(name) CAMPUSFS_GIO_RESOLVE(calls, name)
    CAMPUSFS_GIO_FUNCTIONS(CAMPUSFS_GIO_RESOLVE_FUNCTION)
    CAMPUSFS_GIO_CALLS(CAMPUSFS_GIO_RESOLVE_CALL)
#undef CAMPUSFS_GIO_RESOLVE_CALL
#undef CAMPUSFS_GIO_RESOLVE_FUNCTION
#undef CAMPUSFS_GIO_RESOLVE
}

const campusfs_gio *campusfs_gio_load(const char **message) {
    pthread_once(&loaded, load);
    if (failure != NULL) {
        *message = failure;
        return NULL;
    }
    return &functions;
}

/// `*message` from `error`, which it frees.
static void take(GError *error, char **message) {
    *message = calls.g_strdup(error != NULL ? error->message : "unknown error");
    if (error != NULL) calls.g_error_free(error);
}

GDBusConnection *campusfs_bus_open(const char *address, char **message) {
    GError *error = NULL;
    GDBusConnection *connection = calls.g_dbus_connection_new_for_address_sync(
        address, G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT | G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION, NULL,
        NULL, &error);
    if (connection == NULL) take(error, message);
    return connection;
}

uint32_t campusfs_notify(
    GDBusConnection *connection, const char *application, const char *icon, const char *summary, const char *body,
    const char *const *actions, uint8_t urgency, const char *category, int32_t timeout, char **message) {
    GVariantBuilder actionList;
    calls.g_variant_builder_init(&actionList, TYPE("as"));
    for (; actions != NULL && *actions != NULL; actions++) calls.g_variant_builder_add(&actionList, "s", *actions);
    GVariantBuilder hints;
    calls.g_variant_builder_init(&hints, TYPE("a{sv}"));
    calls.g_variant_builder_add(&hints, "{sv}", "urgency", calls.g_variant_new_byte(urgency));
    if (category != NULL) calls.g_variant_builder_add(&hints, "{sv}", "category", calls.g_variant_new_string(category));
    GError *error = NULL;
    GVariant *reply = calls.g_dbus_connection_call_sync(
        connection, "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
        "org.freedesktop.Notifications", "Notify",
        calls.g_variant_new(
            "(susssasa{sv}i)", application, (guint32)0, icon, summary, body, &actionList, &hints, timeout),
        TYPE("(u)"), G_DBUS_CALL_FLAGS_NONE, 5000, NULL, &error);
    if (reply == NULL) {
        take(error, message);
        return 0;
    }
    guint32 id = 0;
    calls.g_variant_get(reply, "(u)", &id);
    calls.g_variant_unref(reply);
    return id;
}

gboolean campusfs_show_folder(GDBusConnection *connection, const char *uri, char **message) {
    GVariantBuilder uris;
    calls.g_variant_builder_init(&uris, TYPE("as"));
    calls.g_variant_builder_add(&uris, "s", uri);
    GError *error = NULL;
    GVariant *reply = calls.g_dbus_connection_call_sync(
        connection, "org.freedesktop.FileManager1", "/org/freedesktop/FileManager1", "org.freedesktop.FileManager1",
        "ShowFolders", calls.g_variant_new("(ass)", &uris, ""), NULL, G_DBUS_CALL_FLAGS_NONE, 10000, NULL, &error);
    if (reply == NULL) {
        take(error, message);
        return FALSE;
    }
    calls.g_variant_unref(reply);
    return TRUE;
}

static void notification_signal(
    GDBusConnection *connection, const gchar *sender, const gchar *path, const gchar *interface, const gchar *member,
    GVariant *parameters, gpointer data) {
    const campusfs_subscription *subscription = data;
    guint32 id = 0;
    if (member == NULL) return;
    if (strcmp(member, "ActionInvoked") == 0 && calls.g_variant_is_of_type(parameters, TYPE("(us)"))) {
        const gchar *action = NULL;
        calls.g_variant_get(parameters, "(u&s)", &id, &action);
        subscription->event(id, action, subscription->context);
    } else if (strcmp(member, "NotificationClosed") == 0 && calls.g_variant_is_of_type(parameters, TYPE("(uu)"))) {
        guint32 reason = 0;
        calls.g_variant_get(parameters, "(uu)", &id, &reason);
        subscription->event(id, NULL, subscription->context);
    }
}

guint campusfs_subscribe(GDBusConnection *connection, const campusfs_subscription *subscription) {
    return calls.g_dbus_connection_signal_subscribe(
        connection, "org.freedesktop.Notifications", "org.freedesktop.Notifications", NULL,
        "/org/freedesktop/Notifications", NULL, G_DBUS_SIGNAL_FLAGS_NONE, notification_signal, (gpointer)subscription,
        NULL);
}
