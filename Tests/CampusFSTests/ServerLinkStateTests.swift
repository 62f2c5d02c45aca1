import ControlProtocol
import Daemon
import Foundation
import StudIPKit
import StudIPModel
import TestSupport
import Testing

@testable import StudIPSimulator

/// What the daemon's server link tells `campusfs status` when a download breaks off.
@Suite struct ServerLinkStateTests {
    /// A lecture's slides of the demo, which the student may download.
    static func slides(_ sim: Simulator) throws -> FileRef {
        try #require(sim.university.fileRefs.values.filter { $0.name.hasPrefix("Vorlesung 01") }.min { $0.id < $1.id })
    }

    /// Issue 28: the server dies while a document downloads (its head and first bytes sent, then the process gone):
    /// `status` said "online" until the next refresh. After the break the link asks the server once, and calls it
    /// offline with the reason.
    @Test func aServerThatDiesMidDownloadIsOfflineNotOnline() async throws {
        let sim = try await Simulator.start(SimulatorConfiguration(dataset: .generated(.demo, seed: 1), flavour: .v55))
        let link = ServerLink(
            configuration: ClientConfiguration(
                baseURL: sim.baseURL, credentials: .basic(username: "test_autor", password: "testing")))
        let outcome: (broke: (any Error)?, state: DaemonStatus.Server, problem: String?)
        do {
            let document = try Self.slides(sim)
            sim.faults.add(
                Fault(action: .stallAfterBytes(100, milliseconds: 60_000), pathContains: document.id, remaining: 1))
            guard case .content(let body) = try await link.download(DownloadRequest(documentID: document.id)) else {
                throw StudIPError.cancelled
            }
            #expect(await link.state == .online)
            let reading = Task { () -> (any Error)? in
                do {
                    for try await _ in body {}
                    return nil
                } catch {
                    return error
                }
            }
            try await Task.sleep(for: .milliseconds(300))
            await sim.stop()
            let broke = await reading.value
            for _ in 0..<300 where await link.state == .online { try await Task.sleep(for: .milliseconds(50)) }
            outcome = (broke, await link.state, await link.problem)
        } catch {
            await link.shutdown()
            await sim.stop()
            throw error
        }
        await link.shutdown()
        guard case .brokeOff? = outcome.broke as? StudIPError else {
            Issue.record("the body did not break off: \(String(describing: outcome.broke))")
            return
        }
        #expect(outcome.state == .offline)
        #expect(outcome.problem?.hasPrefix("cannot reach ") == true, "\(outcome.problem ?? "")")
    }

    /// A break on the way, with the server still there, leaves it online.
    @Test func aBreakWithTheServerStillThereStaysOnline() async throws {
        try await withSimulator(.generated(.demo, seed: 1), flavour: .v55) { sim async throws in
            let link = ServerLink(
                configuration: ClientConfiguration(
                    baseURL: sim.baseURL, credentials: .basic(username: "test_autor", password: "testing")))
            let document = try Self.slides(sim)
            sim.faults.add(Fault(action: .resetAfterBytes(100), pathContains: document.id, remaining: 1))
            let before = sim.requestCount
            do {
                if case .content(let body) = try await link.download(DownloadRequest(documentID: document.id)) {
                    await #expect(throws: StudIPError.self) { for try await _ in body {} }
                }
            } catch {
                await link.shutdown()
                throw error
            }
            // The connection's probe (users/me), the download, and the check's users/me after the break.
            for _ in 0..<200 where sim.requestCount < before + 3 { try await Task.sleep(for: .milliseconds(20)) }
            try await Task.sleep(for: .milliseconds(200))
            #expect(sim.requestCount >= before + 3, "the link asked the server after the break")
            #expect(await link.state == .online)
            await link.shutdown()
        }
    }

    /// After the mount's connection rotated its OAuth2 pair, the check after a break asks through that connection:
    /// a new login with the pair the daemon started with would send a spent refresh token, which Stud.IP refuses,
    /// and the working mount would say "login needed".
    @Test func aBreakAfterATokenRotationStaysOnline() async throws {
        try await withSimulator(.generated(.demo, seed: 1), flavour: .v55) { sim async throws in
            let user = try #require(sim.university.user(named: "test_autor"))
            let issued = sim.authenticator.issueTokens(userID: user.id, lifetime: 3600)
            let link = ServerLink(
                configuration: ClientConfiguration(
                    baseURL: sim.baseURL,
                    credentials: .bearer(
                        OAuthTokens(accessToken: issued.access, refreshToken: issued.refresh, expiresAt: nil))))
            let document = try Self.slides(sim)
            do {
                _ = try await link.connected()
                sim.authenticator.expireAccessTokens()  // the download's 401 rotates the pair
                if case .content(let body) = try await link.download(DownloadRequest(documentID: document.id)) {
                    for try await _ in body {}
                }
                sim.faults.add(Fault(action: .resetAfterBytes(100), pathContains: document.id, remaining: 1))
                let before = sim.requestCount
                if case .content(let body) = try await link.download(DownloadRequest(documentID: document.id)) {
                    await #expect(throws: StudIPError.self) { for try await _ in body {} }
                }
                // The download and the check's users/me.
                for _ in 0..<200 where sim.requestCount < before + 2 { try await Task.sleep(for: .milliseconds(20)) }
                try await Task.sleep(for: .milliseconds(300))
                #expect(sim.requestCount >= before + 2, "the link asked the server after the break")
                let problem = await link.problem
                #expect(await link.state == .online, "\(problem ?? "")")
            } catch {
                await link.shutdown()
                throw error
            }
            await link.shutdown()
        }
    }
}
