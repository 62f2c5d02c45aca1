import ArgumentParser
import ControlProtocol
import Daemon
import Foundation
import MetadataStore
import StudIPKit
import StudIPModel
import SystemSupport
import Uploading

/// `campusfs outbox`: what waits to go to Stud.IP (docs/writing.md, "The outbox"), sent again or dropped.
struct OutboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox",
        abstract: "List what waits to go to Stud.IP; send it again, or drop it.",
        discussion: """
            Every upload, new version, rename, delete and new folder waits in the profile's outbox until Stud.IP \
            confirmed it; offline or on a server error it is sent again by itself. What Stud.IP refused (too large, \
            a forbidden type, a closed folder) stays with its reason until you retry or discard it. While mounted, \
            the mount's daemon answers; otherwise the outbox on disk, and a retried entry goes at the next mount.
            """
                + HelpText.examples(
                    """
                    campusfs outbox                  # ID, state, what, name, where, why
                    campusfs outbox retry            # send everything that failed or waits, now
                    campusfs outbox retry 7
                    campusfs outbox discard 7        # asks first: the bytes are gone afterwards
                    """),
        subcommands: [List.self, Retry.self, Discard.self],
        defaultSubcommand: List.self)

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list",
            abstract: "List the outbox: one line per entry, tab-separated (ID, state, what, name, where, reason).",
            discussion: """
                --json prints an array of {"id", "kind", "name", "place", "state", "reason", "attempts", \
                "nextAttempt", "bytes", "created"}.
                """)

        @Option(help: .mountedProfile)
        var profile: String?

        @Flag(help: "Print the entries as JSON.")
        var json = false

        func run() async throws {
            try await reportingErrors {
                let outbox = try ProfileOutbox(profile: profile)
                let items = try await outbox.items()
                await outbox.saveLog()
                if json {
                    print(CacheCommand.json(items))
                } else if items.isEmpty {
                    printError("the outbox of \"\(outbox.name)\" is empty")
                } else {
                    for item in items { print(Self.line(item)) }
                }
            }
        }

        static func line(_ item: OutboxItem) -> String {
            var reason = item.reason ?? ""
            if let next = item.nextAttempt, item.state == "waiting" {
                reason += (reason.isEmpty ? "" : "; ") + "next try \(next.formatted(date: .omitted, time: .standard))"
            }
            return [String(item.id), item.state, item.kind.rawValue, item.name, item.place, reason]
                .joined(separator: "\t")
        }
    }

    struct Retry: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "retry",
            abstract: "Send a failed, unconfirmed or waiting entry again now (all of them without ID).",
            discussion: """
                An unconfirmed upload went into a folder you cannot list (a homework folder) and was interrupted: \
                CampusFS cannot see whether it arrived, so only a retry sends it again — look in Stud.IP first.
                """)

        @Option(help: .mountedProfile)
        var profile: String?

        @Argument(help: "The entry's ID (`campusfs outbox` lists them); none: every failed or waiting entry.")
        var id: Int64?

        func run() async throws {
            try await reportingErrors {
                let outbox = try ProfileOutbox(profile: profile)
                let items = try await outbox.retry(id)
                await outbox.saveLog()
                let what = id.map { "entry \($0)" } ?? "every failed and waiting entry"
                print(
                    outbox.socket == nil
                        ? "\(what) goes to Stud.IP at the next mount of \"\(outbox.name)\""
                        : "sending \(what) again")
                for item in items where id == nil || item.id == id { print(List.line(item)) }
            }
        }
    }

    struct Discard: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "discard",
            abstract: "Drop an entry: it is not sent, and the bytes it held are deleted.",
            discussion: """
                Asks first (in a terminal), since the outbox may hold the only copy of what you wrote; --yes drops \
                without asking (scripts). An entry being sent right now cannot be dropped until the attempt ended.
                """)

        @Option(help: .mountedProfile)
        var profile: String?

        @Argument(help: "The entry's ID (`campusfs outbox` lists them).")
        var id: Int64

        @Flag(help: "Do not ask.")
        var yes = false

        func run() async throws {
            try await reportingErrors {
                let outbox = try ProfileOutbox(profile: profile)
                guard let item = try await outbox.items().first(where: { $0.id == id }) else {
                    throw CLIError.usage("no outbox entry \(id) (`campusfs outbox` lists them)")
                }
                let described = "\(item.kind.rawValue) of \(item.name) (\(item.place), \(item.state))"
                if !yes {
                    guard Terminal.isInteractive else {
                        throw CLIError.usage(
                            "discarding entry \(id) loses its bytes; pass --yes to do it without asking")
                    }
                    let agreed = await BlockingPool.shared.run {
                        Terminal.confirm("Discard the \(described)? What it would send is deleted.")
                    }
                    guard agreed else {
                        printError("kept entry \(id)")
                        return
                    }
                }
                try await outbox.discard(id)
                await outbox.saveLog()
                print("discarded the \(described)")
            }
        }
    }
}

