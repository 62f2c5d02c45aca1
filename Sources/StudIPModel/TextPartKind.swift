/// What the numbered parts of a document's extracted text are, for output such as `path:page 3:line`: the
/// search index stores it (MetadataStore) and grep prints it (TextGrep), neither through the other.
public enum TextPartKind: String, Sendable, Hashable, Codable {
    case page, slide, sheet
}
