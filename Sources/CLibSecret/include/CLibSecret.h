// libsecret's functions, loaded with dlopen when a command first needs the keyring, so that every other command
// starts without libsecret, GIO, GObject and GLib and their own libraries (docs/performance.md, "Process start").
// The prototypes are libsecret's and GLib's own (`__typeof__`), so a changed signature fails to compile.
#pragma once
#include <libsecret/secret.h>

// Each function SecretStore calls, named as the library names it.
#define CAMPUSFS_LIBSECRET_FUNCTIONS(F)                                                                                \
    F(g_bus_get_sync)                                                                                                  \
    F(g_dbus_connection_set_exit_on_close)                                                                             \
    F(g_dbus_error_quark)                                                                                              \
    F(g_error_free)                                                                                                    \
    F(g_free)                                                                                                          \
    F(g_hash_table_insert)                                                                                             \
    F(g_hash_table_new_full)                                                                                           \
    F(g_hash_table_unref)                                                                                              \
    F(g_list_free_full)                                                                                                \
    F(g_object_unref)                                                                                                  \
    F(g_str_equal)                                                                                                     \
    F(g_str_hash)                                                                                                      \
    F(g_strdup)                                                                                                        \
    F(secret_item_delete_sync)                                                                                         \
    F(secret_item_get_locked)                                                                                          \
    F(secret_item_get_secret)                                                                                          \
    F(secret_service_get_type)                                                                                         \
    F(secret_service_open_sync)                                                                                        \
    F(secret_service_search_sync)                                                                                      \
    F(secret_service_store_sync)                                                                                       \
    F(secret_value_get)                                                                                                \
    F(secret_value_new)                                                                                                \
    F(secret_value_unref)

/// The loaded functions; all of them are set.
typedef struct {
#define CAMPUSFS_LIBSECRET_FIELD(name) __typeof__(name) *_Nonnull name;
    CAMPUSFS_LIBSECRET_FUNCTIONS(CAMPUSFS_LIBSECRET_FIELD)
#undef CAMPUSFS_LIBSECRET_FIELD
} campusfs_libsecret;

/// Loads libsecret-1.so.0 (once per process; later calls return the same answer): its functions, or NULL and
/// `*message`, dlopen's or dlsym's reason (static storage, never freed), when the library or a function is missing.
const campusfs_libsecret *_Nullable campusfs_libsecret_load(const char *_Nullable *_Nonnull message);

/// The schema of CampusFS's keyring items; `secret-tool lookup application campusfs profile P server S kind K`
/// finds them. A struct with a fixed array of 32 attributes, which Swift cannot write itself.
const SecretSchema *_Nonnull campusfs_secret_schema(void);
