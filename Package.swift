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
        // For applications on the device: the agent's status, events and resets (docs/app-integration.md).
        .library(name: "TetherClient", targets: ["TetherClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.12.0"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.0"),
        // Up to the next minor only: the agent's sync client (Sources/TetherSyncClient/WebSocketDialer.swift)
        // imports WSCore through `@_spi(WSInternal)`, which semantic versioning does not cover, so even a
        // minor release may break it. Move to a new minor by hand, after building and testing against it.
        .package(url: "https://github.com/hummingbird-project/swift-websocket", .upToNextMinor(from: "1.6.2")),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.3.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
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

        // Linux calls Swift's Glibc module does not show (SO_PEERCRED, accept4), SQLite's variadic
        // calls, zlib's one-shot compress and inflate (zlib1g-dev; scripts/bootstrap installs it).
        .target(name: "CTetherShims", linkerSettings: [.linkedLibrary("sqlite3"), .linkedLibrary("z")]),

        // Exit statuses of docs/contract.md "Programs" for the three programs.
        .target(
            name: "TetherCommandLine",
            dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: settings),

        // The control socket's requests, answers and client (shared by tetherd and tetherctl).
        .target(name: "TetherControl", swiftSettings: settings),

        // The library applications import: TetherClient over the control protocol (no I/O but its socket).
        .target(name: "TetherClient", dependencies: ["TetherControl"], swiftSettings: settings),
        // docs/app-integration.md's example: an app that writes its store and prints what it hears.
        .executableTarget(
            name: "tether-example-app",
            dependencies: ["TetherClient", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Examples/TetherExampleApp",
            swiftSettings: settings),

        // The agent: configuration, sync sessions, state database, client reset, control socket.
        .target(
            name: "TetherAgent",
            dependencies: [
                "TetherProtocol", "TetherTOML", "TetherControl", "TetherSystemd", "TetherStore", "TetherSyncClient", "CTetherShims",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: settings),

        // journald logging (swift-log handler, levels, destination choice), sd_notify, watchdog.
        .target(
            name: "TetherSystemd",
            dependencies: [
                "CSystemd",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: settings),

        // `make bench`: real server and agents on loopback, figures against floors (not a test).
        .target(
            name: "TetherBench",
            dependencies: [
                "TetherTestSupport", "TetherControl", "TetherSyncClient", "TetherProtocol", "TetherServer",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: settings),
        .executableTarget(name: "tether-bench", dependencies: ["TetherBench"], swiftSettings: settings),

        // Manual pages from the programs' own argument definitions (`make man`; not installed).
        .target(name: "TetherManual", swiftSettings: settings),
        .executableTarget(
            name: "tether-manual",
            dependencies: ["TetherManual", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            swiftSettings: settings),

        // Helpers for test targets and `tether-bench` (never for the shipped programs): temp dirs,
        // free ports, journald, child processes, a NOTIFY_SOCKET listener, a manual clock,
        // poll-with-deadline, PostgreSQL, and the cluster harness (server and agents as processes).
        .target(name: "TetherTestSupport", dependencies: ["TetherControl", "TetherProtocol"], swiftSettings: settings),
        // Swift Testing traits for test targets (a suite's PostgreSQL). Apart from
        // TetherTestSupport: the static release build compiles every non-test target, and the
        // toolchain has no static Testing library (the sources are empty without Testing).
        .target(name: "TetherTestTraits", dependencies: ["TetherTestSupport"], swiftSettings: settings),

        // A partition's SQLite store: schema, trigger-based change capture, apply, reset primitives.
        .target(
            name: "TetherStore",
            dependencies: ["TetherProtocol", "CTetherShims", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: settings),

        .executableTarget(
            name: "tetherd",
            dependencies: [
                "TetherProtocol", "TetherAgent", "TetherCommandLine", "TetherTOML", "TetherStore", "TetherControl",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                "TetherSystemd",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: settings),
        .executableTarget(
            name: "tetherctl",
            dependencies: [
                "TetherProtocol", "TetherControl", "TetherCommandLine", "TetherTOML",
                // `tetherctl enroll`: the agent's configuration, state database and enrollment client.
                "TetherAgent", "TetherSyncClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: settings),
        .executableTarget(
            name: "tether-server",
            dependencies: [
                "TetherSystemd",
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
                "TetherProtocol", "TetherTOML", "TetherSystemd", "TetherStore",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: settings),

        // The device side of a sync connection: WebSocket client, codec, multiplexed sessions.
        .target(
            name: "TetherSyncClient",
            dependencies: [
                "TetherProtocol",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "WSCore", package: "swift-websocket"),
                // SHA-256 of the server's public key for `[server] pin_sha256`.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: settings),

        .testTarget(
            name: "TetherSyncClientTests",
            dependencies: [
                "TetherSyncClient", "TetherTestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: settings),
        .testTarget(name: "TetherProtocolTests", dependencies: ["TetherProtocol", "TetherTestSupport"], swiftSettings: settings),
        .testTarget(
            name: "TetherAgentTests",
            dependencies: [
                "TetherAgent", "TetherControl", "TetherProtocol", "TetherStore", "TetherSystemd", "TetherTOML", "TetherTestSupport",
                "TetherSyncClient",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: settings),
        // Real tether-server and tetherd processes on loopback, sqlite3 as the application.
        .testTarget(
            name: "TetherEndToEndTests",
            dependencies: [
                "TetherClient", "TetherControl", "TetherTestSupport", "tetherd", "tetherctl", "tether-server", "tether-client-probe",
                "tether-example-app",
            ],
            swiftSettings: settings),
        .testTarget(name: "TetherManualTests", dependencies: ["TetherManual"], swiftSettings: settings),
        .testTarget(
            name: "TetherClientTests", dependencies: ["TetherClient", "TetherTestSupport"], exclude: ["PublicAPI.txt"],
            swiftSettings: settings),
        // Test-only child process for the end-to-end tests: the client library run as another user.
        .executableTarget(
            name: "tether-client-probe", dependencies: ["TetherClient"], path: "Tests/TetherClientProbe", swiftSettings: settings),
        // The static release programs and the Debian packages (`make test-packages`).
        .testTarget(name: "TetherPackagingTests", dependencies: ["TetherTestSupport"], swiftSettings: settings),
        .testTarget(name: "TetherBenchTests", dependencies: ["TetherBench"], swiftSettings: settings),
        .testTarget(name: "TetherTOMLTests", dependencies: ["TetherTOML", "TetherProtocol"], swiftSettings: settings),
        .testTarget(
            name: "TetherSystemdTests",
            dependencies: [
                "TetherSystemd", "TetherTestSupport", "tether-systemd-probe",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ServiceLifecycleTestKit", package: "swift-service-lifecycle"),
            ],
            swiftSettings: settings),
        // Test-only child process for TetherSystemdTests: sends sd_notify messages and runs the
        // watchdog with the environment systemd would give it (never installed).
        .executableTarget(
            name: "tether-systemd-probe",
            dependencies: [
                "TetherSystemd",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            path: "Tests/TetherSystemdProbe",
            swiftSettings: settings),
        .testTarget(
            name: "TetherStoreTests",
            dependencies: ["TetherStore", "TetherProtocol", "TetherTestSupport", .product(name: "GRDB", package: "GRDB.swift")],
            swiftSettings: settings),
        .testTarget(
            name: "TetherServerTests",
            dependencies: [
                "TetherServer", "TetherProtocol", "TetherStore", "TetherTOML", "TetherTestSupport", "TetherTestTraits",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                // In-process tests of the sync endpoint, its connections and streamers.
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSTesting", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            swiftSettings: settings),
        // Starts the real tether-server executable on loopback and talks to it with TetherSyncClient.
        .testTarget(
            name: "TetherServerIntegrationTests",
            dependencies: [
                "TetherSyncClient", "TetherServer", "TetherProtocol", "TetherTestSupport", "TetherTestTraits",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
            ],
            swiftSettings: settings),
    ],
    swiftLanguageModes: [.v6]
)
