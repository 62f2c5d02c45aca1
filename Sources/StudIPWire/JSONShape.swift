/// Which parts of a JSON document ``JSONReader`` builds into ``JSONValue``s. A page of a first fill is read only
/// for a few members of each element; building the rest (links, `meta`, attributes nobody reads) and freeing it
/// again was most of the cost of parsing it (docs/performance.md, "Fourth pass: decoding"). The reader still
/// reads every byte of the parts it drops as strictly as the rest, so a malformed body fails the same way.
///
/// A shape can only leave out members of objects it describes: whatever it does not describe is built whole, so
/// the built tree answers every lookup along the described paths exactly as the whole tree would.
package struct JSONShape: Sendable {
    /// A part of a document as a shape describes it.
    package indirect enum Part: Sendable {
        /// Built whole.
        case everything
        /// An object of which only the named members are built, each as its part says; the others are read and
        /// dropped. A value that is not an object is built whole.
        case members([String: Part])
        /// An array whose elements are built as the part says. A value that is not an array is built whole.
        case elements(Part)
    }

    /// The parts as a table the reader indexes by number, so that following the shape while reading costs no
    /// reference counting: node 0 is the document, node 1 builds everything.
    private enum Node {
        case everything
        case members(Range<Int>)
        case elements(Int)
    }

    /// The node of the whole document.
    static let root = 0
    /// What the reader reads and drops.
    static let skipped = -1
    private static let whole = 1

    private var nodes: [Node] = [.everything, .everything]
    /// The member names of every `.members` node, a node's names contiguous, with the node each one is read by.
    private var names: [String] = []
    private var targets: [Int] = []

    /// Builds every value: a faithful JSON reader.
    package static let everything = JSONShape(.everything)

    package init(_ document: Part) {
        nodes[Self.root] = node(document)
    }

    private mutating func index(_ part: Part) -> Int {
        if case .everything = part { return Self.whole }
        nodes.append(.everything)
        let index = nodes.count - 1
        nodes[index] = node(part)
        return index
    }

    private mutating func node(_ part: Part) -> Node {
        switch part {
        case .everything:
            return .everything
        case .elements(let element):
            return .elements(index(element))
        case .members(let members):
            let listed = members.sorted { $0.key < $1.key }
            let children = listed.map { index($0.value) }
            let start = names.count
            names += listed.map(\.key)
            targets += children
            return .members(start..<names.count)
        }
    }

    /// The node an object at `node` is read by: a node that expects an array builds an object whole.
    func objectNode(_ node: Int) -> Int {
        guard node != Self.skipped else { return node }
        if case .elements = nodes[node] { return Self.whole }
        return node
    }

    /// The node an array at `node` is read by: a node that expects an object builds an array whole.
    func arrayNode(_ node: Int) -> Int {
        guard node != Self.skipped else { return node }
        if case .members = nodes[node] { return Self.whole }
        return node
    }

    /// The node the member `key` of an object read by `node` is read by.
    func member(_ key: String, of node: Int) -> Int {
        guard case .members(let range) = nodes[node] else { return node }
        for index in range where names[index] == key { return targets[index] }
        return Self.skipped
    }

    /// The node the elements of an array read by `node` are read by.
    func element(of node: Int) -> Int {
        guard node != Self.skipped, case .elements(let element) = nodes[node] else { return node }
        return element
    }
}
