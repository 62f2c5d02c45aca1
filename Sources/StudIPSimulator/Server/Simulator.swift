import Foundation
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle
import Synchronization

/// How to start a simulated Stud.IP installation.
public struct SimulatorConfiguration: Sendable {
    public var dataset: Dataset
    public var flavour: Flavour
    /// 0 picks a free port. The simulator only ever binds 127.0.0.1.
    public var port: Int = 0
    /// `""` for an installation at the domain root (as in the fixtures), `"/studip"` for `http://host/studip/`.
    public var basePath: String = ""
    public var settings = SimulatorSettings()
    public var oauth2Clients = [OAuth2Client(id: "campusfs")]
    /// A Shibboleth SP on the installation and an IdP on a third listener; nil = no single sign-on.
    public var singleSignOn: SingleSignOnConfiguration?

    public init(
        dataset: Dataset, flavour: Flavour = .v50, port: Int = 0, basePath: String = "",
        settings: SimulatorSettings = SimulatorSettings(), singleSignOn: SingleSignOnConfiguration? = nil
    ) {
        self.dataset = dataset
        self.flavour = flavour
        self.port = port
        self.basePath = basePath
        self.settings = settings
        self.singleSignOn = singleSignOn
    }
}

/// Why the simulator did not start.
public enum SimulatorError: Error, CustomStringConvertible {
    case bindFailed(port: Int)
    case invalidBasePath(String)

    public var description: String {
        switch self {
        case .bindFailed(let port): "could not listen on 127.0.0.1:\(port) (port in use?)"
        case .invalidBasePath(let path): "base path \"\(path)\" must be empty or start with / and not end with /"
        }
    }
}

/// A running simulated Stud.IP: the installation on one loopback port, "elsewhere" hosting on a second, and
/// with single sign-on an IdP on a third.
///
/// ```swift
/// let sim = try await Simulator.start(SimulatorConfiguration(dataset: .fixtures507))
/// // GET \(sim.baseURL)/jsonapi.php/v1/users/me with Basic test_autor:testing
/// await sim.stop()
/// ```
public final class Simulator: Sendable {
    /// The installation's base URL; `/jsonapi.php/v1/…` and `/api.php/…` are appended to it.
    public let baseURL: String
    /// The second listener that serves documents hosted elsewhere.
    public let externalBaseURL: String
    /// The IdP's origin (`http://127.0.0.1:PORT`, its SSO profile under `/idp/…`) when single sign-on is configured.
    public let identityProviderURL: String?
    /// The control API (`/__sim`), always at the root of the installation's host, whatever the base path.
    public var controlURL: String { String(baseURL.dropLast(basePathLength)) + "/__sim" }
    private let basePathLength: Int
    public let flavour: Flavour

    let store: UniversityStore
    let statistics: Statistics
    let faults: FaultInjector
    let authenticator: Authenticator
    let settings: SettingsBox
    /// The listeners (the installation, the external host, the IdP), shut down gracefully by ``stop()``.
    private let services: ServiceGroup
    /// Completed once the installation's listener is closed.
    private let installationClosed: EventLoopFuture<Void>
    private let runner: Task<Void, any Error>

    private init(
        baseURL: String, externalBaseURL: String, identityProviderURL: String?, basePathLength: Int, flavour: Flavour,
        store: UniversityStore,
        statistics: Statistics,
        faults: FaultInjector, authenticator: Authenticator, settings: SettingsBox, services: ServiceGroup,
        installationClosed: EventLoopFuture<Void>, runner: Task<Void, any Error>
    ) {
        self.baseURL = baseURL
        self.externalBaseURL = externalBaseURL
        self.identityProviderURL = identityProviderURL
        self.basePathLength = basePathLength
        self.flavour = flavour
        self.store = store
        self.statistics = statistics
        self.faults = faults
        self.authenticator = authenticator
        self.settings = settings
        self.services = services
        self.installationClosed = installationClosed
        self.runner = runner
    }

