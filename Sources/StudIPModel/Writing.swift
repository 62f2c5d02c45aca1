/// What the client's write half (`StudIPKit.DocumentWriter`) answers, independent of the API (docs/client.md,
/// "Writing").

/// One entry of the installation's terms of use ("licences"): Stud.IP asks for one with every upload.
public struct TermsOfUse: Sendable, Hashable, Codable {
    /// `SELFMADE_NONPUB`, `UNDEF_LICENSE`, … — what an upload sends as `term-id`.
    public var id: String
    public var name: String
    public var description: String
    /// The installation's default: what an upload without `term-id` gets.
    public var isDefault: Bool
    /// 0: anyone may download; 1: only in the course's own context; 2: only lecturers and tutors.
    public var downloadCondition: Int

    public init(id: String, name: String, description: String = "", isDefault: Bool, downloadCondition: Int = 0) {
        self.id = id
        self.name = name
        self.description = description
        self.isDefault = isDefault
        self.downloadCondition = downloadCondition
    }

    /// Stud.IP's "own, unpublished work", the right licence for a student's own work.
    public static let ownWorkID = "SELFMADE_NONPUB"

    /// The licence for a student's own work: ``ownWorkID`` where the installation lists it, else its `is-default`
    /// entry (docs/writing.md, "When writing is on"); nil when it lists neither.
    public static func forOwnWork(in list: [TermsOfUse]) -> TermsOfUse? {
        list.first { $0.id == ownWorkID } ?? list.first(where: \.isDefault)
    }
}

/// What an upload (a new document or a new version) came to. The outbox confirms from it and never sends the
/// same bytes twice without looking first (docs/writing.md, "The outbox").
public struct UploadReceipt: Sendable, Hashable {
    public enum Outcome: Sendable, Hashable {
        /// Stored, and read back as the user sees it: the name Stud.IP gave (`Name[2].ext` for a taken name), size,
        /// file id.
        case stored(RemoteDocument)
        /// Stored (201), but the user may not read it back: a submission in a homework folder, whose file-ref,
        /// content and listing all answer 403 to the student who handed it in. The 201 is the confirmation.
        case storedUnreadable
        /// Stored (201), but the read-back failed for another reason (offline right after the upload): check with
        /// `document(id:)` later. Never upload it again.
        case storedUnverified(reason: String)
        /// Legacy REST answered 500 after storing the file (Stud.IP 5.0.7's bug, fixtures-5.0.7-writes step 8), or
        /// said nothing that proves either way: list the folder (`documents(inFolder:)`) for the name and size
        /// before sending it again.
        case maybeStored
    }

    /// The document's file-ref id: from the `Location` of a JSON:API 201, the id of the document for a new version;
    /// nil when the answer named none (legacy REST's 500).
    public var documentID: String?
    public var outcome: Outcome
    /// The name sent (the `Slug`); Stud.IP may store another (``RemoteDocument/name``).
    public var sentName: String
    /// The bytes sent: what a confirmation compares with the stored size.
    public var sentSize: Int64

    public init(documentID: String?, outcome: Outcome, sentName: String, sentSize: Int64) {
        self.documentID = documentID
        self.outcome = outcome
        self.sentName = sentName
        self.sentSize = sentSize
    }

    /// The document as read back, when it could be.
    public var document: RemoteDocument? {
        if case .stored(let document) = outcome { document } else { nil }
    }

    /// True unless the answer leaves open whether anything was stored (``Outcome/maybeStored``).
    public var isStored: Bool { outcome != .maybeStored }
}
