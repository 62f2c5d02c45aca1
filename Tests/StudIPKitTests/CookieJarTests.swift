import Foundation
import Testing

@testable import StudIPKit

/// The login flows' cookie jar: a cookie goes back only to the origin that set it, and leaves when told.
@Suite("Cookie jar")
struct CookieJarTests {
    static func answer(_ cookies: String...) -> HTTPResponse {
        HTTPResponse(status: 200, headers: ["set-cookie": cookies], body: Data())
    }

    @Test("per origin: another host, port or scheme gets nothing")
    func perOrigin() {
        var jar = CookieJar()
        jar.store(Self.answer("Seminar_Session=abc; path=/; HttpOnly", "lang=de"), from: "https://studip.example.org/x")
        jar.store(Self.answer("JSESSIONID=idp1; Path=/idp; Secure"), from: "https://idp.example.org/idp/SSO")
        #expect(jar.header(for: "https://studip.example.org/dispatch.php/start") == "Seminar_Session=abc; lang=de")
        #expect(jar.header(for: "https://idp.example.org/idp/x") == "JSESSIONID=idp1")
        #expect(jar.header(for: "https://studip.example.org:8443/") == nil)
        #expect(jar.header(for: "http://studip.example.org/") == nil)
        #expect(jar.header(for: "https://evil.example.org/") == nil)
    }

    @Test("a new value replaces the old; Max-Age=0 and a past Expires delete")
    func replaceAndDelete() {
        var jar = CookieJar()
        let origin = "http://127.0.0.1:8080/"
        jar.store(Self.answer("a=1", "b=2", "c=3"), from: origin)
        jar.store(Self.answer("a=9"), from: origin)
        jar.store(Self.answer("b=; Max-Age=0"), from: origin)
        jar.store(Self.answer("c=gone; expires=Thu, 01 Jan 1970 00:00:00 GMT; path=/"), from: origin)
        jar.store(Self.answer("d=4; Expires=Fri, 01 Jan 2100 00:00:00 GMT"), from: origin)
        #expect(jar.header(for: origin) == "a=9; d=4")
    }
}
