import NIOCore
import NIOWebSocket
import TetherProtocol

/// Writes one `/sync` connection's messages, each as one binary WebSocket message, from any
/// task (the connection's actor, its sessions' downloads). A sender never runs far ahead of a
/// device that does not read: once the channel's outbound buffer is past its high-water mark a
/// write waits until its bytes are handed to the socket; a write fails once the socket is
/// closing (``SyncChannelHandler`` refuses data after its close frame) or closed.
struct SyncChannelWriter: Sendable {
    let channel: any Channel

    /// A write that did not reach the socket: the connection is closing or gone.
    struct WriteFailed: Error, CustomStringConvertible {
        let underlying: any Error
        var description: String { "the connection is closed (\(underlying))" }
    }

    /// One frame: a message is at most ``ProtocolLimits/maxMessageBytes``, below the frame size
    /// both ends accept (``ProtocolLimits/maxFrameBytes``).
    func writeBinaryMessage(_ buffer: ByteBuffer) async throws(WriteFailed) {
        let frame = WebSocketFrame(fin: true, opcode: .binary, data: buffer)
        do {
            // While the socket takes more, the write is handed to the event loop and not waited
            // for (a wait is a hop back from the loop per message); once it does not, or the
            // channel closed, the write is waited for, which throws when it failed.
            if channel.isWritable {
                channel.writeAndFlush(frame, promise: nil)
            } else {
                try await channel.writeAndFlush(frame).get()
            }
        } catch {
            throw WriteFailed(underlying: error)
        }
    }
}
