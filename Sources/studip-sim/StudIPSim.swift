import ArgumentParser
import Dispatch
import Foundation
import StudIPSimulator

/// `studip-sim`: a simulated Stud.IP on loopback for tests, benchmarks and demos.
@main
struct StudIPSim: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "studip-sim",
        abstract: "Serve a simulated Stud.IP installation on 127.0.0.1.",
        discussion: """
            Prints the installation's base URL as the first line of stdout (append /jsonapi.php/v1/… or \
            /api.php/…) and runs until SIGINT or SIGTERM. Every dataset has the users test_autor (a student), \
            test_dozent and root@studip, password "testing". /__sim/… is the control API (see README). \
            The web login form is at <base>/index.php?again=yes.

            With --sso, a Shibboleth IdP runs on a free port of its own: its URL is the second line of stdout, the \
            login page gets a "Login für Hochschulangehörige (Shibboleth)" button \
            (<base>/index.php?again=yes&sso=shib), and every user logs in there with "sso-" and their password \
            (test_autor: sso-testing). "consent" adds the IdP's attribute release page until a user accepts it \
            with a remembered consent.

            Examples:
              studip-sim --dataset fixtures-5.0.7
              studip-sim --dataset large --latency-ms 20 --bandwidth 50000000
              studip-sim --dataset demo --flavour 6.x --port 8080
              studip-sim --dataset demo --sso consent
            """)

    @Option(help: "Port on 127.0.0.1; 0 picks a free one.")
    var port = 0

    @Option(help: "One of: \(Dataset.names.joined(separator: ", ")).")
    var dataset = "demo"

    @Option(help: "Seed for generated datasets: same seed, same university.")
    var seed: UInt64 = 1

    @Option(help: "Stud.IP release to behave like: 5.0, 5.5 or 6.x.")
    var flavour = "5.0"

    @Option(help: "Installation path, e.g. /studip for http://host/studip/ (default: domain root).")
    var basePath = ""

    @Option(help: "Latency added to every API request, in milliseconds.")
    var latencyMs = 0

    @Option(help: "Download bandwidth cap per connection in bytes per second (default: unlimited).")
    var bandwidth: Int?

    @Option(help: "OAuth2 access-token lifetime in seconds.")
    var tokenLifetime = 3600

    @Option(help: "Single sign-on through a simulated Shibboleth IdP: plain or consent (default: none).")
    var sso: String?

    func validate() throws {
        guard Dataset(name: dataset) != nil else {
            throw ValidationError(
                "unknown dataset \"\(dataset)\"; choose one of \(Dataset.names.joined(separator: ", "))")
        }
        guard Flavour(rawValue: flavour) != nil else {
            throw ValidationError("unknown flavour \"\(flavour)\"; choose 5.0, 5.5 or 6.x")
        }
        guard (0...65535).contains(port) else { throw ValidationError("port must be 0–65535") }
        if let sso, SingleSignOnConfiguration.Variant(rawValue: sso) == nil {
            throw ValidationError("unknown --sso \"\(sso)\"; choose plain or consent")
        }
    }

    func run() async throws {
        guard let dataset = Dataset(name: dataset, seed: seed), let flavour = Flavour(rawValue: flavour) else { return }
        let settings = SimulatorSettings(
            latencyMilliseconds: latencyMs, bandwidthBytesPerSecond: bandwidth,
            accessTokenLifetimeSeconds: tokenLifetime)
        let simulator: Simulator
        do {
            simulator = try await Simulator.start(
                SimulatorConfiguration(
                    dataset: dataset, flavour: flavour, port: port, basePath: basePath, settings: settings,
                    singleSignOn: sso.flatMap(SingleSignOnConfiguration.Variant.init(rawValue:)).map {
                        SingleSignOnConfiguration(variant: $0)
                    }))
        } catch {
            FileHandle.standardError.write(Data("studip-sim: \(error)\n".utf8))
            throw ExitCode(1)
        }
        let identityProvider = simulator.identityProviderURL.map { "\($0)\n" } ?? ""
        FileHandle.standardOutput.write(Data("\(simulator.baseURL)\n\(identityProvider)".utf8))
        let ssoNote = simulator.identityProviderURL.map { ", Shibboleth IdP (\(sso ?? "")) at \($0)" } ?? ""
        FileHandle.standardError.write(
            Data(
                "studip-sim: Stud.IP \(flavour.rawValue) with \(self.dataset) at \(simulator.baseURL)\(ssoNote)\n".utf8)
        )

        let signals = [SIGINT, SIGTERM].map { signal in
            Foundation.signal(signal, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signal)
            source.setEventHandler { Task { await simulator.stop() } }
            source.resume()
            return source
        }
        await simulator.wait()
        for source in signals { source.cancel() }
    }
}