/// `campusfs upload FILE DEST`: a copy of FILE into a Stud.IP folder, through the outbox, with its progress.
struct UploadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upload",
        abstract: "Upload a copy of FILE into the Stud.IP folder DEST and wait until Stud.IP confirms it.",
        discussion: """
            DEST is a folder in the mount (or its path relative to the tree, without a mount): a course or one of \
            its folders where Stud.IP lets you add files — into a homework folder, this hands FILE in. The copy \
            goes into the profile's outbox first, so nothing is lost if the network or Stud.IP fails: offline it \
            waits there (exit 3) and goes when Stud.IP answers; a refusal (too large, forbidden type) stays there \
            with Stud.IP's reason (exit 4) for `campusfs outbox retry` or `discard`. While mounted the mount's \
            daemon sends it; without a mount this command does. Its state and how much went out show on stderr. \
            Needs uploads = true in the profile.

            The terms of use sent with it: --terms, else the profile's upload_terms, else the installation's entry \
            for your own unpublished work (SELFMADE_NONPUB on most installations).
            """
                + HelpText.examples(
                    """
                    campusfs upload Blatt3.pdf ~/Uni/"WS 2026-27"/"INF-101 Einführung"/Hausaufgaben
                    campusfs upload notes.md "WS 2026-27/INF-101 Einführung/Allgemeiner Dateiordner"
                    campusfs upload poster.pdf ~/Uni/"WS 2026-27"/"BS-202 Betriebssysteme" --terms FREE_LICENSE
                    """))

    @Option(help: .mountedProfileOfPaths)
    var profile: String?

    @Argument(help: "The file to upload (it stays as it is).")
    var file: String

    @Argument(help: "The Stud.IP folder: a path in the mount, or relative to the tree's root.")
    var destination: String

    @Option(help: "The terms-of-use id to send (default: upload_terms, else the installation's own-work entry).")
    var terms: String?

    func run() async throws {
        try await reportingErrors {
            let outbox = try ProfileOutbox(profile: profile, arguments: [destination])
            let resolved = try outbox.profile()
            guard resolved.uploads else {
                throw CLIError.usage(
                    "uploads are off for \"\(outbox.name)\": add uploads = true to [profiles.\(outbox.name)] in "
                        + "\(outbox.paths.configFile.path) (what you upload is published to the course)")
            }
            let source = URL(fileURLWithPath: file)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: source.path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { throw CLIError.usage("\(file) is not a file") }
            let (folder, place) = try await outbox.writableFolder(destination)
            let staged = try await outbox.stage(source)
            let order = UploadOrder(file: staged.path, folderID: folder, name: source.lastPathComponent, terms: terms)
            do throws(CLIError) {
                if outbox.socket != nil {
                    try await send(order, through: outbox, to: place)
                } else {
                    try await sendHere(order, outbox: outbox, profile: resolved, to: place)
                }
            } catch {
                // The outbox took the copy over unless it refused the entry.
                try? FileManager.default.removeItem(at: staged)
                await outbox.saveLog()
                throw error
            }
            await outbox.saveLog()
        }
    }

    /// Through the mount's daemon: queued there, then its state until it ends; the tree then shows the document.
    private func send(_ order: UploadOrder, through outbox: ProfileOutbox, to place: String) async throws(CLIError) {
        guard let id = try await outbox.ask(.upload(order)).queued else {
            throw .other("the daemon did not queue the upload; see its log")
        }
        let ended = try await follow(id, name: order.name, place: place) { () async throws(CLIError) in
            try await outbox.ask(.outboxEntry(id: id))
        }
        // The document Stud.IP made shows without waiting for the next refresh.
        if ended.result == .done { _ = try? await outbox.ask(.refresh(path: place)) }
    }

    /// Without a daemon: this command runs the outbox until the entry ended (waiting: it stays for the next mount).
    private func sendHere(
        _ order: UploadOrder, outbox: ProfileOutbox, profile: Profile, to place: String
    ) async throws(CLIError) {
        let credentials = try await CredentialSource.resolve(profile)
        let link = ServerLink(
            configuration: profile.clientConfiguration(credentials), lookup: CredentialSource.lookup(profile))
        let desk: UploadDesk
        do throws(CLIError) {
            desk = try await outbox.openHere(link: link).desk
        } catch {
            await link.shutdown()
            throw error
        }
        let queued: Int64?
        do throws(CLIError) {
            queued = try ProfileOutbox.answer(await desk.handle(.upload(order))).queued
        } catch {
            await link.shutdown()
            throw error
        }
        guard let id = queued else {
            await link.shutdown()
            throw .other("the outbox did not take the upload")
        }
        // Only once the entry is queued: the sender's start finishes what a crash left, and an entry half-way
        // through being queued looks like that.
        let sending = Task { await desk.outbox.run() }
        let result: Result<OutboxSettlement, CLIError>
        do throws(CLIError) {
            result = .success(
                try await follow(id, name: order.name, place: place) { () async throws(CLIError) in
                    try ProfileOutbox.answer(await desk.handle(.outboxEntry(id: id)))
                })
        } catch {
            result = .failure(error)
        }
        // What is still queued (a waiting entry) stays on disk for the next mount.
        sending.cancel()
        await sending.value
        await link.shutdown()
        _ = try result.get()
        print("it shows in the tree after the next refresh (`campusfs refresh \"\(place)\"`)")
    }

    /// "Blatt3.pdf: sending, 1.2 MB of 4.8 MB (20%)": the state, and while sending how much went out, in steps of
    /// a tenth so that a log gets a few lines, not one per poll.
    static func progressLine(_ name: String, _ item: OutboxItem) -> String {
        guard let total = item.bytes else { return "\(name): \(item.state)" }
        guard let sent = item.sentBytes, total > 0 else { return "\(name): \(item.state) (\(ByteText.format(total)))" }
        let tenths = min(10, sent * 10 / total)
        let shown = total * tenths / 10
        return "\(name): \(item.state), \(ByteText.format(shown)) of \(ByteText.format(total)) (\(tenths * 10)%)"
    }

    /// Shows entry `id`'s state as it changes until it left the outbox (done, or discarded meanwhile) or stopped
    /// for the user (failed, unconfirmed: exit 4) or the server (waiting: exit 3, it goes when Stud.IP answers).
    @discardableResult
    private func follow(
        _ id: Int64, name: String, place: String, state: () async throws(CLIError) -> ControlResponse
    ) async throws(CLIError) -> OutboxSettlement {
        var shown: String?
        while true {
            let response = try await state()
            if let item = response.outbox?.first {
                let line = Self.progressLine(name, item)
                if line != shown {
                    shown = line
                    switch item.state {
                    case "waiting":
                        throw .network(
                            "\(name) waits in the outbox (entry \(id)): \(item.reason ?? "Stud.IP cannot be reached"); "
                                + "it goes to Stud.IP when it answers — `campusfs outbox` shows it")
                    case "failed", "unconfirmed":
                        throw .other(
                            "Stud.IP did not take \(name): \(item.reason ?? item.state); it stays in the outbox — "
                                + "`campusfs outbox retry \(id)` sends it again, `campusfs outbox discard \(id)` drops it"
                        )
                    default:
                        printError(line)
                    }
                }
            } else if let settled = response.settled {
                switch settled.result {
                case .done:
                    if let stored = settled.name {
                        print("uploaded \(name) to \(place)" + (stored == name ? "" : " as \(stored)"))
                    } else {
                        print(
                            "handed in \(name) to \(place): Stud.IP confirmed it (a student cannot see hand-ins there)")
                    }
                case .conflict:
                    print("uploaded \(name) to \(place) as \(settled.name ?? name) (\(settled.reason ?? "a conflict"))")
                case .discarded:
                    throw .other("entry \(id) was discarded before it was sent")
                case .failed, .unconfirmed:
                    throw .other("Stud.IP did not take \(name): \(settled.reason ?? settled.result.rawValue)")
                }
                return settled
            }
            try? await Task.sleep(for: .milliseconds(200))
        }
    }
}

