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
        "each generation's APIs, OAuth2 and login form, from a page address, without asking the OAuth2 endpoints",
        arguments: [
            (Flavour.v50, false, true, "Stud.IP 5.0.7"),
            (.v55, true, true, "Stud.IP 5.5.4"),
            (.v6, true, false, "Stud.IP 6.0.2"),
        ])
    func generations(flavour: Flavour, oauth2: Bool, legacy: Bool, generation: String) async throws {
        try await withSimulator(flavour: flavour, basePath: "/studip") { sim async throws in
            let survey = try await StudIP.survey(sim.baseURL + "/dispatch.php/my_courses?cid=x#y")
            // 5.0.7 logs a PHP error for any request there, 6.0 without keys answers 500: the survey never asks.
            let routes = sim.statistics.snapshot().routes
            #expect(routes.keys.filter { $0.contains("oauth2") }.isEmpty, "\(routes)")
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

    /// The real 5.0.7 login page (captured) names its release in every asset's address.
    @Test("the release from a captured 5.0.7 login page")
    func releaseFromTheCapturedLoginPage() throws {
        let page = try Data(contentsOf: HTMLFormsTests.pages.appending(path: "studip-5.0.7-captured.html"))
        #expect(LoginSurvey.release(fromLoginPage: page) == "5.0.7")
        #expect(LoginSurvey.release(fromLoginPage: Data("<html><form><input type=password></form>".utf8)) == nil)
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
