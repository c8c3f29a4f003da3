// swift-tools-version:6.1
import PackageDescription

/// Settings every Tether module builds with (Swift 6 language mode is set package-wide).
let settings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Tether",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "tetherd", targets: ["tetherd"]),
        .executable(name: "tetherctl", targets: ["tetherctl"]),
        .executable(name: "tether-server", targets: ["tether-server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
    ],
    targets: [
        // libsystemd from Debian's libsystemd-dev (scripts/bootstrap installs it).
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),

        // Messages, codec, error codes, schema and changeset values, pure state machines. No I/O.
        .target(name: "TetherProtocol", swiftSettings: settings),

        // TOML files with errors that name file, key and line; schema.toml.
        .target(
            name: "TetherTOML",
            dependencies: ["TetherProtocol", .product(name: "TOMLKit", package: "TOMLKit")],
            swiftSettings: settings),

        // A partition's SQLite store: schema, trigger-based change capture, apply, reset primitives.
        .target(
            name: "TetherStore",
            dependencies: ["TetherProtocol", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: settings),

        .executableTarget(
            name: "tetherd",
            dependencies: [
                "TetherProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: settings),
        .executableTarget(
            name: "tetherctl",
            dependencies: [
                "TetherProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: settings),
        .executableTarget(
            name: "tether-server",
            dependencies: [
                "TetherProtocol",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: settings),

        .testTarget(name: "TetherProtocolTests", dependencies: ["TetherProtocol"], swiftSettings: settings),
        .testTarget(name: "TetherTOMLTests", dependencies: ["TetherTOML", "TetherProtocol"], swiftSettings: settings),
        .testTarget(
            name: "TetherStoreTests",
            dependencies: ["TetherStore", "TetherProtocol", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: settings),
    ],
    swiftLanguageModes: [.v6]
)
