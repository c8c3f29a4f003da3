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
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.0"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.3.0"),
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
                "TetherProtocol", "TetherTOML", "TetherServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: settings),

        // The sync server: history and state storage, auth and grants, sync and admin endpoints, admin client.
        .target(
            name: "TetherServer",
            dependencies: [
                "TetherProtocol", "TetherTOML",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: settings),

        // The device side of a sync connection: WebSocket client, codec, multiplexed sessions.
        .target(
            name: "TetherClient",
            dependencies: [
                "TetherProtocol",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            swiftSettings: settings),

        .testTarget(name: "TetherProtocolTests", dependencies: ["TetherProtocol"], swiftSettings: settings),
        .testTarget(name: "TetherTOMLTests", dependencies: ["TetherTOML", "TetherProtocol"], swiftSettings: settings),
        .testTarget(
            name: "TetherServerTests",
            dependencies: ["TetherServer", "TetherProtocol", "TetherTOML", .product(name: "Logging", package: "swift-log")],
            swiftSettings: settings),
        // Starts the real tether-server executable on loopback and talks to it with TetherClient.
        .testTarget(
            name: "TetherServerIntegrationTests",
            dependencies: [
                "TetherClient", "TetherServer", "TetherProtocol",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            swiftSettings: settings),
    ],
    swiftLanguageModes: [.v6]
)