/// A profile's outbox as the commands reach it: through its daemon while mounted (the control socket), else on the
/// store and the data directory directly.
struct ProfileOutbox {
    let name: String
    let paths: Paths
    /// The daemon's socket, while one answers.
    let socket: URL?
    let mountpoint: String?
    /// The outbox's log lines without a daemon: to the profile's log file (``saveLog()``), not between the
    /// command's own lines.
    let log = DialogueLog(verbose: false)

    init(profile: String?, arguments: [String] = []) throws(CLIError) {
        paths = Paths()
        name = try MountedProfiles.name(explicit: profile, arguments: arguments, paths: paths)
        let status = DaemonDirectory.status(paths.socket(profile: name))
        socket = status == nil ? nil : paths.socket(profile: name)
        mountpoint = status?.mountpoint
    }

    /// `$XDG_DATA_HOME/campusfs/<profile>/`, where the outbox and the drafts live.
    var dataDirectory: URL { paths.database(profile: name).deletingLastPathComponent() }

    /// Appends what the outbox logged to the profile's log file (the daemon's).
    func saveLog() async {
        let (log, file) = (log, paths.log(profile: name))
        await BlockingPool.shared.run { log.save(to: file) }
    }

    /// The profile's settings (`uploads`, `upload_terms`, the server).
    func profile() throws(CLIError) -> Profile {
        // Parsed, since ArgumentParser's options hold no value until parsed.
        guard let options = try? ProfileOptions.parse(["--profile", name]) else {
            throw .usage("profile name \"\(name)\" cannot be used")
        }
        return try options.resolve(paths: paths)
    }

