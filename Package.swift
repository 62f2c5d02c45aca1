// swift-tools-version:6.2
import Foundation
import PackageDescription

/// The include directories of libsecret and GIO (and GLib's), from pkg-config, for CLibSecret and CGio and the Swift
/// modules that import them. Not `systemLibrary(pkgConfig:)`, which would also link the libraries into `campusfs`:
/// they are loaded with dlopen by the few commands that need them (docs/performance.md, "Process start").
let glibHeaders: [String] = {
    let pkgConfig = Process()
    let output = Pipe()
    pkgConfig.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    pkgConfig.arguments = ["pkg-config", "--cflags-only-I", "libsecret-1", "gio-2.0"]
    pkgConfig.standardOutput = output
    do { try pkgConfig.run() } catch { fatalError("pkg-config cannot run (Scripts/bootstrap installs it): \(error)") }
    let flags = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    pkgConfig.waitUntilExit()
    guard pkgConfig.terminationStatus == 0 else {
        fatalError("pkg-config finds no libsecret-1 or gio-2.0: install libsecret-1-dev and libglib2.0-dev")
    }
    return flags.split(whereSeparator: \.isWhitespace).map(String.init)
}()

let package = Package(
    name: "CampusFS",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StudIPSimulator", targets: ["StudIPSimulator"]),
        .executable(name: "studip-sim", targets: ["studip-sim"]),
        .executable(name: "campusfs", targets: ["campusfs"]),
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/weichsel/ZIPFoundation", from: "0.9.20"),
    ],
    targets: [
        // The product modules (docs/architecture.md, "Modules"). Empty ones are filled by later issues.
        .systemLibrary(name: "CFuse3", pkgConfig: "fuse3", providers: [.apt(["libfuse3-dev"])]),
        .target(name: "AsyncHelpers"),
        // Blocking work's one home and the one EINTR loop (docs/threads.md): below everything else.
        .target(name: "SystemSupport", dependencies: ["CSpawn"]),
        .systemLibrary(name: "CSpawn"),
        .target(name: "FUSEKit", dependencies: ["CFuse3", "AsyncHelpers", "SystemSupport"]),
        // Recording replies, so filesystems run their operations in-process in unit tests.
        .target(name: "FUSEKitTesting", dependencies: ["FUSEKit"]),
        .systemLibrary(name: "CXattr"),
        .systemLibrary(name: "CMalloc"),
        // sqlite3_config, which is variadic, for MetadataStore; the libsqlite3 GRDB links (libsqlite3-dev).
        .systemLibrary(name: "CSQLiteConfig", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CSystemZlib", providers: [.apt(["zlib1g-dev"])]),
        // SHA-256, HMAC and MD5 by the system's libcrypto, for PKCE and the simulator: not swift-crypto's own
        // BoringSSL, a second one beside swift-nio-ssl's.
        .systemLibrary(name: "CLibCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .target(name: "Digests", dependencies: ["CLibCrypto"]),
        // The client's vocabulary (models, errors), which the filesystem names; the wire format, which only the
        // client and the fuzz targets read (docs/fuzzing.md). Foundation only, so that a sanitizer build is quick.
        .target(name: "StudIPModel"),
        .target(name: "StudIPWire", dependencies: ["StudIPModel", "HTMLText"]),
        .target(name: "NamingRules", dependencies: ["StudIPModel"]),
        // HTML lexing and character references for the login-page scanner and the announcement renderer.
        .target(name: "HTMLText"),
        // Announcements as Markdown, dates and timetables as iCalendar (issue 18; docs/course-files.md).
        .target(name: "CourseFiles", dependencies: ["StudIPModel", "HTMLText"]),
        .target(
            name: "StudIPKit",
            dependencies: [
                // SystemSupport: an upload reads its file on the BlockingPool (docs/threads.md).
                "AsyncHelpers", "Digests", "StudIPModel", "StudIPWire", "SystemSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                // NIO's own types: its errors, recognised by type, and `TimeAmount`.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // The OAuth2 loopback redirect's one-request server.
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .target(
            name: "MetadataStore",
            dependencies: [
                "StudIPModel", "NamingRules", "SystemSupport", "CSQLiteConfig",
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .target(
            name: "ContentCache",
            dependencies: [
                "AsyncHelpers", "StudIPKit", "StudIPModel", "SystemSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The text of downloaded documents for search and grep (issue 16): pdftotext, OOXML/ODF, plain text.
        .target(
            name: "TextExtraction",
            dependencies: [
                "HTMLText", "SystemSupport", .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ]
        ),
        // The daemon's background indexer: the text of what the content cache holds into the search index.
        .target(
            name: "ContentIndexing",
            dependencies: [
                "ContentCache", "MetadataStore", "StudIPModel", "SystemSupport", "TextExtraction",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // grep over the index's stored text (issue 16): glibc's POSIX regex, grep's output, the index's words.
        .systemLibrary(name: "CWctype"),
        .target(name: "TextGrep", dependencies: ["CWctype", "StudIPModel"]),
        // The login's secrets in the desktop's keyring (libsecret), or a 0600 file without one (docs/secrets.md).
        // libsecret loaded with dlopen when the keyring is first asked, so that the other commands start without it
        // and GLib (docs/performance.md, "Process start"): its headers, not its libraries (`glibHeaders`).
        .target(name: "CLibSecret", cSettings: [.unsafeFlags(glibHeaders)]),
        // The person's desktop session: notifications over D-Bus (GIO's GDBus), `xdg-open` (issue 19).
        // GIO the same way, loaded when the daemon first connects for notifications.
        .target(name: "CGio", cSettings: [.unsafeFlags(glibHeaders)]),
        .target(
            name: "Desktop", dependencies: ["AsyncHelpers", "CGio", "SystemSupport"],
            swiftSettings: [.unsafeFlags(glibHeaders.flatMap { ["-Xcc", $0] })]),
        .target(
            name: "SecretStore", dependencies: ["CLibSecret", "SystemSupport"],
            swiftSettings: [.unsafeFlags(glibHeaders.flatMap { ["-Xcc", $0] })]),
        // The filesystem: FUSE operations onto the store and the cache, attributes, kernel invalidations.
        .target(
            name: "CampusFS",
            dependencies: [
                "AsyncHelpers", "StudIPKit", "StudIPModel", "MetadataStore", "ContentCache", "FUSEKit", "SystemSupport",
                // The write path's workspace (docs/writing.md).
                "Uploading",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Writing to Stud.IP (issue 32, docs/writing.md): the outbox (durable operations, sending, retries,
        // confirmation, conflicts) and the workspace (drafts, settling).
        .target(
            name: "Uploading",
            dependencies: [
                "AsyncHelpers", "MetadataStore", "NamingRules", "StudIPKit", "StudIPModel", "SystemSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // What the CLI and the daemon say to each other over the control socket, and the CLI's end of it.
        .target(
            name: "ControlProtocol",
            dependencies: ["StudIPKit", "StudIPModel", "MetadataStore", "ContentCache", "SystemSupport"]
        ),
        // Synchronisation: the store refreshed from Stud.IP (the refresher, a first mount's fill), and the daemon's
        // refreshes one at a time (deadline, progress, the poller, collection). Kernel invalidation is injected: no
        // FUSE here, so it runs in-process in tests and in the daemon-less `campusfs refresh`.
        .target(
            name: "Refreshing",
            dependencies: [
                "AsyncHelpers", "ContentCache", "ControlProtocol", "CourseFiles", "MetadataStore", "StudIPKit",
                "StudIPModel", "SystemSupport", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The daemon: lifecycle and the composition of its parts (server link, refresh coordinator, control
        // handler, status reporter), the control socket's server.
        .target(
            name: "Daemon",
            dependencies: [
                "AsyncHelpers", "CampusFS", "CMalloc", "ControlProtocol", "Refreshing", "StudIPKit", "StudIPModel",
                "MetadataStore", "ContentCache", "ContentIndexing", "FUSEKit", "SystemSupport", "Desktop", "Uploading",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "campusfs",
            dependencies: [
                "CampusFS", "ControlProtocol", "Daemon", "Refreshing", "StudIPKit", "StudIPModel", "MetadataStore",
                "ContentCache", "ContentIndexing", "StudIPSimulator", "CXattr", "SecretStore", "SystemSupport",
                "TextGrep", "CourseFiles", "Desktop", "Uploading",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The Stud.IP installations `campusfs login` offers (docs/universities.md).
            resources: [.copy("Resources/universities.json")],
            // Release builds link the Swift runtime and Foundation in: each command starts in two thirds of the CPU
            // time, without resolving their symbols at every start (docs/search.md, "Latency"). -static-stdlib
            // alone leaves Foundation's own static libraries unordered, hence the group. Debug builds (the tests')
            // keep the shared libraries.
            linkerSettings: [
                .unsafeFlags(
                    [
                        "-static-stdlib", "-Xlinker", "--start-group",
                        "-Xlinker", "-lFoundationXML", "-Xlinker", "-l_CFXMLInterface", "-Xlinker", "-lxml2",
                        "-Xlinker", "-lFoundation", "-Xlinker", "-lCoreFoundation",
                        "-Xlinker", "-lFoundationInternationalization", "-Xlinker", "-l_FoundationICU",
                        "-Xlinker", "-lFoundationEssentials", "-Xlinker", "-l_FoundationCShims",
                        "-Xlinker", "-l_FoundationCollections", "-Xlinker", "--end-group",
                        // The toolchain's static-stdlib-args.lnk exports the executable's 45,000 symbols: the Swift
                        // backtracer's static initialiser walks them with dladdr, and each symbol a shared library
                        // looks up is first sought among them, 0.8-1.6 ms at every start. Only dladdr's names in a
                        // crash's stack dump need them (docs/performance.md, "Process start").
                        "-Xlinker", "--no-export-dynamic",
                    ], .when(configuration: .release))
            ]
        ),

        // The Stud.IP simulator: a product of its own (tests, benchmarks, `campusfs demo`).
        .target(
            name: "StudIPSimulator",
            dependencies: [
                "CSystemZlib", "Digests",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Resources/fixtures-5.0.7")]
        ),
        .executableTarget(
            name: "studip-sim",
            dependencies: [
                "StudIPSimulator",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Helpers every test target shares (simulators that are always stopped, child processes, mounts).
        .target(
            name: "TestSupport",
            dependencies: [
                "StudIPKit", "StudIPSimulator", "SystemSupport", .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "AsyncHelpersTests",
            dependencies: ["AsyncHelpers"]
        ),
        .testTarget(name: "DigestsTests", dependencies: ["Digests"]),
        .testTarget(
            name: "SystemSupportTests",
            dependencies: ["SystemSupport"]
        ),
        .testTarget(
            name: "StudIPKitTests",
            dependencies: [
                "StudIPKit", "StudIPModel", "StudIPWire", "StudIPSimulator", "TestSupport",
                // The test browser of the OAuth2 flow.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        .testTarget(
            name: "ContentCacheTests",
            dependencies: ["ContentCache", "StudIPKit", "StudIPModel", "SystemSupport"]
        ),
        .testTarget(
            name: "FUSEKitTests",
            dependencies: ["FUSEKit", "TestSupport"]
        ),
        .testTarget(
            name: "MetadataStoreTests",
            dependencies: [
                "MetadataStore", "NamingRules", "StudIPKit", "StudIPModel", "StudIPSimulator", "TestSupport",
                "TextGrep",
                // The content indexer, against a real store (issue 29: extractor versions, retried time-outs).
                "ContentIndexing", "ContentCache", "TextExtraction",
            ]
        ),
        .testTarget(
            name: "CampusFSTests",
            dependencies: [
                "CampusFS", "ControlProtocol", "Daemon", "Refreshing", "StudIPKit", "StudIPModel", "MetadataStore",
                "ContentCache", "ContentIndexing", "FUSEKit", "FUSEKitTesting", "StudIPSimulator", "SystemSupport",
                "TestSupport", "Desktop", "Uploading",
                // The CLI's own pieces that need no subprocess (the list of universities).
                "campusfs",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        .testTarget(
            name: "TextExtractionTests",
            dependencies: ["TextExtraction", "HTMLText", "StudIPSimulator", "SystemSupport"]
        ),
        .testTarget(
            name: "UploadingTests",
            dependencies: [
                "Uploading", "MetadataStore", "NamingRules", "StudIPKit", "StudIPModel", "StudIPSimulator",
                "SystemSupport", "TestSupport",
                // The workspace's tests refresh a store from the simulator.
                "Refreshing",
            ]
        ),
        .testTarget(
            name: "SecretStoreTests",
            dependencies: ["SecretStore", "SystemSupport", "TestSupport"]
        ),
        .testTarget(
            name: "CourseFilesTests",
            // StudIPWire: the timetable made of captured 5.0.7 responses (TimetableCaptureTests).
            dependencies: ["CourseFiles", "StudIPModel", "StudIPWire", "TestSupport"]
        ),
        .testTarget(
            name: "TextGrepTests",
            dependencies: ["TextGrep", "StudIPModel", "TestSupport"]
        ),
        .testTarget(
            name: "StudIPSimulatorTests",
            dependencies: [
                "StudIPSimulator", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),

        // Fuzz targets (docs/fuzzing.md): their bodies, replayed over their seeds by FuzzTargetsTests in every
        // test run; libFuzzer's driver, built with the sanitizer by Scripts/fuzz.
        .target(name: "FuzzTargets", dependencies: ["StudIPModel", "StudIPWire", "NamingRules", "CourseFiles"]),
        .executableTarget(name: "campusfs-fuzz", dependencies: ["FuzzTargets"]),
        .testTarget(name: "FuzzTargetsTests", dependencies: ["FuzzTargets", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
