import Foundation
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket
@_spi(WSInternal) import WSCore

/// Dials a sync server's WebSocket endpoint with NIO: a TCP connect with a timeout, TLS for
/// `wss://`, the HTTP upgrade under a deadline, then WSCore's frame handling (the same inbound
/// stream and outbound writer the server side uses).
///
/// The upgrade is guarded: a server that closes or half-closes the connection before it
/// answers fails the attempt at once (remote half-closure is not allowed, so the channel
/// closes on EOF), and an answer that never comes fails it at the deadline. NIO's typed
/// upgrade handler alone waits for ever in both cases (docs/reliability.md, seed 23097527).
struct WebSocketDialer: Sendable {
    enum UpgradeResult: Sendable {
        case websocket(NIOAsyncChannel<WebSocketFrame, WebSocketFrame>)
        case notUpgraded
    }

    struct Context: WebSocketContext {
        let logger: Logger
    }

    var connectTimeout: Duration = .seconds(10)
    var upgradeTimeout: Duration = .seconds(10)
    /// How long a close this side started waits for the server's close frame before the TCP
    /// connection is dropped: tether-server answers at once, so only a stalled or hostile peer
    /// (or a proxy holding the stream) ever reaches it, and the reconnect must not wait on it.
    var closeTimeout: Duration = .seconds(3)
    var maxFrameSize: Int
    var autoPing: AutoPingSetup
    var tlsConfiguration: TLSConfiguration?
    /// For `wss://`: the server's key must be one of these (empty: not checked).
    var pinnedKeys: [ServerKeyPin] = []
    /// The local address to connect from (an IP address); nil lets the system choose.
    var sourceAddress: String?

