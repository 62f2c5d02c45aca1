import Synchronization

/// How many requests of each kind reached the filesystem. Tests read it to prove that the kernel's caches
/// answered instead (a warm `find` must add no lookup or readdir).
public final class RequestCounters: Sendable {
    /// One reading of the counters.
    public struct Snapshot: Sendable, Hashable {
        public var lookups = 0
        public var getattrs = 0
        /// READDIR and READDIRPLUS together.
        public var readdirs = 0
        public var opens = 0
        public var reads = 0
        /// getxattr and listxattr calls that reached the store (`security.*`/`system.*` never do).
        public var attributeReads = 0
    }

    private let lookups = Atomic<Int>(0)
    private let getattrs = Atomic<Int>(0)
    private let readdirs = Atomic<Int>(0)
    private let opens = Atomic<Int>(0)
    private let reads = Atomic<Int>(0)
    private let attributeReads = Atomic<Int>(0)

    public init() {}

    public func snapshot() -> Snapshot {
        Snapshot(
            lookups: lookups.load(ordering: .relaxed), getattrs: getattrs.load(ordering: .relaxed),
            readdirs: readdirs.load(ordering: .relaxed), opens: opens.load(ordering: .relaxed),
            reads: reads.load(ordering: .relaxed), attributeReads: attributeReads.load(ordering: .relaxed))
    }

    func countLookup() { lookups.add(1, ordering: .relaxed) }
    func countGetattr() { getattrs.add(1, ordering: .relaxed) }
    func countReaddir() { readdirs.add(1, ordering: .relaxed) }
    func countOpen() { opens.add(1, ordering: .relaxed) }
    func countRead() { reads.add(1, ordering: .relaxed) }
    func countAttributeRead() { attributeReads.add(1, ordering: .relaxed) }
}
