import CampusFS
import ContentCache
import ControlProtocol
import Foundation
import MetadataStore
import Refreshing
import StudIPKit

/// Everything a daemon needs to serve one profile (docs/architecture.md, "Paths" and "Promises").
public struct DaemonConfiguration: Sendable {
    public var profile: String
    public var mountpoint: String
    public var databasePath: String
    public var cacheDirectory: String
    public var socketPath: String
    public var client: ClientConfiguration
    public var tree: TreeOptions
    /// Semester titles or ids to show; nil shows all.
    public var semesters: Set<String>?
    public var cache: ContentCacheConfiguration
    /// How often the poller refreshes everything (with up to 10 % jitter).
    public var refreshInterval: Duration
    /// How old a course's listing may be before a look into it triggers a background refresh of that course; also
    /// how long a cached document's bytes are trusted before an open revalidates them with the server.
    public var listingTTL: Duration
    /// Never touch the network (`campusfs mount --offline`).
    public var offline: Bool
    /// Where to find credentials again when the server refuses `client.credentials` (a password command); nil
    /// keeps those.
    public var credentialLookup: ServerLink.CredentialLookup?
    /// Where refreshed OAuth2 tokens go (the keyring), also for tokens `campusfs login` hands over later.
    public var tokenStorage: (any TokenStorage)?
    /// How long the cached bytes and the user's tags and pins of what Stud.IP removed are kept, in case it comes
    /// back (a listing that was empty by mistake).
    public var removalGrace = RefreshSettings().removalGrace
    /// The longest one refresh may take before it is stopped (what it applied stays).
    public var refreshTimeout = RefreshSettings().timeout
    /// The generated files (issue 18); German and all on unless the profile says otherwise.
    public var courseFiles = CourseFilesOptions()
    /// The service manager that started the daemon (systemd, `Type=notify`); nil when none did.
    public var serviceManager: ServiceManager?
    /// Desktop notifications about new documents and a refused login; nil sends none.
    public var notifications: NotificationSettings?
    /// The command that logs this profile in again, for messages (`campusfs login --profile uni`).
    public var loginCommand = "campusfs login"
    /// Writing into the mount (docs/writing.md); nil: the mount stays read-only, as before.
    public var uploads: UploadSettings?

    public init(
        profile: String, mountpoint: String, databasePath: String, cacheDirectory: String, socketPath: String,
        client: ClientConfiguration, tree: TreeOptions = TreeOptions(), semesters: Set<String>? = nil,
        cache: ContentCacheConfiguration = ContentCacheConfiguration(), refreshInterval: Duration = .seconds(600),
        listingTTL: Duration = .seconds(600), offline: Bool = false,
        credentialLookup: ServerLink.CredentialLookup? = nil
    ) {
        self.profile = profile
        self.mountpoint = mountpoint
        self.databasePath = databasePath
        self.cacheDirectory = cacheDirectory
        self.socketPath = socketPath
        self.client = client
        self.tree = tree
        self.semesters = semesters
        self.cache = cache
        self.refreshInterval = refreshInterval
        self.listingTTL = listingTTL
        self.offline = offline
        self.credentialLookup = credentialLookup
    }
}

extension DaemonConfiguration {
    /// How this profile's refreshes are made.
    public var refreshSettings: RefreshSettings {
        RefreshSettings(
            tree: tree, semesters: semesters, courseFiles: courseFiles, timeout: refreshTimeout,
            removalGrace: removalGrace)
    }
}

/// A profile that uploads (`uploads = true`): where its drafts and outbox live, and the terms of use it sends.
public struct UploadSettings: Sendable {
    /// The profile's data directory (docs/architecture.md, "Paths"): `drafts/` and `outbox/` go below it, never into
    /// the cache, which may be emptied by hand.
    public var dataDirectory: String
    /// `upload_terms`; nil: the installation's entry for a student's own work (``LinkedWriter``).
    public var terms: String?

    public init(dataDirectory: String, terms: String? = nil) {
        self.dataDirectory = dataDirectory
        self.terms = terms
    }
}
