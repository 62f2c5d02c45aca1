/// Vocabulary of generated documents. ASCII only: PDF text uses a simple font encoding, and a text document cut at
/// any size must stay valid UTF-8.
enum ContentWords {
    /// Document titles (text headings, PDF title slides, and names of generated slides).
    static let topics = [
        "Introduction and Overview", "Sets and Relations", "Propositional Logic", "Predicate Logic",
        "Proof Techniques", "Induction and Recursion", "Graph Algorithms", "Shortest Paths", "Minimum Spanning Trees",
        "Sorting Algorithms", "Hash Tables", "Search Trees", "Dynamic Programming", "Greedy Algorithms",
        "Complexity Classes", "NP-Completeness", "Finite Automata", "Regular Languages", "Context-Free Grammars",
        "Turing Machines", "Decidability", "Relational Algebra", "SQL Queries", "Normal Forms", "Transactions",
        "Indexing and Query Plans", "Process Scheduling", "Memory Management", "File Systems", "Virtual Memory",
        "Concurrency and Locks", "Network Layers", "Routing Protocols", "Transport Protocols", "Consensus",
        "Replication", "Fault Tolerance", "Clocks and Ordering", "Type Systems", "Lambda Calculus",
        "Software Architecture", "Requirements Engineering", "Testing Strategies", "Version Control",
        "Vector Spaces", "Linear Maps", "Matrices and Determinants", "Eigenvalues", "Inner Product Spaces",
        "Sequences and Series", "Continuity", "Differentiation", "Integration", "Taylor Expansion",
        "Probability Spaces", "Random Variables", "Limit Theorems", "Estimation", "Hypothesis Testing",
        "Linear Regression", "Classification", "Neural Networks", "Optimization Methods", "Kinematics",
        "Newtonian Mechanics", "Energy and Momentum", "Oscillations", "Thermodynamics", "Electrostatics",
        "Magnetism", "Optics", "Quantum Basics", "Market Equilibrium", "Game Theory", "Cost Accounting",
        "Academic Writing", "Research Methods", "Ethics in Computing", "Summary and Outlook",
    ]

    /// Slide headings after the title slide.
    static let slideHeadings = [
        "Motivation", "Overview", "Definitions", "Notation", "Example", "Another Example", "Theorem", "Proof Sketch",
        "Algorithm", "Pseudocode", "Running Time", "Correctness", "Properties", "Special Cases", "Applications",
        "Comparison", "Pitfalls", "Exercise", "Discussion", "Summary", "Further Reading", "Questions",
    ]

    /// Words of generated prose, stored as bytes because text generation runs per chunk of every download.
    static let words: [[UInt8]] = [
        "the", "a", "of", "and", "to", "in", "is", "we", "for", "that", "this", "with", "as", "by", "on", "be",
        "each", "every", "any", "two", "three", "many", "some", "all", "not", "only", "also", "then", "thus",
        "hence", "therefore", "however", "since", "because", "if", "when", "while", "where", "which",
        "algorithm", "structure", "function", "value", "element", "set", "graph", "node", "edge", "path", "tree",
        "list", "array", "index", "key", "table", "query", "relation", "model", "system", "process", "thread",
        "message", "network", "protocol", "server", "client", "request", "response", "state", "transition",
        "language", "grammar", "word", "symbol", "proof", "lemma", "theorem", "definition", "example", "case",
        "property", "invariant", "bound", "complexity", "time", "space", "memory", "cost", "input", "output",
        "matrix", "vector", "space", "basis", "dimension", "sum", "product", "limit", "sequence", "series",
        "integral", "derivative", "equation", "solution", "variable", "constant", "parameter", "distribution",
        "probability", "expectation", "variance", "sample", "estimate", "error", "measurement", "experiment",
        "energy", "force", "field", "wave", "particle", "system", "market", "price", "demand", "supply",
        "simple", "efficient", "optimal", "linear", "finite", "infinite", "formal", "discrete", "continuous",
        "random", "stable", "correct", "complete", "consistent", "minimal", "maximal", "recursive", "parallel",
        "compute", "define", "prove", "show", "assume", "consider", "choose", "construct", "verify", "reduce",
        "apply", "derive", "observe", "follows", "holds", "contains", "returns", "maps", "satisfies", "remains",
    ].map { Array($0.utf8) }
}
