import ArgumentParser
import Foundation
import MetadataStore

/// `campusfs tree`: the whole tree (or a subtree) from the metadata store.
struct TreeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tree",
        abstract: "Show the tree from the metadata cache.",
        discussion: """
            --paths prints one path per line relative to the tree's root, directories included, for scripts:
              campusfs tree --paths | grep '\\.pdf$'
            --long adds type, size, date and highlight to each path.
            """)

    @Option(help: .mountedProfileOfPaths)
    var profile: String?

    @Flag(help: "One path per line, relative to the tree's root.")
    var paths = false

    @Flag(help: "One path per line with type, size, date and highlight.")
    var long = false

    @Argument(help: "A directory: a path inside the mount, or relative to the tree's root; default: the root.")
    var path: String?

    func run() throws {
        do {
            let tree = try UserTree(profile: profile, arguments: path.map { [$0] } ?? [])
            let store = tree.store
            let (start, prefix) = try tree.node(path ?? "/")
            let entries: [WalkEntry]
            do {
                entries = try store.walk(from: start.inode).filter { $0.depth > 0 }
            } catch {
                throw CLIError.other(error.description)
            }
            for entry in entries {
                let relative = String(entry.path.dropFirst(prefix.isEmpty ? 0 : prefix.count + 1))
                if paths {
                    print(relative)
                } else if long {
                    let line = try Listing.longLine(entry.node, in: store)
                    print(line.replacingOccurrences(of: "  \(entry.node.name)", with: "  \(relative)"))
                } else {
                    print(
                        String(repeating: "    ", count: entry.depth - 1) + entry.node.name
                            + (entry.node.kind == .directory ? "/" : "")
                            + (entry.node.symlinkTarget.map { " -> \($0)" } ?? ""))
                }
            }
        } catch {
            printError("campusfs: \(error)")
            throw ExitCode(error.exitCode)
        }
    }
}
