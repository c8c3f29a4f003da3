import Logging
import NIOCore
import TetherProtocol
import WSCore

/// The `/sync` WebSocket endpoint: one reader per connection that joins frames into
/// messages, feeds them to the connection's state machine, runs binds, uploads and heal
/// chunks in order (each is committed before the next message is read), and starts a
/// streamer per bound session. Streamers end when their session is released or the
/// connection closes.
package struct SyncEndpoint: Sendable {
    package let service: SyncService

    package init(service: SyncService) {
        self.service = service
    }

    package func handle(
        inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, gate: ConnectionGate = .none, logger baseLogger: Logger
    ) async {
        gate.upgraded()
        let connection = await service.hub.openConnection { [service] id in
            var logger = baseLogger
            logger[metadataKey: "connection"] = "\(id)"
            return ServerConnection(id: id, service: service, writer: outbound, logger: logger)
        }
        let id = connection.id
        let logger = connection.logger
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
                    let input: Input
                    switch assembler.append(kind, frame.data.readableBytesView, fin: frame.fin) {
                    case .incomplete: continue
                    case .failure(let error): input = .undecodable(error)
                    case .message(let bytes): input = .message(bytes)
                    }
                    // Each message's work runs in a task of its own: see ShortLivedTask. It throws
                    // only when the connection's task is cancelled, which closes the connection.
                    let outcome = (try? await ShortLivedTask.run { await process(input, connection: connection, gate: gate) })
                        ?? Outcome(streamers: [], close: true)
                    for streamer in outcome.streamers { group.addTask { await streamer.run() } }
                    if outcome.close { break reading }
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

    /// A complete message from the reader, or why it is not one.
    private enum Input: Sendable {
        case message([UInt8])
        case undecodable(WireDecodeError)
    }

    /// What a message's work leaves to the reader: streamers to start, and whether to close.
    private struct Outcome: Sendable {
        var streamers: [SessionStreamer] = []
        var close = false
    }

    /// Decodes a message and runs the work it causes: binds, uploads (committed before the
    /// next message is read), and the streamers of sessions that bound.
    private func process(_ input: Input, connection: ServerConnection, gate: ConnectionGate) async -> Outcome {
        var queue: [ServerConnection.Work]
        switch input {
        case .undecodable(let error):
            queue = await connection.decodeFailed(error)
        case .message(let bytes):
            switch Result(catching: { () throws(WireDecodeError) in try ClientMessage.decode(bytes) }) {
            case .success(let message): queue = await connection.received(message)
            case .failure(let error): queue = await connection.decodeFailed(error)
            }
        }
        var outcome = Outcome()
        while !queue.isEmpty {
            let item = queue.removeFirst()
            switch item {
            case .close:
                outcome.close = true
            case .bind(let request):
                let key = SessionKey(connection: connection.id, session: request.session)
                let session = request.session
                let decision = await service.bind(request, key: key) { [weak connection] error in
                    await connection?.fail(session, generation: nil, with: error)
                }
                if decision.tokenAccepted { gate.authenticated() }
                queue += await connection.bindDecided(session, decision)
            case .integrate(let upload, let session):
                if let error = await service.integrate(upload, for: session) {
                    await connection.fail(upload.session, generation: nil, with: error)
                }
            case .heal(let chunk, let session):
                switch await service.heal(chunk, for: session) {
                case .success(let reply): await connection.healAnswered(chunk.session, reply)
                case .failure(let error): await connection.fail(chunk.session, generation: nil, with: error)
                }
            case .stream(let streamer):
                outcome.streamers.append(streamer)
            case .report(let report):
                let recorded = await service.recordReport(report)
                if recorded.user != nil { gate.authenticated() }
                if await connection.reportRecorded(recorded, report: report) {
                    await service.deliverPendingActions(toDeviceIDs: [report.deviceID])
                }
                // A report (every few minutes) is where a device connected for months meets
                // `credential_max_age_days`.
                if let deviceID = recorded.deviceID { await connection.offerCredential(to: deviceID) }
            }
        }
        return outcome
    }
}
