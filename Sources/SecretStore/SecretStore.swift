import Foundation

/// What a stored secret is for: one per profile, server and kind.
public enum SecretKind: String, Sendable {
    case password
    case oauth2Tokens = "oauth2-tokens"
}

/// Which secret: a profile's, for one server, of one kind.
public struct SecretKey: Sendable, Hashable {
    public var profile: String
    public var server: String
    public var kind: SecretKind

    public init(profile: String, server: String, kind: SecretKind) {
        self.profile = profile
        self.server = server
        self.kind = kind
    }
}

/// Where ``SecretStore/save(_:for:)`` put a secret: the desktop's keyring, or the 0600 file when no keyring answered.
public enum SecretLocation: Sendable, Hashable {
    case keyring
    case file(path: String)
}

/// What ``SecretStore/find(_:)`` found.
public enum SecretLookup: Sendable, Equatable {
    case found(String)
    /// Neither the keyring nor the file holds one.
    case missing
    /// The file holds none, and no keyring answered to look in: a secret stored there is out of reach, not gone.
    case keyringUnreachable(String)
}

/// Why a secret could not be saved, read or deleted, and what to do about it. Never contains the secret.
public struct SecretStoreError: Error, Sendable, CustomStringConvertible {
    public let description: String

    init(_ description: String) { self.description = description }
}

/// The profile's secrets in the desktop's keyring (the freedesktop Secret Service: GNOME Keyring, KWallet,
/// KeePassXC), or in a file readable only by the user when no Secret Service answers. Whether one answers is decided
/// on every call, so a keyring that starts later is used from then on.
///
/// Every call blocks (D-Bus round trips, a password prompt, `fsync`): call it from a thread that may block, never
/// from a task (docs/threads.md).
public final class SecretStore: Sendable {
    private let file: SecretFile
    /// Whether the environment names a session bus; without one the keyring is not asked at all, so that D-Bus
    /// never autolaunches a bus.
    private let hasBus: Bool

    /// `fallbackFile` is where secrets go when no Secret Service answers; without `DBUS_SESSION_BUS_ADDRESS` in
    /// `environment` they go there at once. libsecret itself talks to the process's session bus (docs/secrets.md).
    public init(fallbackFile: URL, environment: [String: String] = ProcessInfo.processInfo.environment) {
        file = SecretFile(url: fallbackFile)
        hasBus = !(environment["DBUS_SESSION_BUS_ADDRESS"] ?? "").isEmpty
    }

    /// Stores `secret` for `key`, replacing an earlier one, and says where it went. A secret in the keyring is
    /// removed from the file, so no copy stays behind in plain text.
    public func save(_ secret: String, for key: SecretKey) throws(SecretStoreError) -> SecretLocation {
        let stored: Void? = try keyring { keyring throws(KeyringFailure) in
            try keyring.store(secret, for: key, label: Self.label(for: key))
        }
        guard stored != nil else {
            try file.save(secret, for: key)
            return .file(path: file.url.path)
        }
        _ = try file.delete { $0 == key }
        return .keyring
    }

    /// The secret for `key` from the keyring (when one answers), else from the file; nil when neither has one.
    public func load(_ key: SecretKey) throws(SecretStoreError) -> String? {
        guard case .found(let secret) = try find(key) else { return nil }
        return secret
    }

    /// ``load(_:)`` that also says why there is none: a keyring that did not answer may hold it (locked keyrings
    /// throw instead), so "log in again" would be the wrong advice (docs/secrets.md).
    public func find(_ key: SecretKey) throws(SecretStoreError) -> SecretLookup {
        let found = try keyring { keyring throws(KeyringFailure) in try keyring.lookup(key) }
        if let secret = found ?? nil { return .found(secret) }
        if let secret = try file.load(key) { return .found(secret) }
        guard case .none = found else { return .missing }
        return .keyringUnreachable(
            hasBus
                ? "no keyring (Secret Service) answers on the session bus"
                : "this session has no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is not set, as over ssh)")
    }

    /// Deletes every secret of `profile` (any server, any kind) from the keyring and the file; other profiles'
    /// stay. Returns how many there were.
    @discardableResult public func deleteAll(profile: String) throws(SecretStoreError) -> Int {
        let deleted = try keyring { keyring throws(KeyringFailure) in try keyring.deleteAll(profile: profile) }
        return (deleted ?? 0) + (try file.delete { $0.profile == profile })
    }

    /// The one line to show after a secret went to the file, nil for the keyring.
    public static func warning(_ location: SecretLocation) -> String? {
        guard case .file(let path) = location else { return nil }
        return "no keyring (Secret Service) answered, so the secret is stored in \(path), readable only by you; "
            + "install and unlock GNOME Keyring or KWallet to keep it there instead"
    }

    /// The item's name in the keyring's user interface (Seahorse, KWalletManager).
    static func label(for key: SecretKey) -> String {
        let host = URLComponents(string: key.server)?.host ?? key.server
        return "CampusFS \(key.profile) (\(host))"
    }

    /// Runs `body` against the Secret Service; nil when none answers (no bus, or nobody owns the service's name
    /// and D-Bus cannot start one), so that the caller uses the file.
    private func keyring<T>(
        _ body: (Keyring) throws(KeyringFailure) -> T
    ) throws(SecretStoreError) -> T? {
        guard hasBus else { return nil }
        do throws(KeyringFailure) {
            return try Keyring.withService(body)
        } catch {
            switch error {
            case .absent:
                return nil
            case .failed(let operation, let message):
                throw SecretStoreError(
                    "the keyring (Secret Service) could not \(operation): \(message). Unlock the keyring (for "
                        + "example in Seahorse, \"Passwords and Keys\") and answer its prompt, then try again")
            case .libraryMissing(let reason):
                throw SecretStoreError(
                    "the keyring (Secret Service) cannot be used without libsecret: \(reason). Install it (Debian "
                        + "and Ubuntu: the package libsecret-1-0), or unset DBUS_SESSION_BUS_ADDRESS to keep the "
                        + "secret in a file readable only by you")
            }
        }
    }
}
