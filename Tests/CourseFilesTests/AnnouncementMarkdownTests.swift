import Foundation
import StudIPModel
import Testing

@testable import CourseFiles

/// Announcements as Markdown: real Stud.IP 5.0.7 news bodies (captured, fixtures-5.0.7-more
/// `jsonapi_course_news.json` and `jsonapi_studip_news.json`, copied here as data), the elements the editor
/// writes, and input that is broken, hostile or huge.
@Suite struct AnnouncementMarkdownTests {
    /// "Übung: Räume & Abgabe (gültig bis März)" as Stud.IP 5.0.7 returned it, `<!--HTML-->` marker included.
    static let courseNews =
        "<!--HTML--><p>Liebe Studierende,</p><p>die <strong>Übung am Donnerstag</strong> findet ab sofort im "
        + "<strong>Hörsaal Ä 1.02</strong> statt. Bitte beachten Sie:</p><ul><li>Abgabe der Übungsblätter bis "
        + "Montag, 12:00 Uhr</li><li>Größere Gruppen (mehr als 4 Personen) bitte vorher anmelden</li><li>Fragen "
        + "gerne ins Forum – ß, ä, ö, ü funktionieren</li></ul><p>Weitere Informationen: <a "
        + "href=\"https://www.studip.de/\" class=\"link-extern\" target=\"_blank\" rel=\"noreferrer noopener\">"
        + "Stud.IP-Projektseite</a></p><p>Viele Grüße<br />Testaccount Dozent</p>"

    /// Stud.IP's own welcome news (shortened): bare text with `<br />`s, a lone no-break space, a link whose text
    /// is its address.
    static let welcomeNews =
        "<!--HTML-->\nDas Stud.IP-Team heisst sie herzlich willkommen.<br />\nBitte schauen Sie sich ruhig um!"
        + "<br /><br />\nWenn Sie das System selbst installiert haben, <strong>da die Passwörter der Accounts "
        + "öffentlich bekannt sind</strong>.<br />\n\u{A0}\n<p>Kontakt: <a href=\"https://develop.studip.de/studip\" "
        + "class=\"link-extern\" target=\"_blank\" rel=\"noreferrer noopener\">develop.studip.de</a></p>\n\n<p>"
        + "Dienstleister: <a href=\"https://www.data-quest.de\" class=\"link-extern\">https://www.data-quest.de</a>"
        + "</p>"

