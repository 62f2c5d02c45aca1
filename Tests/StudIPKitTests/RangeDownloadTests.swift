import Foundation
import StudIPModel
import TestSupport
import Testing

@testable import StudIPKit
@testable import StudIPSimulator

/// Issue 30, the client side (docs/ranges.md, "On the wire"): `downloadRange` through `sendfile.php` with a web
/// session, or the JSON:API content route where it answers ranges; every answer verified; nothing else taken.
@Suite("Byte ranges")
struct RangeDownloadTests {
    static let apis: [ClientConfiguration.API] = [.jsonAPI, .legacyREST]
    static let sendfileRange = "web GET sendfile.php range"
    static let sendfile = "web GET sendfile.php"
    static let content = "jsonapi GET file-refs/{id}/content"
    /// The size of ``DownloadTests/bigFixture``.
    static let bigSize: Int64 = 1_572_987
    /// What a body dropped unread may have cost on the wire: the socket buffers' worth plus what the in-process
    /// simulator wrote before the connection closed (measured up to 4.1 MB alone, 13.2 MB beside the other suites on
    /// two cores), still half of the 32 MiB documents that show it: reading the whole body would send all of it.
    static let droppedUnread = 16 << 20

    static func webLogin(_ sim: Simulator, api: ClientConfiguration.API = .jsonAPI) -> ClientConfiguration {
        Harness.configuration(sim, api: api, credentials: .webLogin(username: "test_autor", password: Harness.password))
    }

    static func routes(_ sim: Simulator) -> [String: Int] { sim.statistics.snapshot().routes }

