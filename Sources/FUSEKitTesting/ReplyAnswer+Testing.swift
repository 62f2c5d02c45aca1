import FUSEKit

/// The parts of an answer a test asserts on; each throws when the answer was of another kind, so an unexpected
/// errno shows up as itself.
extension ReplyAnswer {
    /// The errno of an error answer (0: success without payload).
    public var errorNumber: Int32? {
        if case .error(let errno) = self { errno } else { nil }
    }

    public var entry: Entry {
        get throws(RecordingError) {
            guard case .entry(let entry) = self else { throw .unexpected(self, expected: "an entry") }
            return entry
        }
    }

    public var attributes: Attributes {
        get throws(RecordingError) {
            switch self {
            case .attributes(let attributes, _): return attributes
            case .entry(let entry): return entry.attributes
            default: throw .unexpected(self, expected: "attributes")
            }
        }
    }

    /// Read bytes, or an extended attribute's value.
    public var bytes: [UInt8] {
        get throws(RecordingError) {
            guard case .data(let bytes) = self else { throw .unexpected(self, expected: "bytes") }
            return bytes
        }
    }

    /// The length a getxattr/listxattr size probe got.
    public var attributeSize: Int {
        get throws(RecordingError) {
            guard case .attributeSize(let size) = self else { throw .unexpected(self, expected: "a size") }
            return size
        }
    }

    public var attributeNames: [String] {
        get throws(RecordingError) {
            guard case .attributeNames(let names) = self else { throw .unexpected(self, expected: "names") }
            return names
        }
    }

    public var linkTarget: String {
        get throws(RecordingError) {
            guard case .linkTarget(let target) = self else { throw .unexpected(self, expected: "a link target") }
            return target
        }
    }

    public var opened: OpenedFile {
        get throws(RecordingError) {
            guard case .open(let opened) = self else { throw .unexpected(self, expected: "an open file") }
            return opened
        }
    }

    public var directoryEntries: [ListedName] {
        get throws(RecordingError) {
            guard case .directory(let entries) = self else { throw .unexpected(self, expected: "a listing") }
            return entries
        }
    }
}
