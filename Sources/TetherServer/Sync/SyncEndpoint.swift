import Logging
import NIOCore
import TetherProtocol

/// The `/sync` WebSocket endpoint: what a connection's messages cause. Each connection is a
/// ``SyncChannelHandler`` on its event loop that joins frames into messages and hands them here
/// one at a time, each in a job of the ``SyncWorkQueue``: the message goes to the connection's
/// state machine, then binds, uploads and heal chunks run in order (each is committed before the
/// next message is read), and the sessions that bound start their ``SessionStreamer``s. Between
/// messages a connection holds no task.
package struct SyncEndpoint: Sendable {
    package let service: SyncService
    package let queue: SyncWorkQueue

    package init(service: SyncService, queue: SyncWorkQueue) {
        self.service = service
        self.queue = queue
    }

    /// The connection of a newly upgraded channel (not yet in the hub: see ``opened(_:)``).
    func connection(on channel: any Channel, logger baseLogger: Logger) -> ServerConnection {
        let id = service.hub.newConnectionID()
        var logger = baseLogger
        logger[metadataKey: "connection"] = "\(id)"
        return ServerConnection(id: id, service: service, writer: SyncChannelWriter(channel: channel), queue: queue, logger: logger)
    }

    /// The connection's first job, before any of its messages.
    func opened(_ connection: ServerConnection) async {
        await service.hub.adopt(connection)
        connection.logger.debug("sync connection opened")
    }

    /// The connection's last job, after the last message's: its sessions are released.
    func closed(_ connection: ServerConnection) async {
        await connection.connectionClosed()
        await service.hub.closeConnection(connection.id)
        connection.logger.debug("sync connection closed")
    }

    /// A complete message from the channel, or why it is not one.
    enum Input: Sendable {
        case message([UInt8])
        case undecodable(WireDecodeError)
    }

    /// What a message's work leaves to the channel: streamers to start, and whether to close.
    struct Outcome: Sendable {
        var streamers: [SessionStreamer] = []
        var close = false
    }

    /// Decodes a message and runs the work it causes: binds, uploads (committed before the
    /// next message is read), and the streamers of sessions that bound.
    func process(_ input: Input, connection: ServerConnection, gate: ConnectionGate) async -> Outcome {
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
