// Internal: the modules that import SecretStore never load glib's headers (a 5 MB Clang module).
internal import CLibSecret
import Foundation

/// Why a keyring call did not give an answer.
enum KeyringFailure: Error {
    /// Nobody answers for the Secret Service on the bus (or the bus itself is gone): the file takes over.
    case absent
    /// The service answered with an error (a dismissed prompt, a locked collection): the user must act.
    case failed(operation: String, message: String)
    /// libsecret (or a function of it) could not be loaded: dlopen's reason. Whether a keyring runs is unknown, so
    /// the file must not take over silently.
    case libraryMissing(String)
}

/// One call's Secret Service, through libsecret, on the process's session bus.
///
/// libsecret always takes GLib's session bus, which GLib finds through the process's `DBUS_SESSION_BUS_ADDRESS`
/// (read once) — its `SecretService` constructor sets the bus type itself, so a connection of our own is refused.
///
/// libsecret is loaded on the first call (CLibSecret), not linked: the commands that never touch the keyring
/// start without it and GLib (docs/performance.md, "Process start").
struct Keyring {
    private let service: UnsafeMutablePointer<SecretService>
    /// libsecret's functions, and GLib's it needs.
    private let lib: campusfs_libsecret

    /// Opens the service, runs `body` and lets the service go.
    static func withService<T>(_ body: (Keyring) throws(KeyringFailure) -> T) throws(KeyringFailure) -> T {
        // GLib reads the process's environment, not the caller's, and would try to autolaunch a bus without it.
        guard let address = getenv("DBUS_SESSION_BUS_ADDRESS"), address.pointee != 0 else { throw .absent }
        var reason: UnsafePointer<CChar>?
        guard let loaded = campusfs_libsecret_load(&reason) else {
            throw .libraryMissing(reason.map { String(cString: $0) } ?? "unknown reason")
        }
        let lib = loaded.pointee
        var error: UnsafeMutablePointer<GError>?
        guard let bus = lib.g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error) else {
            // A bus that is gone (a stale address from an ended session) has no keyring on it.
            if let error { lib.g_error_free(error) }
            throw .absent
        }
        // GLib's default for its shared bus connection is to SIGTERM the process when the bus goes away (a
        // logout); a mounted filesystem outlives that.
        lib.g_dbus_connection_set_exit_on_close(bus, 0)
        lib.g_object_unref(UnsafeMutableRawPointer(bus))
        guard
            let service = lib.secret_service_open_sync(
                lib.secret_service_get_type(), nil, SECRET_SERVICE_NONE, nil, &error)
        else { throw failure(error, operation: "be reached", lib: lib) }
        defer { lib.g_object_unref(service) }
        return try body(Keyring(service: service, lib: lib))
    }

    /// Stores `secret` in the default collection, replacing the item with the same attributes.
    func store(_ secret: String, for key: SecretKey, label: String) throws(KeyringFailure) {
        let attributes = attributes(key)
        defer { lib.g_hash_table_unref(attributes) }
        let value = lib.secret_value_new(secret, -1, "text/plain")
        defer { lib.secret_value_unref(UnsafeMutableRawPointer(value)) }
        var error: UnsafeMutablePointer<GError>?
        let stored = lib.secret_service_store_sync(
            service, campusfs_secret_schema(), attributes, SECRET_COLLECTION_DEFAULT, label, value, nil, &error)
        guard stored != 0 else { throw Self.failure(error, operation: "store the secret", lib: lib) }
    }

    /// The secret stored for `key`, nil when there is none. An item the user leaves locked is an error, not a miss:
    /// the file must not answer for a keyring the user did not unlock.
    func lookup(_ key: SecretKey) throws(KeyringFailure) -> String? {
        let items = try search(attributes(key), loadingSecrets: true, operation: "read the secret")
        defer { lib.g_list_free_full(items, lib.g_object_unref) }
        guard let first = items?.pointee.data else { return nil }
        let item = first.assumingMemoryBound(to: SecretItem.self)
        guard lib.secret_item_get_locked(item) == 0 else {
            throw .failed(operation: "read the secret", message: "its collection stayed locked")
        }
        // No secret on an unlocked item: it was deleted between the search and the read.
        guard let value = lib.secret_item_get_secret(item) else { return nil }
        defer { lib.secret_value_unref(UnsafeMutableRawPointer(value)) }
        var length = 0
        guard let bytes = lib.secret_value_get(value, &length) else { return nil }
        return String(decoding: UnsafeRawBufferPointer(start: bytes, count: length), as: UTF8.self)
    }

    /// Deletes every item of `profile` (application campusfs); returns how many.
    func deleteAll(profile: String) throws(KeyringFailure) -> Int {
        let items = try search(
            table(["application": "campusfs", "profile": profile]), loadingSecrets: false,
            operation: "find the secrets to delete")
        defer { lib.g_list_free_full(items, lib.g_object_unref) }
        var count = 0
        var node = items
        while let current = node {
            if let item = current.pointee.data?.assumingMemoryBound(to: SecretItem.self) {
                var error: UnsafeMutablePointer<GError>?
                guard lib.secret_item_delete_sync(item, nil, &error) != 0 else {
                    throw Self.failure(error, operation: "delete a secret", lib: lib)
                }
                count += 1
            }
            node = current.pointee.next
        }
        return count
    }

    /// Every matching item (locked ones too, which the service is asked to unlock, prompting the user).
    private func search(
        _ attributes: OpaquePointer, loadingSecrets: Bool, operation: String
    ) throws(KeyringFailure) -> UnsafeMutablePointer<GList>? {
        defer { lib.g_hash_table_unref(attributes) }
        var flags = SECRET_SEARCH_ALL.rawValue | SECRET_SEARCH_UNLOCK.rawValue
        if loadingSecrets { flags |= SECRET_SEARCH_LOAD_SECRETS.rawValue }
        var error: UnsafeMutablePointer<GError>?
        let items = lib.secret_service_search_sync(
            service, campusfs_secret_schema(), attributes, SecretSearchFlags(rawValue: flags), nil, &error)
        if error != nil { throw Self.failure(error, operation: operation, lib: lib) }
        return items
    }

    private func attributes(_ key: SecretKey) -> OpaquePointer {
        table(["application": "campusfs", "profile": key.profile, "server": key.server, "kind": key.kind.rawValue])
    }

    /// A GHashTable of strings, as libsecret takes attributes; the caller unrefs it, which frees the copies.
    private func table(_ pairs: [String: String]) -> OpaquePointer {
        // GLib aborts the process itself when it cannot allocate: never nil.
        guard let table = lib.g_hash_table_new_full(lib.g_str_hash, lib.g_str_equal, lib.g_free, lib.g_free) else {
            fatalError("g_hash_table_new_full returned NULL")
        }
        for (name, value) in pairs {
            _ = lib.g_hash_table_insert(table, lib.g_strdup(name), lib.g_strdup(value))
        }
        return table
    }

    /// Frees `error` and says whether it means that nobody provides the Secret Service.
    private static func failure(
        _ error: UnsafeMutablePointer<GError>?, operation: String, lib: campusfs_libsecret
    ) -> KeyringFailure {
        guard let error else { return .failed(operation: operation, message: "no reason given") }
        defer { lib.g_error_free(error) }
        let code = error.pointee.code
        if error.pointee.domain == lib.g_dbus_error_quark(), absentCodes.contains(code) { return .absent }
        return .failed(operation: operation, message: String(cString: error.pointee.message))
    }

    /// D-Bus's answers for a name nobody owns and no service file can start.
    private static let absentCodes: Set<Int32> = Set(
        [
            G_DBUS_ERROR_SERVICE_UNKNOWN, G_DBUS_ERROR_NAME_HAS_NO_OWNER, G_DBUS_ERROR_SPAWN_EXEC_FAILED,
            G_DBUS_ERROR_SPAWN_FORK_FAILED, G_DBUS_ERROR_SPAWN_CHILD_EXITED, G_DBUS_ERROR_SPAWN_CHILD_SIGNALED,
            G_DBUS_ERROR_SPAWN_FAILED, G_DBUS_ERROR_SPAWN_SETUP_FAILED, G_DBUS_ERROR_SPAWN_CONFIG_INVALID,
            G_DBUS_ERROR_SPAWN_SERVICE_INVALID, G_DBUS_ERROR_SPAWN_SERVICE_NOT_FOUND,
            G_DBUS_ERROR_SPAWN_PERMISSIONS_INVALID, G_DBUS_ERROR_SPAWN_FILE_INVALID, G_DBUS_ERROR_SPAWN_NO_MEMORY,
        ].map { Int32($0.rawValue) })
}
