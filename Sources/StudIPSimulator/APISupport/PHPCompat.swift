import Digests
import Foundation

/// PHP and Stud.IP helper functions both APIs rely on, reproduced byte for byte where clients can see them.
enum PHP {
    /// `rawurlencode`: everything but `A-Z a-z 0-9 - _ . ~` as `%XX` of the UTF-8 bytes.
    static func rawurlencode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if isUnreserved(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    /// `urlencode` (used by `http_build_query`): like `rawurlencode`, but space is `+` and `~` is encoded.
    static func urlencode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            if byte == 0x20 {
                out += "+"
            } else if isUnreserved(byte), byte != UInt8(ascii: "~") {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += String(format: "%%%02X", byte)
            }
        }
        return out
    }

    /// `http_build_query` of ordered pairs.
    static func buildQuery(_ pairs: [(String, String)]) -> String {
        pairs.map { urlencode($0.0) + "=" + urlencode($0.1) }.joined(separator: "&")
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// `md5()` as lowercase hex, for the legacy API's `ETag`.
    static func md5(_ text: String) -> String {
        Digest.md5(Data(text.utf8)).map { String(format: "%02x", $0) }.joined()
    }

    /// A new Stud.IP id: 32 lowercase hex characters.
    static func newID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}

/// `Content-Disposition` values of both APIs (API.md §2.6, §3.7).
enum ContentDisposition {
    /// `encode_header_parameter('filename', name)` of Stud.IP 5.x: ASCII names without `%` as a quoted string
    /// (addslashes-escaped), others only as RFC 5987 `filename*`.
    static func attachment(_ name: String) -> String {
        if name.utf8.allSatisfy({ $0 < 0x80 && $0 != UInt8(ascii: "%") }) {
            return "attachment; filename=\"\(addslashes(name))\""
        }
        return "attachment; filename*=UTF-8''\(PHP.rawurlencode(name))"
    }

    /// The 6.x form: an ASCII fallback (`iconv //TRANSLIT`) and the exact name.
    static func attachmentWithFallback(_ name: String) -> String {
        "attachment; filename=\"\(addslashes(transliterated(name)))\"; filename*=UTF-8''\(PHP.rawurlencode(name))"
    }

    /// `FileManager::cleanFileName`: the name the JSON:API content route announces.
    static func cleanFileName(_ name: String) -> String {
        var out = ""
        for scalar in name.unicodeScalars {
            switch scalar {
            case ":", "\\", "/", "\"", ">", "<", "*", "|", "?", "(", ")", "[", "]", "#", "$", "'", "^", "`", "{", "}",
                "~":
                continue
            case " ": out += "_"
            case "&": out += "+"
            case ";": out += "-"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out.hasPrefix(".") ? String(out.dropFirst()) : out
    }

    private static func addslashes(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "'", with: "\\'")
    }

    /// Approximates glibc's `iconv('UTF-8', 'ASCII//TRANSLIT')`: accents dropped, `ß` → `ss`, dashes → `-`.
    private static func transliterated(_ text: String) -> String {
        let folded = text.replacingOccurrences(of: "ß", with: "ss")
            .folding(options: .diacriticInsensitive, locale: nil)
        var out = ""
        for scalar in folded.unicodeScalars {
            switch scalar.value {
            case 0..<0x80: out.unicodeScalars.append(scalar)
            case 0x2010...0x2015: out += "-"
            case 0x2018, 0x2019: out += "'"
            case 0x201C, 0x201D: out += "\""
            default: out += "?"
            }
        }
        return out
    }
}

/// Dates as the two APIs write them.
enum StudIPDate {
    /// PHP `date('c', t)` in the installation's time zone, e.g. `2026-10-15T10:00:00+02:00`.
    static func iso8601(_ time: Int, in zone: TimeZone) -> String {
        let date = Date(timeIntervalSince1970: TimeInterval(time))
        let offset = zone.secondsFromGMT(for: date)
        let parts = components(time + offset)
        let sign = offset < 0 ? "-" : "+"
        let hours = abs(offset) / 3600
        let minutes = abs(offset) % 3600 / 60
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d%@%02d:%02d", parts.year, parts.month, parts.day, parts.hour,
            parts.minute, parts.second, sign, hours, minutes)
    }

    /// An IMF-fixdate (`Last-Modified`), e.g. `Thu, 15 Oct 2026 08:11:00 GMT`.
    static func http(_ time: Int) -> String {
        let parts = components(time)
        let weekday = weekdays[CivilCalendar.weekday(days: time.floorDiv(86400))]
        return String(
            format: "%@, %02d %@ %04d %02d:%02d:%02d GMT", weekday, parts.day, months[parts.month - 1], parts.year,
            parts.hour, parts.minute, parts.second)
    }

    /// Parses an IMF-fixdate (`If-Modified-Since`); nil for anything else.
    static func parseHTTP(_ text: String) -> Int? {
        let fields = text.split(separator: " ")
        guard fields.count == 6, fields[5] == "GMT", let day = Int(fields[1]),
            let month = months.firstIndex(of: String(fields[2])), let year = Int(fields[3])
        else { return nil }
        let clock = fields[4].split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3 else { return nil }
        return CivilCalendar.days(year: year, month: month + 1, day: day) * 86400 + clock[0] * 3600 + clock[1] * 60
            + clock[2]
    }

    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    private struct Parts {
        var year, month, day, hour, minute, second: Int
    }

    /// Civil date and time of a Unix time in UTC.
    private static func components(_ time: Int) -> Parts {
        let days = time.floorDiv(86400)
        let seconds = time - days * 86400
        let date = CivilCalendar.date(days: days)
        return Parts(
            year: date.year, month: date.month, day: date.day, hour: seconds / 3600, minute: seconds % 3600 / 60,
            second: seconds % 60)
    }
}
