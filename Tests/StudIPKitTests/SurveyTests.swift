import Foundation
import StudIPKit
import StudIPModel
import TestSupport
import Testing

@testable import StudIPSimulator

/// `StudIP.survey`: the base URL from any pasted address, and what each Stud.IP generation offers for logging in.
@Suite("Login survey")
struct SurveyTests {
    @Test(
        "the base URL of any address of an installation",
        arguments: [
            ("https://studip.example.org/studip/dispatch.php/my_courses?cid=x#y", "https://studip.example.org/studip"),
            ("https://studip.example.org/jsonapi.php/v1/users/me", "https://studip.example.org"),
            ("https://studip.example.org/studip/index.php?again=yes", "https://studip.example.org/studip"),
            ("https://studip.example.org/studip/", "https://studip.example.org/studip"),
            ("studip.example.org/studip/api.php/user", "https://studip.example.org/studip"),
            ("http://127.0.0.1:8080/studip/plugins.php/x/y", "http://127.0.0.1:8080/studip"),
            ("https://host/s/seminar_main.php?auswahl=abc", "https://host/s"),
            ("https://host/s/sendfile.php?type=0&file_id=1", "https://host/s"),
            ("https://user:secret@host/s/dispatch.php/start", "https://host/s"),
        ])
    func baseURL(pasted: String, expected: String) throws {
        #expect(try LoginSurvey.baseURL(from: pasted) == expected)
    }

    @Test(
        "each generation's APIs, OAuth2 and login form, from a page address",
        arguments: [
            (Flavour.v50, false, true, "Stud.IP 4.5–5.1"),
            (.v55, true, true, "Stud.IP 5.2 or newer"),
            (.v6, true, false, "Stud.IP 6"),
        ])
    func generations(flavour: Flavour, oauth2: Bool, legacy: Bool, generation: String) async throws {
        try await withSimulator(flavour: flavour, basePath: "/studip") { sim async throws in
            let survey = try await StudIP.survey(sim.baseURL + "/dispatch.php/my_courses?cid=x#y")
            #expect(survey.baseURL == sim.baseURL)
            #expect(sim.baseURL.hasSuffix("/studip"))
            #expect(survey.jsonAPI)
            #expect(survey.legacyREST == legacy)
            #expect(survey.oauth2 == oauth2)
            #expect(survey.webLoginForm)
            #expect(survey.singleSignOn.isEmpty)
            #expect(survey.generation == generation)
        }
    }

    @Test("no Stud.IP at the address: apiUnavailable")
    func nothingThere() async throws {
        try await withSimulator { sim async throws in
            let error = await Harness.error { () async throws(StudIPError) in
                try await StudIP.survey(sim.controlURL + "/nothing/dispatch.php/start")
            }
            guard case .apiUnavailable = error else {
                Issue.record("expected apiUnavailable, got \(String(describing: error))")
                return
            }
        }
    }
}
