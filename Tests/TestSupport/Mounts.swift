import Foundation

/// Whether anything is mounted at `directory`, from the kernel's own table. The table escapes space, tab, newline
/// and backslash in paths as octal (`\040`); a mountpoint with a space in its name only matches once unescaped.
/// Read to its end through a file handle: `String(contentsOfFile:)` stops after the first 4 KiB of a `/proc` file
/// (it reports size 0), and a busy machine's table is longer.
public func isMounted(_ directory: String) -> Bool {
    let bytes = (try? FileHandle(forReadingAtPath: "/proc/self/mounts")?.readToEnd()) ?? Data()
    let table = String(decoding: bytes, as: UTF8.self)
    return table.split(separator: "\n").contains { line in
        line.split(separator: " ").dropFirst().first.map { unescapeMountPath($0) == directory } ?? false
    }
}

/// A path field of `/proc/self/mounts` as it is on disk: `\` and three octal digits stand for that byte.
func unescapeMountPath(_ field: Substring) -> String {
    var bytes: [UInt8] = []
    let source = Array(field.utf8)
    var index = 0
    while index < source.count {
        if source[index] == UInt8(ascii: "\\"), index + 3 < source.count,
            let value = UInt8(String(decoding: source[(index + 1)...(index + 3)], as: UTF8.self), radix: 8)
        {
            bytes.append(value)
            index += 4
        } else {
            bytes.append(source[index])
            index += 1
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// A fresh directory under the system's temporary directory (`mktemp -d`).
public func temporaryDirectory(_ prefix: String) throws -> String {
    var template = Array((NSTemporaryDirectory() + prefix + "-XXXXXX").utf8CString)
    guard let pointer = mkdtemp(&template) else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    return String(cString: pointer)
}
