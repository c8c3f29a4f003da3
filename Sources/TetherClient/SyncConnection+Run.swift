public import Logging
import NIOConcurrencyHelpers
import TetherProtocol
import WSClient

extension SyncConnection {
    /// Connects to the server, sends the hello, runs `body` with the open connection and
    /// closes the connection when `body` returns (or throws). If the server closes first,
    /// every session gets `disconnected` and further requests throw ``SyncClientError/closed(_:)``.
    ///
    /// ```swift
    /// try await SyncConnection.run(.init(url: "ws://127.0.0.1:7800/sync"), logger: logger) { connection in
    ///     let session = try await connection.bind(BindRequest(session: 1, partition: "store-17", token: token, identity: nil))
    ///     for await event in session.events { … }
    /// }
    /// ```
    public static func run<T: Sendable>(
        _ configuration: SyncClientConfiguration, logger: Logger, _ body: @escaping @Sendable (SyncConnection) async throws -> T
    ) async throws -> T {
        let outcome = NIOLockedValueBox<Result<T, any Error>?>(nil)
        var wsConfiguration = WebSocketClientConfiguration(maxFrameSize: ProtocolLimits.maxFrameBytes)
        if let keepAlive = configuration.keepAlive { wsConfiguration.autoPing = .enabled(timePeriod: keepAlive) }
        do {
            try await WebSocketClient.connect(
                url: configuration.url, configuration: wsConfiguration, tlsConfiguration: configuration.tlsConfiguration,
                logger: logger
            ) { inbound, outbound, _ in
                let connection = SyncConnection(writer: outbound, logger: logger)
                await withDiscardingTaskGroup { group in
                    group.addTask { await connection.readLoop(inbound) }
                    let result: Result<T, any Error>
                    do {
                        try await connection.sendHello(software: configuration.software)
                        result = .success(try await body(connection))
                    } catch {
                        result = .failure(error)
                    }
                    outcome.withLockedValue { $0 = result }
                    await connection.close()
                }
            }
        } catch {
            if let result = outcome.withLockedValue({ $0 }) { return try result.get() }
            throw SyncClientError.unreachable("\(configuration.url): \(error)")
        }
        guard let result = outcome.withLockedValue({ $0 }) else {
            throw SyncClientError.unreachable("\(configuration.url): the WebSocket upgrade was refused")
        }
        return try result.get()
    }
}