    func items() async throws(CLIError) -> [OutboxItem] {
        if socket != nil { return try await ask(.outbox).outbox ?? [] }
        let desk = try await openHere().desk
        return try Self.answer(await desk.handle(.outbox)).outbox ?? []
    }

    /// Retries `id` (nil: every failed or waiting entry); the entries afterwards.
    func retry(_ id: Int64?) async throws(CLIError) -> [OutboxItem] {
        if socket != nil { return try await ask(.retryOutbox(id: id)).outbox ?? [] }
        let desk = try await openHere().desk
        return try Self.answer(await desk.handle(.retryOutbox(id: id))).outbox ?? []
    }

    func discard(_ id: Int64) async throws(CLIError) {
        if socket != nil {
            _ = try await ask(.discardOutbox(id: id))
            return
        }
        let desk = try await openHere().desk
        _ = try Self.answer(await desk.handle(.discardOutbox(id: id)))
    }

    /// Asks the daemon; its refusal as the command's error.
    func ask(_ request: ControlRequest) async throws(CLIError) -> ControlResponse {
        guard let socket else { throw .other("\"\(name)\" is not mounted") }
        // The daemon may wait for the store: a wait on a socket, so not on Swift's pool.
        let response = try await BlockingPool.shared.run { () throws(CLIError) -> ControlResponse in
            do throws(ControlSocketError) {
                return try ControlClient.send(request, to: socket.path)
            } catch {
                throw .other(error.description)
            }
        }
        return try Self.answer(response)
    }

