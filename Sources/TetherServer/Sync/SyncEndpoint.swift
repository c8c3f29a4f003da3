import Logging
import NIOCore
import TetherProtocol
public import WSCore

/// The `/sync` WebSocket endpoint: one reader per connection that joins frames into
/// messages, feeds them to the connection's state machine, runs binds and uploads in
/// order (an upload is committed before the next message is read), and starts a
/// streamer per bound session. Streamers end when their session is released or the
/// connection closes.
public struct SyncEndpoint: Sendable {
    public let service: SyncService

    public init(service: SyncService) {
        self.service = service
    }

    public func handle(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, logger baseLogger: Logger) async {
        let id = await service.hub.openConnection()
        var logger = baseLogger
        logger[metadataKey: "connection"] = "\(id)"
        let connection = ServerConnection(id: id, service: service, writer: outbound, logger: logger)
        logger.debug("sync connection opened")
        await withDiscardingTaskGroup { group in
            var assembler = MessageAssembler()
            do {
                reading: for try await frame in inbound {
                    service.metrics.received(bytes: frame.data.readableBytes)
                    let kind: MessageAssembler.FrameKind =
                        switch frame.opcode {
                        case .text: .text
                        case .continuation: .continuation
                        default: .binary
                        }
                    let work: [ServerConnection.Work]
                    switch assembler.append(kind, frame.data.readableBytesView, fin: frame.fin) {
                    case .incomplete:
                        continue
                    case .failure(let error):
                        work = await connection.decodeFailed(error)
                    case .message(let bytes):
                        switch Result(catching: { () throws(WireDecodeError) in try ClientMessage.decode(bytes) }) {
                        case .success(let message): work = await connection.received(message)
                        case .failure(let error): work = await connection.decodeFailed(error)
                        }
                    }
                    if await run(work, connection: connection, group: &group, logger: logger) { break reading }
                }
            } catch {
                logger.debug("sync connection read failed", metadata: ["error": "\(error)"])
            }
            await connection.connectionClosed()
            group.cancelAll()
        }
        await service.hub.closeConnection(id)
        logger.debug("sync connection closed")
    }

    /// Runs the reader's work; true when the connection must close.
    private func run(
        _ initial: [ServerConnection.Work], connection: ServerConnection, group: inout DiscardingTaskGroup, logger: Logger
    ) async -> Bool {
        var queue = initial
        var close = false
        while !queue.isEmpty {
            let item = queue.removeFirst()
            switch item {
            case .close:
                close = true
            case .bind(let request):
                let key = SessionKey(connection: connection.id, session: request.session)
                let session = request.session
                let outcome = await service.bind(request, key: key) { [weak connection] error in
                    await connection?.fail(session, generation: nil, with: error)
                }
                queue += await connection.bindDecided(session, outcome)
            case .integrate(let upload, let session):
                if let error = await service.integrate(upload, for: session) {
                    await connection.fail(upload.session, generation: nil, with: error)
                }
            case .stream(let streamer):
                group.addTask { await streamer.run() }
            }
        }
        return close
    }
}
