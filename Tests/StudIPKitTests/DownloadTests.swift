import Foundation
import StudIPModel
import StudIPWire
import TestSupport
import Testing

@testable import StudIPKit
@testable import StudIPSimulator

/// Issue 4, the client side: both sources download documents as ``DocumentDownloader``s — streamed, revalidated,
/// redirected without leaking credentials, and failing loudly.
@Suite("Document downloads")
struct DownloadTests {
    static let apis: [ClientConfiguration.API] = [.jsonAPI, .legacyREST]

    /// Fixture documents of INF-101 that test_autor may download: a PDF, an umlaut name, an empty file, 1.5 MB.
    static let fixtureDocuments = [
        "21805d9a8810dc1b904d88888b945788",  // Kapitel 1 - Einleitung.pdf
        "514fd500a2e4505f32aa939245044f6c",  // Übungsblatt 1 – Lösungen.txt
        "fabffffbef47c0077d96b5625c9e5c4d",  // leer.txt
        "cd5d966516fe50ddfa2579a4f36aef6f",  // daten (groß).bin
    ]
    static let bigFixture = "cd5d966516fe50ddfa2579a4f36aef6f"

    // MARK: Bytes

    @Test("fixture documents arrive byte for byte", arguments: apis)
    func fixtureBytes(api: ClientConfiguration.API) async throws {
        try await withSimulator { sim in
            try await withSource(Harness.configuration(sim, api: api)) { source in
                let downloader = try #require(source.downloader)
                for id in Self.fixtureDocuments {
                    let body = try await Self.content(downloader, DownloadRequest(documentID: id))
                    let bytes = try await Self.readAll(body)
                    let expected = try sim.expectedBytes(of: id)
                    #expect(bytes == expected, "document \(id)")
                    #expect(body.expectedLength == Int64(expected.count))
                    #expect(!body.wasRedirected)
                    let ref = try #require(sim.university.fileRefs[id])
                    if api == .jsonAPI {
                        #expect(body.etag == JSONAPIEnvironment.etag(for: ref))
                    } else {
                        #expect(body.lastModified == Date(timeIntervalSince1970: TimeInterval(ref.fileChdate)))
                        #expect(body.etag == nil, "legacy REST sends no ETag, and Last-Modified validates nothing")
                    }
                }
            }
        }
    }