    /// Runs `body` with the downloader of a source connected with `configuration`, shut down afterwards.
    static func withDownloader<T: Sendable>(
        _ configuration: ClientConfiguration, _ body: (any DocumentDownloader) async throws -> T
    ) async throws -> T {
        try await withSource(configuration) { source in try await body(try #require(source.downloader)) }
    }

    /// The range's bytes and how many the body announced.
    static func bytes(
        _ downloader: any DocumentDownloader, _ id: String, _ range: Range<Int64>, size: Int64
    ) async throws -> Data {
        let body = try await downloader.downloadRange(RangeRequest(documentID: id, range: range, documentSize: size))
        #expect(body.expectedLength == Int64(range.count))
        return try await DownloadTests.readAll(body)
    }

    static func slice(_ data: Data, _ range: Range<Int64>) -> Data {
        data.subdata(in: Int(range.lowerBound)..<Int(range.upperBound))
    }

    /// What `downloadRange` throws, nil when it returns a body.
    static func failure(
        _ downloader: any DocumentDownloader, _ id: String, _ range: Range<Int64>, size: Int64
    ) async -> StudIPError? {
        await Harness.error { () async throws(StudIPError) in
            try await downloader.downloadRange(RangeRequest(documentID: id, range: range, documentSize: size))
        }
    }

    static func isRangesUnavailable(_ error: StudIPError?) -> Bool {
        if case .rangesUnavailable = error { true } else { false }
    }

    /// An answer that failed for this range only: the connection keeps its ranges (docs/ranges.md).
    static func isMalformed(_ error: StudIPError?) -> Bool {
        if case .malformedResponse = error { true } else { false }
    }

    // MARK: sendfile.php with a web session

    @Test(
        "a web-login user: sendfile.php answers the ranges, one request each, the bytes of the document",
        arguments: apis)
    func webLoginUser(api: ClientConfiguration.API) async throws {
        try await withSimulator { sim async throws in
            let size = 32 << 20
            let id = try sim.addDocument(size: size)
            let expected = try sim.expectedBytes(of: id)
            try await Self.withDownloader(Self.webLogin(sim, api: api)) { downloader async throws in
                sim.resetStatistics()
                let ranges: [Range<Int64>] = [Int64(size) - 4096..<Int64(size), 0..<2, 1_000_000..<1_065_536]
                for range in ranges {
                    let bytes = try await Self.bytes(downloader, id, range, size: Int64(size))
                    #expect(bytes == Self.slice(expected, range), "\(range)")
                }
                let routes = Self.routes(sim)
                #expect(routes[Self.sendfileRange] == ranges.count, "\(routes)")
                #expect(routes[LoginFlowTests.loginPost] == nil, "the API's session, no second login: \(routes)")
                let stats = sim.statistics.snapshot()
                #expect(stats.bytesSent[Self.sendfileRange] == ranges.reduce(0) { $0 + $1.count })
                if api == .jsonAPI {
                    // The probe: the content route of 5.0.7 answers 200; its body is dropped, not downloaded.
                    #expect(routes[Self.content] == 1, "\(routes)")
                    #expect((stats.bytesSent[Self.content] ?? 0) < Self.droppedUnread, "\(stats.bytesSent)")
                } else {
                    #expect(routes[Self.content] == nil && routes["rest GET file/{id}/download"] == nil, "\(routes)")
                }
            }
        }
    }

    @Test("a Basic user: a session of its own through the login form, once, on the first range", arguments: apis)
    func basicUser(api: ClientConfiguration.API) async throws {
        try await withSimulator { sim async throws in
            let id = DownloadTests.bigFixture
            let expected = try sim.expectedBytes(of: id)
            let size = Int64(expected.count)
            try await Self.withDownloader(Harness.configuration(sim, api: api)) { downloader async throws in
                #expect(Self.routes(sim)[LoginFlowTests.loginPost] == nil, "Basic lists without a session")
                for range in [size - 100..<size, 10..<20, 500_000..<600_000] {
                    #expect(try await Self.bytes(downloader, id, range, size: size) == Self.slice(expected, range))
                }
                let routes = Self.routes(sim)
                #expect(routes[LoginFlowTests.loginPost] == 1, "one login for all ranges: \(routes)")
                #expect(routes[Self.sendfileRange] == 3, "\(routes)")
            }
        }
    }

    @Test("Basic that fell back to the login form: its session serves the ranges, no second login")
    func basicFallback() async throws {
        try await withSimulator(settings: SimulatorSettings(basicAuthReachesPHP: false)) { sim async throws in
            let id = DownloadTests.bigFixture
            let expected = try sim.expectedBytes(of: id)
            var configuration = Harness.configuration(sim, api: .legacyREST)
            configuration.basicFallsBackToWebLogin = true
            try await Self.withDownloader(configuration) { downloader async throws in
                #expect(Self.routes(sim)[LoginFlowTests.loginPost] == 1, "the fallback logged in")
                let range: Range<Int64> = Self.bigSize - 1000..<Self.bigSize
                #expect(try await Self.bytes(downloader, id, range, size: Self.bigSize) == Self.slice(expected, range))
                #expect(Self.routes(sim)[LoginFlowTests.loginPost] == 1, "\(Self.routes(sim))")
            }
        }
    }

    @Test("Basic where no login form gives a session: ranges unavailable, never a login failure, not tried again")
    func basicUserWithoutForm() async throws {
        try await withSimulator { sim async throws in
            // A front page without a login form (an installation that logs in through single sign-on only, say).
            try await Self.withDownloader(Harness.configuration(sim, api: .legacyREST)) { downloader async throws in
                sim.inject(
                    Fault(action: .body("<html><form><input type=\"text\"></form></html>"), pathContains: "index.php"))
                let id = DownloadTests.bigFixture
                let first = await Self.failure(downloader, id, 0..<100, size: Self.bigSize)
                #expect(Self.isRangesUnavailable(first), "\(String(describing: first))")
                #expect(Self.routes(sim)["fault"] == 1, "the login page was asked once")
                let second = await Self.failure(downloader, id, 0..<100, size: Self.bigSize)
                #expect(Self.isRangesUnavailable(second))
                #expect(Self.routes(sim)["fault"] == 1, "not asked again: \(Self.routes(sim))")
                #expect(Self.routes(sim)[Self.sendfileRange] == nil)
            }
        }
    }

    // MARK: OAuth2 and the content route

    @Test("OAuth2 on 5.0.7's behaviour: one probe, then no ranges and no requests")
    func bearerWithoutContentRanges() async throws {
        try await withSimulator(flavour: .v55) { sim async throws in
            let credentials = try DownloadTests.credentials(sim)[1]
            try await Self.withDownloader(Harness.configuration(sim, api: .jsonAPI, credentials: credentials)) {
                downloader in
                let id = DownloadTests.bigFixture
                sim.resetStatistics()
                let first = await Self.failure(downloader, id, 1000..<2000, size: Self.bigSize)
                #expect(Self.isRangesUnavailable(first), "\(String(describing: first))")
                #expect(Self.routes(sim) == [Self.content: 1], "the probe alone: \(Self.routes(sim))")
                let second = await Self.failure(downloader, id, 3000..<4000, size: Self.bigSize)
                #expect(Self.isRangesUnavailable(second))
                #expect(sim.served == 1, "decided once per connection: \(Self.routes(sim))")
            }
        }
    }

    @Test("OAuth2 where the content route answers ranges: the probe decides, the ranges come from there")
    func bearerWithContentRanges() async throws {
        try await withSimulator(flavour: .v55, settings: SimulatorSettings(contentRanges: true)) { sim async throws in
            let credentials = try DownloadTests.credentials(sim)[1]
            let id = DownloadTests.bigFixture
            let expected = try sim.expectedBytes(of: id)
            let size = Int64(expected.count)
            try await Self.withDownloader(Harness.configuration(sim, api: .jsonAPI, credentials: credentials)) {
                downloader in
                sim.resetStatistics()
                for range in [size - 4096..<size, 100..<200] {
                    let body = try await downloader.downloadRange(
                        RangeRequest(documentID: id, range: range, documentSize: size))
                    #expect(body.etag == JSONAPIEnvironment.etag(for: try #require(sim.university.fileRefs[id])))
                    #expect(try await DownloadTests.readAll(body) == Self.slice(expected, range))
                }
                let routes = Self.routes(sim)
                #expect(routes == [Self.content + " range": 3], "the probe and two ranges: \(routes)")
            }
        }
    }

    @Test("If-Range on the content route: the current ETag gets the range; a changed document fails that range alone")
    func ifRange() async throws {
        try await withSimulator(flavour: .v55, settings: SimulatorSettings(contentRanges: true)) { sim async throws in
            let credentials = try DownloadTests.credentials(sim)[1]
            let id = DownloadTests.bigFixture
            let expected = try sim.expectedBytes(of: id)
            let size = Int64(expected.count)
            let etag = JSONAPIEnvironment.etag(for: try #require(sim.university.fileRefs[id]))
            try await Self.withDownloader(Harness.configuration(sim, api: .jsonAPI, credentials: credentials)) {
                downloader in
                func range(_ bytes: Range<Int64>, ifRange: String) async -> StudIPError? {
                    await Harness.error { () async throws(StudIPError) in
                        let body = try await downloader.downloadRange(
                            RangeRequest(documentID: id, range: bytes, documentSize: size, ifRange: ifRange))
                        _ = try? await DownloadTests.readAll(body)
                    }
                }
                // The bytes present came with another version: the server sends the whole document, never the range.
                sim.resetStatistics()
                let changed = await range(100..<200, ifRange: "\"1 2 3\"")
                #expect(Self.isMalformed(changed), "\(String(describing: changed))")
                #expect(Self.routes(sim) == [Self.content + " range": 1, Self.content: 1], "\(Self.routes(sim))")
                // A 206 whose ETag is not the one asked for.
                sim.inject(
                    Fault(action: .headers(["ETag": "\"4 5 6\""]), pathContains: "/content", remaining: 1))
                let other = await range(100..<200, ifRange: etag)
                #expect(Self.isMalformed(other), "\(String(describing: other))")
                // Neither switched the connection's ranges off.
                let body = try await downloader.downloadRange(
                    RangeRequest(documentID: id, range: size - 100..<size, documentSize: size, ifRange: etag))
                #expect(try await DownloadTests.readAll(body) == Self.slice(expected, size - 100..<size))
            }
        }
    }

    @Test("a 206 with a wrong Content-Length fails that range alone; the next is served")
    func wrongContentLength() async throws {
        try await withSimulator { sim async throws in
            let id = DownloadTests.bigFixture
            let expected = try sim.expectedBytes(of: id)
            try await Self.withDownloader(Self.webLogin(sim, api: .legacyREST)) { downloader async throws in
                sim.inject(
                    Fault(action: .headers(["Content-Length": "99"]), pathContains: "sendfile.php", remaining: 1))
                let error = await Self.failure(downloader, id, 0..<100, size: Self.bigSize)
                #expect(Self.isMalformed(error), "\(String(describing: error))")
                #expect(
                    try await Self.bytes(downloader, id, 0..<100, size: Self.bigSize) == Self.slice(expected, 0..<100))
            }
        }
    }

    // MARK: Verification

    @Test("sendfile_ranges off: a 200 is never content; ranges are unavailable for the connection")
    func sendfileRangesOff() async throws {
        try await withSimulator(settings: SimulatorSettings(sendfileRanges: false)) { sim async throws in
            // Larger than socket buffers hold, so that a body read to its end would show.
            let size = 32 << 20
            let id = try sim.addDocument(size: size)
            try await Self.withDownloader(Self.webLogin(sim, api: .legacyREST)) { downloader async throws in
                sim.resetStatistics()
                let error = await Self.failure(downloader, id, 0..<100, size: Int64(size))
                #expect(Self.isRangesUnavailable(error), "\(String(describing: error))")
                #expect(Self.routes(sim) == [Self.sendfile: 1], "\(Self.routes(sim))")
                let sent = sim.statistics.snapshot().bytesSent[Self.sendfile] ?? 0
                #expect(sent < Self.droppedUnread, "dropped unread: \(sent) bytes")
                #expect(Self.isRangesUnavailable(await Self.failure(downloader, id, 100..<200, size: Int64(size))))
                #expect(sim.served == 1, "no second request")
            }
        }
    }

    @Test("a wrong Content-Range is refused; the next right one is taken")
    func wrongContentRange() async throws {
        try await withSimulator { sim async throws in
            let id = DownloadTests.bigFixture
            let expected = try sim.expectedBytes(of: id)
            try await Self.withDownloader(Self.webLogin(sim, api: .legacyREST)) { downloader async throws in
                for wrong in [
                    "bytes 0-99/5", "bytes 100-199/1572987", "bytes 0-99/1572988", "bytes -500000-99/1572987",
                ] {
                    sim.inject(
                        Fault(action: .headers(["Content-Range": wrong]), pathContains: "sendfile.php", remaining: 1))
                    let error = await Self.failure(downloader, id, 0..<100, size: Self.bigSize)
                    #expect(Self.isMalformed(error), "\(wrong): \(String(describing: error))")
                }
                #expect(Self.routes(sim)[Self.sendfileRange] == 4)
                #expect(
                    try await Self.bytes(downloader, id, 0..<100, size: Self.bigSize) == Self.slice(expected, 0..<100))
            }
        }
    }

    @Test("a 200 HTML page that is not the login page (maintenance): this range fails, no new login")
    func htmlPage() async throws {
        try await withSimulator { sim async throws in
            try await Self.withDownloader(Self.webLogin(sim, api: .legacyREST)) { downloader async throws in
                let id = DownloadTests.bigFixture
                let expected = try sim.expectedBytes(of: id)
                sim.inject(
                    Fault(
                        action: .body("<html><body>Wartungsarbeiten</body></html>"), pathContains: "sendfile.php",
                        remaining: 1))
                sim.resetStatistics()
                let error = await Self.failure(downloader, id, 0..<100, size: Self.bigSize)
                #expect(Self.isMalformed(error), "\(String(describing: error))")
                #expect(Self.routes(sim) == ["fault": 1], "\(Self.routes(sim))")
                #expect(
                    try await Self.bytes(downloader, id, 0..<100, size: Self.bigSize) == Self.slice(expected, 0..<100))
            }
        }
    }

