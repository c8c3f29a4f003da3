import Logging
import NIOCore
import TetherProtocol

/// One WebSocket connection on the server: drives its ``ServerConnectionStateMachine``,
/// writes what the machine says to send, and keeps its bound sessions, one value each
/// (``ServerSessionTable``). Each message's work (``SyncEndpoint``) calls ``received(_:)``; the
/// hub pushes failures through ``fail(_:generation:with:)``; session streamers ask
/// ``isCurrent(_:generation:)``.
actor ServerConnection {
    /// Work the message's job runs after a machine step (``SyncEndpoint``).
    enum Work: Sendable {
        case bind(BindRequest)
        case integrate(Upload, BoundSession)
        case heal(HealChunk, BoundSession)
        case stream(SessionStreamer)
        /// A device report the connection's allowance let through (``ReportAllowance``).
        case report(DeviceReport)
        case close
    }

    let id: UInt64
    let service: SyncService
    let writer: SyncChannelWriter
    let queue: SyncWorkQueue
    let logger: Logger
    private var machine: ServerConnectionStateMachine
    private var sessions = ServerSessionTable()
    private var reports = ReportAllowance()
    private var refusals = ReportRefusalLog()
    /// The user of the last report whose token was accepted (for the log).
    private var reportUser: String?
    /// The device this connection's accepted reports speak for, and its name: where its remote
    /// actions go (docs/server.md, "Remote actions").
    private var reportedDevice: DeviceKey?
    private var reportedDeviceName = ""
    /// What the device last said it accepts, as kept (written again only when it changes).
    private var acceptedActionsKept: [RemoteActionKind]?

    init(id: UInt64, service: SyncService, writer: SyncChannelWriter, queue: SyncWorkQueue, logger: Logger) {
        self.id = id
        self.service = service
        self.writer = writer
        self.queue = queue
        self.logger = logger
        self.machine = ServerConnectionStateMachine(software: "tether-server \(TetherVersion.release)")
    }

    var isClosed: Bool { machine.state == .closed }

    func received(_ message: ClientMessage) async -> [Work] {
        await perform(machine.received(message))
    }

    func decodeFailed(_ error: WireDecodeError) async -> [Work] {
        await perform(machine.decodeFailed(error))
    }

    /// The bind verdict computed by the reader.
    func bindDecided(_ session: SessionID, _ outcome: SyncService.BindOutcome) async -> [Work] {
        switch outcome {
        case .accepted(let reply, let after, var boundSession, let wakeups, let file):
            let flowControl = (machine.negotiatedProtocolVersion ?? 0) >= TetherVersion.flowControl
            boundSession.hearsCompensatingWrites = (machine.negotiatedProtocolVersion ?? 0) >= TetherVersion.subscriptions
            let bound = sessions.bind(session, as: boundSession, flowControl: flowControl, wakeups: wakeups, after: after, file: file)
            let work = await perform(machine.sessionEvent(session, .bindAccepted(reply, downloadAfter: after)))
            sessions.bindPerformed(session, generation: bound.generation)
            if let deviceID = boundSession.subject.deviceID { await offerCredential(to: deviceID) }
            return work
        case .rejected(let error):
            // Refusals an operator caused on purpose (sync terminated) are routine; the rest are notable.
            logger.log(level: error.code == .otherSessionError ? .info : .notice, "bind refused", metadata: [
                "session": "\(session)", "code": "\(error.code.rawValue)", "reason": "\(error.message)",
            ])
            return await perform(machine.sessionEvent(session, .bindRejected(error)))
        }
    }

    /// Ends a session with a session-level error (grant revoked, upload refused, …).
    /// `generation` guards against a session id that was unbound and bound again meanwhile.
    func fail(_ session: SessionID, generation: UInt64?, with error: SyncError) async {
        if let generation, !sessions.isCurrent(session, generation: generation) { return }
        guard machine.sessionState(session) != nil else { return }
        logger.log(level: error.code == .otherSessionError ? .info : .notice, "session failed", metadata: [
            "session": "\(session)", "partition": "\(sessions[session]?.bound.partition.rawValue ?? "-")",
            "code": "\(error.code.rawValue)", "reason": "\(error.message)",
        ])
        _ = await perform(machine.sessionEvent(session, .failed(error)))
    }

    /// The answer to a heal chunk of `session`; the machine sends it if the session is still active.
    func healAnswered(_ session: SessionID, _ reply: HealReply) async {
        _ = await perform(machine.sessionEvent(session, .healAnswered(reply)))
    }

    /// Called by a streamer before each state chunk; false when it must stop.
    func sendingStateChunk(_ session: SessionID, generation: UInt64, isLast: Bool) async -> Bool {
        guard sessions.isCurrent(session, generation: generation) else { return false }
        _ = await perform(machine.sessionEvent(session, .sendingStateChunk(isLast: isLast)))
        return sessions.isCurrent(session, generation: generation)
    }

    func isCurrent(_ session: SessionID, generation: UInt64) -> Bool {
        sessions.isCurrent(session, generation: generation) && machine.state != .closed
    }

    func connectionClosed() async {
        _ = await perform(machine.connectionClosed())
        if let line = refusals.closing(user: reportUser) { logger.notice("\(line)") }
    }

    /// Logs a report's refused ledger entries, the first at once and the rest folded
    /// (``ReportRefusalLog``); notes the device the report speaks for and what it accepts.
    /// True when the connection now speaks for a device it did not before, in protocol 8 (its
    /// pending remote actions are due; the hub's index now sends them here).
    func reportRecorded(_ outcome: SyncService.ReportOutcome, report: DeviceReport) async -> Bool {
        guard let user = outcome.user else { return false }
        reportUser = user
        if let line = refusals.refused(outcome.refused, user: user) { logger.notice("\(line)") }
        let key = DeviceKey(user: user, deviceID: report.deviceID)
        let isNew = key != reportedDevice
        reportedDevice = key
        reportedDeviceName = report.deviceName
        if let accepted = report.acceptedActions, isNew || accepted != acceptedActionsKept {
            acceptedActionsKept = accepted
            await service.recordAcceptedActions(accepted, device: key)
        }
        guard isNew, machine.speaksRemoteActions else { return false }
        await service.hub.speaks(for: key, connection: id)
        return true
    }

    /// Sends the device the actions of `records` not sent on this connection yet; their ids.
    func offerActions(_ records: [DeviceActionRecord]) async -> [Int64] {
        let actions = machine.offerActions(records.map(\.action))
        _ = await perform(actions)
        return actions.compactMap { action -> Int64? in
            if case .send(.action(let sent)) = action { sent.id } else { nil }
        }
    }

    func generation(of session: SessionID) -> UInt64? { sessions[session]?.generation }

    /// Hands an enrolled device with sessions or reports here a new credential when it is due
    /// one (docs/server.md "Rotation"): at most one awaiting its acknowledgement per device.
    /// True when a credential was sent.
    @discardableResult
    func offerCredential(to deviceID: String) async -> Bool {
        guard machine.beginHandOver(to: deviceID) else { return false }
        guard let prepared = await service.prepareCredential(for: deviceID) else {
            machine.handOverAbandoned(deviceID: deviceID)
            return false
        }
        let actions = machine.handOver(prepared.credential, digest: prepared.digest)
        _ = await perform(actions)
        return !actions.isEmpty
    }

    /// Executes machine actions: sends in order, releases sessions, and returns the work
    /// that needs the reader (binds, uploads, heal chunks, streamers, closing).
    private func perform(_ actions: [ServerConnectionStateMachine.Action]) async -> [Work] {
        var work: [Work] = []
        for action in actions {
            switch action {
            case .send(let message):
                await send(message)
            case .close:
                work.append(.close)
            case .completeRotation(let deviceID, let digest):
                await service.credentialAccepted(deviceID: deviceID, digest: digest)
            case .finishAction(let action, let result):
                if let device = reportedDevice { await service.actionAnswered(action, result, device: device, name: reportedDeviceName) }
            case .recordReport(let report):
                if reports.allow(at: .now) {
                    work.append(.report(report))
                } else if reports.dropped == 1 {
                    logger.notice("device reports arrive faster than one a second: the excess is dropped", metadata: [
                        "device": "\(report.deviceID)"
                    ])
                }
            case .session(let id, let sessionAction):
                switch sessionAction {
                case .authorizeBind(let request):
                    work.append(.bind(request))
                case .integrate(let upload):
                    if let session = sessions[id]?.bound { work.append(.integrate(upload, session)) }
                case .heal(let chunk):
                    if let session = sessions[id]?.bound { work.append(.heal(chunk, session)) }
                case .grantCredit(let messages):
                    sessions[id]?.window.grant(messages)
                case .streamState, .streamDownloads:
                    guard let session = sessions[id], let start = session.streamStart else { continue }
                    let bootstrap: Bool = if case .streamState = sessionAction { true } else { false }
                    work.append(.stream(SessionStreamer(
                        session: session.bound, generation: session.generation, bootstrap: bootstrap, file: start.file, after: start.after,
                        wakeups: start.wakeups, window: session.window, connection: self, storage: service.storage.history,
                        policy: service.policy, fence: service.fence, writer: writer, queue: queue, logger: logger)))
                case .release:
                    if let session = sessions.release(id) {
                        await service.release(session.bound.key)
                    } else {
                        await service.release(SessionKey(connection: self.id, session: id))
                    }
                case .forget, .send, .closeConnection:
                    break  // the connection machine turns these into sends and closes
                }
            }
        }
        return work
    }

    func send(_ message: ServerMessage) async {
        if case .error(let error) = message { service.metrics.syncError(error.error.code) }
        if case .error(let error) = message, error.session == nil {
            logger.notice("closing connection with a protocol error", metadata: [
                "code": "\(error.error.code.rawValue)", "reason": "\(error.error.message)",
            ])
        }
        do {
            let bytes = message.encoded()
            try await writer.writeBinaryMessage(ByteBuffer(bytes: bytes))
            service.metrics.sent(bytes: bytes.count)
        } catch {
            logger.debug("write failed", metadata: ["message": "\(message.name)", "error": "\(error)"])
        }
    }
}
