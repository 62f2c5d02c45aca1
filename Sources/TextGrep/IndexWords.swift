/// The words every line a pattern selects must contain at the start of a search-index token, so that the index
/// (`MetadataStore.candidateDocuments(containingAll:)`) can pick the only documents worth reading. docs/search.md
/// ("grep") gives the rule; when in doubt a word is left out, because a word too many would miss documents.
public enum IndexWords {
    /// Empty when the index cannot help: `-v`, several patterns, an alternation, or no word at a token start.
    public static func required(pattern: String, options: GrepOptions) -> [String] {
        guard !options.invertMatch, !pattern.contains("\n") else { return [] }
        let atoms: [Atom]
        if options.fixedStrings {
            atoms = pattern.map { .literal($0) }
        } else {
            guard let parsed = parse(pattern, extended: options.extendedRegexp) else { return [] }
            atoms = parsed
        }
        var words: [String] = []
        var word: String?
        // Whether the next character of the line starts an index token if it is a letter or digit. Not so for
        // `-w`, `\<` or `\b`: grep's word boundaries are not the tokenizer's (`x²Info`, a PDF's private-use
        // bullet before a word: one token to the index, a word start to grep).
        var atTokenStart = false
        func endWord() {
            if let word, !word.isEmpty, !words.contains(word) { words.append(word) }
            word = nil
        }
        for (index, atom) in atoms.enumerated() {
            let next = index + 1 < atoms.count ? atoms[index + 1] : nil
            switch atom {
            case .quantifier:
                // The repeated atom was handled when it was seen (below); what follows is unknown.
                endWord()
                atTokenStart = false
            case .literal(let character):
                if case .quantifier(let mayBeAbsent) = next {
                    if !mayBeAbsent, character.isLetter || character.isNumber, word != nil { word?.append(character) }
                    continue
                }
                if character.isASCII && !(character.isLetter || character.isNumber) {
                    // An ASCII separator: the index's tokenizer (unicode61) splits at every one.
                    endWord()
                    atTokenStart = true
                } else if character.isLetter || character.isNumber {
                    if word != nil {
                        word?.append(character)
                    } else if atTokenStart {
                        word = String(character)
                    }
                    atTokenStart = false
                } else {
                    // Other characters (symbols, marks, superscripts): the tokenizer may keep them in a token.
                    endWord()
                    atTokenStart = false
                }
            case .lineStart:
                endWord()
                atTokenStart = true
            case .other:
                endWord()
                atTokenStart = false
            case .alternation:
                return []
            }
        }
        endWord()
        return words
    }

    /// The substrings every line the pattern selects contains, for the index of substrings (an FTS5 `trigram`
    /// index, `MetadataStore.candidateParts(containingAll:)`; docs/search.md, "Candidate selection"): the
    /// pattern's literal runs (``RequiredLiteral``'s) of 3 characters or more, the shortest a trigram index can
    /// look up. With `-i` only ASCII characters and not `i`: `REG_ICASE` matches the dotless `ı` to it, which the
    /// index's folding keeps apart, while it folds the Kelvin sign to `k` and the long `ſ` to `s` as grep does
    /// (`GrepCandidateTests` compares the engine's `-i` with the index for every ASCII letter and digit). Empty
    /// with `-v` (a line without them is selected) or when no run is that long.
    public static func substrings(pattern: String, options: GrepOptions) -> [String] {
        guard !options.invertMatch else { return [] }
        var substrings: [String] = []
        for run in RequiredLiteral.runs(pattern: pattern, options: options, unfolded: "iI")
        where run.unicodeScalars.count >= 3 && !substrings.contains(run) {
            substrings.append(run)
        }
        return substrings
    }

    /// A pattern read just far enough to know its literal characters.
    enum Atom: Equatable {
        case literal(Character)
        /// `^`: a line starts a token (the text's newlines are separators).
        case lineStart
        /// `*`, `?`, `+`, `{…}`: the atom before may be absent (`mayBeAbsent`) or repeated.
        case quantifier(mayBeAbsent: Bool)
        case alternation
        /// Anything else: `.`, brackets, groups (skipped whole), `$`, back-references, `\w`, `\<`, `\b`.
        case other
    }

