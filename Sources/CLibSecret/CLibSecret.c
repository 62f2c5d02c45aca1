#include "CLibSecret.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static campusfs_libsecret functions;
static const char *failure;
static pthread_once_t loaded = PTHREAD_ONCE_INIT;

/// dlerror's message outlives the next dlerror call.
static const char *kept(const char *message) {
    const char *copy = message != NULL ? strdup(message) : NULL;
    return copy != NULL ? copy : "cannot load libsecret-1.so.0";
}

// Never closed: GLib's type system cannot be unloaded, and the functions stay valid for the process's life.
static void load(void) {
    void *library = dlopen("libsecret-1.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        failure = kept(dlerror());
        return;
    }
    // dlsym on the library's handle also finds the functions of what it depends on (GIO, GObject, GLib).
#define CAMPUSFS_LIBSECRET_RESOLVE(name)                                                                               \
    functions.name = (__typeof__(name) *)dlsym(library, #name);                                                       \
    if (functions.name == NULL) {                                                                                      \
        failure = kept(dlerror());                                                                                     \
        return;                                                                                                        \
    }
    CAMPUSFS_LIBSECRET_FUNCTIONS(CAMPUSFS_LIBSECRET_RESOLVE)
#undef CAMPUSFS_LIBSECRET_RESOLVE
}

const campusfs_libsecret *campusfs_libsecret_load(const char **message) {
    pthread_once(&loaded, load);
    if (failure != NULL) {
        *message = failure;
        return NULL;
    }
    return &functions;
}

const SecretSchema *campusfs_secret_schema(void) {
    static const SecretSchema schema = {
        "org.campusfs.Secret",
        SECRET_SCHEMA_NONE,
        {
            {"application", SECRET_SCHEMA_ATTRIBUTE_STRING},
            {"profile", SECRET_SCHEMA_ATTRIBUTE_STRING},
            {"server", SECRET_SCHEMA_ATTRIBUTE_STRING},
            {"kind", SECRET_SCHEMA_ATTRIBUTE_STRING},
            {NULL, 0},
        },
    };
    return &schema;
}
