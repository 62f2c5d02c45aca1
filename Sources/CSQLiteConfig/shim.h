// sqlite3_config(3) is variadic, which Swift cannot call: a non-variadic wrapper for the one option the store sets
// (docs/search.md, "grep"). The system's libsqlite3, the one GRDB links.
#include <sqlite3.h>

/// Turns SQLite's memory statistics off for the whole process: with them on (Debian's default), every allocation
/// and free takes one process-wide mutex, which `campusfs grep`'s reading threads then wait on. Must run before
/// SQLite initialises (the first connection opens); afterwards it returns SQLITE_MISUSE and changes nothing.
static inline int campusfs_sqlite3_disable_memory_statistics(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
