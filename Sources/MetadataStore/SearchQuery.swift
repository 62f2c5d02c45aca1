import Foundation

/// A user's search text turned into an FTS5 expression that SQLite always accepts: words, `"phrases"`, `prefix*`
/// and the operators `AND`, `OR`, `NOT` (upper case, as FTS5 spells them). Every term is quoted, so that
/// punctuation, column filters (`title:`), `NEAR` and `^` are only text. An unclosed quote is an error: the user
/// most likely meant a phrase that ends earlier, and a search that silently ran it to the end would look wrong.
/// Parentheses are read as spaces: terms group by FTS5's precedence (NOT, then AND, then OR).
///
/// German spellings: the tokenizer's `remove_diacritics 2` makes `Übung` the token `ubung`; each term is also
/// searched as the other spellings, `ä ö ü ß` written `ae oe ue ss` and the reverse, so `Übung`, `ubung` and
/// `uebung` all find `Übung`, and `Übung` finds `Uebung`. What is not found: `ubung` for a text that spells it
/// `Uebung` (docs/metadata-store.md, "Folding").
struct SearchQuery {
    private enum Item {
        case term(String)
        case and, or, not
    }

    /// The FTS5 expression.
    let expression: String

    init(_ text: String) throws(StoreError) {
        let (words, quoteIsOpen) = Self.split(text)
        guard !quoteIsOpen else {
            throw .invalidQuery(
                query: text, reason: "a quote is not closed; end the phrase with \" or remove the quote")
        }
        var items: [Item] = []
        for (word, isPhrase) in words {
            if !isPhrase, let op = ["AND": Item.and, "OR": .or, "NOT": .not][word] {
                items.append(op)
            } else if let term = Self.term(word, prefixAllowed: !isPhrase) {
                items.append(.term(term))
            }
        }
        var parts: [String] = []
        var pending: Item?
        for item in items {
            guard case .term(let term) = item else {
                if parts.isEmpty, case .not = item {
                    throw .invalidQuery(
                        query: text, reason: "NOT needs something to find before it, e.g. `übung NOT klausur`")
                }
                // An operator after an operator replaces it; one before any term or at the end is dropped.
                if !parts.isEmpty { pending = item }
                continue
            }
            // Explicit AND between terms: FTS5 reads no implicit AND after a parenthesised group.
            switch pending {
            case .or: parts.append("OR")
            case .not: parts.append("NOT")
            case .and, .term, nil: if !parts.isEmpty { parts.append("AND") }
            }
            pending = nil
            parts.append(term)
        }
        guard !parts.isEmpty else {
            throw .invalidQuery(query: text, reason: "it contains no word to search for")
        }
        expression = parts.joined(separator: " ")
    }

    /// The FTS5 expression that finds rows containing every word, each as a prefix of a token.
    static func allPrefixes(_ words: [String]) -> String? {
        let terms = words.compactMap { term($0 + "*", prefixAllowed: true) }
        return terms.isEmpty ? nil : terms.joined(separator: " AND ")
    }

    /// Words and phrases of `text`, by spaces, parentheses and double quotes, and whether a quote is left open.
    private static func split(_ text: String) -> ([(String, isPhrase: Bool)], quoteIsOpen: Bool) {
        var result: [(String, isPhrase: Bool)] = []
        var current = ""
        var inPhrase = false
        func flush() {
            if !current.isEmpty { result.append((current, inPhrase)) }
            current = ""
        }
        for character in text {
            if character == "\"" {
                flush()
                inPhrase.toggle()
            } else if !inPhrase && (character.isWhitespace || character == "(" || character == ")") {
                flush()
            } else {
                current.append(character)
            }
        }
        flush()
        return (result, inPhrase)
    }

    /// One quoted term (with its other spellings, OR-ed), or nil when it has nothing the tokenizer keeps.
    private static func term(_ word: String, prefixAllowed: Bool) -> String? {
        let isPrefix = prefixAllowed && word.hasSuffix("*")
        let text = word.filter { $0 != "*" }.lowercased()
        guard text.contains(where: { $0.isLetter || $0.isNumber }) else { return nil }
        var spellings: [String] = []
        for spelling in [text, spelledOut(text), contracted(text)] where !spellings.contains(spelling) {
            spellings.append(spelling)
        }
        let quoted = spellings.map { "\"\($0.replacingOccurrences(of: "\"", with: "\"\""))\"" + (isPrefix ? "*" : "") }
        return quoted.count == 1 ? quoted[0] : "(" + quoted.joined(separator: " OR ") + ")"
    }

    private static let spelledOutPairs: [(String, String)] = [("ä", "ae"), ("ö", "oe"), ("ü", "ue"), ("ß", "ss")]

    /// `grüße` → `gruesse`.
    private static func spelledOut(_ text: String) -> String {
        spelledOutPairs.reduce(text.precomposedStringWithCanonicalMapping) {
            $0.replacingOccurrences(of: $1.0, with: $1.1)
        }
    }

    /// `gruesse` → `grüße` (the tokenizer then drops the umlaut's dots).
    private static func contracted(_ text: String) -> String {
        spelledOutPairs.reduce(text) { $0.replacingOccurrences(of: $1.1, with: $1.0) }
    }
}
