/// Matches decoded path segments against a route pattern in which `*` stands for one non-empty segment.
enum RoutePattern {
    /// The values of the `*` segments when `segments` fit `pattern`, in order; nil when they don't.
    static func bind(_ pattern: [String], _ segments: [String]) -> [String]? {
        guard pattern.count == segments.count else { return nil }
        var values: [String] = []
        for (expected, actual) in zip(pattern, segments) {
            if expected == "*" {
                guard !actual.isEmpty else { return nil }
                values.append(actual)
            } else if expected != actual {
                return nil
            }
        }
        return values
    }
}