    @Test("a body streams: the first chunk arrives while the server is still sending", arguments: apis)
    func streamsWhileServing(api: ClientConfiguration.API) async throws {
        try await withSimulator { sim async throws in
            let id = try sim.addDocument(size: 3 << 20)
            // The server pauses after its first MiB, so it is still sending however late a busy machine lets the
            // client see the first chunk (a bandwidth cap alone was overtaken once: a pacer catches up after a delay).
            sim.inject(Fault(action: .stallAfterBytes(1 << 20, milliseconds: 4_000), pathContains: id, remaining: 1))
            try await withSource(Harness.configuration(sim, api: api)) { source in
                let downloader = try #require(source.downloader)
                let body = try await Self.content(downloader, DownloadRequest(documentID: id))
                let iterator = body.makeAsyncIterator()
                let first = try #require(try await iterator.next())
                #expect(!first.isEmpty)
                let stats = sim.statistics.snapshot()
                #expect(stats.downloadsInProgress[id] != nil, "the server is still sending")
                #expect(stats.downloadsCompleted[id] == nil)
                var bytes = first
                while let chunk = try await iterator.next() { bytes += chunk }
                #expect(Data(bytes) == (try sim.expectedBytes(of: id)))
                // The server counts the download once its last write returned, a moment after the client has it.
                let deadline = ContinuousClock.now + .seconds(2)
                while sim.statistics.snapshot().downloadsCompleted[id] == nil, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(10))
                }
                #expect(sim.statistics.snapshot().downloadsCompleted[id] == 1)
            }
        }
    }

    @Test("a reader that stops reading stops the transfer (backpressure, no buffering of the body)")
    func backpressure() async throws {
        try await withSimulator { sim in
            let size = 32 << 20
            let id = try sim.addDocument(size: size)
            try await withSource(Harness.configuration(sim, api: .jsonAPI)) { source in
                let downloader = try #require(source.downloader)
                let body = try await Self.content(downloader, DownloadRequest(documentID: id))
                let iterator = body.makeAsyncIterator()
                var total = try await iterator.next()?.count ?? 0
                // Sending stops: what the server has sent stops growing (for 1 s) short of the whole body. How far
                // it gets first depends on socket buffers and the machine's load, so no share of it is asserted
                // (under the full suite the server once got past half before the reader's stop reached it).
                var sent = sim.statistics.snapshot().downloadsInProgress[id] ?? size
                var steady = 0
                let deadline = ContinuousClock.now + .seconds(20)
                while steady < 5, ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(200))
                    let now = sim.statistics.snapshot().downloadsInProgress[id] ?? size
                    steady = now == sent ? steady + 1 : 0
                    sent = now
                }
                #expect(steady == 5, "sending to a reader that stopped did not stop: \(sent) of \(size) bytes")
                #expect(sent < size, "the server sent all \(size) bytes to a reader that stopped")
                while let chunk = try await iterator.next() { total += chunk.count }
                #expect(total == size)
            }
        }
    }

    // MARK: Revalidation

    @Test("JSON:API: the ETag round trip answers notModified, without a body")
    func etagRoundTrip() async throws {
        try await withSimulator { sim in
            try await withSource(Harness.configuration(sim, api: .jsonAPI)) { source in
                let downloader = try #require(source.downloader)
                let body = try await Self.content(downloader, DownloadRequest(documentID: Self.bigFixture))
                _ = try await Self.readAll(body)
                let etag = try #require(body.etag)
                sim.resetStatistics()
                let again = try await downloader.download(
                    DownloadRequest(documentID: Self.bigFixture, ifNoneMatch: etag))
                guard case .notModified = again else {
                    Issue.record("expected notModified, got \(again)")
                    return
                }
                #expect(sim.statistics.snapshot().downloadsCompleted.isEmpty)
            }
        }
    }

    /// Stud.IP 5.0.7 compares the header's date string with an integer and never answers 304 there (captured,
    /// fixtures-5.0.7-more Part 2): a conditional request through legacy REST downloads the whole document again,
    /// which is why the cache never revalidates through it.
    @Test("legacy REST: If-Modified-Since gets the whole body, as on Stud.IP 5.0.7")
    func ifModifiedSinceIsIgnored() async throws {
        try await withSimulator { sim in
            try await withSource(Harness.configuration(sim, api: .legacyREST)) { source in
                let downloader = try #require(source.downloader)
                let body = try await Self.content(downloader, DownloadRequest(documentID: Self.bigFixture))
                _ = try await Self.readAll(body)
                let lastModified = try #require(body.lastModified)
                let again = try await Self.content(
                    downloader, DownloadRequest(documentID: Self.bigFixture, ifModifiedSince: lastModified))
                #expect(try await Self.readAll(again) == (try sim.expectedBytes(of: Self.bigFixture)))
            }
        }
    }

    @Test("a new version online: 200 with the new bytes and another validator", arguments: apis)
    func newVersion(api: ClientConfiguration.API) async throws {
        try await withSimulator { sim in
            try await withSource(Harness.configuration(sim, api: api)) { source in
                let downloader = try #require(source.downloader)
                let id = Self.fixtureDocuments[1]
                let first = try await Self.content(downloader, DownloadRequest(documentID: id))
                _ = try await Self.readAll(first)
                try sim.control("PATCH", ["documents", id], ["text": "Neue Fassung mit Lösungen"])
                let request = DownloadRequest(
                    documentID: id, ifNoneMatch: first.etag, ifModifiedSince: first.lastModified)
                let second = try await Self.content(downloader, request)
                #expect(try await Self.readAll(second) == Data("Neue Fassung mit Lösungen".utf8))
                if api == .jsonAPI {
                    #expect(second.etag != nil && second.etag != first.etag)
                } else {
                    #expect(second.lastModified != nil && second.lastModified != first.lastModified)
                }
            }
        }
    }

    // MARK: Documents hosted elsewhere

    /// Basic, Bearer and a session cookie: the external host gets none of them.
    static func credentials(_ sim: Simulator) throws -> [Credentials] {
        let user = try #require(sim.university.user(named: "test_autor"))
        let tokens = sim.authenticator.issueTokens(userID: user.id, lifetime: 3600)
        return [
            .basic(username: "test_autor", password: Harness.password),
            .bearer(OAuthTokens(accessToken: tokens.access, refreshToken: tokens.refresh)),
            .sessionCookie(sim.authenticator.startSession(for: user)),
        ]
    }

    @Test("JSON:API: link documents come from the other host, which never sees the credentials")
    func linkDocuments() async throws {
        try await withSimulator(.generated(.small, seed: 1), flavour: .v55) { sim async throws in
            let links = ["Online-Skript (extern).txt", "Linkliste.txt"].compactMap { sim.document(named: $0) }
            #expect(links.count == 2)
            for credentials in try Self.credentials(sim) {
                sim.resetStatistics()
                let configuration = Harness.configuration(sim, api: .jsonAPI, credentials: credentials)
                try await withSource(configuration) { source in
                    let downloader = try #require(source.downloader)
                    for id in links {
                        let body = try await Self.content(downloader, DownloadRequest(documentID: id))
                        #expect(body.wasRedirected)
                        #expect(try await Self.readAll(body) == (try sim.expectedBytes(of: id)))
                    }
                }
                let stats = sim.statistics.snapshot()
                #expect(stats.externalRequests == links.count, "\(credentials)")
                #expect(stats.externalRequestsWithCredentials == 0, "\(credentials)")
            }
        }
    }

    @Test("an unreachable redirect target fails that download only")
    func unreachableTarget() async throws {
        try await withSimulator(.generated(.small, seed: 1), flavour: .v55) { sim async throws in
            let broken = try #require(sim.document(named: "Linkliste.txt"))
            let working = try #require(sim.document(named: "Online-Skript (extern).txt"))
            try sim.relink(broken, to: "http://127.0.0.1:1/elsewhere/gone.txt")
            try await withSource(Harness.configuration(sim, api: .jsonAPI)) { source in
                let downloader = try #require(source.downloader)
                let error = await Harness.error { () async throws(StudIPError) in
                    try await downloader.download(DownloadRequest(documentID: broken))
                }
                #expect(
                    error
                        == .hostUnreachable(
                            host: "http://127.0.0.1:1", what: "document \(broken)",
                            detail: "connection refused or host unknown"),
                    "Stud.IP answers; the other host does not")
                let body = try await Self.content(downloader, DownloadRequest(documentID: working))
                #expect(try await Self.readAll(body) == (try sim.expectedBytes(of: working)))
            }
        }
    }

    @Test("a redirect loop stops after five hops")
    func redirectLoop() async throws {
        try await withSimulator(.generated(.small, seed: 1), flavour: .v55) { sim async throws in
            let id = try #require(sim.document(named: "Linkliste.txt"))
            try sim.relink(id, to: sim.baseURL + "/jsonapi.php/v1/file-refs/\(id)/content")
            try await withSource(Harness.configuration(sim, api: .jsonAPI)) { source in
                let downloader = try #require(source.downloader)
                sim.resetStatistics()
                let error = await Harness.error { () async throws(StudIPError) in
                    try await downloader.download(DownloadRequest(documentID: id))
                }
                #expect(error == .malformedResponse(what: "document \(id)", detail: "more than 5 redirects"))
                #expect(sim.served == 6)
            }
        }
    }

    @Test("no secret reaches the log while downloading")
    func noSecretsLogged() async throws {
        try await withSimulator(.generated(.small, seed: 1), flavour: .v55) { sim async throws in
            let user = try #require(sim.university.user(named: "test_autor"))
            let tokens = sim.authenticator.issueTokens(userID: user.id, lifetime: 3600)
            let session = sim.authenticator.startSession(for: user)
            let secrets = [tokens.access, tokens.refresh, session]
            let ids = ["Linkliste.txt", "LIESMICH"].compactMap { sim.document(named: $0) }
            for credentials in [
                Credentials.bearer(OAuthTokens(accessToken: tokens.access, refreshToken: tokens.refresh)),
                .sessionCookie(session),
            ] {
                let capture = LogCapture()
                let configuration = Harness.configuration(
                    sim, api: .jsonAPI, credentials: credentials, logger: capture.logger)
                try await withSource(configuration) { source in
                    let downloader = try #require(source.downloader)
                    for id in ids {
                        _ = try await Self.readAll(try await Self.content(downloader, DownloadRequest(documentID: id)))
                    }
                }
                #expect(capture.text.contains("redirected"))
                for secret in secrets { #expect(!capture.text.contains(secret)) }
            }
        }
    }

    /// Legacy REST answers 500 for documents hosted elsewhere (captured); JSON:API's content route of the same
    /// installation redirects to them, and the other host never sees the credentials.
    @Test("legacy REST: a link document comes through JSON:API's redirect")
    func legacyLinkDocument() async throws {
        try await withSimulator(.generated(.small, seed: 1), flavour: .v55) { sim async throws in
            let id = try #require(sim.document(named: "Linkliste.txt"))
            try await withSource(Harness.configuration(sim, api: .legacyREST)) { source in
                let downloader = try #require(source.downloader)
                sim.resetStatistics()
                let body = try await Self.content(downloader, DownloadRequest(documentID: id))
                #expect(body.wasRedirected)
                #expect(try await Self.readAll(body) == (try sim.expectedBytes(of: id)))
                let stats = sim.statistics.snapshot()
                #expect(stats.externalRequests == 1)
                #expect(stats.externalRequestsWithCredentials == 0)
            }
        }
    }

    @Test("legacy REST without JSON:API: a link document fails saying it is hosted elsewhere, without retries")
    func legacyLinkDocumentWithoutJSONAPI() async throws {
        try await withSimulator(.generated(.small, seed: 1), flavour: .v55) { sim async throws in
            let id = try #require(sim.document(named: "Linkliste.txt"))
            try sim.control("POST", ["faults"], ["status": 404, "path": "/jsonapi.php/"])
            try await withSource(Harness.configuration(sim, api: .legacyREST)) { source in
                let downloader = try #require(source.downloader)
                let before = source.requestCount
                let error = await Harness.error { () async throws(StudIPError) in
                    try await downloader.download(DownloadRequest(documentID: id))
                }
                #expect(error == .hostedElsewhere(what: "document \(id)"))
                #expect(source.requestCount == before + 2, "the REST download and the JSON:API probe, no retries")
                #expect(sim.statistics.snapshot().externalRequests == 0)
            }
        }
    }

    @Test("a document test_autor may not download is forbidden", arguments: apis)
    func notDownloadable(api: ClientConfiguration.API) async throws {
        try await withSimulator(.generated(.small, seed: 1), flavour: .v55) { sim async throws in
            let id = try #require(sim.document(named: "Lehrbuch Kapitel 3 (Scan).pdf"))
            try await withSource(Harness.configuration(sim, api: api)) { source in
                let downloader = try #require(source.downloader)
                let error = await Harness.error { () async throws(StudIPError) in
                    try await downloader.download(DownloadRequest(documentID: id))
                }
                #expect(error == .forbidden(what: "document \(id)"))
                let missing = await Harness.error { () async throws(StudIPError) in
                    try await downloader.download(DownloadRequest(documentID: "0123456789abcdef0123456789abcdef"))
                }
                #expect(missing == .notFound(what: "document 0123456789abcdef0123456789abcdef"))
            }
        }
    }

    // MARK: Failures

    @Test("a reset mid-body throws from next(), never a silently short file", arguments: apis)
    func resetMidBody(api: ClientConfiguration.API) async throws {
        try await withSimulator { sim in
            try await withSource(Harness.configuration(sim, api: api)) { source in
                let downloader = try #require(source.downloader)
                sim.inject(Fault(action: .resetAfterBytes(200_000), pathContains: Self.bigFixture, remaining: 1))
                let body = try await Self.content(downloader, DownloadRequest(documentID: Self.bigFixture))
                var received = 0
                do {
                    for try await chunk in body { received += chunk.count }
                    Issue.record("the body ended normally after \(received) bytes")
                } catch {
                    // The server answered: a broken body is not "offline" (EIO in the mount, not ENETDOWN).
                    guard case .brokeOff(_, _, stalled: false) = error as? StudIPError else {
                        Issue.record("expected a reset body, got \(error)")
                        return
                    }
                }
                #expect(received <= 200_000)
                await #expect(throws: StudIPError.self) { _ = try await body.next() }
            }
        }
    }

    @Test("503 before the body is retried; the retries count, the budget does not")
    func retriedStart() async throws {
        try await withSimulator { sim in
            let capture = LogCapture()
            var configuration = Harness.configuration(sim, api: .jsonAPI, logger: capture.logger)
            // Connecting takes one budgeted request (two if a loaded machine makes it retry); the three download
            // attempts would not fit in what is left if they counted.
            configuration.requestBudget = 2
            try await withSource(configuration) { source in
                let downloader = try #require(source.downloader)
                sim.inject(Fault(action: .status(503), pathContains: Self.bigFixture, remaining: 2))
                let before = source.requestCount
                let retriesBefore = capture.retries
                let body = try await Self.content(downloader, DownloadRequest(documentID: Self.bigFixture))
                #expect(try await Self.readAll(body) == (try sim.expectedBytes(of: Self.bigFixture)))
                let retries = capture.retries - retriesBefore
                #expect(retries >= 2, "both 503s are retried")
                #expect(source.requestCount == before + 1 + retries)
            }
        }
    }

    /// Issue 14.2: a body that stops arriving is a stall (ETIMEDOUT in the mount), not an unreachable server.
    @Test("a stall mid-body throws from next() after the idle timeout")
    func stallMidBody() async throws {
        try await withSimulator { sim in
            var configuration = Harness.configuration(sim, api: .jsonAPI)
            // Only the stall is under test. The idle timeout also bounds the wait for the head, which may take a
            // while on a machine busy with the whole suite: 3 s, against a 15 s stall.
            configuration.downloadTimeouts.responseHead = .seconds(60)
            configuration.downloadTimeouts.idle = .seconds(3)
            try await withSource(configuration) { source in
                let downloader = try #require(source.downloader)
                sim.inject(
                    Fault(action: .stallAfterBytes(100_000, milliseconds: 15_000), pathContains: Self.bigFixture))
                let body = try await Self.content(downloader, DownloadRequest(documentID: Self.bigFixture))
                var received = 0
                do {
                    for try await chunk in body { received += chunk.count }
                    Issue.record("the body ended normally after \(received) bytes")
                } catch {
                    guard case .brokeOff(_, let detail, stalled: true) = error as? StudIPError else {
                        Issue.record("expected a stalled body, got \(error)")
                        return
                    }
                    #expect(detail.contains("no data from"), "\(detail)")
                }
                #expect(received <= 100_000)
            }
        }
    }

    /// Issue 14.2: a rate limit asking for more patience than a person opening a file has is "try again later"
    /// at once (EAGAIN in the mount), not a wait that ends as "offline".
    @Test("429 with a long Retry-After fails the download at once, without a retry")
    func rateLimited() async throws {
        try await withSimulator { sim in
            try await withSource(Harness.configuration(sim, api: .jsonAPI)) { source in
                let downloader = try #require(source.downloader)
                sim.inject(Fault(action: .rateLimited(retryAfterSeconds: 120), pathContains: Self.bigFixture))
                let before = source.requestCount
                let error = await Harness.error { () async throws(StudIPError) in
                    try await downloader.download(DownloadRequest(documentID: Self.bigFixture))
                }
                guard case .serverError(429, _) = error else {
                    Issue.record("expected 429, got \(String(describing: error))")
                    return
                }
                #expect(source.requestCount == before + 1, "no retry")
                sim.clearFaults()
                sim.inject(
                    Fault(action: .rateLimited(retryAfterSeconds: 0), pathContains: Self.bigFixture, remaining: 1))
                _ = try await Self.readAll(
                    try await Self.content(downloader, DownloadRequest(documentID: Self.bigFixture)))
                #expect(source.requestCount == before + 3, "a short Retry-After is waited for and retried")
            }
        }
    }

    @Test("a stalled server fails the download after the response-head deadline, without retries")
    func stalledHead() async throws {
        try await withSimulator { sim in
            var configuration = Harness.configuration(sim, api: .jsonAPI)
            // Wide enough that the healthy download at the end starts in time while the rest of the suite runs beside
            // it on two cores (1 s was missed once in a clean-clone run), narrow enough for the 5 s bound below.
            configuration.downloadTimeouts.responseHead = .seconds(2)
            try await withSource(configuration) { source in
                let downloader = try #require(source.downloader)
                sim.inject(Fault(action: .stall(milliseconds: 10_000), pathContains: Self.bigFixture))
                let before = source.requestCount
                let started = ContinuousClock.now
                let error = await Harness.error { () async throws(StudIPError) in
                    try await downloader.download(DownloadRequest(documentID: Self.bigFixture))
                }
                guard case .unreachable = error else {
                    Issue.record("expected unreachable, got \(String(describing: error))")
                    return
                }
                #expect(ContinuousClock.now - started < .seconds(5))
                #expect(source.requestCount == before + 1)
                sim.clearFaults()
                // The source still works afterwards.
                _ = try await Self.readAll(
                    try await Self.content(downloader, DownloadRequest(documentID: Self.bigFixture)))
            }
        }
    }

    @Test("server gone: unreachable within 3 seconds", arguments: apis)
    func serverGone(api: ClientConfiguration.API) async throws {
        let sim = try await Simulator.start(SimulatorConfiguration(dataset: .fixtures507))
        try await withSource(Harness.configuration(sim, api: api)) { source in
            let downloader = try #require(source.downloader)
            _ = try await Self.readAll(try await Self.content(downloader, DownloadRequest(documentID: Self.bigFixture)))
            await sim.stop()
            let started = ContinuousClock.now
            let error = await Harness.error { () async throws(StudIPError) in
                try await downloader.download(DownloadRequest(documentID: Self.bigFixture))
            }
            let elapsed = ContinuousClock.now - started
            guard case .unreachable = error else {
                Issue.record("expected unreachable, got \(String(describing: error))")
                return
            }
            // The product's bound is 3 s (the connect deadline); the margin is for a loaded test machine.
            #expect(elapsed < .seconds(5))
        }
    }

    @Test("requestCount includes downloads, also after a refresh started")
    func requestCount() async throws {
        try await withSimulator { sim in
            try await withSource(Harness.configuration(sim, api: .jsonAPI)) { source in
                let downloader = try #require(source.downloader)
                _ = try await source.overview()
                sim.resetStatistics()
                let before = source.requestCount
                for id in Self.fixtureDocuments {
                    _ = try await Self.readAll(try await Self.content(downloader, DownloadRequest(documentID: id)))
                }
                #expect(source.requestCount == before + Self.fixtureDocuments.count)
                #expect(sim.served == Self.fixtureDocuments.count)
            }
        }
    }

    @Test("downloads held open do not block metadata requests, and give their slot back when dropped")
    func downloadsDoNotBlockMetadata() async throws {
        try await withSimulator { sim in
            var configuration = Harness.configuration(sim, api: .jsonAPI)
            configuration.maxConcurrentDownloads = 2
            configuration.maxConcurrentRequests = 2
            try await withSource(configuration) { source in
                let downloader = try #require(source.downloader)
                var open: [DownloadBody] = []
                for _ in 0..<2 {
                    open.append(try await Self.content(downloader, DownloadRequest(documentID: Self.bigFixture)))
                }
                let overview = try await source.overview()
                #expect(overview.courses.count == 5)
                open.removeAll()
                let body = try await Self.content(downloader, DownloadRequest(documentID: Self.bigFixture))
                #expect(try await Self.readAll(body).count == 1_572_987)
            }
        }
    }

    // MARK: Redirect policy

    @Test("credentials go only to the installation's own scheme, host and port")
    func originPolicy() throws {
        let installation = try Installation("https://studip.example.org/studip")
        #expect(installation.isOwnOrigin("https://studip.example.org/studip/sendfile.php?id=1"))
        #expect(installation.isOwnOrigin("https://STUDIP.example.org:443/other"))
        #expect(!installation.isOwnOrigin("https://studip.example.org:8443/studip/x"))
        #expect(!installation.isOwnOrigin("http://studip.example.org/studip/x"))
        #expect(!installation.isOwnOrigin("https://files.example.org/x"))
        #expect(!installation.isOwnOrigin("https://studip.example.org.evil.net/x"))
    }

    @Test("Location headers resolve against the answering URL; other schemes are refused")
    func locations() {
        let from = "https://studip.example.org/studip/jsonapi.php/v1/file-refs/1/content"
        #expect(Redirect.target(of: "/x/y.pdf", from: from) == "https://studip.example.org/x/y.pdf")
        #expect(
            Redirect.target(of: "https://cdn.example.net/a?sig=1#top", from: from) == "https://cdn.example.net/a?sig=1")
        #expect(Redirect.target(of: "ftp://files.example.org/a", from: from) == nil)
        #expect(Redirect.target(of: "javascript:alert(1)", from: from) == nil)
        #expect(Origin("https://cdn.example.net/a?sig=secret")?.description == "https://cdn.example.net:443")
    }

    @Test("HTTP dates round-trip in RFC 1123 form")
    func httpDates() throws {
        let date = Date(timeIntervalSince1970: 1_729_000_000)
        #expect(HTTPDate.format(date) == "Tue, 15 Oct 2024 13:46:40 GMT")
        #expect(HTTPDate.parse("Tue, 15 Oct 2024 13:46:40 GMT") == date)
        #expect(HTTPDate.parse("yesterday") == nil)
    }

    // MARK: Helpers

    static func content(
        _ downloader: any DocumentDownloader, _ request: DownloadRequest
    ) async throws -> DownloadBody {
        switch try await downloader.download(request) {
        case .content(let body): return body
        case .notModified: throw TestFailure(message: "unexpected notModified for \(request.documentID)")
        }
    }

    static func readAll(_ body: DownloadBody) async throws -> Data {
        var data = Data()
        for try await chunk in body { data.append(contentsOf: chunk) }
        return data
    }

    struct TestFailure: Error {
        let message: String
    }
}

