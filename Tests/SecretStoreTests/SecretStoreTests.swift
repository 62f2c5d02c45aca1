import Foundation
import SecretStore
import SystemSupport
import TestSupport
import Testing

/// The store against a real GNOME Keyring on the test process's own session bus, checked with libsecret's own
/// client (`secret-tool`), and its file fallback on an environment without a bus. Each test has profiles of its own,
/// since they share the keyring.
@Suite final class SecretStoreTests: Sendable {
    static let server = "https://studip.example.org/studip"
    let profile = "uni-\(UUID())"
    let otherProfile = "other-\(UUID())"
    /// The test's fallback files; the keyring's are the session's.
    let directory: URL

    init() throws {
        directory = URL(fileURLWithPath: try temporaryDirectory("campusfs-secrets"))
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    @Test func savesLoadsAndDeletesThroughTheKeyring() async throws {
        let session = try await KeyringSession.processWide()
        let fallback = directory.appendingPathComponent("secrets")
        let store = SecretStore(fallbackFile: fallback, environment: session.environment)
        let key = SecretKey(profile: profile, server: Self.server, kind: .password)

        #expect(try await blocking { try store.save("correct horse", for: key) } == .keyring)
        #expect(try await session.lookup(profile: profile, server: Self.server, kind: "password") == "correct horse")
        #expect(try await blocking { try store.load(key) } == "correct horse")
        #expect(!FileManager.default.fileExists(atPath: fallback.path))
        let search = try await shell("secret-tool search --all application campusfs profile \(quoted(profile)) 2>&1")
        #expect(search.lines.contains("label = CampusFS \(profile) (studip.example.org)"), "\(search.stdout)")
        #expect(search.lines.contains("schema = org.campusfs.Secret"), "\(search.stdout)")

        #expect(try await blocking { try store.save("battery staple", for: key) } == .keyring)
        #expect(try await session.lookup(profile: profile, server: Self.server, kind: "password") == "battery staple")

        #expect(try await blocking { try store.deleteAll(profile: self.profile) } == 1)
        #expect(try await session.lookup(profile: profile, server: Self.server, kind: "password") == nil)
        #expect(try await blocking { try store.load(key) } == nil)
    }

    @Test func aSecretSavedToTheKeyringLeavesNoCopyInTheFile() async throws {
        let session = try await KeyringSession.processWide()
        let fallback = directory.appendingPathComponent("secrets")
        let key = SecretKey(profile: profile, server: Self.server, kind: .password)
        let withoutBus = SecretStore(fallbackFile: fallback, environment: [:])
        #expect(try await blocking { try withoutBus.save("old-pw", for: key) } == .file(path: fallback.path))

        let withBus = SecretStore(fallbackFile: fallback, environment: session.environment)
        #expect(try await blocking { try withBus.save("new-pw", for: key) } == .keyring)
        #expect(try await blocking { try withoutBus.load(key) } == nil)
        #expect(try !String(contentsOf: fallback, encoding: .utf8).contains("old-pw"))
        try await blocking { try withBus.deleteAll(profile: self.profile) }
    }

    @Test func deleteAllLeavesOtherProfilesAlone() async throws {
        let session = try await KeyringSession.processWide()
        let store = SecretStore(
            fallbackFile: directory.appendingPathComponent("secrets"), environment: session.environment)
        let (profile, otherProfile) = (profile, otherProfile)
        try await blocking {
            _ = try store.save("uni-pw", for: SecretKey(profile: profile, server: Self.server, kind: .password))
            _ = try store.save("uni-tokens", for: SecretKey(profile: profile, server: Self.server, kind: .oauth2Tokens))
            _ = try store.save("other-pw", for: SecretKey(profile: otherProfile, server: Self.server, kind: .password))
        }

        #expect(try await blocking { try store.deleteAll(profile: self.profile) } == 2)
        #expect(try await session.lookup(profile: profile, server: Self.server, kind: "password") == nil)
        #expect(try await session.lookup(profile: profile, server: Self.server, kind: "oauth2-tokens") == nil)
        #expect(try await session.lookup(profile: otherProfile, server: Self.server, kind: "password") == "other-pw")
        try await blocking { try store.deleteAll(profile: self.otherProfile) }
    }

    @Test func keyringFilesOnDiskHoldNoPlainSecret() async throws {
        let session = try await KeyringSession.processWide()
        let store = SecretStore(
            fallbackFile: directory.appendingPathComponent("secrets"), environment: session.environment)
        let secret = "plain-text-canary-\(UUID())"
        let key = SecretKey(profile: profile, server: Self.server, kind: .password)
        #expect(try await blocking { try store.save(secret, for: key) } == .keyring)

        let keyrings = session.directory.appendingPathComponent("data/keyrings")
        let files = try FileManager.default.contentsOfDirectory(atPath: keyrings.path)
        #expect(files.contains("login.keyring"))
        let grep = try await shell("grep -rl \(quoted(secret)) \(quoted(session.directory.path))")
        #expect(grep.status == 1, "grep found the secret in \(grep.stdout)")
        try await blocking { try store.deleteAll(profile: key.profile) }
    }

    @Test func awkwardSecretsSurviveTheKeyringAndTheFile() async throws {
        let session = try await KeyringSession.processWide()
        let secret = Self.awkwardSecret
        let key = SecretKey(profile: profile, server: Self.server, kind: .oauth2Tokens)
        let keyring = SecretStore(
            fallbackFile: directory.appendingPathComponent("secrets"), environment: session.environment)
        #expect(try await blocking { try keyring.save(secret, for: key) } == .keyring)
        #expect(try await session.lookup(profile: profile, server: Self.server, kind: "oauth2-tokens") == secret)
        #expect(try await blocking { try keyring.load(key) } == secret)
        try await blocking { try keyring.deleteAll(profile: key.profile) }

        let file = SecretStore(
            fallbackFile: directory.appendingPathComponent("file/secrets"), environment: [:])
        #expect(try await blocking { try file.save(secret, for: key) } != .keyring)
        #expect(try await blocking { try file.load(key) } == secret)
    }

    @Test func withoutABusTheSecretGoesToAPrivateFile() async throws {
        let home = directory
        let fallback = home.appendingPathComponent("data/campusfs/secrets")
        // No DBUS_SESSION_BUS_ADDRESS: the store must not ask D-Bus (which could autolaunch a bus) at all.
        let store = SecretStore(fallbackFile: fallback, environment: ["HOME": home.path, "PATH": "/usr/bin:/bin"])
        let key = SecretKey(profile: profile, server: Self.server, kind: .password)
        let other = SecretKey(profile: otherProfile, server: Self.server, kind: .password)

        let location = try await blocking { try store.save("file-pw", for: key) }
        #expect(location == .file(path: fallback.path))
        #expect(try mode(of: fallback) == 0o600)
        #expect(try mode(of: fallback.deletingLastPathComponent()) == 0o700)
        #expect(try mode(of: home.appendingPathComponent("data")) == 0o700)
        let warning = try #require(SecretStore.warning(location))
        #expect(warning.contains(fallback.path))
        #expect(!warning.contains("\n"))
        #expect(SecretStore.warning(.keyring) == nil)

        _ = try await blocking { try store.save("other-pw", for: other) }
        #expect(try await blocking { try store.load(key) } == "file-pw")
        #expect(try await blocking { try store.deleteAll(profile: key.profile) } == 1)
        #expect(try await blocking { try store.load(key) } == nil)
        #expect(try await blocking { try store.load(other) } == "other-pw")
        #expect(try mode(of: fallback) == 0o600)
    }

    @Test func aDirectoryOthersCouldReadIsMadePrivate() async throws {
        // `$XDG_DATA_HOME/campusfs` may exist already (the profiles' stores live there), made with the umask's 0755.
        let shared = directory.appendingPathComponent("campusfs")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: false)
        chmod(shared.path, 0o755)
        let store = SecretStore(fallbackFile: shared.appendingPathComponent("secrets"), environment: [:])
        let key = SecretKey(profile: profile, server: Self.server, kind: .password)
        _ = try await blocking { try store.save("pw", for: key) }
        #expect(try mode(of: shared) == 0o700)
        #expect(try mode(of: shared.appendingPathComponent("secrets")) == 0o600)
    }

    /// Newlines, quotes, several scripts and emoji (no NUL), 4 KiB in all (an OAuth2 token pair's JSON is ~2 KiB).
    static let awkwardSecret: String = {
        var secret = "line one\nline two\r\n\ttabbed \"quoted\" \\ Grüße, Ελληνικά, 日本語, 🔑🗝️\n"
        while secret.utf8.count < 4096 { secret += "x" }
        return secret
    }()
}

/// Runs a store call (which blocks on D-Bus or the disk) on the blocking pool, never on the test's task.
@discardableResult
private func blocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await BlockingPool.shared.run(body)
}

private func mode(of url: URL) throws -> mode_t {
    var status = stat()
    guard stat(url.path, &status) == 0 else { throw CocoaError(.fileNoSuchFile) }
    return status.st_mode & 0o777
}
