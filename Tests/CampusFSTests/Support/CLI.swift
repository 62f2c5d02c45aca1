import Foundation
import SystemSupport
import TestSupport
import Testing

/// Runs the built `campusfs` executable the way a user's shell does, isolated by its own XDG directories.
struct CLI: Sendable {
    static let binary = builtProductsDirectory.appendingPathComponent("campusfs")

    struct Result: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String

        var lines: [String] {
            stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        }
    }

    /// A fresh home: every XDG directory below one temporary directory.
    let home: URL
    var environment: [String: String]
    /// The ordinary user `campusfs` runs as (``runAsOrdinaryUser(_:)``); nil: the user running the tests.
    private(set) var user: uid_t?

    init(password: String? = "testing") throws {
        home = FileManager.default.temporaryDirectory.appendingPathComponent("campusfs-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        environment = [
            "HOME": home.path,
            "XDG_CONFIG_HOME": home.appendingPathComponent("config").path,
            "XDG_DATA_HOME": home.appendingPathComponent("data").path,
            "XDG_CACHE_HOME": home.appendingPathComponent("cache").path,
            "XDG_STATE_HOME": home.appendingPathComponent("state").path,
            "XDG_RUNTIME_DIR": home.appendingPathComponent("run").path,
            "PATH": "/usr/bin:/bin",
            "TZ": "Europe/Berlin",
        ]
        if let password { environment["CAMPUSFS_PASSWORD"] = password }
    }

    func removeHome() {
        try? FileManager.default.removeItem(at: home)
    }

    /// `config.toml` of this home.
    var configFile: URL { home.appendingPathComponent("config/campusfs/config.toml") }

    /// `config.toml` as Python's tomllib reads it: a real TOML parser, not ours.
    func configuration() async throws -> [String: Any] {
        let script = "import json, sys, tomllib; print(json.dumps(tomllib.load(open(sys.argv[1], 'rb'))))"
        let result = try await shell("python3 -c \(quoted(script)) \(quoted(configFile.path))")
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    func database(profile: String = "default") -> URL {
        home.appendingPathComponent("data/campusfs/\(profile)/campusfs.sqlite")
    }

    /// Runs `campusfs` with `arguments` and expects it to leave the default profile's store alone: not a byte of the
    /// database changes and no WAL is written (the read-only open of search and grep, docs/search.md).
    func runLeavingTheStoreAlone(_ arguments: [String]) async throws -> Result {
        let database = database()
        let before = try Data(contentsOf: database)
        let result = try await run(arguments)
        let command = arguments.first ?? "campusfs"
        #expect(try Data(contentsOf: database) == before, "\(command) changed the store")
        let wal = try? FileManager.default.attributesOfItem(atPath: database.path + "-wal")[.size] as? Int
        #expect((wal ?? 0) == 0, "\(command) wrote \(wal ?? 0) bytes of WAL")
        return result
    }

    /// From now on `campusfs` runs as the ordinary user `uid` (with its group of the same number and no other),
    /// as a student's does: a copy of the binary in the home (the build directory may be private to root) and the
    /// home handed over to that user. Write the home's files (``configFile``) before, or hand it over again.
    mutating func runAsOrdinaryUser(_ uid: uid_t) async throws {
        let copy = home.appendingPathComponent("campusfs")
        try FileManager.default.copyItem(at: Self.binary, to: copy)
        let owned = try await shell("chmod 755 \(quoted(copy.path)) && chown -R \(uid):\(uid) \(quoted(home.path))")
        #expect(owned.status == 0, "\(owned.stderr)")
        user = uid
    }

    /// The command line that runs `command` (a shell command) as this home's user, with its environment, from the
    /// home as a login shell starts: the tests' own directory may be closed to that user (a clean clone lives under
    /// a 0700 `mktemp -d`), and programs such as `soffice` change back to the directory they started in.
    func asUser(_ command: String) -> String {
        let environment = environment.map { quoted("\($0.key)=\($0.value)") }.sorted().joined(separator: " ")
        let switching = user.map { "setpriv --reuid=\($0) --regid=\($0) --clear-groups " } ?? ""
        return "\(switching)env -i \(environment) sh -c \(quoted("cd \(quoted(home.path)) && \(command)"))"
    }

    /// Starts `campusfs` with `arguments`; the caller waits or kills.
    func launch(_ arguments: [String]) throws -> Child {
        guard let user else { return try Subprocess.launch(Self.binary, arguments, environment: environment) }
        return try Subprocess.launch(
            URL(fileURLWithPath: "/usr/bin/setpriv"),
            [
                "--reuid=\(user)", "--regid=\(user)", "--clear-groups", "--",
                home.appendingPathComponent("campusfs").path,
            ]
                + arguments, environment: environment)
    }

    /// Runs `campusfs` to completion; a run longer than `timeout` is killed and recorded as a test issue.
    func run(_ arguments: [String], timeout: Double = 120) async throws -> Result {
        let child = try launch(arguments)
        async let output = readToEnd(child.stdout)
        async let errors = readToEnd(child.stderr)
        let deadline = Date().addingTimeInterval(timeout)
        while !child.hasEnded, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        if !child.hasEnded {
            child.kill(SIGKILL)
            Issue.record("campusfs \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
            while !child.hasEnded { try await Task.sleep(for: .milliseconds(20)) }
        }
        let ending = child.reap()  // at once: it has ended
        return Result(
            status: ending.status, stdout: String(decoding: await output, as: UTF8.self),
            stderr: String(decoding: await errors, as: UTF8.self))
    }

    /// What `campusfs` wrote to its terminal: all of it, or with `answering` what came after the prompt.
    struct TerminalResult: Sendable {
        var status: Int?
        var output: String
    }

    /// One exchange with a program on a terminal: wait until `prompt` shows, then type `answer` and Enter — or,
    /// with `command`, the first line a shell command prints (it reads everything shown so far in `$TRANSCRIPT`;
    /// a test acting as the person's browser, say).
    struct Exchange: Sendable {
        var prompt: String
        var answer: String = ""
        var command: String?
    }

    /// Runs `campusfs` on a real pseudo-terminal (Python's pty module). With `answering`, waits for that prompt,
    /// types `input` and a newline, and returns only what followed the prompt.
    func runInTerminal(
        _ arguments: [String], answering prompt: String? = nil, with input: String = "", timeout: Int = 120
    ) async throws -> TerminalResult {
        guard let prompt else { return try await converse(arguments, [], timeout: timeout) }
        let result = try await converse(arguments, [Exchange(prompt: prompt, answer: input)], timeout: timeout)
        let after = result.output.range(of: prompt).map { String(result.output[$0.upperBound...]) }
        return TerminalResult(status: result.status, output: after ?? result.output)
    }

    /// Runs `campusfs` on a real pseudo-terminal through `exchanges` in order, then to its end; returns everything
    /// it wrote there. A prompt that does not show within 60 s ends the run with what was seen.
    func converse(_ arguments: [String], _ exchanges: [Exchange], timeout: Int = 120) async throws -> TerminalResult {
        let driver = """
            import json, os, pty, select, subprocess, sys
            binary, arguments, environment = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
            exchanges = json.loads(sys.argv[4])
            pid, fd = pty.fork()
            if pid == 0:
                os.execve(binary, [binary] + arguments, environment)
            seen = b""
            def read(until=None, start=0):
                global seen
                while until is None or until not in seen[start:]:
                    ready, _, _ = select.select([fd], [], [], 60)
                    if not ready:
                        print(json.dumps({"status": None, "output": "timed out waiting for %r; seen: %s" % (until, seen.decode(errors="replace"))}))
                        sys.exit(0)
                    try:
                        chunk = os.read(fd, 1024)
                    except OSError:
                        return False
                    if not chunk:
                        return False
                    seen += chunk
                return True
            position = 0
            for exchange in exchanges:
                prompt = exchange["prompt"].encode()
                if not read(prompt, position):
                    break
                position = seen.index(prompt, position) + len(prompt)
                answer = exchange["answer"]
                if exchange.get("command"):
                    env = dict(os.environ, TRANSCRIPT=seen.decode(errors="replace"))
                    answer = subprocess.run(["sh", "-c", exchange["command"]], env=env, capture_output=True,
                                            text=True).stdout.split("\\n")[0]
                os.write(fd, answer.encode() + b"\\n")
            read()
            _, status = os.waitpid(pid, 0)
            print(json.dumps({"status": os.waitstatus_to_exitcode(status), "output": seen.decode(errors="replace")}))
            """
        func json(_ value: Any) throws -> String {
            String(decoding: try JSONSerialization.data(withJSONObject: value), as: UTF8.self)
        }
        let steps = exchanges.map { ["prompt": $0.prompt, "answer": $0.answer, "command": $0.command ?? ""] }
        let command = [
            "python3", "-c", driver, Self.binary.path, try json(arguments), try json(environment), try json(steps),
        ].map(quoted).joined(separator: " ")
        let result = try await shell(command, timeout: timeout)
        let answer = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any]
        return TerminalResult(
            status: answer?["status"] as? Int, output: answer?["output"] as? String ?? result.stderr)
    }
}
