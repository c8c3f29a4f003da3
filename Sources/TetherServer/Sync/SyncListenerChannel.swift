import HTTPTypes
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes
import NIOHTTPTypesHTTP1
import NIOWebSocket

/// The devices' listener's connections: HTTP/1 answered by the router (`/healthz`, `/enroll`,
/// `/metrics`), and the WebSocket upgrade of `GET /sync` handed to a ``SyncChannelHandler`` that
/// lives on the channel's event loop. Hummingbird's task for the connection ends with the
/// upgrade: a connected device holds no task while it is idle (issue 50); the server's
/// quiescing (its graceful shutdown) still reaches the channel, which closes it with 1001.
struct SyncListenerChannel: ServerChildChannel, HTTPChannelHandler {
    enum UpgradeResult: Sendable {
        /// The channel is a sync connection now: nothing is left to do in a task.
        case sync
        case notUpgraded(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
        /// An upgrade to another path than `/sync`: 400.
        case failedUpgrade(NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>)
    }

    struct Value: ServerChildChannelValue {
        let upgradeResult: EventLoopFuture<UpgradeResult>
        let channel: any Channel
    }

    let responder: HTTPChannelHandler.Responder
    let http1: HTTP1Channel.Configuration
    let endpoint: SyncEndpoint
    let socket: SyncSocketConfiguration

    init(
        responder: @escaping HTTPChannelHandler.Responder, http1: HTTP1Channel.Configuration, endpoint: SyncEndpoint,
        socket: SyncSocketConfiguration
    ) {
        self.responder = Self.refusingLateUpgrades(responder)
        self.http1 = http1
        self.endpoint = endpoint
        self.socket = socket
    }

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        channel.eventLoop.makeCompletedFuture {
            let upgradeAttempted = NIOLoopBoundBox(false, eventLoop: channel.eventLoop)
            let (endpoint, socket) = (self.endpoint, self.socket)
            let upgrader = NIOTypedWebSocketServerUpgrader<UpgradeResult>(
                maxFrameSize: socket.maxFrameSize,
                shouldUpgrade: { channel, head in
                    upgradeAttempted.value = true
                    let path = head.uri.split(separator: "?", maxSplits: 1).first ?? ""
                    let isSync = head.method == .GET && path == "/sync"
                    return channel.eventLoop.makeSucceededFuture(isSync ? HTTPHeaders() : nil)
                },
                upgradePipelineHandler: { channel, _ in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(
                            SyncChannelHandler(endpoint: endpoint, configuration: socket, logger: logger))
                        return UpgradeResult.sync
                    }
                })
            let http1 = self.http1
            let serverUpgrade = NIOTypedHTTPServerUpgradeConfiguration(
                upgraders: [upgrader],
                notUpgradingCompletionHandler: { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(HTTP1ToHTTPServerCodec(secure: false))
                        try channel.pipeline.syncOperations.addHandlers(http1.additionalChannelHandlers())
                        try channel.pipeline.syncOperations.addHandler(
                            HTTPConnectionStateHandler(idleTimeout: http1.idleTimeout.map { .init($0) }, logger: logger))
                        let asyncChannel = try NIOAsyncChannel<HTTPRequestPart, HTTPResponsePart>(
                            wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                        return upgradeAttempted.value ? UpgradeResult.failedUpgrade(asyncChannel) : .notUpgraded(asyncChannel)
                    }
                })
            var configuration = NIOUpgradableHTTPServerPipelineConfiguration<UpgradeResult>(upgradeConfiguration: serverUpgrade)
            configuration.enablePipelining = false  // HTTP is pipelined by NIOAsyncChannel
            configuration.enableErrorHandling = false  // Hummingbird's
            configuration.enableResponseHeaderValidation = false  // HTTPTypes validates
            configuration.decoderConfiguration.maxHeaderFieldSize = http1.httpDecoder.maxHeaderFieldSize
            configuration.decoderConfiguration.maxHeaderListSize = http1.httpDecoder.maxHeaderListSize
            configuration.decoderConfiguration.maxHeaderFieldCount = http1.httpDecoder.maxHeaderFieldCount
            let result = try channel.pipeline.syncOperations.configureUpgradableHTTPServerPipeline(configuration: configuration)
            return Value(upgradeResult: result, channel: channel)
        }
    }

    func handle(value: Value, logger: Logger) async {
        do {
            switch try await value.upgradeResult.get() {
            case .sync:
                return  // the channel's handler serves it from here
            case .notUpgraded(let http1):
                await handleHTTP(asyncChannel: http1, logger: logger)
            case .failedUpgrade(let http1):
                logger.debug("WebSocket upgrade refused: not /sync")
                try await http1.executeThenClose { _, outbound in
                    try await outbound.write(contentsOf: [
                        .head(HTTPResponse(status: .badRequest, headerFields: [.connection: "close", .contentLength: "0"])), .end(nil),
                    ])
                }
            }
        } catch let error as ChannelError where error == .inputClosed {
            logger.trace("connection closed before its first request")
        } catch {
            logger.debug("connection ended", metadata: ["error": "\(error)"])
        }
    }

    /// NIO upgrades only a connection's first request: an upgrade asked later on a kept-alive
    /// connection is sent to a new one (307 to the same place, the connection closed).
    private static func refusingLateUpgrades(_ responder: @escaping HTTPChannelHandler.Responder) -> HTTPChannelHandler.Responder {
        struct Redirected: Error {}
        return { request, responseWriter, channel in
            guard request.headers[.upgrade]?.lowercased() == "websocket" else {
                return try await responder(request, responseWriter, channel)
            }
            var location = request.uri.path
            if let query = request.uri.query { location += "?\(query)" }
            try await responseWriter.writeResponse(
                HTTPResponse(status: .temporaryRedirect, headerFields: [.connection: "close", .location: location]))
            throw Redirected()
        }
    }
}
