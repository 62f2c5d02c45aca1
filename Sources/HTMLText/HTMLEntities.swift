/// HTML character references: numeric ones and the named ones German and English pages use. The product's one
/// table: login pages (StudIPWire), announcements (CourseFiles) and the text of HTML documents (TextExtraction).
public enum HTMLEntities {
    static let named: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": "\u{00A0}", "shy": "",
        "auml": "ä", "ouml": "ö", "uuml": "ü", "Auml": "Ä", "Ouml": "Ö", "Uuml": "Ü", "szlig": "ß",
        "eacute": "é", "egrave": "è", "ecirc": "ê", "Eacute": "É", "aacute": "á", "agrave": "à", "acirc": "â",
        "ccedil": "ç", "iacute": "í", "oacute": "ó", "uacute": "ú", "ntilde": "ñ", "oslash": "ø", "aring": "å",
        "ndash": "–", "mdash": "—", "hellip": "…", "bdquo": "„", "ldquo": "“", "rdquo": "”", "sbquo": "‚",
        "lsquo": "‘", "rsquo": "’", "laquo": "«", "raquo": "»", "lsaquo": "‹", "rsaquo": "›", "bull": "•",
        "middot": "·", "euro": "€", "copy": "©", "reg": "®", "trade": "™", "deg": "°", "sect": "§", "para": "¶",
        "times": "×", "divide": "÷", "plusmn": "±", "frac12": "½", "frac14": "¼", "frac34": "¾", "sup2": "²",
        "sup3": "³", "micro": "µ", "rarr": "→", "larr": "←", "harr": "↔", "rArr": "⇒", "ensp": "\u{2002}",
        "emsp": "\u{2003}", "thinsp": "\u{2009}", "zwnj": "", "zwj": "",
    ]

    /// `text` with its references replaced; an unknown or malformed one stays as it is. Read scalar by scalar, not
    /// by Character: a combining mark after `&` or `;` ("&amp;\u{301}") would otherwise hide the reference.
    public static func decode(_ text: String) -> String {
        let scalars = text.unicodeScalars
        guard scalars.contains("&") else { return text }
        var result = String.UnicodeScalarView()
        var index = scalars.startIndex
        while let ampersand = scalars[index...].firstIndex(of: "&") {
            result.append(contentsOf: scalars[index..<ampersand])
            let body = scalars.index(after: ampersand)
            let semicolon = scalars[body...].prefix(33).firstIndex(of: ";")
            if let semicolon, let decoded = reference(String(scalars[body..<semicolon])) {
                result.append(contentsOf: decoded.unicodeScalars)
                index = scalars.index(after: semicolon)
            } else {
                result.append("&")
                index = body
            }
        }
        result.append(contentsOf: scalars[index...])
        return String(result)
    }

    private static func reference(_ body: String) -> String? {
        if body.hasPrefix("#") {
            let digits = body.dropFirst()
            let number =
                digits.first == "x" || digits.first == "X"
                ? UInt32(digits.dropFirst(), radix: 16) : UInt32(digits, radix: 10)
            guard let number, number != 0, let scalar = Unicode.Scalar(number) else { return nil }
            return String(Character(scalar))
        }
        return named[body]
    }
}
