import Foundation
import NamingRules
import StudIPModel
import StudIPWire

/// The naming rules (docs/metadata-store.md, "Names") on any text: every name they make is a usable Linux file name
/// (not empty, not `.` or `..`, no `/` or NUL, at most 255 bytes), sanitizing twice changes nothing, a name the rules
/// made comes out of them unchanged, and the duplicate candidates of one name differ from each other, so that the
/// search for a free one (`TreeEditor.finish`) ends. A candidate may equal the name itself (a long `X (4).pdf`
/// cut to fit: found by this target); the search then moves on to the next number.
///
/// Input: a JSON document, whose every string is tried as a name (so the captured responses replay as real
/// Stud.IP names), or else raw bytes split at 0xFF (never in UTF-8) into name, MIME type and id.
enum NamingTarget {
    static func run(_ bytes: UnsafeBufferPointer<UInt8>) {
        if let document = try? JSONReader.parse(bytes) {
            var texts: [String] = []
            collectStrings(document, into: &texts)
            for text in texts { check(name: text, mimeType: "application/pdf", id: text) }
            return
        }
        let fields = bytes.split(separator: 0xFF, maxSplits: 2, omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        check(name: fields[0], mimeType: fields.count > 1 ? fields[1] : "", id: fields.count > 2 ? fields[2] : "")
    }

    private static func check(name raw: String, mimeType: String, id: String) {
        let sanitized = Naming.sanitize(raw)
        precondition(Naming.sanitize(sanitized) == sanitized, "sanitize is not idempotent")
        assertUsable(sanitized, limit: false)

        let directory = Naming.directoryName(raw, id: id)
        assertUsable(directory)
        precondition(Naming.directoryName(directory, id: id) == directory, "a directory name changes when named again")

        let document = Naming.documentName(raw, mimeType: mimeType, id: id)
        assertUsable(document)
        precondition(
            Naming.documentName(document, mimeType: mimeType, id: id) == document,
            "a document name changes when named again")

        let course = RemoteCourse(id: id, number: raw, title: mimeType, subtitle: raw, semesterIDs: [])
        assertUsable(Naming.courseName(template: "{number} {title} – {subtitle}", course: course))

        for (base, isDocument) in [(directory, false), (document, true)] {
            var seen: Set<String> = []
            for number in [2, 3, 4, 9, 10, 11, 99, 100] {
                let candidate = Naming.candidate(base, number: number, isDocument: isDocument)
                assertUsable(candidate)
                precondition(seen.insert(candidate).inserted, "duplicate candidate \(number) repeats a name")
            }
        }
        let short = Naming.shortID(id)
        precondition(short.utf8.count == 6 && short.allSatisfy(\.isHexDigit), "short id not 6 hex digits")
    }

    private static func assertUsable(_ name: String, limit: Bool = true) {
        precondition(!name.isEmpty && name != "." && name != "..", "unusable name \(name.debugDescription)")
        precondition(!name.utf8.contains(UInt8(ascii: "/")) && !name.utf8.contains(0), "'/' or NUL in a name")
        precondition(!limit || name.utf8.count <= Naming.maximumBytes, "name over 255 bytes")
    }

    private static func collectStrings(_ value: JSONValue, into texts: inout [String]) {
        switch value {
        case .string(let text): texts.append(text)
        case .array(let elements): for element in elements { collectStrings(element, into: &texts) }
        case .object(let members):
            for (key, member) in members {
                texts.append(key)
                collectStrings(member, into: &texts)
            }
        case .null, .bool, .number: break
        }
    }
}