    /// Loads the dataset, binds the listeners and returns once they accept connections.
    public static func start(_ configuration: SimulatorConfiguration) async throws -> Simulator {
        let base = configuration.basePath
        guard base.isEmpty || (base.hasPrefix("/") && !base.hasSuffix("/")) else {
            throw SimulatorError.invalidBasePath(base)
        }
        let store = UniversityStore(try configuration.dataset.load())
        let statistics = Statistics()
        let faults = FaultInjector()
        let authenticator = Authenticator()
        let settings = SettingsBox(configuration.settings)
        var logger = Logger(label: "studip-sim")
        logger.logLevel = .critical

        let ports = PortCollector(needsIdentityProvider: configuration.singleSignOn != nil)
        let key = Data((0..<32).map { _ in UInt8.random(in: .min ... .max) })
        let serviceProvider = configuration.singleSignOn.map { _ in ServiceProvider(key: key) }
        let identityProvider = configuration.singleSignOn.map { sso in
            Application(
                responder: IdentityProviderResponder(
                    identityProvider: IdentityProvider(configuration: sso, key: key, store: store),
                    statistics: statistics, settings: settings, addresses: ports),
                configuration: .init(address: .hostname("127.0.0.1", port: 0)),
                onServerRunning: { await ports.set(\.identityProvider, $0.localAddress?.port) },
                logger: logger)
        }
        let external = Application(
            responder: ExternalHost(store: store, statistics: statistics, settings: settings),
            configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { await ports.set(\.external, $0.localAddress?.port) },
            logger: logger)
        let installation = Application(
            responder: InstallationResponder(
                store: store, statistics: statistics, faults: faults, authenticator: authenticator, settings: settings,
                flavour: configuration.flavour, basePath: base, clients: configuration.oauth2Clients,
                serviceProvider: serviceProvider, addresses: ports),
            configuration: .init(address: .hostname("127.0.0.1", port: configuration.port)),
            onServerRunning: { await ports.setInstallation($0) },
            logger: logger)

        // A service group, so that `stop()` can shut the listeners down gracefully: cancelling a Hummingbird server
        // while it accepts a connection drops that connection's channel unclosed, which NIO traps on
        // ("Deinited NIOAsyncWriter without calling finish()"). Services stop in reverse order: the installation
        // first, whose closed listener `stop()` waits for.
        let services = ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: [external] + (identityProvider.map { [$0] } ?? []) + [installation], logger: logger))
        let runner = Task { try await services.run() }
        guard let (port, externalPort, identityProviderPort) = await ports.waitForAll(orFailureOf: runner),
            let installationClosed = await ports.installationClosed
        else {
            runner.cancel()
            throw SimulatorError.bindFailed(port: configuration.port)
        }
        return Simulator(
            baseURL: "http://127.0.0.1:\(port)\(base)", externalBaseURL: "http://127.0.0.1:\(externalPort)",
            identityProviderURL: identityProviderPort.map { "http://127.0.0.1:\($0)" },
            basePathLength: base.count,
            flavour: configuration.flavour, store: store, statistics: statistics, faults: faults,
            authenticator: authenticator, settings: settings, services: services,
            installationClosed: installationClosed, runner: runner)
    }

    /// Closes the installation's listener, then ends the simulator's deliberate waits (stalls, latency, a paced
    /// body: those responses break off, and a client that asks again finds no server, as when a real one goes
    /// down), lets the requests in flight finish, and waits until the listeners are gone.
    ///
    /// The shutdown is never cut short by cancelling the listeners while they may still accept: NIO traps on a
    /// connection accepted after its server task was cancelled ("Deinited NIOAsyncWriter without calling finish()",
    /// apple/swift-nio#2637), which a stalled response held past a grace period made happen under load. Only a
    /// response that outlives `stopBackstop` without any deliberate wait is cancelled; the result says whether one
    /// had to be.
    @discardableResult
    public func stop() async -> Bool {
        let backstop = Task { [runner] () -> Bool in
            do { try await Task.sleep(for: Self.stopBackstop) } catch { return false }
            runner.cancel()
            return true
        }
        await services.triggerGracefulShutdown()
        try? await installationClosed.get()
        settings.stop()
        _ = try? await runner.value
        backstop.cancel()
        return await backstop.value
    }

    static let stopBackstop = Duration.seconds(20)

    /// Runs until the surrounding task is cancelled (the `studip-sim` executable's main loop).
    public func wait() async {
        _ = try? await runner.value
    }

    /// The number of API requests served since start or the last reset (what `GET /__sim/stats` reports).
    public var requestCount: Int { statistics.snapshot().total }

    /// A copy of the live installation, for tests that compare against it.
    public var university: University { store.snapshot() }
}

