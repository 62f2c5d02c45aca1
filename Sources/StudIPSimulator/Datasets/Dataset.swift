/// The installations the simulator can serve, chosen with `studip-sim --dataset NAME`.
public enum Dataset: Sendable {
    /// The real Stud.IP 5.0.7 demo data: same ids, names, dates, sizes and bytes as the captured server.
    case fixtures507
    /// The same installation as `fixtures-5.0.7-more` captured it a few days later: with announcements, course
    /// dates and the courses L-14 and L-17, the clock pinned to the capture's time.
    case fixtures507More
    /// The 5.0.7 demo data with the demo course "Test Lehrveranstaltung" as `fixtures-5.0.7-writes` found it
    /// before writing: a root and a general folder students write to, a date folder they may not, a group folder,
    /// the homework folder "Hausaufgaben" (``FixturesDataset/addWritableDemoCourse(to:)``).
    case fixtures507Writes
    /// Generated from a seed (``GeneratedDataset``): same seed, same installation, byte for byte.
    case generated(GeneratedDataset.Size, seed: UInt64)
    /// An installation built in code, for tests that need an exact scenario.
    case custom(University)

    /// Parses `fixtures-5.0.7`, `fixtures-5.0.7-more`, `fixtures-5.0.7-writes`, `demo`, `small`, `large` or `huge`.
    public init?(name: String, seed: UInt64 = 1) {
        if name == "fixtures-5.0.7" {
            self = .fixtures507
        } else if name == "fixtures-5.0.7-more" {
            self = .fixtures507More
        } else if name == "fixtures-5.0.7-writes" {
            self = .fixtures507Writes
        } else if let size = GeneratedDataset.Size(rawValue: name) {
            self = .generated(size, seed: seed)
        } else {
            return nil
        }
    }

    public static let names =
        ["fixtures-5.0.7", "fixtures-5.0.7-more", "fixtures-5.0.7-writes"]
        + GeneratedDataset.Size.allCases.map { $0.rawValue }

    public func load() throws -> University {
        switch self {
        case .fixtures507: return try FixturesDataset.load()
        case .fixtures507More: return try FixturesDataset.load(later: true)
        case .fixtures507Writes:
            var university = try FixturesDataset.load()
            try FixturesDataset.addWritableDemoCourse(to: &university)
            return university
        case .generated(let size, let seed): return GeneratedDataset.make(size, seed: seed)
        case .custom(let university): return university
        }
    }
}