    /// Atoms of a BRE or ERE (GNU syntax); nil when the pattern does not read as expected (glibc will say why).
    static func parse(_ pattern: String, extended: Bool) -> [Atom]? {
        let characters = Array(pattern)
        var atoms: [Atom] = []
        var index = 0
        while index < characters.count {
            let character = characters[index]
            index += 1
            let atStart = atoms.isEmpty || atoms.last == .alternation
            switch character {
            case "\\":
                guard index < characters.count else { return nil }
                let escaped = characters[index]
                index += 1
                switch escaped {
                case "<", ">", "`", "'": atoms.append(.other)
                case "(" where !extended:
                    guard let end = groupEnd(characters, from: index, extended: false) else { return nil }
                    index = end
                    atoms.append(.other)
                case "|" where !extended: atoms.append(.alternation)
                case "{" where !extended:
                    guard let end = characters[index...].firstIndex(of: "}") else { return nil }
                    index = end + 1
                    atoms.append(atStart ? .other : .quantifier(mayBeAbsent: true))
                case "?" where !extended: atoms.append(atStart ? .other : .quantifier(mayBeAbsent: true))
                case "+" where !extended: atoms.append(atStart ? .other : .quantifier(mayBeAbsent: false))
                case _ where escaped.isLetter || escaped.isNumber: atoms.append(.other)
                default: atoms.append(.literal(escaped))
                }
            case "[":
                guard let end = bracketEnd(characters, from: index) else { return nil }
                index = end
                atoms.append(.other)
            case "(" where extended:
                guard let end = groupEnd(characters, from: index, extended: true) else { return nil }
                index = end
                atoms.append(.other)
            case "|" where extended:
                atoms.append(.alternation)
            case "{" where extended:
                guard let end = characters[index...].firstIndex(of: "}") else { return nil }
                index = end + 1
                atoms.append(atStart ? .other : .quantifier(mayBeAbsent: true))
            case "*":
                atoms.append(atStart ? .other : .quantifier(mayBeAbsent: true))
            case "?" where extended:
                atoms.append(atStart ? .other : .quantifier(mayBeAbsent: true))
            case "+" where extended:
                atoms.append(atStart ? .other : .quantifier(mayBeAbsent: false))
            case "^" where extended || atStart:
                atoms.append(.lineStart)
            case ".", "^", "$", ")":
                atoms.append(.other)
            default:
                atoms.append(.literal(character))
            }
        }
        return atoms
    }

    /// The index after the `]` that closes a bracket expression opened before `start`.
    private static func bracketEnd(_ characters: [Character], from start: Int) -> Int? {
        var index = start
        if index < characters.count, characters[index] == "^" { index += 1 }
        if index < characters.count, characters[index] == "]" { index += 1 }
        while index < characters.count {
            if characters[index] == "[", index + 1 < characters.count, ":.=".contains(characters[index + 1]) {
                let close = characters[index + 1]
                var inner = index + 2
                while inner + 1 < characters.count, !(characters[inner] == close && characters[inner + 1] == "]") {
                    inner += 1
                }
                guard inner + 1 < characters.count else { return nil }
                index = inner + 2
                continue
            }
            if characters[index] == "]" { return index + 1 }
            index += 1
        }
        return nil
    }

    /// The index after the `)` (ERE) or `\)` (BRE) that closes a group opened before `start`.
    private static func groupEnd(_ characters: [Character], from start: Int, extended: Bool) -> Int? {
        var depth = 1
        var index = start
        while index < characters.count {
            let character = characters[index]
            if character == "[" {
                guard let end = bracketEnd(characters, from: index + 1) else { return nil }
                index = end
                continue
            }
            if character == "\\" {
                guard index + 1 < characters.count else { return nil }
                let escaped = characters[index + 1]
                if !extended, escaped == "(" { depth += 1 }
                if !extended, escaped == ")" {
                    depth -= 1
                    if depth == 0 { return index + 2 }
                }
                index += 2
                continue
            }
            if extended, character == "(" { depth += 1 }
            if extended, character == ")" {
                depth -= 1
                if depth == 0 { return index + 1 }
            }
            index += 1
        }
        return nil
    }
}
