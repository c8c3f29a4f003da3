import HummingbirdWSClient
import Logging
import NIOCore
import TetherProtocol

/// A bare WebSocket to the server for sending what a well-behaved client never would:
/// wrong versions, garbage, text frames, oversized or out-of-order messages.
final class RawConnection: @unchecked Sendable {
    // Used by one task at a time (the test body inside the WebSocket handler).
    private var iterator: WebSocketInboundStream.AsyncIterator
    let outbound: WebSocketOutboundWriter

    init(inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter) {
        self.iterator = inbound.makeAsyncIterator()
        self.outbound = outbound
    }

    func send(_ message: ClientMessage) async throws {
        try await sendBytes(message.encoded())
    }

    func sendBytes(_ bytes: [UInt8]) async throws {
        try await outbound.writeBinaryMessage(ByteBuffer(bytes: bytes))
    }

    func sendText(_ text: String) async throws {
        try await outbound.write(.text(text))
    }

    /// The next server message, or nil once the server closed the connection.
    func receive() async throws -> ServerMessage? {
        var assembler = MessageAssembler()
        while let frame = try await iterator.next() {
            let kind: MessageAssembler.FrameKind = frame.opcode == .continuation ? .continuation : (frame.opcode == .text ? .text : .binary)
            switch assembler.append(kind, frame.data.readableBytesView, fin: frame.fin) {
            case .incomplete: continue
            case .failure(let error): throw error
            case .message(let bytes): return try ServerMessage.decode(bytes)
            }
        }
        return nil
    }

    /// Messages until the server closes the connection.
    func receiveUntilClosed() async throws -> [ServerMessage] {
        var messages: [ServerMessage] = []
        while let message = try await receive() { messages.append(message) }
        return messages
    }

    /// Skips messages until one matches.
    func receive<T>(_ match: (ServerMessage) -> T?) async throws -> T {
        while let message = try await receive() {
            if let value = match(message) { return value }
        }
        throw ServerFailure("connection closed before the expected message")
    }

    /// The connection-level error the server sends before closing.
    func connectionError() async throws -> SyncError {
        let messages = try await receiveUntilClosed()
        guard case .error(let error)? = messages.last, error.session == nil else {
            throw ServerFailure("expected a connection-level error, got \(messages.map(\.name))")
        }
        return error.error
    }
}

func withRawConnection(_ server: ServerProcess, _ body: @escaping @Sendable (RawConnection) async throws -> Void) async throws {
    try await withDeadline(.seconds(30)) {
        try await WebSocketClient.connect(
            url: server.syncURL, configuration: .init(maxFrameSize: ProtocolLimits.maxFrameBytes * 32), logger: testLogger
        ) { inbound, outbound, _ in
            try await body(RawConnection(inbound: inbound, outbound: outbound))
        }
    }
}

let helloMessage = ClientMessage.hello(Hello(software: "raw-test"))
