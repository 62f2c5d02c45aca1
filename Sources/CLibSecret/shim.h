// libsecret (the Secret Service's client library) for the module SecretStore, and the one thing Swift cannot
// write itself: a static schema, a struct with a fixed array of 32 attributes.
#include <libsecret/secret.h>

/// The schema of CampusFS's keyring items; `secret-tool lookup application campusfs profile P server S kind K`
/// finds them.
static inline const SecretSchema *campusfs_secret_schema(void) {
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
