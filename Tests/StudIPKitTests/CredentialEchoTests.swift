import Foundation
import StudIPKit
import StudIPModel
import TestSupport
import Testing

@testable import StudIPSimulator

/// Issue 14.8: Stud.IP 5.0.7's JSON:API error pages echo the Basic-auth credentials in a link
/// (`http://test_autor:testing@…`, captured in Fixtures/studip-5.0.7-more/jsonapi_course_event_self.body). No
/// message, log line or status built from an answer may carry them on.
@Suite("credentials echoed by the server stay out of messages")
struct CredentialEchoTests {
    static let capturedPage = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appending(path: "Fixtures/studip-5.0.7-more/jsonapi_course_event_self.body")

    @Test("the captured page, and its link first, as the answer to a listing", arguments: [false, true])
    func echoedCredentials(linkFirst: Bool) async throws {
        let page = try String(contentsOf: Self.capturedPage, encoding: .utf8)
        #expect(page.contains("test_autor:testing@"), "the capture has the echo")
        let link = try #require(page.firstRange(of: /http:\/\/test_autor:testing@[^"]*/)).map { String(page[$0]) }
        let body = linkFirst ? try #require(link) + " " + page : page
        try await withSimulator(flavour: .v55) { sim async throws in
            sim.inject(Fault(action: .body(body), pathContains: "v1/semesters"))
            let source = try await StudIP.connect(Harness.configuration(sim, api: .jsonAPI))
            let error = await Harness.error { () async throws(StudIPError) in try await source.overview() }
            await source.shutdown()
            let message = try #require(error).description
            #expect(message.contains("unreadable answer"), "\(message)")
            #expect(!message.contains("testing"), "\(message)")
            if linkFirst { #expect(message.contains("http://…@127.0.0.1"), "\(message)") }
        }
    }

    @Test func everyURLLosesItsUserInformation() {
        #expect(
            StudIPError.withoutCredentials("see <a href=\"https://jdoe:s3cr%40t@studip.example.org/x\">, ftp://a@b/")
                == "see <a href=\"https://…@studip.example.org/x\">, ftp://…@b/")
        #expect(StudIPError.withoutCredentials("mail jdoe@example.org") == "mail jdoe@example.org")
    }
}