    /// Connects to `url`, runs `handler` on the upgraded connection, and returns when the
    /// WebSocket is closed. Throws ``SyncClientError/unreachable(_:cause:)`` when no WebSocket could
    /// be opened (refused, timed out, closed during the upgrade, upgrade declined).
    func run(url: String, logger: Logger, handler: @escaping WebSocketDataHandler<Context>) async throws {
        let target = try ServerTarget(url: url, plain: "ws", secure: "wss")
        let sslContext = try target.secure ? NIOSSLContext(configuration: tlsConfiguration ?? .makeClientConfiguration()) : nil
        var bootstrap = ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(TimeAmount(connectTimeout))
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .channelOption(ChannelOptions.allowRemoteHalfClosure, value: false)
        if let sourceAddress {
            do {
                bootstrap = bootstrap.bind(to: try SocketAddress(ipAddress: sourceAddress, port: 0))
            } catch {
                throw SyncClientError.unreachable("source address \(sourceAddress) is not an IP address: \(error)")
            }
        }
        let upgrade: EventLoopFuture<UpgradeResult>
        do {
            upgrade = try await bootstrap.connect(host: target.host, port: target.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try self.configureUpgrade(channel, target: target, sslContext: sslContext)
                }
            }
        } catch {
            throw Self.failure(error, url: url)
        }
        let result: UpgradeResult
        do {
            result = try await upgrade.get()
        } catch {
            throw Self.failure(error, url: url)
        }
        switch result {
        case .websocket(let channel):
            _ = try await WebSocketHandler.handle(
                type: .client,
                configuration: .init(
                    extensions: [], autoPing: autoPing, closeTimeout: closeTimeout, validateUTF8: false, maxFrameSize: maxFrameSize),
                asyncChannel: channel, context: Context(logger: logger), handler: handler)
        case .notUpgraded:
            throw SyncClientError.unreachable("\(url): the WebSocket upgrade was refused", cause: .upgradeFailed)
        }
    }

    /// Sets up TLS and the HTTP upgrade on a new channel; the returned future completes once,
    /// with the upgrade's result, or fails when the channel closes first or the deadline passes.
    private func configureUpgrade(_ channel: any Channel, target: ServerTarget, sslContext: NIOSSLContext?) throws
        -> EventLoopFuture<UpgradeResult>
    {
        let upgrader = NIOTypedWebSocketClientUpgrader<UpgradeResult>(
            maxFrameSize: maxFrameSize,
            upgradePipelineHandler: { channel, _ in
                channel.eventLoop.makeCompletedFuture {
                    .websocket(try NIOAsyncChannel<WebSocketFrame, WebSocketFrame>(wrappingChannelSynchronously: channel))
                }
            })
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: target.hostHeader)
        let configuration = NIOTypedHTTPClientUpgradeConfiguration(
            upgradeRequestHead: HTTPRequestHead(version: .http1_1, method: .GET, uri: target.path, headers: headers),
            upgraders: [upgrader],
            notUpgradingCompletionHandler: { channel in channel.eventLoop.makeSucceededFuture(.notUpgraded) })
        var pipeline = NIOUpgradableHTTPClientPipelineConfiguration(upgradeConfiguration: configuration)
        pipeline.leftOverBytesStrategy = .forwardBytes
        var pinCheck: ServerKeyPinCheck? = nil
        if let sslContext {
            try channel.pipeline.syncOperations.addHandler(
                try NIOSSLClientHandler(context: sslContext, serverHostname: target.host), position: .first)
            if !pinnedKeys.isEmpty {
                let check = ServerKeyPinCheck(pins: pinnedKeys, host: target.host, eventLoop: channel.eventLoop)
                // Right behind TLS: the HTTP handlers are added after it, below.
                try channel.pipeline.syncOperations.addHandler(check)
                pinCheck = check
            }
        }
        let upgrade = try channel.pipeline.syncOperations.configureUpgradableHTTPClientPipeline(configuration: pipeline)
        return Self.guarded(upgrade, on: channel, deadline: upgradeTimeout, refusal: pinCheck?.verdict)
    }

    /// `upgrade`, failed when `channel` closes before it completes or `deadline` passes (the
    /// channel is then closed), or with `refusal`'s error when that fails first (a pinned key
    /// that does not match). Everything runs on the channel's event loop.
    static func guarded(
        _ upgrade: EventLoopFuture<UpgradeResult>, on channel: any Channel, deadline: Duration,
        refusal: EventLoopFuture<Void>? = nil
    ) -> EventLoopFuture<UpgradeResult> {
        let loop = channel.eventLoop
        let promise = loop.makePromise(of: UpgradeResult.self)
        let completed = NIOLoopBoundBox(false, eventLoop: loop)
        let complete: @Sendable (Result<UpgradeResult, any Error>) -> Void = { result in
            guard !completed.value else { return }
            completed.value = true
            switch result {
            case .success(let value): promise.succeed(value)
            case .failure(let error):
                promise.fail(error)
                channel.close(promise: nil)
            }
        }
        let timer = loop.scheduleTask(in: TimeAmount(deadline)) {
            complete(.failure(DialError.upgradeTimedOut(deadline)))
        }
        // Registered first: the pin check fails its verdict before it closes the channel, so
        // its reason wins over "closed during the upgrade".
        refusal?.whenFailure { error in
            if error is SyncClientError { complete(.failure(error)) }
        }
        upgrade.whenComplete { result in
            timer.cancel()
            // NIO reports an upgrade cut by the server's FIN as "inappropriate operation for
            // state": say what happened.
            if case .failure = result, !channel.isActive {
                complete(.failure(DialError.closedDuringUpgrade))
            } else {
                complete(result)
            }
        }
        channel.closeFuture.whenComplete { _ in
            timer.cancel()
            complete(.failure(DialError.closedDuringUpgrade))
        }
        return promise.futureResult
    }

    enum DialError: Error, CustomStringConvertible {
        case closedDuringUpgrade
        case upgradeTimedOut(Duration)

        var description: String {
            switch self {
            case .closedDuringUpgrade: "the server closed the connection before answering the WebSocket upgrade"
            case .upgradeTimedOut(let limit): "no answer to the WebSocket upgrade within \(limit.components.seconds) s"
            }
        }
    }
}