    static func answer(_ response: ControlResponse) throws(CLIError) -> ControlResponse {
        guard let error = response.error else { return response }
        throw CLIError(exitCode: response.exitCode ?? 4, error)
    }

    /// The outbox and the workspace on disk, for a command without a daemon. `link` is how the outbox sends (the
    /// caller shuts it down); without one (listing, retry, discard) nothing is sent, and an attempt to would say so.
    func openHere(link given: ServerLink? = nil) async throws(CLIError) -> (desk: UploadDesk, workspace: Workspace) {
        let store = try ProfileStore.open(name, paths: paths)
        let settings = try ConfigFile.load(from: paths.configFile).profiles[name]
        let server = settings?.url ?? "http://localhost"
        let link =
            given
            ?? ServerLink(
                configuration: ClientConfiguration(baseURL: server, credentials: .basic(username: "", password: "")),
                connect: { configuration throws(StudIPError) in
                    throw .unreachable(
                        server: configuration.baseURL, detail: "`campusfs outbox` sends nothing without a mount")
                })
        let data = dataDirectory
        do throws(WorkspaceError) {
            let (desk, workspace) = try await UploadDesk.open(
                UploadSettings(dataDirectory: data.path, terms: settings?.uploadTerms), store: store, link: link,
                logger: log.logger)
            desk.whenSettled { entry, outcome, _ in await workspace.settled(entry, outcome) }
            return (desk, workspace)
        } catch {
            throw .other("the outbox of \"\(name)\": \(error)")
        }
    }

    /// The Stud.IP folder at `destination` (in the mount or relative to the tree), if the user may add files there:
    /// its id and its path in the tree.
    func writableFolder(_ destination: String) async throws(CLIError) -> (id: String, place: String) {
        let store = try ProfileStore.open(name, paths: paths)
        let treePath = MountedProfiles.treePath(destination, mountpoint: mountpoint)
        let node = try ProfileStore.node(treePath, in: store)
        let place = try ProfileStore.path(of: node, in: store)
        let access: FolderAccess?
        do throws(StoreError) {
            access = try store.folderAccess(inode: node.inode)
        } catch {
            throw .other(error.description)
        }
        guard let access else {
            throw .usage("\(destination) is not a Stud.IP folder: upload into a course or one of its folders")
        }
        guard access.permissions.isWritable else {
            throw .usage(
                "Stud.IP does not let you add files to \(place.isEmpty ? destination : place); pick a folder that "
                    + "allows it (a homework folder, \"Allgemeiner Dateiordner\", …)")
        }
        return (access.folderID, place)
    }

    /// A copy of `file` in the profile's data directory, on the outbox's filesystem: the outbox takes it over by
    /// rename, and the user's file stays as it is.
    func stage(_ file: URL) async throws(CLIError) -> URL {
        let directory = dataDirectory.appendingPathComponent("staging")
        let copy = directory.appendingPathComponent(UUID().uuidString)
        return try await BlockingPool.shared.run { () throws(CLIError) -> URL in
            do {
                try FileManager.default.createDirectory(
                    at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                try FileManager.default.copyItem(at: file, to: copy)
            } catch {
                throw .other("cannot copy \(file.path) into the outbox: \(error.localizedDescription)")
            }
            return copy
        }
    }
}
