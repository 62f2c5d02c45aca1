import ArgumentParser
import Foundation
import MetadataStore

/// `campusfs ls`: one directory from the metadata store, no network, no mount.
struct ListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ls",
        abstract: "List a directory of the tree from the metadata cache.",
        discussion: """
            PATH is inside the mount, or relative to the tree's root, e.g. \
            "WS 2026-27/INF-101 Einführung in die Informatik". -l shows type, size, date (the document's change \
            date), highlight, "locked" (you may not download it) and tags.
            """)

    @Option(help: .mountedProfileOfPaths)
    var profile: String?

    @Flag(name: .customShort("l"), help: "Long format: type, size, date, highlight, locked, tags.")
    var long = false

    @Argument(help: "A directory or document, inside the mount or relative to the tree's root; default: the root.")
    var path: String?

    func run() throws {
        do {
            let tree = try UserTree(profile: profile, arguments: path.map { [$0] } ?? [])
            let store = tree.store
            let node = try tree.node(path ?? "/").0
            let nodes = node.kind == .directory ? try Listing.children(of: node, in: store) : [node]
            // Byte order of the names, like `campusfs tree` and `LC_ALL=C ls`.
            for child in nodes.sorted(by: { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }) {
                print(long ? try Listing.longLine(child, in: store) : child.name)
            }
        } catch {
            printError("campusfs: \(error)")
            throw ExitCode(error.exitCode)
        }
    }
}

/// How `ls -l` and `tree --long` show a node.
enum Listing {
    static func children(of node: Node, in store: MetadataStore) throws(CLIError) -> [Node] {
        var result: [Node] = []
        var offset: Int64 = 0
        while true {
            let page: [DirectoryEntry]
            do {
                page = try store.children(of: node.inode, after: offset)
            } catch {
                throw .other(error.description)
            }
            guard let last = page.last else { return result }
            result += page.map(\.node)
            offset = last.offset
        }
    }

    /// `d|-|l  SIZE  YYYY-MM-DD HH:MM  HIGHLIGHT  NAME[ -> TARGET]  [locked]  [#tag …]`; `locked`: the user may
    /// not download the document (the mount shows it with mode 0000).
    static func longLine(_ node: Node, in store: MetadataStore) throws(CLIError) -> String {
        let info: NodeInfo?
        do {
            info = try store.info(inode: node.inode)
        } catch {
            throw .other(error.description)
        }
        let type =
            switch node.kind {
            case .directory: "d"
            case .symlink: "l"
            case .file: "-"
            }
        let size = String(node.size)
        let paddedSize = String(repeating: " ", count: max(0, 12 - size.count)) + size
        let highlight = (info?.highlight?.rawValue ?? "-").padding(toLength: 8, withPad: " ", startingAt: 0)
        let target = node.symlinkTarget.map { " -> \($0)" } ?? ""
        let tags = info?.user.tags.map { "#\($0)" }.joined(separator: " ") ?? ""
        return "\(type) \(paddedSize)  \(date(node.mtime))  \(highlight) \(node.name)\(target)"
            + (node.isLocked ? "  locked" : "") + (tags.isEmpty ? "" : "  \(tags)")
    }

    static func date(_ date: Date) -> String {
        let parts = Calendar.current.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute))"
    }
}

extension Error {
    /// The exit code for any error a read-only command meets.
    var exitCode: Int32 { (self as? CLIError)?.exitCode ?? 4 }
}
