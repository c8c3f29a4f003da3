import Logging
import NIOConcurrencyHelpers
import TetherProtocol
import WSCore

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
    package static func run<T: Sendable>(
        _ configuration: SyncClientConfiguration, logger: Logger, _ body: @escaping @Sendable (SyncConnection) async throws -> T
    ) async throws -> T {
        if let problem = Self.urlProblem(configuration.url) { throw SyncClientError.unreachable(problem, cause: .tls) }
        let outcome = NIOLockedValueBox<Result<T, any Error>?>(nil)
        let dialer = WebSocketDialer(
            maxFrameSize: ProtocolLimits.maxFrameBytes,
            autoPing: configuration.keepAlive.map { .enabled(timePeriod: $0) } ?? .disabled,
            tlsConfiguration: configuration.tlsConfiguration, pinnedKeys: configuration.pinnedKeys,
            sourceAddress: configuration.sourceAddress)
        do {
            try await dialer.run(url: configuration.url, logger: logger) { inbound, outbound, _ in
                let connection = SyncConnection(writer: outbound, logger: logger)
                await withDiscardingTaskGroup { group in
                    group.addTask { await connection.readLoop(inbound) }
                    let result: Result<T, any Error>
                    do {
                        try await connection.sendHello(configuration.software)
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
            if error is SyncClientError { throw error }
            throw SyncClientError.unreachable("\(configuration.url): \(error)", cause: WebSocketDialer.cause(of: error))
        }
        guard let result = outcome.withLockedValue({ $0 }) else {
            throw SyncClientError.unreachable("\(configuration.url): the connection ended before it could be used")
        }
        return try result.get()
    }

    /// A `wss://` URL must name the host: TLS sends the host as SNI, which cannot be an IP address.
    static func urlProblem(_ url: String) -> String? {
        guard url.hasPrefix("wss://") else { return nil }
        let authority = url.dropFirst(6).prefix { $0 != "/" }
        var host = Substring(authority)
        if host.hasPrefix("[") { return "\(url): use the server's host name with wss://, not an IP address (TLS sends it as SNI)" }
        if let colon = host.lastIndex(of: ":") { host = host[..<colon] }
        let isIPv4 = host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." }
        return isIPv4 ? "\(url): use the server's host name with wss://, not an IP address (TLS sends it as SNI)" : nil
    }
}