    @Test("416 (a range past the end: the document shrank) and 404 fail that range only; the next range is served")
    func unsatisfiable() async throws {
        try await withSimulator { sim async throws in
            try await Self.withDownloader(Self.webLogin(sim, api: .legacyREST)) { downloader async throws in
                let id = DownloadTests.bigFixture
                let past = await Self.failure(downloader, id, 2_000_000..<2_000_100, size: 0)
                guard case .serverError(status: 416, _)? = past else {
                    Issue.record("\(String(describing: past))")
                    return
                }
                let missing = "0123456789abcdef0123456789abcdef"
                let error = await Self.failure(downloader, missing, 0..<100, size: 0)
                #expect(error == .notFound(what: "document \(missing)"))
                let expected = try sim.expectedBytes(of: id)
                #expect(
                    try await Self.bytes(downloader, id, 0..<100, size: Self.bigSize) == Self.slice(expected, 0..<100))
            }
        }
    }

    @Test("a body cut short throws brokeOff")
    func cutShort() async throws {
        try await withSimulator { sim async throws in
            try await Self.withDownloader(Self.webLogin(sim, api: .legacyREST)) { downloader async throws in
                sim.inject(Fault(action: .resetAfterBytes(1000), pathContains: "sendfile.php", remaining: 1))
                let body = try await downloader.downloadRange(
                    RangeRequest(documentID: DownloadTests.bigFixture, range: 0..<200_000, documentSize: Self.bigSize))
                var received = 0
                do {
                    for try await chunk in body { received += chunk.count }
                    Issue.record("the body ended normally after \(received) bytes")
                } catch {
                    guard case .brokeOff = error as? StudIPError else {
                        Issue.record("expected brokeOff, got \(error)")
                        return
                    }
                }
                #expect(received <= 1000)
            }
        }
    }

    @Test("one-byte ranges are never asked; two bytes are")
    func oneByte() async throws {
        try await withSimulator { sim async throws in
            let id = DownloadTests.bigFixture
            let expected = try sim.expectedBytes(of: id)
            #expect(Int64(expected.count) == Self.bigSize)
            try await Self.withDownloader(Self.webLogin(sim, api: .legacyREST)) { downloader async throws in
                sim.resetStatistics()
                // The caller's mistake fails that range, not the connection's ranges.
                #expect(
                    Self.isMalformed(
                        await Self.failure(downloader, id, Self.bigSize - 1..<Self.bigSize, size: Self.bigSize)))
                #expect(
                    Self.isMalformed(
                        await Self.failure(downloader, id, Self.bigSize - 1..<Self.bigSize + 1, size: Self.bigSize)))
                #expect(sim.served == 0)
                let two: Range<Int64> = Self.bigSize - 2..<Self.bigSize
                #expect(try await Self.bytes(downloader, id, two, size: Self.bigSize) == Self.slice(expected, two))
            }
        }
    }

    // MARK: An expired session

    @Test("an expired session: one new login and the right bytes; expired again within the minute: unavailable")
    func expiredSession() async throws {
        try await withSimulator { sim async throws in
            let id = DownloadTests.bigFixture
            let expected = try sim.expectedBytes(of: id)
            for credentials: Credentials in [
                .webLogin(username: "test_autor", password: Harness.password),
                .basic(username: "test_autor", password: Harness.password),
            ] {
                try await Self.withDownloader(Harness.configuration(sim, api: .legacyREST, credentials: credentials)) {
                    downloader in
                    _ = try await Self.bytes(downloader, id, 0..<100, size: Self.bigSize)
                    sim.resetStatistics()
                    try sim.control("POST", ["sessions", "expire"])
                    let range: Range<Int64> = 700_000..<800_000
                    #expect(
                        try await Self.bytes(downloader, id, range, size: Self.bigSize) == Self.slice(expected, range))
                    var routes = Self.routes(sim)
                    #expect(routes[LoginFlowTests.loginPost] == 1, "\(credentials): \(routes)")
                    #expect(
                        routes[Self.sendfile] == 1 && routes[Self.sendfileRange] == 1, "the login page, then the range")

                    sim.resetStatistics()
                    try sim.control("POST", ["sessions", "expire"])
                    let again = await Self.failure(downloader, id, range, size: Self.bigSize)
                    #expect(Self.isRangesUnavailable(again), "\(String(describing: again))")
                    let later = await Self.failure(downloader, id, range, size: Self.bigSize)
                    #expect(Self.isRangesUnavailable(later))
                    routes = Self.routes(sim)
                    #expect(routes[LoginFlowTests.loginPost] == nil, "no second login within the minute: \(routes)")
                    #expect(routes[Self.sendfile] == 1, "the expired session is not sent again: \(routes)")
                }
            }
        }
    }

    @Test("after the renewal interval, an expired session is renewed again")
    func renewalInterval() async throws {
        try await withSimulator { sim async throws in
            let id = DownloadTests.bigFixture
            let expected = try sim.expectedBytes(of: id)
            var configuration = Self.webLogin(sim, api: .legacyREST)
            configuration.rangeSessionRenewalInterval = .zero
            try await Self.withDownloader(configuration) { downloader async throws in
                for round in 1...2 {
                    try sim.control("POST", ["sessions", "expire"])
                    let range: Range<Int64> = 0..<1000
                    #expect(
                        try await Self.bytes(downloader, id, range, size: Self.bigSize) == Self.slice(expected, range))
                    #expect(Self.routes(sim)[LoginFlowTests.loginPost] == round + 1, "\(Self.routes(sim))")
                }
            }
        }
    }

    @Test("two reads meet one session expiry: one new login, both get their bytes", .timeLimit(.minutes(1)))
    func concurrentExpiry() async throws {
        try await withSimulator { sim async throws in
            let id = DownloadTests.bigFixture
            let expected = try sim.expectedBytes(of: id)
            try await Self.withDownloader(Self.webLogin(sim, api: .legacyREST)) { downloader async throws in
                _ = try await Self.bytes(downloader, id, 0..<100, size: Self.bigSize)
                sim.resetStatistics()
                try sim.control("POST", ["sessions", "expire"])
                // A slow login, so that the second read meets the ended session while the first renews it.
                sim.inject(Fault(action: .stall(milliseconds: 300), pathContains: "index.php", method: "POST"))
                let ranges: [Range<Int64>] = [1000..<2000, 500_000..<510_000]
                async let first = Self.bytes(downloader, id, ranges[0], size: Self.bigSize)
                async let second = Self.bytes(downloader, id, ranges[1], size: Self.bigSize)
                #expect(try await first == Self.slice(expected, ranges[0]))
                #expect(try await second == Self.slice(expected, ranges[1]))
                let routes = Self.routes(sim)
                #expect(routes[LoginFlowTests.loginPost] == 1, "\(routes)")
                #expect(routes[Self.sendfile] == 2, "both met the ended session: \(routes)")
            }
        }
    }

    // MARK: The form of a Basic user's own session

    @Test("Basic whose password the login form refuses: one post, then ranges off; never a login failure")
    func basicRefusedByForm() async throws {
        try await withSimulator { sim async throws in
            let id = DownloadTests.bigFixture
            try await Self.withDownloader(Harness.configuration(sim, api: .legacyREST)) { downloader async throws in
                let page = """
                    <html><body><div class="messagebox messagebox_error">Bei der Anmeldung trat ein Fehler auf!</div>
                    <form method="post" action="index.php"><input type="text" name="loginname">
                    <input type="password" name="password"><button name="Login">Anmelden</button></form></body></html>
                    """
                sim.inject(Fault(action: .body(page), pathContains: "index.php", method: "POST"))
                sim.resetStatistics()
                for range in [0..<100, 5000..<6000, 9000..<9100] as [Range<Int64>] {
                    let error = await Self.failure(downloader, id, range, size: Self.bigSize)
                    #expect(Self.isRangesUnavailable(error), "\(String(describing: error))")
                    #expect(error?.isLoginFailure == false)
                }
                #expect(Self.routes(sim)["fault"] == 1, "one post: \(Self.routes(sim))")
                #expect(Self.routes(sim)[Self.sendfileRange] == nil)
                let expected = try sim.expectedBytes(of: id)
                let whole = try await DownloadTests.content(downloader, DownloadRequest(documentID: id))
                #expect(try await DownloadTests.readAll(whole) == expected, "Basic still works")
            }
        }
    }

    @Test("Basic: a login form answering 503 is not posted again within the minute; those ranges fail alone")
    func basicFormUnavailable() async throws {
        try await withSimulator { sim async throws in
            let id = DownloadTests.bigFixture
            try await Self.withDownloader(Harness.configuration(sim, api: .legacyREST)) { downloader async throws in
                sim.inject(Fault(action: .status(503), pathContains: "index.php", method: "POST"))
                sim.resetStatistics()
                for range in [0..<100, 5000..<6000, 9000..<9100] as [Range<Int64>] {
                    let error = await Self.failure(downloader, id, range, size: Self.bigSize)
                    guard case .serverError(status: 503, _)? = error else {
                        Issue.record("\(String(describing: error))")
                        continue
                    }
                }
                let routes = Self.routes(sim)
                #expect(routes["fault"] == 1, "one post within the minute: \(routes)")
                #expect(routes[LoginFlowTests.loginPage] == 1, "\(routes)")
                #expect(routes[Self.sendfileRange] == nil)
            }
        }
    }

    @Test("Basic: after a failed post and the interval, the next range logs in and gets its bytes")
    func basicFormRecovers() async throws {
        try await withSimulator { sim async throws in
            let id = DownloadTests.bigFixture
            let expected = try sim.expectedBytes(of: id)
            var configuration = Harness.configuration(sim, api: .legacyREST)
            configuration.rangeSessionRenewalInterval = .zero
            try await Self.withDownloader(configuration) { downloader async throws in
                sim.inject(Fault(action: .status(503), pathContains: "index.php", method: "POST", remaining: 1))
                let error = await Self.failure(downloader, id, 0..<100, size: Self.bigSize)
                #expect(!Self.isRangesUnavailable(error), "\(String(describing: error))")
                #expect(
                    try await Self.bytes(downloader, id, 0..<100, size: Self.bigSize) == Self.slice(expected, 0..<100))
                #expect(Self.routes(sim)[LoginFlowTests.loginPost] == 1, "\(Self.routes(sim))")
            }
        }
    }

    // MARK: Documents hosted elsewhere

    @Test(
        "two first ranges at once, one of a document hosted elsewhere: its redirected probe decides nothing for the other",
        .timeLimit(.minutes(1)))
    func sharedProbe() async throws {
        try await withSimulator { sim async throws in
            let elsewhere = DownloadTests.bigFixture
            try sim.relink(elsewhere, to: "/elsewhere/\(elsewhere)/daten.bin")
            let far = try sim.expectedBytes(of: elsewhere)
            let size = 1 << 20
            let own = try sim.addDocument(size: size)
            let near = try sim.expectedBytes(of: own)
            try await Self.withDownloader(Self.webLogin(sim, api: .jsonAPI)) { downloader async throws in
                // The probe of the document hosted elsewhere waits at Stud.IP, so that the other range joins it.
                sim.inject(
                    Fault(
                        action: .stall(milliseconds: 500), pathContains: "file-refs/\(elsewhere)/content", remaining: 1)
                )
                sim.resetStatistics()
                async let first = Self.bytes(downloader, elsewhere, 0..<1000, size: 0)
                while sim.statistics.snapshot().inFlight == 0 { try await Task.sleep(for: .milliseconds(5)) }
                let range: Range<Int64> = Int64(size) - 4096..<Int64(size)
                #expect(try await Self.bytes(downloader, own, range, size: Int64(size)) == Self.slice(near, range))
                #expect(try await first == Self.slice(far, 0..<1000))
                let routes = Self.routes(sim)
                #expect(routes[Self.sendfileRange] == 1, "\(routes)")
            }
        }
    }

    @Test("a document hosted elsewhere: the other host's range, without credentials", arguments: apis)
    func hostedElsewhere(api: ClientConfiguration.API) async throws {
        try await withSimulator { sim async throws in
            let id = DownloadTests.bigFixture
            try sim.relink(id, to: "/elsewhere/\(id)/daten.bin")
            let expected = try sim.expectedBytes(of: id)
            let size = Int64(expected.count)
            try await Self.withDownloader(Self.webLogin(sim, api: api)) { downloader async throws in
                // A first range of a document on Stud.IP decides the route (JSON:API's probe would otherwise meet the
                // other host: docs/ranges.md).
                _ = try await Self.bytes(downloader, DownloadTests.fixtureDocuments[0], 0..<10, size: 0)
                sim.resetStatistics()
                let range: Range<Int64> = size - 5000..<size
                let body = try await downloader.downloadRange(
                    RangeRequest(documentID: id, range: range, documentSize: 0))
                #expect(body.wasRedirected)
                #expect(try await DownloadTests.readAll(body) == Self.slice(expected, range))
                let stats = sim.statistics.snapshot()
                #expect(stats.externalRequestsWithCredentials == 0)
                #expect(stats.bytesSent["external range"] == 5000, "\(stats.bytesSent)")

                // The other host's 200 says nothing about Stud.IP's ranges: this range fails, the next is served.
                sim.change { $0.externalRanges = false }
                let error = await Self.failure(downloader, id, range, size: 0)
                #expect(Self.isMalformed(error), "\(String(describing: error))")
                let own = DownloadTests.fixtureDocuments[0]
                let ownBytes = try sim.expectedBytes(of: own)
                #expect(try await Self.bytes(downloader, own, 0..<10, size: 0) == Self.slice(ownBytes, 0..<10))
            }
        }
    }

    @Test("a chunked 206 (no Content-Length) must hold exactly the range: fewer or more bytes throw")
    func chunkedAnswers() async throws {
        try await withSimulator { sim async throws in
            let id = DownloadTests.bigFixture
            try await Self.withDownloader(Self.webLogin(sim, api: .legacyREST)) { downloader async throws in
                for (sent, broke) in [(60, true), (150, false)] {
                    let host = try RawHTTPHost(
                        response: RawHTTPHost.chunked206(contentRange: "bytes 0-99/1000", bytes: sent))
                    defer { host.stop() }
                    try sim.relink(id, to: "http://127.0.0.1:\(host.port)/elsewhere.bin")
                    let body = try await downloader.downloadRange(
                        RangeRequest(documentID: id, range: 0..<100, documentSize: 0))
                    #expect(body.expectedLength == 100)
                    var received = 0
                    do {
                        for try await chunk in body { received += chunk.count }
                        Issue.record("\(sent) bytes for 100 ended normally")
                    } catch {
                        switch error as? StudIPError {
                        case .brokeOff?: #expect(broke, "\(sent) bytes: \(error)")
                        case .malformedResponse?: #expect(!broke, "\(sent) bytes")
                        default: Issue.record("\(sent) bytes: \(error)")
                        }
                    }
                    #expect(received <= 100, "never more than the range")
                }
            }
        }
    }

    // MARK: Concurrency

    /// The streams are never read, so a range that waited for their slots or connections would wait until the time
    /// limit fails the test.
    @Test("a range does not wait behind four document streams", .timeLimit(.minutes(1)))
    func besideTheStreams() async throws {
        try await withSimulator { sim async throws in
            let id = DownloadTests.bigFixture
            let expected = try sim.expectedBytes(of: id)
            try await Self.withDownloader(Self.webLogin(sim, api: .legacyREST)) { downloader async throws in
                // Large enough that neither socket buffers nor the client's hold them: each stream keeps its slot and
                // its connection.
                let big = try sim.addDocument(size: 32 << 20)
                var streams: [DownloadBody] = []
                for _ in 0..<4 {
                    streams.append(try await DownloadTests.content(downloader, DownloadRequest(documentID: big)))
                }
                let range: Range<Int64> = Self.bigSize - 100_000..<Self.bigSize
                let bytes = try await Self.bytes(downloader, id, range, size: Self.bigSize)
                #expect(bytes == Self.slice(expected, range))
                #expect(streams.count == 4)
            }
        }
    }
}