extension Simulator {
    var control: ControlAPI {
        ControlAPI(
            store: store, statistics: statistics, faults: faults, authenticator: authenticator, settings: settings)
    }

    /// Calls the control API in-process; returns its JSON answer.
    @discardableResult
    func control(_ method: String, _ segments: [String], _ input: [String: Any] = [:]) throws -> [String: Any] {
        let body = input.isEmpty ? Data() : try JSONSerialization.data(withJSONObject: input)
        let response = control.handle(method: method, segments: segments, body: body)
        guard case .bytes(let data) = response.body, (200..<300).contains(response.status) else {
            throw DownloadTests.TestFailure(message: "control \(method) \(segments) answered \(response.status)")
        }
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    /// The bytes a download of `id` must produce (`GET /__sim/documents/{id}/content`).
    func expectedBytes(of id: String) throws -> Data {
        let response = control.handle(method: "GET", segments: ["documents", id, "content"], body: Data())
        guard case .bytes(let data) = response.body, response.status == 200 else {
            throw DownloadTests.TestFailure(message: "no expected bytes for \(id)")
        }
        return data
    }

    /// Adds a generated binary document of `size` bytes to INF-101's root folder; returns its id.
    func addDocument(size: Int) throws -> String {
        let folder = "4e107a3e74b5a1e14c92af681110bb03"
        let created = try control("POST", ["documents"], ["folder_id": folder, "name": "gross.bin", "size": size])
        guard let id = created["id"] as? String else { throw DownloadTests.TestFailure(message: "no id") }
        return id
    }

    /// Points a link document somewhere else.
    func relink(_ id: String, to url: String) throws {
        _ = try store.mutate { university in
            guard var ref = university.fileRefs[id] else { return }
            ref.content = .external(url: url)
            try university.update(ref)
        }
    }

    func document(named name: String) -> String? {
        university.fileRefs.values.first { $0.name == name }?.id
    }
}
