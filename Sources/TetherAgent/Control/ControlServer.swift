import Foundation
public import TetherControl
public import Logging
public import ServiceLifecycle

/// Answers control requests (docs/contract.md: tetherctl).
public protocol ControlHandler: Sendable {
    /// Must return promptly when the task is cancelled (the daemon is stopping).
    func handle(_ request: ControlRequest) async -> ControlResponse
}

/// The control socket as a service: a listener thread accepts and authenticates clients,
/// and each request is answered in a child task (so `wait-synced` can wait without holding
/// up others). On shutdown the socket is removed and waiting requests are cancelled.
public struct ControlServer: Service {
    let path: String
    let handler: any ControlHandler
    let logger: Logger

    public init(path: String, handler: any ControlHandler, logger: Logger) {
        self.path = path
        self.handler = handler
        self.logger = logger
    }

    public func run() async throws {
        let listener = try ControlSocketListener(path: path)
        let (connections, continuation) = AsyncStream.makeStream(of: ControlConnection.self)
        let logger = self.logger
        let thread = Thread {
            listener.acceptLoop(continuation) { message in logger.warning("\(message)") }
        }
        thread.name = "tether-control"
        thread.start()
        logger.info("control socket listening", metadata: ["tether.socket": .string(path)])
        let handler = self.handler
        await withTaskCancellationOrGracefulShutdownHandler {
            await withTaskGroup(of: Void.self) { group in
                for await connection in connections {
                    group.addTask {
                        switch connection.request {
                        case .success(let request): connection.respond(await handler.handle(request))
                        case .failure(let error): connection.respond(.failure(error.message, exitCode: 2))
                        case nil: break
                        }
                    }
                }
                group.cancelAll()  // the listener stopped: waiting requests answer now
            }
        } onCancelOrGracefulShutdown: {
            listener.shutdown()
        }
    }
}
