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
    /// Larger messages go out in continuation frames of this size (none does today:
    /// ``ProtocolLimits/maxMessageBytes`` is below it).
    var maxFrameSize = ProtocolLimits.maxFrameBytes

    /// A write that did not reach the socket: the connection is closing or gone.
    struct WriteFailed: Error, CustomStringConvertible {
        let underlying: any Error
        var description: String { "the connection is closed (\(underlying))" }
    }

    func writeBinaryMessage(_ buffer: ByteBuffer) async throws(WriteFailed) {
        do {
            try await write(buffer)
        } catch {
            throw WriteFailed(underlying: error)
        }
    }

    private func write(_ buffer: ByteBuffer) async throws {
        if buffer.readableBytes <= maxFrameSize {
            let frame = WebSocketFrame(fin: true, opcode: .binary, data: buffer)
            // While the socket takes more, the write is handed to the event loop and not waited
            // for (a wait is a hop back from the loop per message); once it does not, or the
            // channel closed, the write is waited for, which throws when it failed.
            if channel.isWritable {
                channel.writeAndFlush(frame, promise: nil)
            } else {
                try await channel.writeAndFlush(frame).get()
            }
            return
        }
        // The fragments go out in one turn of the event loop: no other message's frames come between them.
        let channel = self.channel
        let size = maxFrameSize
        try await channel.eventLoop.flatSubmit {
            var rest = buffer
            var opcode = WebSocketOpcode.binary
            var last = channel.eventLoop.makeSucceededVoidFuture()
            while rest.readableBytes > 0 {
                let slice = rest.readSlice(length: min(size, rest.readableBytes))!
                last = channel.write(WebSocketFrame(fin: rest.readableBytes == 0, opcode: opcode, data: slice))
                opcode = .continuation
            }
            channel.flush()
            return last
        }.get()
    }
}
