import Foundation
import SystemSupport
import TOMLKit

/// Writes what `campusfs login` learned into `config.toml` and leaves the rest of the file as the person wrote it:
/// comments, order and other profiles stay. A TOML library would parse and print the whole file again and lose the
/// comments, so this edits lines: the profile's `[profiles.<name>]` table is found, the given keys are replaced in
/// it, added after its last setting, or removed; a missing table is appended. The result is parsed again before it
/// replaces the file (``ConfigFile/load(from:)``), so an edit can never leave a file that `mount` rejects.
enum ConfigWriter {
    /// One setting to write, or the key removed.
    enum Value: Equatable {
        case string(String)
        case bool(Bool)
        case remove

        /// The TOML text of the value; nil for ``remove``.
        var toml: String? {
            switch self {
            case .string(let text): ConfigWriter.quoted(text)
            case .bool(let flag): flag ? "true" : "false"
            case .remove: nil
            }
        }
    }

    /// `text` with `settings` written into profile `name`'s table; with `makeDefault`, also `default_profile`
    /// when the file has none.
    static func updating(
        _ text: String, profile name: String, settings: [(key: String, value: Value)], makeDefault: Bool
    ) -> String {
        var lines = text.isEmpty ? [] : text.components(separatedBy: "\n")
        if lines.last == "" { lines.removeLast() }
        if let header = lines.firstIndex(where: { isHeader($0, of: name) }) {
            var end = lines[(header + 1)...].firstIndex(where: isAnyHeader) ?? lines.endIndex
            for (key, value) in settings {
                let existing = lines[(header + 1)..<end].firstIndex { assigns($0, key: key) }
                switch (existing, value.toml) {
                case (let index?, let toml?):
                    lines[index] = "\(key) = \(toml)"
                case (let index?, nil):
                    lines.remove(at: index)
                    end -= 1
                case (nil, let toml?):
                    let last = lines[(header + 1)..<end].lastIndex { !isBlankOrComment($0) } ?? header
                    lines.insert("\(key) = \(toml)", at: last + 1)
                    end += 1
                case (nil, nil):
                    break
                }
            }
        } else {
            if let last = lines.last, !last.trimmingCharacters(in: .whitespaces).isEmpty { lines.append("") }
            lines.append("[profiles.\(tableKey(name))]")
            for (key, value) in settings { if let toml = value.toml { lines.append("\(key) = \(toml)") } }
        }
        if makeDefault, !lines.contains(where: { assigns($0, key: "default_profile") }) {
            // A top-level key must come before the first table.
            let first = lines.firstIndex(where: isAnyHeader) ?? lines.endIndex
            lines.insert(contentsOf: ["default_profile = \(quoted(name))", ""], at: first)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Writes `settings` into the config file atomically (``AtomicFile``; a symlinked file stays linked), after
    /// checking that the result still loads.
    static func write(
        profile name: String, settings: [(key: String, value: Value)], makeDefault: Bool, paths: Paths
    ) throws(CLIError) {
        let url = paths.configFile
        let new = updating(
            try ConfigFile.text(of: url) ?? "", profile: name, settings: settings, makeDefault: makeDefault)
        do {
            _ = try TOMLDecoder(strictDecoding: true).decode(ConfigFile.self, from: new)
        } catch {
            throw .other("campusfs would have broken \(url.path) (\(error)); it is unchanged, please report this")
        }
        try Paths.ensureDirectory(paths.config)
        do throws(AtomicFileError) {
            try AtomicFile.replace(url, with: Data(new.utf8))
        } catch {
            throw .other(error.description)
        }
    }

    /// A TOML basic string: quotes, backslashes and control characters escaped.
    static func quoted(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\t": result += "\\t"
            case "\r": result += "\\r"
            case _ where scalar.value < 0x20 || scalar.value == 0x7f:
                result += String(format: "\\u%04X", scalar.value)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// Profile names may contain dots, which a bare TOML key would read as nested tables.
    private static func tableKey(_ name: String) -> String {
        name.contains(".") ? quoted(name) : name
    }

    private static func isHeader(_ line: String, of name: String) -> Bool {
        let compact = withoutComment(line).filter { !$0.isWhitespace }
        return compact == "[profiles.\(name)]" || compact == "[profiles.\(quoted(name))]"
            || compact == "[profiles.'\(name)']"
    }

    private static func isAnyHeader(_ line: String) -> Bool {
        line.trimmingCharacters(in: .whitespaces).hasPrefix("[")
    }

    private static func assigns(_ line: String, key: String) -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix(key) else { return false }
        return trimmed.dropFirst(key.count).trimmingCharacters(in: .whitespaces).hasPrefix("=")
    }

    private static func isBlankOrComment(_ line: String) -> Bool {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        return trimmed.isEmpty || trimmed.hasPrefix("#")
    }

    private static func withoutComment(_ line: String) -> Substring {
        line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }
}
