import Foundation
import TestSupport
import Testing

/// `campusfs` starts without libsecret and GLib: the keyring (SecretStore, CLibSecret) and notifications (Desktop,
/// CGio) load them with dlopen when a command needs them (docs/performance.md, "Process start").
@Suite struct ProcessStartTests {
    /// The libraries only the keyring and the daemon's notifications use.
    static let loadedOnDemand = ["libsecret-1.so.0", "libgio-2.0.so.0", "libgobject-2.0.so.0", "libglib-2.0.so.0"]

    @Test func theBinaryNamesNoKeyringOrGLibLibrary() async throws {
        let dynamic = try await shell("readelf --dynamic --wide \(quoted(CLI.binary.path))")
        #expect(dynamic.status == 0, "\(dynamic.stderr)")
        let needed = dynamic.lines.compactMap { line -> String? in
            guard line.contains("(NEEDED)"), let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]")
            else { return nil }
            return String(line[line.index(after: open)..<close])
        }
        // What the binary does need is read too, so that an unread table cannot pass.
        #expect(needed.contains("libfuse3.so.3"), "\(needed)")
        #expect(Set(needed).isDisjoint(with: Self.loadedOnDemand), "\(needed)")
    }

    /// With the four libraries unreadable (a mount namespace of its own binds /dev/null over them, as if they were not
    /// installed), `campusfs` starts, and a login that would store the password in the keyring says what to install
    /// instead of putting it in the file.
    @Test func withoutLibsecretCampusfsStartsAndTheKeyringSaysWhatToInstall() async throws {
        try await withSimulator(.fixtures507) { sim async throws in
            let cli = try CLI()
            defer { cli.removeHome() }
            let binary = quoted(CLI.binary.path)
            // secret-tool (libsecret's own client) links all four: ldd says where they are on this system.
            let script = """
                libraries=$(ldd /usr/bin/secret-tool)
                for library in \(Self.loadedOnDemand.joined(separator: " ")); do
                  path=$(echo "$libraries" | awk -v l="$library" '$1 == l { print $3 }')
                  [ -n "$path" ] && mount --bind /dev/null "$(readlink -f "$path")" || exit 9
                done
                echo "version=$(\(binary) --version 2>&1)"
                DBUS_SESSION_BUS_ADDRESS=unix:path=$HOME/no-bus \(binary) login --server \(sim.baseURL) \\
                  --username test_autor 2>&1
                echo "status=$?"
                """
            let environment = cli.environment.map { "\($0.key)=\(quoted($0.value))" }.joined(separator: " ")
            let hidden = try await shell(
                "env -i \(environment) unshare --mount --propagation private sh -c \(quoted(script))", timeout: 60)
            let version = try await cli.run(["--version"])
            #expect(hidden.status == 0, "\(hidden.stdout)\(hidden.stderr)")
            #expect(hidden.lines.first == "version=\(version.stdout.trimmingCharacters(in: .newlines))")
            #expect(hidden.stdout.contains("cannot be used without libsecret"), "\(hidden.stdout)")
            #expect(hidden.stdout.contains("libsecret-1-0"), "\(hidden.stdout)")
            #expect(hidden.lines.last.map { $0 != "status=0" } == true, "\(hidden.stdout)")
            #expect(
                !FileManager.default.fileExists(atPath: cli.home.appendingPathComponent("data/campusfs/secrets").path))
        }
    }
}