/// Another host as a bare socket: answers every request with `response`, byte for byte, and closes. For answers
/// the simulator never sends (a chunked `206`, whose length only the `Content-Range` tells).
final class RawHTTPHost: Sendable {
    let port: Int
    private let listener: Int32

    init(response: Data) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(fd, socketAddress, length) == 0 && listen(fd, 4) == 0
                    && getsockname(fd, socketAddress, &length) == 0
            }
        }
        guard fd >= 0, bound else { throw DownloadTests.TestFailure(message: "no listening socket") }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let listener = fd
        // Blocking accept and I/O on a thread of its own, never on the cooperative pool.
        Thread.detachNewThread {
            while true {
                let connection = accept(listener, nil, nil)
                guard connection >= 0 else { return }
                var request: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !request.suffix(4).elementsEqual("\r\n\r\n".utf8) {
                    let count = read(connection, &buffer, buffer.count)
                    guard count > 0 else { break }
                    request += buffer[..<count]
                }
                _ = response.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                close(connection)
            }
        }
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// A `206` with `Content-Range` and a chunked body of `bytes` (no `Content-Length`).
    static func chunked206(contentRange: String, bytes: Int) -> Data {
        var text = "HTTP/1.1 206 Partial Content\r\nContent-Range: \(contentRange)\r\n"
        text += "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        text += String(bytes, radix: 16) + "\r\n" + String(repeating: "x", count: bytes) + "\r\n0\r\n\r\n"
        return Data(text.utf8)
    }
}
