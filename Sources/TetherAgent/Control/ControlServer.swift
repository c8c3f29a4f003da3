import Foundation
import TetherProtocol
import TetherControl
import Logging
import ServiceLifecycle

/// Answers control requests (docs/contract.md: tetherctl).
package protocol ControlHandler: Sendable {
    /// Must return promptly when the task is cancelled (the daemon is stopping).
    func handle(_ request: ControlRequest) async -> ControlResponse
    /// The events `events` with `follow` streams after the handler's answer; nil: none.
    var eventLog: EventLog? { get }
}

extension ControlHandler {
    package var eventLog: EventLog? { nil }
}

/// The control socket as a service: a listener thread accepts and authenticates clients,
/// each client's request is read on a thread of its own under a deadline
/// (``ControlSocketListener``), each request is answered in a child task (so `wait-synced` can
/// wait without holding up others), and the answer is written on a thread again
/// (``ControlConnection/respond(_:)``): no socket I/O runs on a Swift concurrency thread. A changing command from a client that may only read is refused (exit status 4)
/// and logged. On shutdown the socket is removed and waiting requests are cancelled.
package struct ControlServer: Service {
    let path: String
    let handler: any ControlHandler
    let logger: Logger
    let operatorGroup: ControlSettings.OperatorGroup

    package init(
        path: String, handler: any ControlHandler, logger: Logger,
        operatorGroup: ControlSettings.OperatorGroup = .name(ControlSettings.defaultOperatorGroup)
    ) {
        self.path = path
        self.handler = handler
        self.logger = logger
        self.operatorGroup = operatorGroup
    }

    package func run() async throws {
        let operatorGID = ControlAccess.resolve(operatorGroup)
        if operatorGID == nil {
            logger.notice(
                "control socket: \(operatorGroup) does not exist; only root and the daemon's user may run commands that change the agent (pause, resume, reset initiate, log-level)",
                metadata: ["tether.operator_group": .string("\(operatorGroup)")])
        }
        let listener = try ControlSocketListener(path: path, operatorGroup: operatorGID, operatorGroupName: operatorGroup.description)
        let access = listener.access
        let (connections, continuation) = AsyncStream.makeStream(of: ControlConnection.self)
        let logger = self.logger
        let thread = Thread {
            listener.acceptLoop(continuation) { message in logger.warning("\(message)") }
        }
        thread.name = "tether-control"
        thread.start()
        logger.info("control socket listening", metadata: ["tether.socket": .string(path)])
        let handler = self.handler
        let followers = EventFollowers()
        await withTaskCancellationOrGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                for await connection in connections {
                    group.addTask {
                        switch connection.request {
                        case .success(let request) where (request.protocol ?? 0) > ControlProtocol.version:
                            connection.respond(.failure(
                                "this tetherd speaks control protocol \(ControlProtocol.version); the client asked for \(request.protocol ?? 0): upgrade tetherd, or use a client of its release",
                                code: .protocolTooNew))
                        case .success(let request) where request.command == .hello:
                            connection.respond(.success(report: HelloReport(
                                release: TetherVersion.release, protocolVersion: ControlProtocol.version,
                                capabilities: ControlProtocol.capabilities, role: connection.mayChange ? "operator" : "reader",
                                lastEventSeq: handler.eventLog?.lastSeq ?? 0)))
                        case .success(let request) where request.command.changesState && !connection.mayChange:
                            let peer = connection.peer
                            logger.notice(
                                "control socket: refused \(request.command.rawValue) from uid \(peer.uid) (pid \(peer.pid)): it may only read; changing commands need root, the daemon's user or membership of \(access.operatorGroupName)",
                                metadata: [
                                    "tether.uid": .stringConvertible(peer.uid), "tether.pid": .stringConvertible(peer.pid),
                                    "tether.command": .string(request.command.rawValue),
                                ])
                            connection.respond(access.refusal(request.command, peer: peer))
                        case .success(let request) where request.command == .events && request.follow == true:
                            // The answer is the stream's first line; the events follow on a thread.
                            let answer = await handler.handle(request)
                            if answer.ok, let log = handler.eventLog {
                                followers.start(connection, header: answer, log: log, partition: request.partition, after: request.after)
                            } else {
                                connection.respond(answer.ok ? .failure("this daemon keeps no events", code: .unavailable) : answer)
                            }
                        case .success(let request): connection.respond(await handler.handle(request))
                        case .failure(let error): connection.respond(.failure(error.message, exitCode: 2))
                        }
                    }
                }
                group.cancelAll()  // the listener stopped: waiting requests answer now
            }
        } onCancelOrGracefulShutdown: {
            listener.shutdown()
            followers.closeAll()
        }
    }
}