    @Test func capturedCourseNews() {
        #expect(
            HTMLMarkdown.convert(Self.courseNews) == """
                Liebe Studierende,

                die **Übung am Donnerstag** findet ab sofort im **Hörsaal Ä 1.02** statt. Bitte beachten Sie:

                - Abgabe der Übungsblätter bis Montag, 12:00 Uhr
                - Größere Gruppen (mehr als 4 Personen) bitte vorher anmelden
                - Fragen gerne ins Forum – ß, ä, ö, ü funktionieren

                Weitere Informationen: [Stud.IP-Projektseite](https://www.studip.de/)

                Viele Grüße\("  ")
                Testaccount Dozent

                """)
    }

    @Test func capturedWelcomeNews() {
        #expect(
            HTMLMarkdown.convert(Self.welcomeNews) == """
                Das Stud.IP-Team heisst sie herzlich willkommen.\("  ")
                Bitte schauen Sie sich ruhig um!

                Wenn Sie das System selbst installiert haben, **da die Passwörter der Accounts öffentlich bekannt sind**.

                Kontakt: [develop.studip.de](https://develop.studip.de/studip)

                Dienstleister: <https://www.data-quest.de>

                """)
    }

    @Test func headerAndBodyInBothLanguages() {
        let announcement = Announcement(
            id: "n1", title: "Klausurtermin & Hinweise", html: Self.courseNews, authorName: "Testaccount Dozent",
            published: Self.berlin(2026, 11, 24, 1, 33), expires: Self.berlin(2027, 3, 1, 0, 0),
            changed: Self.berlin(2026, 11, 24, 1, 33), commentsAllowed: true)
        let german = AnnouncementMarkdown.render(announcement, language: .german)
        #expect(
            german.hasPrefix(
                """
                # Klausurtermin & Hinweise

                Autor: Testaccount Dozent\("  ")
                Veröffentlicht: 24.11.2026 01:33\("  ")
                Läuft ab: 01.03.2027 00:00

                Liebe Studierende,

                """))
        #expect(german.hasSuffix(HTMLMarkdown.convert(Self.courseNews)))
        var anonymous = announcement
        anonymous.authorName = nil
        anonymous.expires = nil
        anonymous.title = " \n "
        #expect(
            AnnouncementMarkdown.render(anonymous, language: .english).hasPrefix(
                "# (untitled)\n\nPublished: 2026-11-24 01:33\n\nLiebe Studierende,\n"))
    }

    /// The date in the name is Berlin's: 23:30 UTC on 28 March is already the 29th there.
    @Test func fileNameDateInBerlin() {
        let published = Date(timeIntervalSince1970: 1_774_740_600)  // 2026-03-28T23:30:00Z
        let announcement = Announcement(
            id: "n2", title: "Raum\u{7}änderung:\n  Übung\tfällt aus", html: "", authorName: nil,
            published: published, expires: nil, changed: published, commentsAllowed: false)
        #expect(AnnouncementMarkdown.fileName(announcement) == "2026-03-29 Raum änderung: Übung fällt aus.md")
        var untitled = announcement
        untitled.title = "\u{0}"
        #expect(AnnouncementMarkdown.fileName(untitled) == "2026-03-29.md")
        #expect(AnnouncementMarkdown.render(untitled) == "# (ohne Titel)\n\nVeröffentlicht: 29.03.2026 00:30\n")
    }

    @Test func listsTablesHeadingsAndCode() {
        let html = """
            <h1>Plan</h1><ol start="3"><li>Eins<ul><li>a<em>b</em></li><li>c</li></ul></li><li>Zwei</li></ol>
            <table><tr><th>Tag</th><th>Raum &amp; Zeit</th></tr>
            <tr><td>Mo</td><td>A|1 <b>10 Uhr</b></td><td>extra</td></tr></table>
            <pre>  let x = 1
              print(x)</pre><blockquote>Zitat<br>zweite Zeile</blockquote><hr><h7>kein Kopf</h7>
            """
        #expect(
            HTMLMarkdown.convert(html) == """
                ## Plan

                3. Eins
                   - a*b*
                   - c
                4. Zwei

                | Tag | Raum & Zeit     |       |
                | --- | --------------- | ----- |
                | Mo  | A\\|1 **10 Uhr** | extra |

                ```
                  let x = 1
                  print(x)
                ```

                > Zitat\("  ")
                > zweite Zeile

                ---

                kein Kopf

                """)
    }

    /// Text that Markdown would read as markup stays text; a URL's underscores inside words stay unescaped.
    @Test func metacharactersEscaped() {
        let html =
            "<p># Nicht *fett* _kursiv_ [Link](x) `code` <b>a\\b</b> file_name.pdf</p>"
            + "<p>1. Februar</p><p>- kein Punkt</p><p>&lt;script&gt;</p><p>+ plus</p><p>===</p>"
        #expect(
            HTMLMarkdown.convert(html) == """
                \\# Nicht \\*fett\\* \\_kursiv\\_ \\[Link\\](x) \\`code\\` **a\\\\b** file_name.pdf

                1\\. Februar

                \\- kein Punkt

                \\<script>

                \\+ plus

                \\===

                """)
    }

    @Test func entitiesDecoded() {
        let html =
            "<p>M&uuml;ller &amp; Stra&szlig;e&nbsp;3 &ndash; 10&#8211;12 Uhr, 5&#x20AC; &bdquo;ok&ldquo; &bogus; &amp</p>"
        #expect(HTMLMarkdown.convert(html) == "Müller & Straße 3 – 10–12 Uhr, 5€ „ok“ &bogus; &amp\n")
    }

    @Test func scriptsStylesAndCommentsDropped() {
        let html =
            "<style>p { color: red }</style><p>sichtbar<script>alert('x')</script></p><!-- geheim -->"
            + "<SCRIPT type=x>document.write(1)</SCRIPT ><p>auch</p><a href=\"javascript:alert(1)\">klick</a>"
        #expect(HTMLMarkdown.convert(html) == "sichtbar\n\nauch\n\nklick\n")
    }

    /// Unclosed, misnested and stray tags, a `<` that starts no tag, an unterminated comment: text survives and
    /// markup stays balanced.
    @Test func brokenHTML() {
        #expect(
            HTMLMarkdown.convert("<p><b>fett <i>beides</b> normal</i><li>lose</ul></p>")
                == "**fett *beides*** normal\n\nlose\n")
        #expect(HTMLMarkdown.convert("a < b und c<d> </zu> e") == "a \\< b und c e\n")
        #expect(HTMLMarkdown.convert("<p>vorher<!-- nie zu") == "vorher\n")
        #expect(
            HTMLMarkdown.convert("<a href='https://x.de/a b(c)'>Link</a><b></b><a href=\"\">ohne</a>")
                == "[Link](https://x.de/a%20b%28c%29)ohne\n")
        #expect(HTMLMarkdown.convert("<table><tr><td>offen") == "| offen |\n| ----- |\n")
        #expect(HTMLMarkdown.convert("") == "")
        #expect(HTMLMarkdown.convert("<p> \u{A0} </p><br><br>") == "")
    }

    @Test func controlCharactersDropped() {
        let converted = HTMLMarkdown.convert("<p>a\u{0}b\u{1B}[31mc\u{7F}d\u{85}e\u{FEFF}</p>")
        #expect(converted == "ab\\[31mcde\n")
        #expect(HTMLMarkdown.inline("Titel\u{0}\nmit\tZeilen") == "Titel mit Zeilen")
    }

    /// Huge and deeply nested input: the work and the output stay bounded (input read up to a megabyte, lists 16
    /// deep, inline markup 32 deep), and the time is linear.
    @Test func boundedOnHugeInput() {
        let huge = String(repeating: "<p>Wort ", count: 1_000_000)
        let clock = ContinuousClock()
        var converted = ""
        let elapsed = clock.measure { converted = HTMLMarkdown.convert(huge) }
        #expect(converted.utf8.count < HTMLMarkdown.maxInputBytes)
        #expect(elapsed < .seconds(20))

        let nested = HTMLMarkdown.convert(String(repeating: "<ul><li>x", count: 10_000))
        let lines = nested.split(separator: "\n", omittingEmptySubsequences: true)
        let deepest = lines.map { line in line.prefix { $0 == " " }.count }.max() ?? 0
        #expect(deepest == 2 * (HTMLMarkdown.maxListDepth - 1))
        #expect(lines.count == 10_000)

        let emphasis = HTMLMarkdown.convert(String(repeating: "<b>", count: 10_000) + "x")
        let marks = String(repeating: "**", count: HTMLMarkdown.maxInlineDepth)
        #expect(emphasis == marks + "x" + marks + "\n")
    }

    static func berlin(_ year: Int, _ month: Int, _ day: Int, _ hour: Int, _ minute: Int) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "Europe/Berlin") ?? .gmt
        return calendar.date(from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute))
            ?? .distantPast
    }
}
