import Foundation
import Testing
import TetherProtocol
import TetherTestSupport
@testable import TetherServer

/// The `/sync` endpoint in process (``InProcessSync``): frames joined into messages and fed to
/// the connection, a bad frame answered with a protocol error and a close, and the
/// connection's sessions released when it closes.
@Suite(.timeLimit(.minutes(1))) struct SyncEndpointTests {
    /// The connection-level error of `messages`, the last one before the close.
    static func closingError(_ messages: [ServerMessage]) throws -> SyncError {
        guard case .error(let error)? = messages.last, error.session == nil else {
            throw SyncSocketError("expected a connection-level error before the close, got \(messages.map(\.name))")
        }
        return error.error
    }

    @Test func aHelloIsWelcomedAndAPingAnswered() async throws {
        try await InProcessSync.run { _, client in
            try await client.sync { socket in
                try await socket.hello()
                try await socket.send(.ping(7))
                let pong = try await socket.next("the pong") { if case .pong(let value) = $0 { value } else { nil } }
                #expect(pong == 7)
            }
        }
    }

    @Test func aFrameThatIsNoMessageClosesTheConnectionWithAProtocolError() async throws {
        try await InProcessSync.run { sync, client in
            try await client.sync { socket in
                try await socket.hello()
                try await socket.send(bytes: [0x42, 1, 2, 3])
                #expect(try Self.closingError(try await socket.rest()).code == .unknownMessage)
            }
            // The service serves the next connection.
            try await client.sync { socket in try await socket.hello() }
            try await eventually("both connections closed") { await sync.service.hub.connectionCount == 0 }
        }
    }

    @Test func aTextFrameIsBadSyntax() async throws {
        try await InProcessSync.run { _, client in
            try await client.sync { socket in
                try await socket.hello()
                try await socket.send(text: "{\"hello\": 1}")
                #expect(try Self.closingError(try await socket.rest()).code == .badSyntax)
            }
        }
    }

    @Test func aBindBeforeTheHelloIsOutOfOrder() async throws {
        try await InProcessSync.run { _, client in
            try await client.sync { socket in
                try await socket.send(.bind(InProcessSync.newStore(1)))
                #expect(try Self.closingError(try await socket.rest()).code == .badMessageOrder)
            }
        }
    }

    @Test func theSessionsOfAClosedConnectionAreReleased() async throws {
        try await InProcessSync.run { sync, client in
            try await client.sync { socket in
                try await socket.hello()
                _ = try await socket.bindNewStore(1)
                #expect(await sync.service.hub.bound().count == 1)
            }
            try await eventually("the closed connection's session released") { await sync.service.hub.bound().isEmpty }
        }
    }
}
