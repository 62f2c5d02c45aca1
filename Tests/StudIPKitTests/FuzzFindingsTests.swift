import Foundation
import HTMLText
import StudIPModel
import StudIPWire
import Testing

/// Inputs `Scripts/fuzz` found (docs/fuzzing.md), minimised: each broke a property of the decoders.
@Suite("Fuzz findings")
struct FuzzFindingsTests {
    /// Dates past the year 9999 read as dates: a legacy REST `chdate` of `"9223372036854775807"` (a numeric
    /// string, as Stud.IP ≤ 4.2 sends them) became a `Date` whose seconds do not fit the `Int` of a `timespec`,
    /// and `stat` of the document trapped in the daemon.
    @Test("dates outside the years 1–9999 are unreadable, in both APIs")
    func outOfRangeDates() throws {
        #expect(StudIPDate.unix(.string("9223372036854775807")) == nil)
        #expect(StudIPDate.unix(.number(17_920_513_201_620)) == nil)
        #expect(StudIPDate.iso8601(.string("20202-04-01T00:00:00+02:00")) == nil)
        #expect(StudIPDate.unix(.number(253_402_300_799)) == Date(timeIntervalSince1970: 253_402_300_799))
        #expect(StudIPDate.unix(.string("-62135596800")) == Date(timeIntervalSince1970: -62_135_596_800))
        #expect(StudIPDate.iso8601(.string("9999-12-31T23:59:59Z")) == Date(timeIntervalSince1970: 253_402_300_799))
    }

    @Test("a legacy REST document dated beyond the year 9999 is left out as a problem")
    func legacyDocumentOutOfRange() throws {
        let listing = try DecodingTests.json(
            #"{"id": "root", "mkdate": 1499862074, "chdate": 1499862074, "file_refs": [{"id": "d1", "name": "a.pdf","#
                + #" "mkdate": "9223372036854775807", "chdate": "9223372036854775807"}]}"#)
        let course = RemoteCourse(id: "c", number: "", title: "C", semesterIDs: [])
        var walk = FolderWalk(
            course: course, rootID: "root", installation: try Installation("https://studip.example.org"))
        _ = walk.add(listing: listing, of: "root", parentID: nil, label: "test")
        #expect(walk.content.documents.isEmpty)
        #expect(walk.content.problems.map(\.itemID) == ["d1"])
    }

    /// `Scripts/fuzz legacy` (2026-11-25): a legacy REST news `expire` of "1111111111111401200" seconds (a numeric string) gave an expiry past the
    /// year 9999, which the rest of the code may not meet (a `timespec`, the Markdown's date line).
    @Test("a legacy REST announcement expiring beyond the year 9999 has no expiry")
    func legacyAnnouncementExpiryOutOfRange() throws {
        let element = try DecodingTests.json(
            #"{"news_id": "n1", "topic": "T", "body_html": "<p>x</p>", "date": 1763942400, "chdate": 1763942400,"#
                + #" "expire": "1111111111111401200"}"#)
        let announcement = try #require(
            try LegacyRESTFormat.announcements([element], names: [:], what: "test").first)
        #expect(announcement.expires == nil)
        #expect(announcement.published == Date(timeIntervalSince1970: 1_763_942_400))
    }

    /// `Scripts/fuzz html` (2026-11-25): an attribute value with `"` followed by a combining mark (U+0591) — one
    /// Character in Swift — lost its quote's escape in the target's writer, and the decoder, reading Characters,
    /// missed a reference whose `&` or `;` carries a combining mark. Both now read unicode scalars.
    @Test("references are found scalar by scalar, combining marks beside them or not")
    func referencesBesideCombiningMarks() {
        #expect(HTMLEntities.decode("&amp;\u{301}x") == "&\u{301}x")
        let quoteWithMark = "a\"\u{591}b"  // outside #expect, whose expansion breaks on this literal
        #expect(HTMLEntities.decode("a&quot;\u{591}b") == quoteWithMark)
        #expect(HTMLEntities.decode("&\u{301}amp;") == "&\u{301}amp;", "not a reference: stays as it is")
        #expect(HTMLEntities.decode("Gr&uuml;&szlig;e &#x2F; &#8364;") == "Grüße / €")
    }

    @Test("a JSON:API semester beginning in the year 20202 is unreadable")
    func jsonAPISemesterOutOfRange() throws {
        let element = try DecodingTests.json(
            #"{"id": "s1", "attributes": {"title": "SS 20202", "start": "20202-04-01T00:00:00+02:00","#
                + #" "end": "2022-09-30T23:59:59+02:00"}}"#)
        #expect(JSONAPIFormat.semester(element) == nil)
    }
}
