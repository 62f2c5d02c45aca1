import Glibc

/// A compiled glibc POSIX regex (`regcomp`), so that patterns mean what they mean to GNU grep: BRE by default,
/// ERE with `-E`, `REG_ICASE` for `-i`, GNU's `\<`, `\>`, `\b`, `\w` and `\|`. The handle is freed with the object.
final class POSIXRegex {
    private let handle: UnsafeMutablePointer<regex_t>

    /// glibc reads multibyte text by the process's `LC_CTYPE`: UTF-8, whatever the environment says, so that `.`
    /// is one character and `-i` folds `Ü` to `ü`. `C.UTF-8` ships with glibc itself.
    private static let utf8Locale: Bool = setlocale(LC_CTYPE, "C.UTF-8") != nil

    init(_ pattern: String, extended: Bool, ignoreCase: Bool) throws(GrepError) {
        _ = Self.utf8Locale
        // Compiled before `handle` is set: a class whose init throws after that runs its deinit.
        let compiled = UnsafeMutablePointer<regex_t>.allocate(capacity: 1)
        // REG_NEWLINE: `^`, `$`, `.` and `[^…]` keep to lines, so a whole page can be searched in one call.
        let flags = REG_NEWLINE | (extended ? REG_EXTENDED : 0) | (ignoreCase ? REG_ICASE : 0)
        let result = regcomp(compiled, pattern, flags)
        guard result == 0 else {
            var message = [CChar](repeating: 0, count: 256)
            regerror(result, compiled, &message, message.count)
            compiled.deallocate()
            let reason = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw .invalidPattern(pattern: pattern, reason: reason)
        }
        handle = compiled
    }

    deinit {
        regfree(handle)
        handle.deallocate()
    }

    /// The leftmost-longest match in `line[start..<end]` (byte offsets), where `^` matches only at offset 0 or
    /// after a newline, `$` only before a newline or at `end` unless `endIsLineEnd` is false. Nil when there is
    /// none.
    func firstMatch(in line: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, endIsLineEnd: Bool = true)
        -> Range<Int>?
    {
        guard let base = line.baseAddress else {
            return firstMatchInEmpty(endIsLineEnd: endIsLineEnd)
        }
        var match = regmatch_t(rm_so: regoff_t(start), rm_eo: regoff_t(end))
        let flags = REG_STARTEND | (endIsLineEnd ? 0 : REG_NOTEOL)
        let result = base.withMemoryRebound(to: CChar.self, capacity: line.count) {
            regexec(handle, $0, 1, &match, flags)
        }
        guard result == 0 else { return nil }
        return Int(match.rm_so)..<Int(match.rm_eo)
    }

    /// An empty line has no address; a pattern such as `^$` still matches it.
    private func firstMatchInEmpty(endIsLineEnd: Bool) -> Range<Int>? {
        var match = regmatch_t(rm_so: 0, rm_eo: 0)
        let flags = REG_STARTEND | (endIsLineEnd ? 0 : REG_NOTEOL)
        return regexec(handle, "", 1, &match, flags) == 0 ? 0..<0 : nil
    }
}

/// What makes `grep` fail before it searches (exit status 2).
public enum GrepError: Error, Sendable, Hashable, CustomStringConvertible {
    case invalidPattern(pattern: String, reason: String)

    public var description: String {
        switch self {
        case .invalidPattern(let pattern, let reason): "invalid pattern \"\(pattern)\": \(reason)"
        }
    }
}
