import StudIPModel

/// Runs `body` and captures its typed error, for `async let` and task groups, which lose the error type.
func captured<T: Sendable>(_ body: () async throws(StudIPError) -> T) async -> Result<T, StudIPError> {
    do {
        return .success(try await body())
    } catch {
        return .failure(error)
    }
}

/// Runs `operation` for every element concurrently (the transport bounds what reaches the network) and
/// returns the results in the order of `elements`.
func concurrentMap<Element: Sendable, T: Sendable>(
    _ elements: [Element], _ operation: @escaping @Sendable (Element) async -> T
) async -> [T] {
    await withTaskGroup(of: (Int, T).self) { group in
        for (index, element) in elements.enumerated() {
            group.addTask { (index, await operation(element)) }
        }
        var results: [(Int, T)] = []
        for await result in group { results.append(result) }
        return results.sorted { $0.0 < $1.0 }.map(\.1)
    }
}
