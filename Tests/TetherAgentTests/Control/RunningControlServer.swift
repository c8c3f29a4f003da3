import Foundation
import Logging
import TetherAgent
import Testing
import TetherTestSupport

/// Runs a control server answering with `handler` on a socket in a new temporary directory
/// (mode 0755, so that tests running as other users reach the socket file) for the duration
/// of `body`, which is given the socket's path; the server is stopped after it and must have
/// removed its socket.
func withRunningControlServer(
    handler: some ControlHandler, prefix: String,
    operatorGroup: ControlSettings.OperatorGroup = .name(ControlSettings.defaultOperatorGroup),
    _ body: @Sendable (String) async throws -> Void
) async throws {
    let dir = try TemporaryDirectory(prefix: prefix)
    chmod(dir.path, 0o755)
    defer { dir.remove() }
    let socket = dir.appending("tetherd.sock")
    let server = ControlServer(path: socket, handler: handler, logger: Logger(label: "test"), operatorGroup: operatorGroup)
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await server.run() }
        try await eventually("control socket exists") { FileManager.default.fileExists(atPath: socket) }
        try await body(socket)
        group.cancelAll()
        try await group.waitForAll()
    }
    #expect(!FileManager.default.fileExists(atPath: socket), "the socket is removed at shutdown")
}