/// Settings that change at run time, shared by both listeners, and whether the simulator is stopping, which ends
/// the deliberate waits those settings and the faults ask for.
final class SettingsBox: Sendable {
    private let value: Mutex<SimulatorSettings>
    private let stopping = Atomic<Bool>(false)

    /// Thrown from a deliberate wait when the simulator stops: the response breaks off as a reset does.
    struct Stopped: Error {}

    init(_ settings: SimulatorSettings) {
        value = Mutex(settings)
    }

    func get() -> SimulatorSettings { value.withLock { $0 } }

    func update(_ change: (inout SimulatorSettings) -> Void) -> SimulatorSettings {
        value.withLock {
            change(&$0)
            return $0
        }
    }

    func stop() { stopping.store(true, ordering: .releasing) }

    var isStopping: Bool { stopping.load(ordering: .acquiring) }

    /// Sleeps until `deadline` as latency, a stall or the bandwidth cap ask, in slices, so that a stop ends it
    /// (by throwing ``Stopped``) within one slice instead of holding the shutdown.
    func pause(until deadline: ContinuousClock.Instant) async throws {
        while ContinuousClock.now < deadline {
            if isStopping { throw Stopped() }
            try await Task.sleep(until: min(deadline, .now + .milliseconds(50)))
        }
    }

    func pause(for duration: Duration) async throws { try await pause(until: .now + duration) }
}

/// Collects the ports the listeners bound, so `start` returns only when all accept connections.
actor PortCollector {
    struct Ports {
        var installation: Int?
        var external: Int?
        var identityProvider: Int?
    }

    private let needsIdentityProvider: Bool
    private var ports = Ports()
    private var failed = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func set(_ key: WritableKeyPath<Ports, Int?>, _ port: Int?) {
        ports[keyPath: key] = port
        failed = failed || port == nil
        wakeWaiters()
    }

    /// The installation's listener: its port, and its closing, which ``Simulator/stop()`` waits for.
    func setInstallation(_ channel: any Channel) {
        installationClosed = channel.closeFuture
        set(\.installation, channel.localAddress?.port)
    }

    private(set) var installationClosed: EventLoopFuture<Void>?

    var installation: Int? { ports.installation }
    var external: Int? { ports.external }
    var identityProvider: Int? { ports.identityProvider }

    init(needsIdentityProvider: Bool) {
        self.needsIdentityProvider = needsIdentityProvider
    }

    /// The ports (the IdP's only when it runs), or nil when a listener failed to bind (its task ended before
    /// it reported a port).
    func waitForAll(orFailureOf runner: Task<Void, any Error>) async -> (Int, Int, Int?)? {
        let watcher = Task {
            _ = try? await runner.value
            self.markFailed()
        }
        defer { watcher.cancel() }
        while !failed {
            if let installation = ports.installation, let external = ports.external,
                !needsIdentityProvider || ports.identityProvider != nil
            {
                return (installation, external, ports.identityProvider)
            }
            await withCheckedContinuation { waiters.append($0) }
        }
        return nil
    }

    private func markFailed() {
        failed = true
        wakeWaiters()
    }

    private func wakeWaiters() {
        for waiter in waiters { waiter.resume() }
        waiters.removeAll()
    }
}
