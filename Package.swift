// swift-tools-version:6.2
import PackageDescription

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
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
    ],
    targets: [
        // The product modules of DESIGN.md §2. Empty ones are filled by later issues.
        .systemLibrary(name: "CFuse3", pkgConfig: "fuse3", providers: [.apt(["libfuse3-dev"])]),
        // Blocking work's one home and the one EINTR loop (docs/threads.md): below everything else.
        .target(name: "SystemSupport"),
        .target(name: "FUSEKit", dependencies: ["CFuse3", "SystemSupport"]),
        .systemLibrary(name: "CXattr"),
        .systemLibrary(name: "CZlib", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "StudIPKit",
            dependencies: [
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "MetadataStore",
            dependencies: ["StudIPKit", "SystemSupport", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .target(
            name: "ContentCache",
            dependencies: ["StudIPKit", "SystemSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .target(
            name: "CampusFS",
            dependencies: [
                "StudIPKit", "MetadataStore", "ContentCache", "FUSEKit", "SystemSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "campusfs",
            dependencies: [
                "CampusFS", "StudIPKit", "MetadataStore", "ContentCache", "StudIPSimulator", "CXattr", "SystemSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "TOMLKit", package: "TOMLKit"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The Stud.IP simulator: a product of its own (tests, benchmarks, `campusfs demo`).
        .target(
            name: "StudIPSimulator",
            dependencies: [
                "CZlib",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
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
        .testTarget(
            name: "SystemSupportTests",
            dependencies: ["SystemSupport"]
        ),
        .testTarget(
            name: "StudIPKitTests",
            dependencies: ["StudIPKit", "StudIPSimulator"]
        ),
        .testTarget(
            name: "ContentCacheTests",
            dependencies: ["ContentCache", "StudIPKit"]
        ),
        .testTarget(
            name: "FUSEKitTests",
            dependencies: ["FUSEKit"]
        ),
        .testTarget(
            name: "MetadataStoreTests",
            dependencies: ["MetadataStore", "StudIPKit", "StudIPSimulator"]
        ),
        .testTarget(
            name: "CampusFSTests",
            dependencies: [
                "CampusFS", "StudIPKit", "MetadataStore", "StudIPSimulator",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        .testTarget(
            name: "StudIPSimulatorTests",
            dependencies: [
                "StudIPSimulator",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),

        // Fuzz targets (docs/fuzzing.md): a corpus replay in a normal build, libFuzzer with Scripts/fuzz.
        .executableTarget(
            name: "campusfs-fuzz",
            dependencies: ["StudIPKit", "MetadataStore"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
